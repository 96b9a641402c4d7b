"""Local browser-tool emulation sandbox: the pure core (packs, scoring, gates, traces, mirrors).

Modules in this package import neither Playwright nor aiohttp unless they say so
(`sandbox.runner` and `sandbox.cli` orchestrate the browser through `toolserver`).
"""

__version__ = "0.1.0"

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIRRORS_DIR = PROJECT_ROOT / "mirrors"
PACKS_DIR = PROJECT_ROOT / "packs"
FIXTURES_DIR = PROJECT_ROOT / "fixtures"
