"""Where the project's data lives: mirrors, packs and committed fixtures (next to the package)."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIRRORS_DIR = PROJECT_ROOT / "mirrors"
PACKS_DIR = PROJECT_ROOT / "packs"
FIXTURES_DIR = PROJECT_ROOT / "fixtures"
