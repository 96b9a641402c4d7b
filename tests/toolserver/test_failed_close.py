"""A session close that fails (raises) under ``browser_close`` does not cost the run its end: the
call is answered with its error, and the run's end (which awaits the same close) still writes
``run_end``. Before, the run's end re-raised the first close's error and finished no trace.

The close is made to fail for real: its profile is over ``max_profile_bytes``, so the close writes
a ``profiles_evicted`` line (longer than a page, with its 9,000-character site key), on a trace
disk that is full then (a real small tmpfs: the test needs root, else it is skipped). No injected
fault makes a close fail (``toolserver.faults``)."""

from __future__ import annotations

import traceback
from pathlib import Path

from tests.support.disks import fill, small_disk
from tests.support.sandboxes import http_client
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.contract.trace import parse_trace

ORIGIN = "https://keeps.sandbox.example"
KEY = "k" * 9000  # the evicted profile's key, in the close's line: more than the full disk's last page holds
# A page that keeps 8 KB in its local storage: with its key, the session's profile is over a 12 KB
# cap at its close, not at its start.
PAGE = """<!doctype html><title>Keeps</title><h1>Keeps</h1>
<script>localStorage.setItem('kept', 'x'.repeat(8192));</script>
"""


def keeping_mirror(root: Path) -> Path:
    made = reconstructed("page written for the sandbox's close tests")
    write_entry(root / "keeps.sandbox.example", f"{ORIGIN}/", PAGE.encode(), "text/html; charset=utf-8", made)
    return root


async def test_a_failed_close_still_leaves_the_run_its_run_end(own_sandbox, tmp_path, caplog):
    mirror = keeping_mirror(tmp_path / "mirror")
    with small_disk(tmp_path / "disk") as disk:
        changes = {"trace_dir": disk, "mirror_roots": (mirror,), "max_profile_bytes": 12_000}
        async with own_sandbox(own_browser=True, **changes) as own, http_client(own) as server:
            run_id = (await (await server.post("/runs", json={})).json())["run_id"]
            started = await server.post(
                f"/runs/{run_id}/tools/browser_start_session",
                json={"provider": "kernel", "site_key": KEY, "url": f"{ORIGIN}/"},
            )
            assert (await started.json())["ok"], await started.text()
            filler = fill(disk)
            closed = await server.post(f"/runs/{run_id}/tools/browser_close", json={})
            error = (await closed.json())["error"]
            assert closed.status == 500 and error["type"] == "server_fault", error
            [fault] = [r for r in caplog.records if r.getMessage() == "server fault in browser_close"]
            assert fault.exc_info is not None and isinstance(fault.exc_info[1], OSError)  # the close raised
            assert "close_context" in "".join(traceback.format_tb(fault.exc_info[2]))

            filler.unlink()  # space returns: the run's end can be written
            assert (await server.delete(f"/runs/{run_id}")).status == 200
            trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
            assert trace.problems == []
            assert trace.end is not None and trace.end["reason"] == "deleted", trace.end
            assert [c.tool for c in trace.calls] == ["browser_start_session"]  # the close's line the disk refused
    assert not [r for r in caplog.records if "could not be finished" in r.getMessage()]
