"""The hostile site (``fixtures/sites/hostile.sandbox.example/``: a spinning script, a title
that is not valid Unicode, WebRTC, blob downloads, pages that forge the sandbox's reports)
written into a temporary mirror, plus a body that is a FIFO; and runs on it."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.site import write_site
from toolserver.api import Sandbox
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.contract.policy import Policy, PolicyMode
from toolserver.contract.trace import parse_trace
from toolserver.run import Run

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


def hostile_run(own: Sandbox, root: Path, *allowed: str, mode: PolicyMode = "enforce") -> Run:
    """A run of ``own`` on the hostile mirror, its allow-list these paths (after the origin) or URLs."""
    urls = tuple(path if path.startswith("https://") else f"{HOSTILE}{path}" for path in allowed)
    return own.create_run(policy=Policy(mode=mode, allowed_urls=urls), mirror_roots=(root,))


async def start_hostile(run: Run, path: str) -> dict:
    """A session of ``run`` opened at a hostile page (``path`` after the origin)."""
    reply = await run.call(
        "browser_start_session", {"provider": "kernel", "site_key": "hostile", "url": HOSTILE + path}
    )
    assert reply["ok"], reply
    return reply


def blocked_requests(run: Run) -> list[dict]:
    """The data of the run's ``blocked_request`` events, from its trace."""
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == "blocked_request"]
