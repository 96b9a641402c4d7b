"""The core: paths, the mirror store, the live policy, trace records and writer, the tool
contract's static facts and Chromium resolution.

Bottom layer: imports nothing else of ``sandbox`` or ``toolserver``, and neither Playwright
nor aiohttp (import-linter checks it, see ``.importlinter``).
"""
