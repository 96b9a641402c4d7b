"""Shared fixtures: one warm sandbox (real Chromium) for the session, a small test mirror
built at start-up, a real aiohttp tool server on loopback, and a canary server that must
never receive a request."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import async_playwright

from sandbox import MIRRORS_DIR
from sandbox.evaluation.packs import pack_policy
from sandbox.runner.wiring import PackTasks
from scripts.soak import process_tree
from toolserver.api import Sandbox
from toolserver.browser.chromium import chromium_launch_args, resolve_chromium
from toolserver.config import ServerConfig
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.transports.http import create_app

SITE = "https://test.sandbox.example"


def make_pdf(pages: list[str]) -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter, invariant=1)
    for text in pages:
        y = 720
        for line in text.splitlines():
            pdf.drawString(72, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


class Canary:
    """A loopback server that mirrored pages try to reach; it must stay at zero requests."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.url = ""

    async def start(self) -> None:
        async def record(request: web.Request) -> web.Response:
            self.requests.append(f"{request.method} {request.path_qs}")
            return web.Response(text="canary")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", record)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        await self._runner.cleanup()


def build_test_mirror(root: Path, canary: str) -> Path:
    folder = root / "test.sandbox.example"
    prov = reconstructed("test page written for the sandbox's own tests")
    html = "text/html; charset=utf-8"

    def page(path: str, body: str, content_type: str = html, **kw) -> None:
        write_entry(
            folder,
            f"{SITE}{path}",
            body.encode(),
            content_type,
            prov,
            body_path=f"bodies{path.replace('?', '_q_') or '/index'}.bin",
            **kw,
        )

    page(
        "/",
        """<!doctype html><html><head><title>Home</title><link rel=stylesheet href="/style.css"></head>
      <body><h1>Test home</h1><a href="/second">Second page</a>
      <button onclick="document.getElementById('out').textContent='clicked ' + (++window.n || (window.n=1))">Press</button>
      <p id=out>none</p><label for=name>Name</label><input id=name>
      <label for=bio>Bio</label><textarea id=bio></textarea>
      <script>document.cookie = 'visited=yes; path=/; max-age=3600'; localStorage.setItem('seen', '1');</script>
      </body></html>""",
    )
    page("/style.css", "body { font-family: sans-serif }", "text/css")
    page(
        "/second",
        "<!doctype html><title>Second</title><h1>Second page</h1><p id=cookie></p>"
        "<script>document.getElementById('cookie').textContent = 'cookie=' + document.cookie + ' ls=' + localStorage.getItem('seen')</script>",
    )
    long_paragraphs = "".join(f"<p>Paragraph {i}: " + "lorem ipsum dolor sit amet " * 12 + "</p>" for i in range(300))
    page("/long", f"<!doctype html><title>Long</title><h1>Long page</h1>{long_paragraphs}<p id=end>THE END</p>")
    write_entry(
        folder,
        f"{SITE}/doc.pdf",
        make_pdf(["Page one says hello.", "Page two holds the holding."]),
        "application/pdf",
        prov,
        body_path="bodies/doc.pdf",
    )
    page(
        "/outside",
        f"""<!doctype html><title>Outside</title><h1>Reaches out</h1>
      <img src="{canary}/img.png"><script src="{canary}/script.js"></script>
      <script>fetch('{canary}/fetch').catch(() => {{}});</script>""",
    )
    page("/redirect", "", status=302, headers={"location": f"{SITE}/second"})
    page(
        "/popup",
        """<!doctype html><title>Popup</title><a href="/second" target="_blank">Open second</a>
      <button onclick="window.open('/long')">Open long</button>""",
    )
    # --- pages for the live policy (allow-list, page-initiated navigation, state changes) ---
    page("/allowed?a=1&b=2", "<!doctype html><title>Allowed</title><h1>Allowed page</h1>")
    page("/forbidden", "<!doctype html><title>Forbidden</title><h1>Forbidden page</h1>")
    page(
        "/policy",
        f"""<!doctype html><title>Policy</title>
      <a href="/forbidden">plain link</a>
      <button onclick="location.href='/forbidden'">location change</button>
      <a href="/meta">meta refresh</a>
      <a href="/redirect-out">redirect out</a>
      <button onclick="window.open('/forbidden')">window open</button>
      <a href="/forbidden" target="_blank">blank target</a>
      <form action="/forbidden" method="get"><input name=q aria-label=query><button>search</button></form>
      <a href="{canary}/escape">canary link</a>""",
    )
    page("/meta", "<!doctype html><title>Meta</title><meta http-equiv=refresh content='0;url=/forbidden'><h1>Meta</h1>")
    page("/redirect-out", "", status=302, headers={"location": f"{SITE}/forbidden"})
    page(
        "/changes",
        """<!doctype html><title>Changes</title>
      <button onclick="fetch('/api/save', {method: 'POST', body: 'x'}).catch(() => {})">post data</button>
      <form action="/allowed" method="post"><input aria-label=field name=f><button>post form</button></form>
      <button data-sandbox-state-change="final-submit" onclick="document.getElementById('done').hidden=false">Confirm</button>
      <div id=done hidden data-sandbox-final-state="submitted"><h2>Done</h2></div>
      <button data-sandbox-state-change="save-draft">Save draft</button>
      <a href="/file.pdf">attachment</a>
      <button onclick="document.getElementById('answer').textContent = confirm('Really?')">ask</button>
      <p id=answer>unanswered</p>
      <label for=q>Query</label><input id=q>""",
    )
    write_entry(
        folder,
        f"{SITE}/file.pdf",
        make_pdf(["attachment"]),
        "application/pdf",
        prov,
        headers={"content-disposition": 'attachment; filename="file.pdf"'},
        body_path="bodies/file.pdf",
    )
    page(
        "/canary",
        f"""<!doctype html><title>Canary</title><h1>Tries every way out</h1>
      <img src="{canary}/img.png">
      <script src="{canary}/script.js"></script>
      <link rel="prefetch" href="{canary}/prefetch">
      <link rel="stylesheet" href="{canary}/style.css">
      <iframe src="{canary}/iframe"></iframe>
      <form id=f action="{canary}/form-post" method=post target="sink"><input name=a value=1></form>
      <iframe name=sink></iframe>
      <script>
        fetch('{canary}/fetch').catch(() => {{}});
        const xhr = new XMLHttpRequest(); xhr.open('GET', '{canary}/xhr'); xhr.onerror = () => {{}}; xhr.send();
        navigator.sendBeacon('{canary}/beacon', 'data');
        try {{ new WebSocket('{canary.replace("http", "ws")}/ws'); }} catch (e) {{}}
        try {{ new EventSource('{canary}/events'); }} catch (e) {{}}
        fetch('/redirect-canary').catch(() => {{}});
        if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch(() => {{}});
        document.getElementById('f').submit();
      </script>""",
    )
    page("/redirect-canary", "", status=302, headers={"location": f"{canary}/redirected"})
    # --- pages for settling: what an action starts is waited for, with no fixed pause ---
    page(
        "/settle",
        """<!doctype html><title>Settle</title><p id=out>idle</p>
      <button onclick="fetch('/api/first.json').then(r => r.json()).then(a => fetch(a.next)).then(r => r.json())
                         .then(b => { document.getElementById('out').textContent = 'word ' + b.word; })">fetch twice</button>
      <button onclick="const x = new XMLHttpRequest(); x.open('GET', '/api/second.json');
                       x.onload = () => { document.getElementById('out').textContent = 'xhr ' + JSON.parse(x.responseText).word; };
                       x.send()">xhr</button>
      <button onclick="setTimeout(() => { location.href = '/second'; }, 0)">later</button>
      <button onclick="history.pushState({}, '', '/settle?pushed=1'); document.title = 'Pushed'">push</button>
      <button onclick="1">nothing</button>
      <label for=shout>Shout</label><input id=shout oninput="this.value = this.value.toUpperCase()">""",
    )
    # --- a page that changes what it shows with no action running (for screenshot reuse) ---
    # (a hostile touch: it replaces MutationObserver, which must not blind the sandbox's counting)
    page(
        "/paint",
        """<!doctype html><title>Paint</title><div id=box style="width:50px;height:50px"></div>
      <script>window.MutationObserver = class { observe() {} };</script>
      <button onclick="1">nothing</button>
      <button onclick="box.animate([{opacity: 1}, {opacity: 0}], {duration: 500, iterations: Infinity})">spin</button>""",
    )
    page(
        "/typing",
        """<!doctype html><title>Typing</title>
      <label for=gone>Gone</label><input id=gone><button onclick="gone.remove()">remove</button>
      <iframe srcdoc="<label for=inner>Inner</label><input id=inner oninput='this.value = this.value.trim()'>"></iframe>""",
    )
    # Requests started by the page's own load and pageshow listeners are part of loading.
    for event in ("load", "pageshow"):
        page(
            f"/on-{event}",
            f"""<!doctype html><title>On {event}</title><p id=out>waiting</p>
          <script>window.addEventListener('{event}', () => fetch('/api/first.json').then(r => r.json())
            .then(a => fetch(a.next)).then(r => r.json()).then(b => {{ out.textContent = '{event} ' + b.word; }}));</script>""",
        )
    page("/api/first.json", '{"next": "/api/second.json"}', "application/json")
    page("/api/second.json", '{"word": "fetched"}', "application/json")
    page("/sw.js", "self.addEventListener('fetch', () => {});", "text/javascript")
    return root


@pytest_asyncio.fixture(scope="session")
async def canary() -> Canary:
    server = Canary()
    await server.start()
    yield server
    await server.stop()


@pytest_asyncio.fixture(scope="session")
async def sandbox(tmp_path_factory, canary) -> Sandbox:
    root = build_test_mirror(tmp_path_factory.mktemp("mirror"), canary.url)
    config = ServerConfig(mirror_roots=(root, MIRRORS_DIR), fallback_provider=None)
    async with Sandbox(config, policies=pack_policy, tasks=PackTasks()) as sb:  # wired as the CLI wires it
        yield sb


@pytest_asyncio.fixture(scope="session")
async def client(sandbox) -> TestClient:
    """A real aiohttp server on a loopback port, sharing the warm sandbox."""
    server = TestServer(create_app(sandbox=sandbox), host="127.0.0.1")
    async with TestClient(server) as test_client:
        yield test_client


# The sandbox's flags with loopback left out of the dead proxy: anything a test's route does not
# answer goes nowhere, loopback goes direct.
PLAIN_ARGS = [arg for arg in chromium_launch_args() if not arg.startswith("--proxy-bypass-list")]


@pytest_asyncio.fixture(scope="session")
async def browser():
    """One plain Chromium, started once: none of the sandbox's router or injected script, and
    loopback reachable (the mirror tests show a page renders from its mirror files alone; the
    trace viewer is served on loopback, which the sandbox's browser refuses). Each test opens its
    own context."""
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=resolve_chromium(None, None), headless=True, args=PLAIN_ARGS
        )
        yield chromium
        await chromium.close()


@pytest_asyncio.fixture
async def run(sandbox):
    run = sandbox.create_run()
    yield run
    await run.close()


async def start(run, url: str = f"{SITE}/", site_key: str = "test-key", **extra) -> dict:
    reply = await run.call(
        "browser_start_session",
        {"provider": "kernel", "site_key": site_key, "clear_cookies": False, "url": url, **extra},
    )
    assert reply["ok"], reply
    return reply["result"]


async def snapshot(run) -> dict:
    reply = await run.call("browser_snapshot", {})
    assert reply["ok"], reply
    return reply["result"]


def ref_of(snapshot_text: str, needle: str) -> str:
    """The ref on the first snapshot line that contains ``needle``."""
    for line in snapshot_text.splitlines():
        if needle in line:
            found = re.search(r"\[ref=(\w+)\]", line)
            if found:
                return found.group(1)
    raise AssertionError(f"{needle!r} not in snapshot:\n{snapshot_text}")


def descendant_argvs(root: int) -> dict[int, list[str]]:
    """The command lines of ``root``'s descendant processes by pid, from /proc (Chromium rewrites its
    children's titles into one string of space-separated switches: split on both)."""
    argvs = {}
    for pid in process_tree(root)[1:]:  # the root comes first
        try:
            argvs[pid] = [a for a in re.split(r"[\0 ]", Path(f"/proc/{pid}/cmdline").read_bytes().decode()) if a]
        except OSError:
            continue
    return argvs
