"""A copy of one bundled mirror with one fact changed, to prove an agent reads the page."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from sandbox import MIRRORS_DIR


def mirror_with_changes(tmp_path: Path, host: str, changes: dict[str, list[tuple[str, str]]]) -> Path:
    """A copy of one host's mirror with literal replacements in the named body files
    (path relative to the host folder -> [(old, new)]); manifest checksums are refreshed."""
    root = tmp_path / "mirrors"
    shutil.copytree(MIRRORS_DIR / host, root / host)
    for relative, replacements in changes.items():
        body = root / host / relative
        text = body.read_text(encoding="utf-8")
        for old, new in replacements:
            assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {relative}"
            text = text.replace(old, new)
        body.write_text(text, encoding="utf-8")
    manifest = root / host / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for entry in data["entries"]:
        entry["sha256"] = hashlib.sha256((root / host / entry["body"]).read_bytes()).hexdigest()
    manifest.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return root
