"""The canary: a loopback server that the test site's pages try to reach; it must stay at zero
requests (the sandbox's browser reaches nothing outside its mirrors)."""

from __future__ import annotations

from aiohttp import web


class Canary:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.url = ""

    async def start(self) -> None:
        async def record(request: web.Request) -> web.Response:
            self.requests.append(f"{request.method} {request.path_qs}")
            return web.Response(text="canary")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", record)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        await self._runner.cleanup()
