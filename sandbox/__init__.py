"""Local browser-tool emulation sandbox.

Layers, imports pointing down only (checked by import-linter, see ``.importlinter``):

    sandbox.cli          commands; the only place that wires packs to policies and transports
    sandbox.runner       tasks, attempts, batches, replay, fixtures, capture, agents
    toolserver | sandbox.evaluation
                         the tool server (browser, tools, transports) | packs, rules, gates, scoring
    sandbox.core         paths, mirror store, policy, trace, contract facts, Chromium resolution
"""

__version__ = "0.1.0"

from sandbox.core.paths import FIXTURES_DIR, MIRRORS_DIR, PACKS_DIR, PROJECT_ROOT  # noqa: E402

__all__ = ["FIXTURES_DIR", "MIRRORS_DIR", "PACKS_DIR", "PROJECT_ROOT", "__version__"]
