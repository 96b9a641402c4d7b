"""Profiles kept per site key on a long-lived server: a session without a site key keeps none,
so it never takes a keyed profile's place; a profile forgotten to stay within the caps is
recorded (``profiles_evicted``) whenever it is forgotten; the site key counts towards the bytes."""

from __future__ import annotations

from toolserver.contract.trace import parse_trace
from toolserver.run import Run


async def open_and_close(run: Run, site_key: str | None = None) -> dict:
    """Start a session (with ``site_key``, if given) and close it: the start's result."""
    args = {"provider": "kernel"} | ({"site_key": site_key} if site_key is not None else {})
    started = await run.call("browser_start_session", args)
    assert started["ok"], started
    closed = await run.call("browser_close", {})
    assert closed["ok"], closed
    return started["result"]


def evictions(run: Run) -> list[list[str]]:
    return [e.data["site_keys"] for e in parse_trace(run.trace.text()).events if e.kind == "profiles_evicted"]


async def test_sessions_without_a_site_key_keep_no_profile_and_evict_none(own_sandbox):
    # Each stored an anonymous profile nothing could use again: three of them evicted a real one.
    async with own_sandbox(own_browser=True, max_profiles=3) as own:
        run = own.create_run()
        assert (await open_and_close(run, "kept"))["profile_new"]
        for _ in range(3):
            assert (await open_and_close(run))["profile_new"]
        again = await open_and_close(run, "kept")
        await run.close()
        assert list(own.host.profiles) == ["kept"]
    assert not again["profile_new"]
    assert evictions(run) == []


async def test_a_profile_forgotten_when_a_session_opens_is_recorded(own_sandbox):
    # Only a session's close recorded what it forgot; its start forgot silently.
    async with own_sandbox(own_browser=True, max_profiles=2) as own:
        run = own.create_run()
        for key in ("k1", "k2", "k3"):
            await open_and_close(run, key)
        again = await open_and_close(run, "k1")
        await run.close()
    assert again["profile_new"]
    assert evictions(run) == [["k1"], ["k2"]]  # k3 opening forgot k1; k1 opening again forgot k2
    trace = parse_trace(run.trace.text())
    (event,) = [e for e in trace.events if e.kind == "profiles_evicted" and e.data["site_keys"] == ["k1"]]
    assert event.data["max_profile_bytes"] == own.config.max_profile_bytes
    assert {call.seq: call.tool for call in trace.calls}[event.seq] == "browser_start_session"


async def test_the_site_key_counts_towards_max_profile_bytes(own_sandbox):
    # A 300 KB key took memory the cap never counted. An empty profile is 27 bytes as JSON.
    async with own_sandbox(own_browser=True, max_profile_bytes=2_000) as own:
        run = own.create_run()
        long_key = "K" * 3_000
        await open_and_close(run, long_key)
        await open_and_close(run, "short")
        await run.close()
        assert list(own.host.profiles) == ["short"]
    assert evictions(run)[0] == [long_key]  # alone over the cap: forgotten as it opened
