"""The router against pages that load it: a big PDF, a Chromium crash then concurrent starts, a
redirect to a download under blocking, a page fetching big bodies in a loop, downloads by frames
(a mirror written here; a real Chromium)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from tests.support.calls import ref_of
from tests.support.polling import until
from tests.support.site import make_pdf
from tests.support.traces import strict_lines
from toolserver import pdf
from toolserver.api import Sandbox
from toolserver.config import ServerConfig
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.faults import parse_faults
from toolserver.run import Run

ROUTER = "https://router.sandbox.example"
BIG_BODY = 2 << 20  # /big.bin
PDF_PAGES = 600  # about 3 s of pypdf's time
LINE = "The quick brown fox jumps over the lazy dog 0123456789 " * 2

PAGES = {
    "/calm": "<!doctype html><title>Calm</title><h1>Calm</h1>",
    "/links": "<!doctype html><title>Links</title><a href='/to-file'>file via redirect</a>",
    "/frames-file": "<!doctype html><title>Frames</title>" + "".join("<iframe src='/file'></iframe>" for _ in range(3)),
    "/frame-off": "<!doctype html><title>Frame off</title><iframe src='/off-file'></iframe>",
    "/byte-flood": "<!doctype html><title>Byte flood</title><script>"
    "let n = 0; setInterval(() => { for (let i = 0; i < 4; i++) fetch(`/big.bin?n=${n++ % 3}`).catch(() => {}); }, 10);"
    "</script>",
}


@pytest.fixture(scope="module")
def router_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("router-mirror")
    folder = root / "router.sandbox.example"
    made = reconstructed("pages written for the router's tests")
    for path, page in PAGES.items():
        write_entry(folder, ROUTER + path, page.encode(), "text/html; charset=utf-8", made)
    write_entry(folder, f"{ROUTER}/to-file", b"", "text/html", made, status=302, headers={"location": f"{ROUTER}/file"})
    for name in ("file", "off-file", "big-file"):
        attachment = {"content-disposition": f'attachment; filename="{name}.txt"'}
        body = b"an attachment\n" * (20 if name == "big-file" else 1)
        write_entry(folder, f"{ROUTER}/{name}", body, "text/plain", made, headers=attachment)
    for n in range(3):
        write_entry(folder, f"{ROUTER}/big.bin?n={n}", bytes(BIG_BODY), "application/octet-stream", made)
    big = make_pdf(["\n".join([LINE] * 44)] * (PDF_PAGES - 1) + [f"the last page of {root.name}"])
    write_entry(folder, f"{ROUTER}/big.pdf", big, "application/pdf", made)
    return root


def router_run(own: Sandbox, root: Path, *allowed: str, block: bool = False) -> Run:
    """A run on the router's mirror: observing, or enforcing ``allowed`` (paths after the origin)."""
    urls = tuple(ROUTER + path for path in allowed)
    policy = Policy(mode="enforce" if urls else "observe", allowed_urls=urls, block_state_changes=block)
    return own.create_run(policy=policy, mirror_roots=(root,))


async def start(run: Run, path: str) -> dict:
    reply = await run.call("browser_start_session", {"provider": "kernel", "site_key": "router", "url": ROUTER + path})
    assert reply["ok"], reply
    return reply


def events_of(run: Run, kind: str) -> list[dict]:
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == kind]


async def test_a_big_pdfs_text_is_extracted_while_other_runs_are_answered(sandbox, router_root):
    """pypdf ran on the event loop: every run on the server waited out a big PDF's extraction."""
    reader, other = router_run(sandbox, router_root), router_run(sandbox, router_root)
    await start(reader, "/calm")
    await start(other, "/calm")
    begun, ended = pdf.extractions()
    opening = asyncio.ensure_future(reader.call("browser_navigate", {"url": f"{ROUTER}/big.pdf"}))
    await until(lambda: pdf.extractions()[0] > begun, seconds=20)
    answered = await other.call("browser_snapshot", {})
    assert answered["ok"], answered
    assert pdf.extractions() == (begun + 1, ended)  # answered while the extraction still ran
    opened = await opening
    assert opened["ok"], opened
    await until(lambda: pdf.extractions()[1] > ended, seconds=30)
    text = (await reader.call("browser_snapshot", {}))["result"]["snapshot"]
    assert f"Page {PDF_PAGES} of {PDF_PAGES}" in text and f"the last page of {router_root.name}" in text
    await reader.close()
    await other.close()


async def test_two_sessions_starting_after_a_crash_share_one_relaunch(router_root):
    """Each start after a crash could launch a Chromium of its own: one of them was orphaned."""
    async with Sandbox(ServerConfig(mirror_roots=(router_root,), close_timeout_s=1.0)) as own:
        first = own.create_run()
        await start(first, "/calm")
        cdp = await own.host.browser.new_browser_cdp_session()
        with contextlib.suppress(Exception):  # the connection goes down with the browser
            await cdp.send("Browser.crash")
        await until(lambda: own.host.crashes > 0)
        assert own.host.crashes == 1 and not own.host.connected
        runs = [own.create_run(), own.create_run()]
        await asyncio.gather(*(start(run, "/calm") for run in runs))
        assert own.host.launches == 2  # the first launch and one relaunch
        assert all(run.current_session().browser is own.host.browser for run in runs)
        assert events_of(first, "browser_crashed")


@pytest.mark.parametrize("block", [True, False])
async def test_a_redirect_to_a_download_leaves_the_page_in_place_and_settled(own_sandbox, router_root, block):
    """A link redirected to an attachment left a stub document with no body in the tab (its
    snapshot timed out); blocked, the tab awaited a commit for good, so every later call on it
    waited out settle_timeout_s and wrote settle_timeout."""
    async with own_sandbox(settle_timeout_s=3.0) as own:
        run = router_run(own, router_root, block=block)
        await start(run, "/links")
        snap = await run.call("browser_snapshot", {})
        clicked = await run.call("browser_click", {"ref": ref_of(snap["result"]["snapshot"], "file via redirect")})
        assert clicked["ok"], clicked
        for _ in range(2):
            again = await run.call("browser_snapshot", {})
            assert again["ok"] and "file via redirect" in again["result"]["snapshot"], again
        await until(lambda: block or events_of(run, "download"))
        await run.close()
    assert events_of(run, "settle_timeout") == []
    downloads = [c for c in events_of(run, "state_change") if c["action"] == "download"]
    assert [(c["name"], c["blocked"]) for c in downloads] == [(f"download {ROUTER}/file", block)], downloads
    assert len(events_of(run, "download")) == (0 if block else 1)


async def test_a_tab_served_too_many_bytes_is_closed_and_the_other_runs_go_on(own_sandbox, router_root):
    """About 800 fetches of a 2 MB body per 2 s stayed under max_page_requests while base64 encoding
    each answer held the event loop every run shares."""
    async with own_sandbox(max_page_bytes=16 << 20) as own:
        flooding, quiet = router_run(own, router_root), router_run(own, router_root)
        await start(flooding, "/byte-flood")
        await start(quiet, "/calm")
        await until(lambda: events_of(flooding, "tab_closed"))
        assert (await quiet.call("browser_snapshot", {}))["ok"]
        after = await flooding.call("browser_snapshot", {})
        await flooding.close()
        await quiet.close()
    closed = events_of(flooding, "tab_closed")
    assert [(c["tab"], c["reason"], c["url"]) for c in closed] == [("t1", "byte_flood", f"{ROUTER}/byte-flood")]
    assert closed[0]["bytes"] > 16 << 20 and closed[0]["seconds"] == 2.0
    assert after["error"]["type"] == "no_tab", after
    strict_lines(flooding.trace.text())


async def test_each_frame_downloading_one_attachment_is_one_state_change(sandbox, router_root):
    """Three navigations to one attachment before their download events wrote five state changes."""
    run = router_run(sandbox, router_root)
    await start(run, "/frames-file")
    await until(lambda: len(events_of(run, "download")) >= 3)
    await asyncio.sleep(0.3)  # any later line would come now
    await run.close()
    assert len(events_of(run, "download")) == 3
    downloads = [c for c in events_of(run, "state_change") if c["action"] == "download"]
    assert len(downloads) == 3 and not any(c["blocked"] for c in downloads), downloads


async def test_a_frames_download_off_the_list_is_recorded_blocked(sandbox, router_root):
    """An iframe sent to an attachment off the allow-list was refused, but recorded unblocked."""
    run = router_run(sandbox, router_root, "/frame-off")
    await start(run, "/frame-off")
    await until(lambda: events_of(run, "policy_violation"))
    await run.close()
    downloads = [c for c in events_of(run, "state_change") if c["action"] == "download"]
    assert [c["blocked"] for c in downloads] == [True], downloads
    assert events_of(run, "download") == []


@pytest.mark.parametrize("refused_by", ["byte_flood", "mirror-5xx"])
async def test_an_attachment_not_served_is_not_awaited_as_a_download(own_sandbox, router_root, refused_by):
    """The router recorded a navigation to an attachment as a download (an unblocked state change)
    and awaited its download event before a byte flood or an injected 503 refused its body: no
    download happened, and the next download of that URL that only its event records would have
    been taken as recorded."""
    config = {"max_page_bytes": 200} if refused_by == "byte_flood" else {"faults": parse_faults("mirror-5xx")}
    async with own_sandbox(**config) as own:
        run = router_run(own, router_root)
        await start(run, "/calm")
        await run.call("browser_navigate", {"url": f"{ROUTER}/big-file"})
        await asyncio.sleep(0.3)  # a download event, if any, would come now
        router = next(iter(run.sessions.values())).router
        awaited = dict(router.downloads)
        await run.close()
    downloads = [c for c in events_of(run, "state_change") if c["action"] == "download"]
    assert downloads == [], downloads  # nothing was downloaded: no state change either
    assert events_of(run, "download") == []
    assert awaited == {}
    if refused_by == "byte_flood":
        assert [c["reason"] for c in events_of(run, "tab_closed")] == ["byte_flood"]
