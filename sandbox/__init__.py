"""Local browser-tool emulation sandbox.

Layers, imports pointing down only (checked by import-linter, see ``.importlinter``):

    sandbox.cli          commands; the only place that wires packs to policies and transports
    sandbox.runner       tasks, attempts, batches, replay, fixtures, capture, agents
    toolserver | sandbox.evaluation
                         the tool server (browser, tools, transports) | packs, rules, gates, scoring
    sandbox.core         paths, mirror store, policy, trace, contract facts, Chromium resolution
"""

from importlib.metadata import PackageNotFoundError, version

from sandbox.core.paths import FIXTURES_DIR, MIRRORS_DIR, PACKS_DIR, PROJECT_ROOT

try:  # the one version source is the package metadata (pyproject.toml)
    __version__ = version("browser-tool-sandbox")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["FIXTURES_DIR", "MIRRORS_DIR", "PACKS_DIR", "PROJECT_ROOT", "__version__"]
