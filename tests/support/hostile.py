"""The hostile site (``fixtures/sites/hostile.sandbox.example/``: a spinning script, a title
that is not valid Unicode, WebRTC, blob downloads, pages that forge the sandbox's reports)
written into a temporary mirror, plus a body that is a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.site import write_site
from toolserver.contract.mirrors import reconstructed, write_entry

HOSTILE = "https://hostile.sandbox.example"


def build_hostile_mirror(root: Path) -> Path:
    folder = write_site("hostile.sandbox.example", root)
    # A body that is a FIFO (reading it never ends) cannot be a file in git: it is made here.
    write_entry(
        folder,
        f"{HOSTILE}/fifo",
        b"placeholder",
        "text/html; charset=utf-8",
        reconstructed("hostile page written for the sandbox's hardening tests"),
        body_path="bodies/fifo.html",
    )
    fifo = folder / "bodies" / "fifo.html"
    fifo.unlink()
    os.mkfifo(fifo)
    return root
