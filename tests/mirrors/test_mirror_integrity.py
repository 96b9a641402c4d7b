"""What a mirror serves is what its manifests say: the checksum that stamps traces covers each
entry whole (a changed status or header changes it), a body file edited after it was recorded is
refused rather than served, a status must be an HTTP status, a reconstruction must state a basis,
and a run cannot be given a mirror folder that is not there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sandbox.cli import main
from tests.support.hostile import HOSTILE, hostile_run
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MANIFEST, MirrorStore, reconstructed, write_entry
from toolserver.contract.trace import parse_trace

PROVENANCE = reconstructed("pages written for the mirror integrity tests")


def one_page_mirror(root: Path, body: bytes = b"<title>recorded</title>RECORDED TEXT") -> Path:
    """A mirror root with the one page ``HOSTILE/page``: its host folder."""
    folder = root / "hostile.sandbox.example"
    write_entry(folder, f"{HOSTILE}/page", body, "text/html", PROVENANCE, body_path="bodies/page.html")
    return folder


def edit_entry(folder: Path, **changes) -> None:
    manifest = json.loads((folder / MANIFEST).read_text())
    for key, value in changes.items():
        if key == "headers":
            manifest["entries"][0]["headers"].update(value)
        else:
            manifest["entries"][0][key] = value
    (folder / MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "changes",
    [
        {"status": 404},
        {"headers": {"content-type": "text/plain"}},
        {"headers": {"content-disposition": "attachment"}},
        {"status": 302, "headers": {"location": "/elsewhere"}},
        {"provenance": {"kind": "reconstructed", "basis": "another basis"}},
    ],
)
def test_the_checksum_changes_with_any_part_of_an_entry(tmp_path, changes):
    """It hashed each URL with its body's sha256 only: a page turned into a 404, a redirect or a
    download kept the checksum, so `sandbox replay` said nothing of mirrors that differ."""
    folder = one_page_mirror(tmp_path / "mirror")
    before = MirrorStore.load(tmp_path / "mirror").checksum()
    edit_entry(folder, **changes)
    assert MirrorStore.load(tmp_path / "mirror").checksum() != before


def test_the_checksum_is_the_same_for_the_same_entries_in_another_folder(tmp_path):
    one_page_mirror(tmp_path / "one")
    one_page_mirror(tmp_path / "two")
    assert MirrorStore.load(tmp_path / "one").checksum() == MirrorStore.load(tmp_path / "two").checksum()


def test_a_body_edited_after_it_was_recorded_is_refused(tmp_path):
    """It was served as if it were the recorded page (the manifest's sha256 was only a cache key)."""
    folder = one_page_mirror(tmp_path / "mirror")
    (folder / "bodies" / "page.html").write_bytes(b"<title>edited</title>EDITED TEXT")
    store = MirrorStore.load(tmp_path / "mirror")
    said = (
        r"mirror entry .*/page: body file .*bodies/page.html has sha256 [0-9a-f]{12}…, "
        r"but its manifest says [0-9a-f]{12}…: the file changed after it was recorded"
    )
    with pytest.raises(ValueError, match=said):
        store.lookup(f"{HOSTILE}/page")
    assert store.cached(f"{HOSTILE}/page") is None  # nothing kept in memory either


def test_a_body_is_hashed_when_read_from_disk_and_then_served_from_memory(tmp_path):
    folder = one_page_mirror(tmp_path / "mirror")
    store = MirrorStore.load(tmp_path / "mirror")
    assert store.lookup(f"{HOSTILE}/page").body.endswith(b"RECORDED TEXT")
    (folder / "bodies" / "page.html").unlink()  # the body is in memory now: no second read, no second hash
    assert store.lookup(f"{HOSTILE}/page").body.endswith(b"RECORDED TEXT")


async def test_the_browser_is_not_served_a_body_edited_after_it_was_recorded(own_sandbox, tmp_path):
    """The page is refused, never shown, and the trace says which entry and which file."""
    folder = one_page_mirror(tmp_path / "mirror")
    (folder / "bodies" / "page.html").write_bytes(b"<title>edited</title>EDITED TEXT")
    async with own_sandbox() as own:
        run = hostile_run(own, tmp_path / "mirror", "/page", mode="observe")
        opened = {"provider": "kernel", "site_key": "edited", "url": HOSTILE + "/page"}
        started = await run.call("browser_start_session", opened)
        snapshot = await run.call("browser_snapshot", {})
        assert "EDITED" not in str(started) and "EDITED" not in str(snapshot)
        faults = [e.data for e in parse_trace(run.trace.text()).events if e.kind == "server_fault"]
        assert faults and "bodies/page.html has sha256" in faults[0]["error"]
        assert f"mirror entry {HOSTILE}/page" in faults[0]["error"]


@pytest.mark.parametrize("status", [99, 600, 0])
def test_a_status_that_is_no_http_status_is_refused_at_load_and_check(tmp_path, capsys, status):
    """Status 99 was loaded, checked clean and served."""
    folder = one_page_mirror(tmp_path / "mirror")
    edit_entry(folder, status=status)
    said = f"entries.0.status: {status} is not an HTTP status (100 to 599)"
    with pytest.raises(ValueError, match=rf"invalid mirror manifest: {re.escape(said)}"):
        MirrorStore.load(tmp_path / "mirror")
    assert check(tmp_path / "mirror") == [f"{folder / MANIFEST}: invalid manifest: {said}"]
    assert main(["mirror", "check", str(tmp_path / "mirror")]) == 1


def test_write_entry_refuses_a_bad_status_before_writing_its_body(tmp_path):
    """The body file was written first, then the entry refused: an orphan file was left behind."""
    folder = tmp_path / "mirror" / "hostile.sandbox.example"
    with pytest.raises(ValueError, match="99 is not an HTTP status"):
        write_entry(folder, f"{HOSTILE}/odd", b"odd", "text/html", PROVENANCE, status=99)
    assert not folder.exists()


@pytest.mark.parametrize("basis", [" ", "\n\t", ""])
def test_a_reconstruction_whose_basis_is_blank_is_said(tmp_path, basis):
    folder = one_page_mirror(tmp_path / "mirror")
    edit_entry(folder, provenance={"kind": "reconstructed", "basis": basis})
    assert check(tmp_path / "mirror") == [f"{folder / MANIFEST}: {HOSTILE}/page: reconstructed entry without a basis"]


async def test_a_run_is_refused_a_mirror_folder_that_is_not_there(sandbox, tmp_path):
    """It was given an empty mirror, and every page was refused as not mirrored (ServerConfig
    refused the same folder by name)."""
    runs = dict(sandbox.runs)
    with pytest.raises(ValueError, match=f"no such mirror folder: {tmp_path / 'absent'}"):
        sandbox.create_run(mirror_roots=(tmp_path / "absent",))
    assert sandbox.runs == runs
