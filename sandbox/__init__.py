"""Local browser-tool emulation sandbox: the application on top of the ``toolserver`` library.

Layers, imports pointing down only (checked by import-linter, see ``.importlinter``):

    sandbox.cli | sandbox.integrations   commands; pytest plugin, Inspect AI tasks
    sandbox.runner                       tasks, attempts, batches, replay, agents, reports
    sandbox.evaluation | sandbox.mirrors packs, rules, gates, scoring | capture, HAR import
    toolserver                           the tool server (contract, browser, tools, transports)
"""

from sandbox.paths import FIXTURES_DIR, MIRRORS_DIR, PACKS_DIR, PROJECT_ROOT
from toolserver import __version__

__all__ = ["FIXTURES_DIR", "MIRRORS_DIR", "PACKS_DIR", "PROJECT_ROOT", "__version__"]
