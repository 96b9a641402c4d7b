"""The allow-list and the trace where the router is not the one to see a request: a worker's
WebSocket to a mirrored host (it reaches the session's backstop), a form submission blocked in the
page, a link's ``download`` (Chromium fetches it itself), and a navigation from a tab that floods."""

from __future__ import annotations

import asyncio

import pytest_asyncio

from tests.support.calls import ref_of
from tests.support.hostile import HOSTILE, snapshot_text
from toolserver.api import Sandbox
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.run import Run

PLAIN = "http://hostile.sandbox.example"
WORKER_SOCKETS = """<!doctype html><title>Worker sockets</title><ul id=out></ul><script>
const program = `
  for (const url of ['ws://hostile.sandbox.example/socket?d=plain', 'wss://hostile.sandbox.example/socket?d=tls']) {
    try {
      const ws = new WebSocket(url);
      ws.onopen = () => postMessage('open ' + url);
      ws.onerror = () => postMessage('failed ' + url);
    }
    catch (e) { postMessage('refused ' + url); }
  }
`;
const worker = new Worker(URL.createObjectURL(new Blob([program], {type: 'text/javascript'})));
worker.onmessage = (e) => { const li = document.createElement('li'); li.textContent = e.data; out.append(li); };
</script>"""
PAGES = {
    "/forms": """<!doctype html><title>Forms</title>
<form method=post action="/offlist-post"><input name=a value=1><button>Post</button></form>
<form method=get action="/offlist-get"><input name=b value=2><button>Get</button></form>
<form method=get action="/offlist-get"><input name=b value="x y"><button>Listed get</button></form>""",
    "/download-link": """<!doctype html><title>Download link</title><a href="/offlist.zip" download>Get zip</a>""",
    # The navigation is the request that takes the tab over max_page_requests (20 here), with the
    # first document's request and these 19 fetches.
    "/flood-then-leave": """<!doctype html><title>Flood then leave</title><button>Flood</button><script>
document.querySelector('button').onclick = () => {
  for (let i = 0; i < 19; i++) fetch('/calm?' + i).catch(() => {});
  location.href = '/secret';
};
</script>""",
    "/secret": "<!doctype html><title>Secret</title>SECRET",
    "/offlist-post": "<!doctype html><title>Posted</title>",
    "/offlist-get": "<!doctype html><title>Got</title>",
}


@pytest_asyncio.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("allow-list")
    folder, provenance = root / "hostile.sandbox.example", reconstructed("pages written for the allow-list tests")
    for path, body in PAGES.items():
        write_entry(folder, HOSTILE + path, body.encode(), "text/html; charset=utf-8", provenance)
    write_entry(folder, HOSTILE + "/offlist.zip", b"PK\x03\x04", "application/zip", provenance)
    for origin in (HOSTILE, PLAIN):  # a ws:// WebSocket can be opened from an http page only
        write_entry(folder, origin + "/sockets", WORKER_SOCKETS.encode(), "text/html; charset=utf-8", provenance)
    return root


def run_on(sandbox: Sandbox, root, *urls: str, block_state_changes: bool = False) -> Run:
    policy = Policy(allowed_urls=urls, block_state_changes=block_state_changes)
    return sandbox.create_run(policy=policy, mirror_roots=(root,))


async def start(run: Run, url: str) -> None:
    reply = await run.call("browser_start_session", {"provider": "kernel", "site_key": "hostile", "url": url})
    assert reply["ok"], reply


async def click(run: Run, name: str) -> None:
    reply = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), name)})
    assert reply["ok"], reply


def events(run: Run, kind: str) -> list[dict]:
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == kind]


async def test_a_workers_websockets_to_a_mirrored_host_are_recorded_with_their_urls(sandbox, root):
    """Chromium sends them through the session's backstop: a ws:// one as CONNECT host:80 and plain
    HTTP in it, which the backstop took for TLS and failed; the bare CONNECT left, to a mirrored
    host, was dropped as Chromium's preconnect: no line at all. A wss:// one was said to be https."""
    seen: dict[str, list[str]] = {}
    for origin in (PLAIN, HOSTILE):
        run = run_on(sandbox, root, f"{origin}/sockets")
        await start(run, f"{origin}/sockets")
        for _ in range(100):  # each fails once the backstop has refused it
            if (await snapshot_text(run)).count("failed ") + (await snapshot_text(run)).count("refused ") == 2:
                break
            await asyncio.sleep(0.1)
        await run.close()
        seen[origin] = [e["url"] for e in events(run, "blocked_request") if e["reason"] == "escaped_interception"]
    # An https page may not open a ws:// WebSocket at all (Chromium refuses it as mixed content).
    assert sorted(seen[PLAIN]) == [
        f"{PLAIN.replace('http', 'ws')}/socket?d=plain",
        f"{HOSTILE.replace('https', 'wss')}/socket?d=tls",
    ]
    assert seen[HOSTILE] == [f"{HOSTILE.replace('https', 'wss')}/socket?d=tls"]


async def test_a_form_submission_blocked_in_the_page_is_a_policy_violation_when_off_the_list(sandbox, root):
    """Blocking, init.js cancels every submission before any request: it was only a blocked state
    change, and the allowed_urls gate never saw a submission to a URL off the list."""
    run = run_on(sandbox, root, f"{HOSTILE}/forms", f"{HOSTILE}/offlist-get?b=x+y", block_state_changes=True)
    for button in ("Post", "Get", "Listed get"):
        await start(run, f"{HOSTILE}/forms")
        await click(run, f'button "{button}"')
    await run.close()
    assert [(v["url"], v["method"], v["origin"]) for v in events(run, "policy_violation")] == [
        (f"{HOSTILE}/offlist-post", "POST", "page"),
        (f"{HOSTILE}/offlist-get?b=2", "GET", "page"),  # as Chromium requests it: its fields the query
    ]
    changes = events(run, "state_change")
    assert [c["action"] for c in changes] == ["form_submission"] * 3 and all(c["blocked"] for c in changes)


async def test_a_post_the_allow_list_refuses_is_a_state_change_that_did_not_happen(sandbox, root):
    """Without blocking, the POST was recorded as a state change that went through (blocked: false),
    then refused as off the list: it never left the browser."""
    run = run_on(sandbox, root, f"{HOSTILE}/forms")
    await start(run, f"{HOSTILE}/forms")
    await click(run, 'button "Post"')
    await run.close()
    (violation,) = events(run, "policy_violation")
    assert violation["url"] == f"{HOSTILE}/offlist-post"
    (request,) = [c for c in events(run, "state_change") if c["action"] == "non_get_request"]
    assert request["name"] == f"POST {HOSTILE}/offlist-post" and request["blocked"], request


async def test_a_link_download_off_the_list_is_a_policy_violation(sandbox, root):
    """Chromium fetches a link's ``download`` itself, past the router (the session's backstop refuses
    it): it was a download state change that went through, and no policy violation."""
    run = run_on(sandbox, root, f"{HOSTILE}/download-link")
    await start(run, f"{HOSTILE}/download-link")
    await click(run, 'link "Get zip"')
    await run.close()
    (violation,) = events(run, "policy_violation")
    assert (violation["url"], violation["origin"], violation["resource_type"]) == (
        f"{HOSTILE}/offlist.zip",
        "page",
        "download",
    )
    (download,) = [c for c in events(run, "state_change") if c["action"] == "download"]
    assert download["blocked"], download


async def test_a_navigation_off_the_list_from_a_flooding_tab_is_recorded(own_sandbox, root):
    """The tab's requests over max_page_requests are aborted unrecorded: its navigation off the list
    was no policy violation at all."""
    async with own_sandbox(max_page_requests=20) as own:
        run = run_on(own, root, f"{HOSTILE}/flood-then-leave")
        await start(run, f"{HOSTILE}/flood-then-leave")
        await click(run, 'button "Flood"')
        await run.close()
    assert [c["reason"] for c in events(run, "tab_closed")] == ["request_flood"]
    assert [(v["url"], v["origin"]) for v in events(run, "policy_violation")] == [(f"{HOSTILE}/secret", "page")]
