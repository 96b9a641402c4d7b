"""The contract's pure parts: trace models, reader and writer (``trace``), the live policy
(``policy``), the mirror store (``mirrors``) and the tool contract's names (``names``).

Imports nothing else of ``toolserver`` or ``sandbox``, and neither Playwright nor aiohttp
(import-linter checks it): scoring, gates and other harnesses use it offline."""
