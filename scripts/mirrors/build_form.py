"""Build the offline mirror of the controlled-form demo (sarah27h.github.io).

Writes ``mirrors/sarah27h.github.io/``: the page at
https://sarah27h.github.io/simple-multi-step-form/ plus its one script and one stylesheet,
each a mirror entry under its own absolute URL. The bodies are our own hand-written sources
in ``scripts/mirrors/src/form/`` (a reconstruction of the demo's behaviour, not a capture).
Deterministic: every run writes the same bytes.

Run from the project root:  .venv/bin/python scripts/mirrors/build_form.py [MIRRORS_ROOT]
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

from toolserver.contract.mirrors import MANIFEST, reconstructed, write_entry  # noqa: E402

HOST = "sarah27h.github.io"
SOURCE_DIR = Path(__file__).resolve().parent / "src" / "form"
PAGE_URL = "https://sarah27h.github.io/simple-multi-step-form/"
BODY_DIR = "simple-multi-step-form"

_COMMON_BASIS = (
    "Reconstruction of the GitHub Pages build of the MIT-licensed sarah27h/simple-multi-step-form "
    "demo (Create React App + Material-UI v4). Own vanilla HTML/JS/CSS written from the demo's "
    "documented behaviour (shared/facts/demo-form.md): the four steps and their headings, labels, "
    "ids and input types, blur validation with the demo's exact (misspelled) messages, the "
    "whole-form check on step 2's Next, the step-3 summary and alert, the Success (Finished) "
    "screen, the step heading as <h1> text followed by an unclassed inline <span> with the step "
    "counter, console.log of the error state on every render and change. DOM structure after the "
    "public GitHub Pages build itself (sarah27h/simple-multi-step-form branch gh-pages "
    "@19973b1742796d610a8b3e002dd632dbb02a762a, static/js/main.57a241ca.chunk.js, read, not copied): "
    "each screen's nodes directly under #root; Material-UI v4 class names (Mui*) on the app bar, "
    "typography, text fields, list and buttons, besides classes of our own; the counter's text as "
    "three text nodes ('(Step ', 'N', ' of 3)') on steps 1-3 and one ('(Finished)') on step 4, which "
    "is why an accessibility snapshot shows the counter as a separate child on steps 1-3 and the "
    "success heading as flat text; a label span and a ripple span in each button; a hidden, "
    "read-only twin textarea beside Bio. Not a copy of the original bundle; file names and our own "
    "CSS class names are invented, the Material-UI jss-generated classes (jssN) are left out; "
    "no network request, system fonts only."
)
_HOOKS = (
    " Sandbox hooks not present on the real site: the Confirm & Next button carries "
    'data-sandbox-state-change="final-submit" and the step-4 message container carries '
    'data-sandbox-final-state="submitted".'
)


@dataclass(frozen=True)
class SourceFile:
    source: str
    url: str
    content_type: str
    body_path: str
    basis: str


SOURCES = (
    SourceFile(
        "index.html",
        PAGE_URL,
        "text/html; charset=utf-8",
        f"{BODY_DIR}/index.html",
        _COMMON_BASIS + " This entry: the HTML shell (title 'React App', an empty #root filled "
        "by the script, no <form>, a data: icon so no favicon is fetched)." + _HOOKS,
    ),
    SourceFile(
        "form.js",
        f"{PAGE_URL}static/js/form.js",
        "application/javascript; charset=utf-8",
        f"{BODY_DIR}/static/js/form.js",
        _COMMON_BASIS + " This entry: the script that renders and runs the four steps." + _HOOKS,
    ),
    SourceFile(
        "form.css",
        f"{PAGE_URL}static/css/form.css",
        "text/css; charset=utf-8",
        f"{BODY_DIR}/static/css/form.css",
        _COMMON_BASIS + " This entry: the stylesheet (indigo #3f51b5 app bar, underlined fields, "
        "buttons uppercased by text-transform).",
    ),
)


def build(mirrors_root: Path) -> Path:
    """(Re)write this source's mirror folder under ``mirrors_root``; return the folder."""
    folder = Path(mirrors_root) / HOST
    # Start clean so renamed or dropped entries do not linger; README.md is kept.
    (folder / MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(folder / BODY_DIR, ignore_errors=True)
    for item in SOURCES:
        body = (SOURCE_DIR / item.source).read_bytes()
        write_entry(
            folder,
            item.url,
            body,
            item.content_type,
            reconstructed(item.basis),
            body_path=item.body_path,
        )
    return folder


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else PROJECT_ROOT / "mirrors"
    folder = build(root)
    print(f"wrote {len(SOURCES)} entries to {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
