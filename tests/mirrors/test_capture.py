"""``sandbox mirror capture|import-har|check|list`` against a real site on a loopback port.

The site (aiohttp, in its own thread so the CLI runs in-process and synchronously) serves an
HTML page reached through a 302, which loads a gzip-compressed stylesheet, a script that
fetch()es a JSON endpoint, and an image; the site logs every response it sends, so "every
response is recorded" is checked against what the server really sent, byte for byte.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web
from playwright.sync_api import sync_playwright

from sandbox.cli import main
from sandbox.mirrors.capture import capture_launch_args
from tests.support.har import har_entry
from toolserver.browser.chromium import resolve_chromium
from toolserver.contract.mirrors import MANIFEST, Manifest, MirrorStore

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PAGE = b"""<!doctype html><html><head><title>Capture me</title>
<link rel="stylesheet" href="/static/site.css"></head>
<body><h1>Capture me</h1><img src="/img/logo.png" alt="logo"><p id="data">waiting</p>
<script src="/static/app.js"></script></body></html>"""
CSS = b"body { font-family: sans-serif; color: #123456 }\n" * 40  # long enough to be worth gzip
SCRIPT = (
    b"fetch('/api/data.json').then(r => r.json())"
    b".then(d => { document.getElementById('data').textContent = d.message; });"
)
DATA = json.dumps({"message": "fetched \u00e9t\u00e9", "items": [1, 2, 3]}).encode()


@dataclass
class Site:
    """The loopback site; ``sent`` logs (path_qs, status, body) of every response it sent."""

    url: str = ""
    sent: list[tuple[str, int, bytes]] = field(default_factory=list)

    def app(self) -> web.Application:
        @web.middleware
        async def log(request: web.Request, handler):
            response = await handler(request)
            body = b"" if 300 <= response.status < 400 else bytes(response.body or b"")
            self.sent.append((request.path_qs, response.status, body))
            return response

        async def page(request: web.Request) -> web.Response:
            response = web.Response(body=PAGE, content_type="text/html", charset="utf-8")
            response.set_cookie("session", "secret")
            return response

        async def css(request: web.Request) -> web.Response:
            response = web.Response(body=CSS, content_type="text/css")
            response.enable_compression(web.ContentCoding.gzip)
            return response

        def static(body: bytes, content_type: str):
            async def handler(request: web.Request) -> web.Response:
                return web.Response(body=body, content_type=content_type)

            return handler

        async def start(request: web.Request) -> web.Response:
            return web.Response(status=302, headers={"Location": "/page"})

        app = web.Application(middlewares=[log])
        app.router.add_get("/start", start)
        app.router.add_get("/page", page)
        app.router.add_get("/static/site.css", css)
        app.router.add_get("/static/app.js", static(SCRIPT, "text/javascript"))
        app.router.add_get("/img/logo.png", static(PNG_1X1, "image/png"))
        app.router.add_get("/api/data.json", static(DATA, "application/json"))
        return app

    def sent_urls(self) -> dict[str, tuple[int, bytes]]:
        return {
            f"{self.url}{path}": (status, body) for path, status, body in self.sent if path != "/favicon.ico"
        }  # asked for by the browser itself, not by the page


@pytest.fixture(scope="module")
def site():
    """The site on its own event loop in a thread: the CLI under test calls asyncio.run()."""
    server, loop, ready = Site(), asyncio.new_event_loop(), threading.Event()
    runner = web.AppRunner(server.app())

    async def start() -> None:
        await runner.setup()
        tcp = web.TCPSite(runner, "127.0.0.1", 0)
        await tcp.start()
        server.url = f"http://127.0.0.1:{tcp._server.sockets[0].getsockname()[1]}"
        ready.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    assert ready.wait(10), "loopback site did not start"
    yield server
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def host_folder(site: Site) -> str:
    return site.url.removeprefix("http://").replace(":", "_")


@pytest.fixture(scope="module")
def captured(site, tmp_path_factory) -> tuple[Path, dict[str, tuple[int, bytes]], int]:
    """One capture of the site through the CLI: (mirror root, responses the site sent, exit code)."""
    root = tmp_path_factory.mktemp("captured")
    site.sent.clear()
    code = main(["mirror", "capture", f"{site.url}/start", "--into", str(root), "--wait-ms", "100"])
    return root, site.sent_urls(), code


def manifest_of(root: Path, site: Site) -> Manifest:
    return Manifest.model_validate_json((root / host_folder(site) / MANIFEST).read_text(encoding="utf-8"))


def test_capture_records_every_response_as_captured(captured, site):
    root, sent, code = captured
    assert code == 0
    assert set(sent) == {
        f"{site.url}{p}"
        for p in ("/start", "/page", "/static/site.css", "/static/app.js", "/img/logo.png", "/api/data.json")
    }
    entries = {entry.url: entry for entry in manifest_of(root, site).entries}
    assert set(entries) == set(sent)
    store = MirrorStore.load(root)
    for url, (status, body) in sent.items():
        entry = entries[url]
        assert entry.provenance.kind == "captured" and entry.provenance.captured_at, url
        assert entry.status == status, url
        assert store.lookup(url).body == body, url
        assert not {"set-cookie", "content-length", "content-encoding", "transfer-encoding", "connection"} & set(
            entry.headers
        ), (url, entry.headers)


def test_capture_keeps_redirects_and_content_types(captured, site):
    root, _, _ = captured
    store = MirrorStore.load(root)
    redirect = store.lookup(f"{site.url}/start")
    assert (redirect.status, redirect.headers["location"], redirect.body) == (302, "/page", b"")
    assert store.lookup(f"{site.url}/static/site.css").headers["content-type"] == "text/css"
    assert store.lookup(f"{site.url}/static/site.css").body == CSS  # stored decoded, not gzip
    assert store.lookup(f"{site.url}/api/data.json").headers["content-type"] == "application/json"
    assert store.lookup(f"{site.url}/img/logo.png#fragment").body == PNG_1X1
    assert store.lookup(f"{site.url}/not-visited") is None


def test_captured_copy_passes_check(captured, capsys):
    root, _, _ = captured
    assert main(["mirror", "check", str(root)]) == 0
    assert "6 entries in 1 manifest(s) checked: no problems" in capsys.readouterr().out


def test_list_shows_every_url(captured, site, capsys):
    root, sent, _ = captured
    assert main(["mirror", "list", str(root), "--json"]) == 0
    rows = {row["url"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(sent)
    assert rows[f"{site.url}/img/logo.png"]["content_type"] == "image/png"
    assert {row["provenance"] for row in rows.values()} == {"captured"}
    assert main(["mirror", "list", str(root)]) == 0
    out = capsys.readouterr().out
    assert "302  application/octet-stream" in out and out.rstrip().endswith("6 URL(s)")  # no type sent


def test_capture_resolves_host_names(site, tmp_path):
    """The tool server's Chromium resolves no name (its requests never leave it); capture's copied
    that rule and could reach no site by name, only 127.0.0.1."""
    named = site.url.replace("127.0.0.1", "localhost")
    assert main(["mirror", "capture", f"{named}/start", "--into", str(tmp_path), "--wait-ms", "100"]) == 0
    assert MirrorStore.load(tmp_path).lookup(f"{named}/page") is not None


@pytest.mark.parametrize("url", ["ftp://example.org/", "http://[::1/page", "https://[example.org]/"])
def test_capture_of_a_url_no_browser_asks_for_exits_2(tmp_path, capsys, url):
    assert main(["mirror", "capture", url, "--into", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert f"cannot capture {url!r}" in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def test_import_har_recorded_by_playwright(site, tmp_path, capsys):
    har_path = tmp_path / "site.har"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=resolve_chromium(None, None), headless=True, args=capture_launch_args()
        )
        context = browser.new_context(record_har_path=str(har_path), record_har_content="embed")
        page = context.new_page()
        page.goto(f"{site.url}/start")
        page.wait_for_function("document.getElementById('data').textContent !== 'waiting'")
        context.close()
        browser.close()
    har = json.loads(har_path.read_text())
    started = {e["request"]["url"]: e["startedDateTime"] for e in har["log"]["entries"]}

    root = tmp_path / "mirror"
    assert main(["mirror", "import-har", str(har_path), "--into", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"{host_folder(site)}: 6 URL(s)" in out
    store = MirrorStore.load(root)
    assert store.lookup(f"{site.url}/img/logo.png").body == PNG_1X1  # base64 in the HAR
    assert store.lookup(f"{site.url}/static/site.css").body == CSS  # text in the HAR
    assert store.lookup(f"{site.url}/api/data.json").body == DATA  # non-ASCII JSON text
    assert store.lookup(f"{site.url}/page").body == PAGE
    redirect = store.lookup(f"{site.url}/start")
    assert (redirect.status, redirect.headers["location"], redirect.body) == (302, "/page", b"")
    for url in store.urls():
        provenance = store.lookup(url).entry.provenance
        assert provenance.kind == "captured"
        assert provenance.captured_at[:19] == started[url][:19]  # the entry's startedDateTime
    assert main(["mirror", "check", str(root)]) == 0


def test_import_har_skips_unusable_entries_and_stores_urls_as_requested(tmp_path, capsys):
    def entry(url: str, content: dict) -> dict:
        return har_entry(url, content=content)

    har = tmp_path / "partial.har"
    har.write_text(
        json.dumps(
            {
                "log": {
                    "entries": [
                        entry("https://example.org/kept.txt", {"size": 5, "mimeType": "text/plain", "text": "hello"}),
                        entry("https://example.org/frag.txt#part", {"size": 2, "mimeType": "text/plain", "text": "hi"}),
                        entry("https://example.org/lost.txt", {"size": 5, "mimeType": "text/plain"}),
                        # hand-edited: stored as a browser requests it, or it would never match
                        entry("HTTPS://Example.ORG:443/a/../odd name.txt", {"size": 3, "text": "odd"}),
                        entry("https://user:p@ss@example.org/secret.txt", {"size": 3, "text": "pwd"}),
                        entry("https://example.org/search?q=a|b{c}", {"size": 2, "text": "ok"}),  # as Chromium sends it
                        entry("data:text/plain,inline", {"size": 6, "text": "inline"}),
                        entry("https://[example.org]/bracketed.txt", {"size": 2, "text": "no"}),  # no IPv6 host
                    ]
                }
            }
        )
    )
    assert main(["mirror", "import-har", str(har), "--into", str(tmp_path / "m")]) == 0
    captured_io = capsys.readouterr()
    assert "https://example.org/lost.txt: the HAR holds no response body" in captured_io.err
    assert "https://example.org/odd%20name.txt, the form a browser requests" in captured_io.err
    assert "https://…@example.org/secret.txt: no browser requests this URL" in captured_io.err
    assert "https://[example.org]/bracketed.txt: not a URL (" in captured_io.err
    assert "p@ss" not in captured_io.err and "search?q=a" not in captured_io.err  # as requested: kept
    store = MirrorStore.load(tmp_path / "m")
    assert store.urls() == [  # no fragment kept
        "https://example.org/frag.txt",
        "https://example.org/kept.txt",
        "https://example.org/odd%20name.txt",
        "https://example.org/search?q=a|b{c}",
    ]
    assert store.lookup("https://example.org/kept.txt").entry.provenance.captured_at == "2024-05-01T10:00:00+00:00"
    assert main(["mirror", "check", str(tmp_path / "m")]) == 0  # it said "URL has a fragment"


@pytest.mark.parametrize(
    "content, message",
    [
        ("<html>not json</html>", "is not JSON"),
        ("[" * 100_000 + "]" * 100_000, "is not JSON (nested too deep to read)"),
        ('{"entries": []}', "not a HAR file"),
        (None, "cannot read HAR file"),
    ],
)
def test_import_of_a_bad_file_exits_2(tmp_path, capsys, content, message):
    path = tmp_path / "input.har"
    if content is not None:
        path.write_text(content)
    assert main(["mirror", "import-har", str(path), "--into", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


def copy_of_capture(captured, site, tmp_path) -> tuple[Path, Path]:
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(captured[0], root)
    return root, root / host_folder(site)


def test_check_names_a_corrupted_manifest(captured, site, tmp_path, capsys):
    root, folder = copy_of_capture(captured, site, tmp_path)
    (folder / MANIFEST).write_text('{"entries": [{"url": "x"}')
    assert main(["mirror", "check", str(root)]) == 1
    assert f"{folder / MANIFEST}: invalid manifest" in capsys.readouterr().out


def test_list_and_check_name_each_wrong_field_of_a_manifest_in_one_line(tmp_path, capsys):
    folder = tmp_path / "example.org"
    folder.mkdir()
    (folder / MANIFEST).write_text(json.dumps({"origin": 5, "entries": [{"url": 7}]}))
    fields = (
        "entries.0.url: Input should be a valid string; entries.0.body: Field required; entries.0.sha256: Field "
        "required; entries.0.provenance: Field required; origin: Extra inputs are not permitted"
    )
    assert main(["mirror", "list", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"sandbox mirror: {folder / MANIFEST}: invalid mirror manifest: {fields}"
    assert main(["mirror", "check", str(tmp_path)]) == 1
    assert f"{folder / MANIFEST}: invalid manifest: {fields}\n" in capsys.readouterr().out


def test_check_names_a_tampered_body(captured, site, tmp_path, capsys):
    root, folder = copy_of_capture(captured, site, tmp_path)
    entry = next(e for e in manifest_of(root, site).entries if e.url.endswith("/api/data.json"))
    (folder / entry.body).write_bytes(b'{"message": "tampered"}')
    assert main(["mirror", "check", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"{entry.url}: sha256 mismatch" in out and "1 problem(s)" in out


def test_check_names_an_escaping_body_path(captured, site, tmp_path, capsys):
    root, folder = copy_of_capture(captured, site, tmp_path)
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["entries"][0]["body"] = "../../outside.txt"
    (folder / MANIFEST).write_text(json.dumps(manifest))
    assert main(["mirror", "check", str(root)]) == 1
    assert "'../../outside.txt' escapes its mirror folder" in capsys.readouterr().out


def test_bad_usage_exits_2(tmp_path, capsys):
    assert main(["mirror"]) == 2
    assert main(["mirror", "check", str(tmp_path / "absent")]) == 2
    assert main(["mirror", "list", str(tmp_path / "absent")]) == 2
    assert main(["mirror", "capture", "ftp://example.org/", "--into", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no such mirror directory" in err and "give an absolute http(s) URL" in err
    with pytest.raises(SystemExit) as exc:
        # a host that does not resolve: were the check to regress, capture (which has the network) reaches nothing
        main(["mirror", "capture", "https://capture.invalid/", "--into", str(tmp_path), "--wait-ms", "-5"])
    assert exc.value.code == 2


def test_body_paths_stay_unique_short_and_inside_bodies():
    from sandbox.mirrors.capture import body_path_for

    taken = {"bodies/a.html": {"http://h/a.html"}}
    assert body_path_for("http://h/a.html", "text/html", taken) == "bodies/a.html"  # same URL again
    other = body_path_for("https://h/a.html", "text/html", taken)  # same path, other URL
    assert other.startswith("bodies/a__u") and other.endswith(".html")
    long = body_path_for("https://h/" + "segment/" * 60 + "file.js", "text/javascript", {})
    assert len(long) < 160 and long.endswith(".js")
    assert "/" not in body_path_for("https://h/a%2F..%2Fb?x=1", "text/plain", {}).removeprefix("bodies/")


def test_a_get_response_wins_over_other_methods_for_one_url():
    from sandbox.mirrors.capture import RecordedResponse, choose_responses
    from toolserver.contract.mirrors import captured as captured_provenance

    def response(method: str, body: bytes) -> RecordedResponse:
        return RecordedResponse(
            "https://h/api", method, 200, {"content-type": "text/plain"}, body, captured_provenance()
        )

    chosen, notes = choose_responses([response("POST", b"post"), response("GET", b"get"), response("GET", b"again")])
    assert [r.body for r in chosen] == [b"get"]
    assert any("kept the GET response" in note for note in notes)
    assert "https://h/api: a later GET response (status 200) not recorded: the first one answers this URL" in notes


def test_check_names_a_redirect_loop_and_a_url_two_roots_serve(tmp_path, capsys):
    """Both passed as "no problems": the loop then cost a run 15 s and 1,013 trace lines, and the
    later root's entry was served without a word."""
    from toolserver.contract.mirrors import reconstructed, write_entry

    basis = reconstructed("a test's own pages")
    first, second = tmp_path / "first" / "h", tmp_path / "second" / "h"
    for url, to in (("http://h.test/a", "/b"), ("http://h.test/b", "http://h.test/a")):
        write_entry(first, url, b"", "text/html", basis, status=302, headers={"location": to})
    write_entry(first, "http://h.test/page", b"<p>first", "text/html", basis)
    write_entry(second, "http://h.test/page", b"<p>second", "text/html", basis)
    write_entry(second, "http://h.test/café", b"<p>never asked for", "text/html", basis)
    write_entry(second, "http://h.test/lie.pdf", b"<p>no pdf", "application/pdf", basis)
    assert main(["mirror", "check", str(tmp_path / "first"), str(tmp_path / "second")]) == 1
    said = capsys.readouterr().out
    assert "http://h.test/café: never requested as written: a browser requests it as http://h.test/caf%C3%A9" in said
    assert "http://h.test/lie.pdf: content-type 'application/pdf', but the body is no PDF" in said
    assert "http://h.test/a: redirect loop: http://h.test/a -> http://h.test/b -> http://h.test/a" in said
    assert said.count("redirect loop") == 1  # one loop, said once
    served = f"{second / 'manifest.json'}: http://h.test/page: also in {first / 'manifest.json'}"
    assert f"{served}; this entry is the one served" in said
