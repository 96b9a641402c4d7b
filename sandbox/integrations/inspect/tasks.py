"""Every pack as an Inspect task: ``inspect eval sandbox/integrations/inspect/tasks.py@bid_intake``.

Task parameters (``-T``): ``site_key`` (default: a fresh key), ``trace_root`` (where each
sample's trace folder goes; default: the temporary directory).
"""

from inspect_ai import task

from sandbox.integrations.inspect import sandbox_task


@task
def addenda_trace(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("addenda-trace", site_key=site_key, trace_root=trace_root)


@task
def addenda_trace_p6(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("addenda-trace-p6", site_key=site_key, trace_root=trace_root)


@task
def bid_intake(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("bid-intake", site_key=site_key, trace_root=trace_root)


@task
def controlled_form(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("controlled-form", site_key=site_key, trace_root=trace_root)


@task
def court_docket(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("court-docket", site_key=site_key, trace_root=trace_root)


@task
def court_docket_p4(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("court-docket-p4", site_key=site_key, trace_root=trace_root)


@task
def ecfr_regulation(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("ecfr-regulation", site_key=site_key, trace_root=trace_root)


@task
def sec_contract(site_key: str | None = None, trace_root: str | None = None):
    return sandbox_task("sec-contract", site_key=site_key, trace_root=trace_root)
