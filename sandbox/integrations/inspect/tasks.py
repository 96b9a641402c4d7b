"""Every pack as an Inspect task: ``inspect eval sandbox/integrations/inspect/tasks.py@bid_intake``,
or any pack by id: ``inspect eval sandbox/integrations/inspect/tasks.py@sandbox_pack -T pack=bid-intake``
(or by its folder's absolute path).

Task parameters (``-T``): ``site_key`` (default: a fresh key), ``trace_root`` (where each
sample's trace folder goes; default: the temporary directory; a relative one is in the folder
``inspect eval`` runs in).

The per-pack tasks are built by one function, ``pack_task``, and registered under the pack id
with ``_`` for ``-``. Inspect lists a file's tasks by reading it for ``@task`` functions, so
``inspect list tasks`` on this file shows ``sandbox_pack`` alone; ``tasks.py@NAME`` finds each
of the others by its registered name.
"""

from collections.abc import Callable

from inspect_ai import Task, task

from sandbox.integrations.inspect import sandbox_task

PackTask = Callable[..., Task]


@task
def sandbox_pack(pack: str | None = None, site_key: str | None = None, trace_root: str | None = None) -> Task:
    """The pack ``pack`` (its id, e.g. ``bid-intake``, or its folder's absolute path) as an Inspect task."""
    if pack is None:  # Inspect runs every task of the file when none is named: say what this one needs
        raise ValueError(
            "sandbox_pack needs the pack: -T pack=ID (e.g. -T pack=bid-intake), or run a pack's own task "
            "(tasks.py@bid_intake)"
        )
    return sandbox_task(pack, site_key=site_key, trace_root=trace_root)


def pack_task(pack_id: str) -> PackTask:
    """The Inspect task of the pack ``pack_id``, registered as ``bid_intake`` for ``bid-intake``."""
    name = pack_id.replace("-", "_")

    def build(site_key: str | None = None, trace_root: str | None = None) -> Task:
        return sandbox_task(pack_id, site_key=site_key, trace_root=trace_root)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"The pack {pack_id!r} as an Inspect task."
    return task(name=name)(build)


addenda_trace = pack_task("addenda-trace")
addenda_trace_p6 = pack_task("addenda-trace-p6")
bid_intake = pack_task("bid-intake")
controlled_form = pack_task("controlled-form")
court_docket = pack_task("court-docket")
court_docket_p4 = pack_task("court-docket-p4")
ecfr_regulation = pack_task("ecfr-regulation")
sec_contract = pack_task("sec-contract")
