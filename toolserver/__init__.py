"""The tool server: the benchmark's browser-tool contract on Playwright + Chromium. The library
under the ``sandbox`` application: it imports nothing from ``sandbox`` (checked by
import-linter, see ``.importlinter``), never loads packs, scoring or a runner (a run is handed a
``Policy``) and serves the mirror roots its configuration names.

Inside, imports point down only:

    transports/   http (aiohttp), mcp (the official SDK): each exposes a Sandbox to clients
    api           Sandbox: the warm browser, the tool registry, the runs
    tools/        one module per tool group; ALL_TOOLS is the one ordered list
    dispatch      Run.call: the single error boundary, one trace line per call
    registry      Tool, ToolArgs, ToolRegistry   |  browser/: host, sessions, tabs, router, settling, Chromium
    config, errors, formats, media, pdf
    contract/     pure: trace models, reader and writer; policy; mirror store; the contract's names
"""

from importlib.metadata import PackageNotFoundError, version

try:  # the one version source is the package metadata (pyproject.toml)
    __version__ = version("browser-tool-sandbox")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
