"""Odd files where a mirror's body should be: a symbolic link out of the folder, a link loop, a
folder, a file the server may not read. The store serves none of them, and `sandbox mirror check`
names each one with its path instead of stopping with a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sandbox import PROJECT_ROOT
from sandbox.cli import main
from tests.support.hostile import HOSTILE, hostile_run
from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MirrorStore, reconstructed, write_entry
from toolserver.contract.trace import parse_trace

PROVENANCE = reconstructed("odd body files written for the mirror store's tests")


def mirror_with(root: Path, **bodies: str) -> Path:
    """A mirror root with one host folder: an entry per name, its body file ``bodies/<name>.html``
    (the caller then turns it into something odd)."""
    folder = root / "hostile.sandbox.example"
    for name in bodies:
        write_entry(folder, f"{HOSTILE}/{name}", bodies[name].encode(), "text/html", PROVENANCE,
                    body_path=f"bodies/{name}.html")  # fmt: skip
    return folder


def test_a_body_linked_out_of_its_folder_is_never_read(tmp_path):
    outside = tmp_path / "outside.html"
    outside.write_text("SECRET OUTSIDE THE MIRROR")
    folder = mirror_with(tmp_path / "mirror", out="placeholder")
    (folder / "bodies" / "out.html").unlink()
    (folder / "bodies" / "out.html").symlink_to(outside)
    with pytest.raises(ValueError, match="escapes its mirror folder"):
        MirrorStore.load(tmp_path / "mirror").lookup(f"{HOSTILE}/out")
    [problem] = check(tmp_path / "mirror")
    assert f"{HOSTILE}/out" in problem and "escapes its mirror folder" in problem


async def test_the_browser_is_not_served_a_body_linked_out_of_its_folder(own_sandbox, tmp_path):
    """A symbolic link in a mirror to a file outside it: the page is refused, never shown, and
    the trace says which entry and which file."""
    outside = tmp_path / "outside.html"
    outside.write_text("<title>outside</title>SECRET OUTSIDE THE MIRROR")
    folder = mirror_with(tmp_path / "mirror", out="placeholder")
    (folder / "bodies" / "out.html").unlink()
    (folder / "bodies" / "out.html").symlink_to(outside)
    async with own_sandbox() as own:
        run = hostile_run(own, tmp_path / "mirror", "/out", mode="observe")
        opened = {"provider": "kernel", "site_key": "odd", "url": HOSTILE + "/out"}
        started = await run.call("browser_start_session", opened)
        snapshot = await run.call("browser_snapshot", {})
        assert "SECRET" not in str(started) and "SECRET" not in str(snapshot)
        faults = [e.data for e in parse_trace(run.trace.text()).events if e.kind == "server_fault"]
        assert faults and "bodies/out.html" in faults[0]["error"] and "escapes its mirror folder" in faults[0]["error"]


def test_a_body_that_is_a_link_loop_is_said_not_raised(tmp_path, capsys):
    """`sandbox mirror check` ended with a traceback (RuntimeError: Symlink loop) and said nothing
    of the other entries; the router recorded the bare RuntimeError."""
    folder = mirror_with(tmp_path / "mirror", loop="placeholder", fine="fine")
    (folder / "bodies" / "loop.html").unlink()
    (folder / "bodies" / "loop.html").symlink_to("loop.html")
    with pytest.raises(ValueError, match="bodies/loop.html.*a loop of symbolic links"):
        MirrorStore.load(tmp_path / "mirror").lookup(f"{HOSTILE}/loop")
    assert main(["mirror", "check", str(tmp_path / "mirror")]) == 1
    out = capsys.readouterr().out
    assert f"{HOSTILE}/loop: body path 'bodies/loop.html' in mirror folder {folder} cannot be resolved" in out
    assert "2 entries in 1 manifest(s) checked: 1 problem(s)" in out


def test_a_body_that_is_a_folder_is_named_as_one(tmp_path):
    """It was reported as missing."""
    folder = mirror_with(tmp_path / "mirror", folder="placeholder")
    (folder / "bodies" / "folder.html").unlink()
    (folder / "bodies" / "folder.html").mkdir()
    [problem] = check(tmp_path / "mirror")
    assert f"{folder / 'bodies' / 'folder.html'} is a folder, not a regular file" in problem


def test_a_body_the_checker_may_not_read_is_said_not_raised():
    """A body file without read permission stopped `sandbox mirror check` with a traceback
    (PermissionError). Root reads any file: as root, the check runs as nobody, in a folder nobody
    may enter."""
    with tempfile.TemporaryDirectory() as made:
        root = Path(made) / "mirror"
        folder = mirror_with(root, locked="locked", fine="fine")
        (folder / "bodies" / "locked.html").chmod(0)
        if os.geteuid() != 0:
            problems = check(root)
        else:
            for path in (Path(made), *(p for p in root.rglob("*") if p.name != "locked.html")):
                path.chmod(0o755 if path.is_dir() else 0o644)
            # Imported as root, checked as nobody (its effective ids: those the kernel checks a file's access against).
            code = f"os.setegid(65534); os.seteuid(65534); print(json.dumps(check({str(root)!r})))"
            done = subprocess.run(
                [sys.executable, "-c", f"import json, os; from toolserver.contract.mirror_check import check; {code}"],
                cwd=PROJECT_ROOT, capture_output=True, text=True,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            problems = json.loads(done.stdout)
    assert problems == [
        f"{folder / 'manifest.json'}: {HOSTILE}/locked: body file bodies/locked.html cannot be read: Permission denied"
    ]
