"""The hostile site (``fixtures/sites/hostile.sandbox.example/``: a spinning script, a title
that is not valid Unicode, WebRTC, blob downloads, pages that forge the sandbox's reports)
written into a temporary mirror, plus a body that is a FIFO; and runs on it. And an agent whose
answer, tool call and standard error carry text that acts on a terminal (``hostile_text_agent``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
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


async def snapshot_text(run: Run) -> str:
    """The snapshot's text of the run's current tab (the call must succeed)."""
    reply = await run.call("browser_snapshot", {})
    assert reply["ok"], reply
    return reply["result"]["snapshot"]


async def past_the_line_cap(run: Run, cap: int) -> None:
    """Until the page's refused navigations have filled their ``cap`` lines, and a while more (a
    fixed second was too short for a loaded machine's flood: no refusal was left to be counted)."""
    for _ in range(150):
        if run.trace.text().count('"kind": "policy_violation"') >= cap:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)


def blocked_requests(run: Run) -> list[dict]:
    """The data of the run's ``blocked_request`` events, from its trace."""
    return [e.data for e in parse_trace(run.trace.text()).events if e.kind == "blocked_request"]


# Text that acts on a terminal or a page when shown raw: ANSI colours, a bell, a carriage return
# that writes over the line, a NUL, the C1 control CSI, a right-to-left override and an isolate
# that reorder what follows, and markup.
HOSTILE_TEXT = "\x1b[31mRED\x1b[0m\x07\rOVER\x00\x9b2J\u202eDESREVER\u2066<script>alert(1)</script>"
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x00", "\x9b", "\u202e", "\u2066")


def hostile_text_agent(folder: Path) -> str:
    """A ``cmd:`` agent that calls one tool with ``HOSTILE_TEXT`` in a URL, answers controlled-form
    with it in two critical fields, writes it to standard error and exits 3. Its script goes in ``folder``."""
    from sandbox.evaluation.packs import load_pack

    (folder / "expected.json").write_text(json.dumps(load_pack("controlled-form").expected), encoding="utf-8")
    script = folder / "hostile_text_agent.py"
    script.write_text(
        f"""import json, os, sys, urllib.request
TEXT = {HOSTILE_TEXT!r}
url = os.environ["SANDBOX_URL"] + "/runs/" + os.environ["SANDBOX_RUN_ID"] + "/tools/browser_navigate"
request = urllib.request.Request(url, json.dumps({{"url": "https://evil.example/" + TEXT}}).encode(),
                                 {{"Content-Type": "application/json"}})
try:
    urllib.request.urlopen(request).read()
except OSError:
    pass
[record] = json.load(open({str(folder / "expected.json")!r}))
record["fields"]["name"] = record["workflow"]["current_heading"] = TEXT
print("BENCHMARK_JSON_BEGIN\\n" + json.dumps([record], ensure_ascii=False) + "\\nBENCHMARK_JSON_END")
sys.stderr.write("boom " + TEXT + "\\n")
sys.exit(3)
""",
        encoding="utf-8",
    )
    return f"cmd:{sys.executable} {script}"
