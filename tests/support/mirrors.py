"""A copy of one bundled mirror with some facts changed, to prove an agent reads the page."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from sandbox import MIRRORS_DIR


def mirror_with_changes(tmp_path: Path, host: str, changes: dict[str, list[tuple[str, str]]]) -> Path:
    """A copy of one host's mirror with literal replacements in the named body files
    (path relative to the host folder -> [(old, new)]); manifest checksums are refreshed."""

    def replace(relative: str, replacements: list[tuple[str, str]]) -> Callable[[str], str]:
        def edit(text: str) -> str:
            for old, new in replacements:
                assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {relative}"
                text = text.replace(old, new)
            return text

        return edit

    return mirror_with_edits(tmp_path, host, {relative: replace(relative, r) for relative, r in changes.items()})


def mirror_with_edits(tmp_path: Path, host: str, edits: dict[str, Callable[[str], str]]) -> Path:
    """A copy of one host's mirror with each named body file (path relative to the host folder)
    rewritten by its function (old text -> new text); manifest checksums are refreshed."""
    root = tmp_path / "mirrors"
    shutil.copytree(MIRRORS_DIR / host, root / host)
    for relative, edit in edits.items():
        body = root / host / relative
        body.write_text(edit(body.read_text(encoding="utf-8")), encoding="utf-8")
    manifest = root / host / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for entry in data["entries"]:
        entry["sha256"] = hashlib.sha256((root / host / entry["body"]).read_bytes()).hexdigest()
    manifest.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return root
