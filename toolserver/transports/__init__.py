"""Transports: each exposes a ``toolserver.api.Sandbox`` and its runs' one dispatcher to
clients (``http``: the JSON API on aiohttp). A transport is one module; none of them touches
a tool or the browser directly."""
