"""What an import stores as a URL's answer, and what it refuses: a body file another entry still
uses is never written over; a 304 or a redirect to no URL is left out, and said; text its charset
cannot hold is stored as UTF-8 with a content-type that says so; a lone surrogate or an unreadable
attached body is refused, naming its entry. `sandbox mirror check` names a redirect to no URL."""

from __future__ import annotations

from pathlib import Path

import pytest

import sandbox.mirrors.capture  # noqa: F401  (imported before a test drops to nobody)
from sandbox.cli import main
from tests.support.har import har_entry, write_har
from tests.support.nobody import as_nobody, open_folder
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MirrorStore, reconstructed, write_entry


def imported(har: Path, into: Path, capsys) -> tuple[int, str]:
    code = main(["mirror", "import-har", str(har), "--into", str(into)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def html_entry(url: str, text: str) -> dict:
    return har_entry(url, content={"size": len(text), "mimeType": "text/html", "text": text})


def test_an_import_never_writes_over_a_body_file_another_entry_still_uses(tmp_path, capsys):
    """`/` and `/index.html` shared bodies/index.html; importing `/index.html` wrote over it, and `/`
    then failed its sha256."""
    root = tmp_path / "m"
    basis = reconstructed("a hand-made home page")
    for url in ("https://example.org/", "https://example.org/index.html"):
        write_entry(root / "example.org", url, b"<p>home", "text/html", basis, body_path="bodies/index.html")
    code, _ = imported(write_har(tmp_path / "a.har", html_entry("https://example.org/index.html", "new")), root, capsys)
    assert code == 0
    store = MirrorStore.load(root)
    assert store.lookup("https://example.org/").body == b"<p>home"
    assert store.lookup("https://example.org/index.html").body == b"new"
    assert check(root) == []
    # Both replaced at once: the file is free again, and one of them takes it.
    both = [html_entry("https://example.org/", "one"), html_entry("https://example.org/index.html", "two")]
    assert imported(write_har(tmp_path / "b.har", *both), root, capsys)[0] == 0
    assert MirrorStore.load(root).lookup("https://example.org/").body == b"one"
    assert MirrorStore.load(root).lookup("https://example.org/index.html").body == b"two"
    assert check(root) == []


def test_a_304_is_not_the_answer_and_a_later_200_is(tmp_path, capsys):
    """The 304 (no body) was stored as the URL's answer and the 200 after it dropped."""
    entries = [har_entry("https://example.org/a.txt", "", status=304), har_entry("https://example.org/a.txt", "full")]
    code, err = imported(write_har(tmp_path / "a.har", *entries), tmp_path / "m", capsys)
    assert code == 0
    assert "https://example.org/a.txt: a 304 Not Modified response has no body to mirror" in err
    found = MirrorStore.load(tmp_path / "m").lookup("https://example.org/a.txt")
    assert (found.status, found.body) == (200, b"full")


def test_a_redirect_to_no_url_is_not_imported_and_check_names_it(tmp_path, capsys):
    """check raised ValueError (urljoin) with a traceback; the import stored the redirect."""
    redirect = har_entry("https://example.org/r", "", status=302)
    redirect["response"]["headers"] = [{"name": "Location", "value": "http://[oops/"}]
    har = write_har(tmp_path / "a.har", redirect, har_entry("https://example.org/a.txt"))
    code, err = imported(har, tmp_path / "m", capsys)
    assert code == 0 and "https://example.org/r: its redirect location 'http://[oops/' is not a URL" in err
    assert MirrorStore.load(tmp_path / "m").urls() == ["https://example.org/a.txt"]

    basis = reconstructed("a test's redirect")
    write_entry(tmp_path / "n" / "h", "http://h.test/a", b"", "text/html", basis, status=302,
                headers={"location": "http://[oops/"})  # fmt: skip
    assert main(["mirror", "check", str(tmp_path / "n")]) == 1
    out = capsys.readouterr().out
    assert "http://h.test/a: redirect location 'http://[oops/' is not a URL (Invalid IPv6 URL)" in out


@pytest.mark.parametrize(
    ("charset", "text"),
    [("iso-8859-1", "price: 5 €"), ("idna", "a..b"), ("no-such-codec", "plain")],  # idna raises UnicodeError
)
def test_text_its_charset_cannot_hold_is_stored_as_utf8_and_says_so(tmp_path, capsys, charset, text):
    """The UTF-8 bytes were stored under the old charset (mojibake when served); idna's UnicodeError
    was a traceback."""
    entry = har_entry("https://example.org/a.txt", text)
    entry["response"]["headers"] = [{"name": "Content-Type", "value": f'text/plain; charset="{charset}"'}]
    code, err = imported(write_har(tmp_path / "a.har", entry), tmp_path / "m", capsys)
    assert code == 0 and f"its text cannot be written in charset {charset!r}" in err
    found = MirrorStore.load(tmp_path / "m").lookup("https://example.org/a.txt")
    assert found.body == text.encode() and found.headers["content-type"] == "text/plain; charset=utf-8"


def test_text_its_charset_holds_keeps_its_charset(tmp_path, capsys):
    entry = har_entry("https://example.org/a.txt", "café")
    entry["response"]["headers"] = [{"name": "Content-Type", "value": "text/plain; charset=iso-8859-1"}]
    code, err = imported(write_har(tmp_path / "a.har", entry), tmp_path / "m", capsys)
    assert code == 0 and "warning" not in err
    found = MirrorStore.load(tmp_path / "m").lookup("https://example.org/a.txt")
    assert found.body == "café".encode("iso-8859-1") and found.headers["content-type"].endswith("iso-8859-1")


@pytest.mark.parametrize(
    ("where", "url", "text"),
    [
        ("response.content.text", "https://example.org/a.txt", "x\ud800y"),
        ("request.url", "https://example.org/a\udc80.txt", "fine"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_its_entry(tmp_path, capsys, where, url, text):
    """Each ended the import with a UnicodeEncodeError traceback."""
    har = write_har(tmp_path / "a.har", har_entry("https://example.org/fine.txt"), har_entry(url, text))
    code, err = imported(har, tmp_path / "m", capsys)
    assert code == 2 and f"log.entries[1].{where}: holds a lone surrogate" in err and "nothing was written" in err
    assert not (tmp_path / "m").exists()


def test_an_attached_body_it_may_not_read_is_refused_naming_its_entry(capsys):
    """A PermissionError traceback."""
    with open_folder() as folder:
        (folder / "body.bin").write_text("secret")
        (folder / "body.bin").chmod(0)
        content = {"size": 6, "mimeType": "text/plain", "_file": "body.bin"}
        attached = har_entry("https://example.org/a.txt", content=content)
        write_har(folder / "a.har", har_entry("https://example.org/fine.txt"), attached).chmod(0o644)
        with as_nobody():
            code, err = imported(folder / "a.har", folder / "m", capsys)
        assert code == 2 and "log.entries[1].response.content._file: cannot read 'body.bin' (Permission denied)" in err
        assert not (folder / "m").exists()
