"""The tool server: the benchmark's browser-tool contract on Playwright + Chromium.

Inside, imports point down only (checked by import-linter, see ``.importlinter``):

    transports/   http (aiohttp) — each exposes a Sandbox to clients
    api           Sandbox: the warm browser, the tool registry, the runs
    tools/        one module per tool group; ALL_TOOLS is the one ordered list
    dispatch      Run.call: the single error boundary, one trace line per call
    registry      Tool, ToolArgs, ToolRegistry     |  browser: host, sessions, tabs, router, settling
    config, errors, pdf

The tool server uses ``sandbox.core`` (mirror store, policy, trace) and never loads packs,
scoring or the runner: a run is handed a ``Policy``.
"""
