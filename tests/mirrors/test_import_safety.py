"""`sandbox mirror import-har` (and capture, which stores through the same code) either writes
everything or nothing: a bad entry, a bad manifest in a later host folder or a folder it cannot
write is refused with exit 2 before any file changes. A HAR field of the wrong type is named with
its entry, not a traceback; a host folder given as --into is refused; and `sandbox mirror check`
names a manifest that no loader reads."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from sandbox.cli import main
from tests.support.har import har_entry
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MANIFEST, MirrorStore, reconstructed, write_entry


def write_har(path: Path, *entries: dict) -> Path:
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": list(entries)}}))
    return path


def files_under(root: Path) -> dict[str, str]:
    """Every file under ``root`` and its sha256: what an import must leave as it was."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def imported(har: Path, into: Path, capsys) -> tuple[int, str]:
    code = main(["mirror", "import-har", str(har), "--into", str(into)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def set_field(entry: dict, where: str, value) -> dict:
    entry = copy.deepcopy(entry)
    *path, last = where.split(".")
    part = entry
    for key in path:
        part = part[int(key)] if key.isdigit() else part[key]
    part[last] = value
    return entry


@pytest.mark.parametrize(
    "where, value, named",
    [
        ("request.method", None, "request.method: Input should be a valid string"),
        ("response.content", "x", "response.content: Input should be a valid dictionary"),
        ("response.headers.0.name", 5, "response.headers.0.name: Input should be a valid string"),
        ("response.headers.0.value", 5, "response.headers.0.value: Input should be a valid string"),
        ("response.content.text", 5, "response.content.text: Input should be a valid string"),
        ("response.content._file", 5, "response.content._file: Input should be a valid string"),
        ("response.redirectURL", 7, "response.redirectURL: Input should be a valid string"),
        ("request.url", ["https://example.org/"], "request.url: Input should be a valid string"),
    ],
)
def test_a_har_field_of_the_wrong_type_is_named_with_its_entry(tmp_path, capsys, where, value, named):
    """Each of these ended the import with a traceback (exit 1)."""
    bad = set_field(har_entry("https://b.example.org/bad.txt"), where, value)
    har = write_har(tmp_path / "bad.har", har_entry("https://a.example.org/fine.txt"), bad)
    code, err = imported(har, tmp_path / "m", capsys)
    assert code == 2
    assert f"log.entries[1] is not a HAR entry: {named}" in err and "nothing was written" in err
    assert not (tmp_path / "m").exists()


def test_base64_text_of_the_wrong_type_is_named(tmp_path, capsys):
    entry = har_entry("https://example.org/logo.png")
    entry["response"]["content"].update(text=5, encoding="base64")
    code, err = imported(write_har(tmp_path / "bad.har", entry), tmp_path / "m", capsys)
    assert code == 2 and "log.entries[0] is not a HAR entry: response.content.text: Input should be" in err


def test_a_status_that_is_no_http_status_is_refused_at_import(tmp_path, capsys):
    """Status 99 was imported, and then served."""
    har = write_har(
        tmp_path / "odd.har",
        har_entry("https://example.org/a.txt"),
        har_entry("https://example.org/odd.txt", status=99),
    )
    code, err = imported(har, tmp_path / "m", capsys)
    assert code == 2 and "log.entries[1].response.status: 99 is not an HTTP status (100 to 599)" in err
    assert not (tmp_path / "m").exists()


def test_a_bad_manifest_in_a_later_host_folder_leaves_every_folder_as_it_was(tmp_path, capsys):
    """The first host folder was written, then the second one's manifest refused, and the command
    exited 2 as if nothing had been recorded."""
    root = tmp_path / "m"
    (root / "b.example.org").mkdir(parents=True)
    (root / "b.example.org" / MANIFEST).write_text('{"entries": [{"url": 5}]}')
    before = files_under(root)
    har = write_har(
        tmp_path / "two.har", har_entry("https://a.example.org/one.txt"), har_entry("https://b.example.org/two.txt")
    )
    code, err = imported(har, root, capsys)
    assert code == 2 and f"{root / 'b.example.org' / MANIFEST}: invalid mirror manifest" in err
    assert files_under(root) == before and not (root / "a.example.org").exists()


def test_a_folder_it_cannot_write_leaves_every_folder_as_it_was(tmp_path, capsys):
    """An OSError midway: the first host folder was written, its served body overwritten, and
    exit 2 said nothing was recorded. Here the second host folder's name is taken by a file."""
    root = tmp_path / "m"
    served = root / "a.example.org"
    write_entry(served, "https://a.example.org/one.txt", b"served before", "text/plain", reconstructed("a test page"))
    (root / "b.example.org").write_text("a file where the host folder would go")
    before = files_under(root)
    har = write_har(
        tmp_path / "two.har",
        har_entry("https://a.example.org/new.txt"),
        har_entry("https://a.example.org/one.txt", text="imported"),  # the page it already serves
        har_entry("https://b.example.org/two.txt"),
    )
    code, err = imported(har, root, capsys)
    assert code == 2 and f"cannot write into {root}" in err and "nothing was written" in err
    assert files_under(root) == before
    assert sorted(p.name for p in served.rglob("*")) == ["bodies", "manifest.json", "one.txt"]  # no temporary file left
    assert MirrorStore.load(root).lookup("https://a.example.org/one.txt").body == b"served before"
    assert check(root / "a.example.org") == []


def test_a_reimport_replaces_the_body_it_serves(tmp_path, capsys):
    root = tmp_path / "m"
    for text in ("first", "second"):
        assert (
            imported(write_har(tmp_path / "page.har", har_entry("https://example.org/page.txt", text)), root, capsys)[0]
            == 0
        )
    assert MirrorStore.load(root).lookup("https://example.org/page.txt").body == b"second"
    assert check(root) == []
    assert [p.name for p in (root / "example.org" / "bodies").iterdir()] == ["page.txt"]


def test_a_host_folder_given_as_into_is_refused(tmp_path, capsys):
    """Entries were written into folders under the host folder, which no loader reads, and
    `sandbox mirror check` called it clean."""
    root = tmp_path / "m"
    assert imported(write_har(tmp_path / "a.har", har_entry("https://a.example.org/one.txt")), root, capsys)[0] == 0
    host = root / "a.example.org"
    before = files_under(root)
    code, err = imported(write_har(tmp_path / "b.har", har_entry("https://b.example.org/two.txt")), host, capsys)
    assert code == 2
    assert f"{host} holds a {MANIFEST}: it is a host folder, not a mirror root" in err
    assert f"give the mirror root above it (e.g. {root}) as --into" in err
    assert files_under(root) == before


def test_capture_into_a_host_folder_is_refused_before_the_browser_starts(tmp_path, capsys):
    (tmp_path / MANIFEST).write_text('{"entries": []}')
    code = main(["mirror", "capture", "http://127.0.0.1:9/page", "--into", str(tmp_path), "--chromium", "/nonexistent"])
    assert code == 2 and f"{tmp_path} holds a {MANIFEST}: it is a host folder" in capsys.readouterr().err


def test_check_names_a_manifest_no_loader_reads(tmp_path, capsys):
    root = tmp_path / "m"
    assert imported(write_har(tmp_path / "a.har", har_entry("https://a.example.org/one.txt")), root, capsys)[0] == 0
    host = root / "a.example.org"
    # What an import into a host folder wrote before, and a host folder one level too deep.
    write_entry(host / "b.example.org", "https://b.example.org/two.txt", b"two", "text/plain", reconstructed("test"))
    write_entry(root / "more" / "c.example.org", "https://c.example.org/3.txt", b"3", "text/plain", reconstructed("t"))
    assert check(host) == [
        f"{host / 'b.example.org' / MANIFEST}: never read: {host} holds a {MANIFEST}, so it is read as one host "
        "folder and the folders under it are not; move its folder to sit directly under a mirror root"
    ]
    assert check(root) == [
        f"{host / 'b.example.org' / MANIFEST}: never read: the loaders read {root}/<host>/{MANIFEST}, one folder "
        "below the root, and nothing deeper; move its folder to sit directly under a mirror root",
        f"{root / 'more' / 'c.example.org' / MANIFEST}: never read: the loaders read {root}/<host>/{MANIFEST}, one "
        "folder below the root, and nothing deeper; move its folder to sit directly under a mirror root",
    ]
    assert main(["mirror", "check", str(root)]) == 1


def test_check_does_not_take_a_body_named_manifest_json_for_a_manifest(tmp_path, capsys):
    har = write_har(tmp_path / "a.har", har_entry("https://example.org/manifest.json", '{"name": "app"}'))
    assert imported(har, tmp_path / "m", capsys)[0] == 0
    assert (tmp_path / "m" / "example.org" / "bodies" / MANIFEST).is_file()
    assert check(tmp_path / "m") == []
