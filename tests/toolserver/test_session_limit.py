"""One run holds at most ``max_sessions_per_run`` open sessions (issue 30, item 10): each is a
browser context of tens of MB, so another start is refused with ``too_many_sessions``, naming
the open ones, until one is closed; other runs are unaffected. On the real Chromium."""

from __future__ import annotations

from tests.support.sandboxes import http_client
from toolserver.contract.trace import parse_trace

START = {"provider": "kernel"}


async def test_a_run_opens_at_most_its_sessions_and_a_closed_one_frees_a_place(own_sandbox):
    async with own_sandbox(max_sessions_per_run=2) as own, http_client(own) as server:
        run_id = (await (await server.post("/runs", json={})).json())["run_id"]

        async def call(name: str, args: dict) -> dict:
            return await (await server.post(f"/runs/{run_id}/tools/{name}", json=args)).json()

        first, second = await call("browser_start_session", START), await call("browser_start_session", START)
        opened = [first["result"]["session_id"], second["result"]["session_id"]]
        refused = await call("browser_start_session", START)
        assert not refused["ok"] and refused["error"]["type"] == "too_many_sessions"
        assert refused["error"]["details"] == {"open_sessions": opened}
        assert "max_sessions_per_run 2" in refused["error"]["message"]
        assert "browser_close" in refused["error"]["message"]
        assert len(own.runs[run_id].sessions) == 2  # no third browser context was made

        other = own.create_run()  # another run has places of its own
        assert (await other.call("browser_start_session", START))["ok"]
        await other.close()

        assert (await call("browser_close", {"session_id": opened[0]}))["ok"]
        assert (await call("browser_start_session", START))["ok"]
        await server.delete(f"/runs/{run_id}")
        trace = parse_trace(await (await server.get(f"/runs/{run_id}/trace")).text())
        assert [(c.tool, c.error.type if c.error else None) for c in trace.calls] == [
            ("browser_start_session", None),
            ("browser_start_session", None),
            ("browser_start_session", "too_many_sessions"),
            ("browser_close", None),
            ("browser_start_session", None),
        ]
