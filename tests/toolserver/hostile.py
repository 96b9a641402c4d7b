"""A small mirror of hostile pages for the hardening tests (a spinning script, a title that is
not valid Unicode, a body that is a FIFO), and a strict trace check."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from sandbox.core.mirrors import MirrorStore, reconstructed, write_entry
from sandbox.core.policy import Policy
from toolserver.dispatch import Run

HOSTILE = "https://hostile.sandbox.example"


def build_hostile_mirror(root: Path) -> Path:
    folder = root / "hostile.sandbox.example"
    prov = reconstructed("hostile page written for the sandbox's hardening tests")

    def page(path: str, body: str) -> None:
        write_entry(folder, f"{HOSTILE}{path}", body.encode(), "text/html; charset=utf-8", prov,
                    body_path=f"bodies{path or '/index'}.html")

    page("/calm", "<!doctype html><title>Calm</title><h1>Calm</h1><a href='/spin'>to the spinner</a>")
    # Spins after load: the navigation itself succeeds, every later question to the page hangs.
    page("/spin", "<!doctype html><title>Spin</title><h1>Spin</h1>"
                  "<script>setTimeout(() => { while (true) {} }, 50)</script>")
    page("/surrogate", "<!doctype html><title>x</title><h1>Bad title</h1>"
                       "<script>document.title = 'bad \\uD800 title'</script>")
    page("/fifo", "placeholder")
    fifo = folder / "bodies" / "fifo.html"
    fifo.unlink()
    os.mkfifo(fifo)
    return root


def hostile_run(sandbox, root: Path, **config) -> Run:
    """A run on the shared warm browser with its own mirror and tighter bounds."""
    return Run(sandbox.host, dataclasses.replace(sandbox.config, **config), Policy(mode="observe"),
               sandbox.registry, store=MirrorStore.load(root))


def refuse_constant(name: str):
    raise ValueError(f"non-strict JSON constant {name}")


def strict_lines(text: str) -> list[dict]:
    """Every line parsed by a strict JSON parser (no NaN/Infinity), or the test fails."""
    return [json.loads(line, parse_constant=refuse_constant) for line in text.splitlines() if line.strip()]
