"""``sandbox mcp --attach URL --name NAME``: a stdio MCP server that drives a named run of a
sandbox server already running at URL, through that server's ``/mcp``.

Clients that start a new stdio server for every tool call (a new process, a new connection)
would otherwise get a new run, browser and trace each time. Attached, every such process joins
the one run called NAME: the first starts it, the others continue it, and the server ends it
(``DELETE /runs/{id}``, ``/answer``, or ``named_run_idle_s`` after its last call). Every request
after the handshake is relayed as it was sent, its params unread here (a tool call of no name or
of arguments that are no object too), and answered as the server answers it: results and
refusals are the same as on ``/mcp`` (an unknown method too), and the server's trace has every
call and every call's bad arguments. What this process answers itself is not traced: a line that
is no JSON-RPC message, a request reusing the id of one running, a request before ``initialize``
(one of a method not served: -32601, as the server answers it). No browser starts in this process.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlencode

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from toolserver import __version__
from toolserver.stopping import StopSignals
from toolserver.transports.pipes import stdio_pipes
from toolserver.transports.stdin_end import answer_before_end

# The same names as toolserver.transports.mcp's, which this module does not import: an attached
# process starts for every call of some clients, and needs neither the browser nor the API.
SERVER_NAME = "browser-tool-sandbox"
RUN_ID_META = "sandbox/run_id"
# The MCP SDK's own client timeouts: a call's answer may take minutes (httpx's default, 5 s, cut
# off any call longer than that, and the SDK's client then never answered it).
UPSTREAM_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer request line is refused here; the server has its own limit

log = logging.getLogger("toolserver.transports.mcp_attach")


LOCAL_METHODS = ("initialize", "ping")  # answered here: the upstream connection has its own handshake
RAW_RESULT = TypeAdapter(dict[str, Any])


class RawRequest(types.Request[dict[str, Any] | None, str]):
    """A request relayed with its params as its client sent them: the server reads, refuses and traces them."""


class AttachError(Exception):
    """The server at the URL could not be reached, or refused the run."""


def attach_url(server: str, pack: str | None, name: str) -> str:
    query = urlencode({"pack": pack, "name": name} if pack else {"name": name})
    return f"{server.rstrip('/')}/mcp?{query}"


async def serve_attached(server: str, *, name: str, pack: str | None = None, token: str | None = None) -> None:
    """Serve one stdio MCP connection onto the run named ``name`` of the server at ``server``
    (``http://127.0.0.1:8765``); ``AttachError`` if that server cannot be reached or refuses."""
    stopped = StopSignals()  # a stop signal ends the connection as a closed stdin does: the run goes on
    try:
        await relay_run(server, name, pack, token)
    except asyncio.CancelledError:
        if not stopped.taken():
            raise
    finally:
        stopped.restore()


async def relay_run(server: str, name: str, pack: str | None, token: str | None) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    endpoint = attach_url(server, pack, name)
    attached = False
    try:
        # The upstream connection inside the stdio one: when the server goes mid-call, the calls
        # read are answered ("Connection closed") before stdout closes.
        async with (
            stdio_pipes(MAX_LINE_BYTES) as pipes,  # read on the loop: a stop signal is not held by a thread
            stdio_server(*(pipes or ())) as streams,
            httpx2.AsyncClient(headers=headers, timeout=UPSTREAM_TIMEOUT) as http,
            Client(streamable_http_client(endpoint, http_client=http), mode="legacy") as upstream,  # the handshake
        ):
            opened = upstream.session.initialize_result
            run_id = (opened.meta or {}).get(RUN_ID_META) if opened is not None else None
            log.info("attached to run %s (%r) at %s", run_id, name, server)
            attached = True
            relay = proxy_server(upstream, run_id)
            async with relay.lifespan(relay) as state:
                await serve_loop(relay, *answer_before_end(*streams), lifespan_state=state)
    except* (httpx2.HTTPError, OSError) as group:
        said = "the sandbox server at {} went away" if attached else "cannot reach the sandbox server at {}"
        raise AttachError(f"{said.format(server)}: {first_leaf(group)!r}") from None
    except* MCPError as group:
        raise AttachError(f"the sandbox server at {server} refused run {name!r}: {first_leaf(group)}") from None


def first_leaf(group: BaseExceptionGroup) -> BaseException:
    """The first exception in a group, however deep the client's task groups nested it."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found


def proxy_server(upstream: Client, run_id: str | None) -> Server:
    """A low-level server answering every request with the upstream server's answer."""

    async def relayed(ctx: ServerRequestContext, params: Any) -> Any:  # declares the capability: ``relay`` answers
        raise MCPError(types.INTERNAL_ERROR, f"{ctx.method} was not relayed to the sandbox server")

    async def relay(ctx: ServerRequestContext, call_next: Any) -> Any:
        """Every request of an initialized client goes upstream unread (read here, a malformed one
        was refused unseen by the run's trace); the handshake is answered here, with the run's id."""
        if ctx.request_id is not None and ctx.method not in LOCAL_METHODS:  # a notification stays here
            if ctx.session.client_params is None:
                if server.get_request_handler(ctx.method) is None:
                    return await call_next(ctx)  # the SDK's -32601, which probing clients rely on
                raise MCPError(types.INVALID_REQUEST, f"{ctx.method} before initialize: send initialize first")
            request = RawRequest(method=ctx.method, params=None if ctx.params is None else dict(ctx.params))
            return await upstream.session.send_request(request, RAW_RESULT)  # its MCPError passes through
        result = await call_next(ctx)
        if ctx.method == "initialize" and run_id is not None:
            return {**result, "_meta": {**(result.get("_meta") or {}), RUN_ID_META: run_id}}
        return result

    server = Server(
        SERVER_NAME,
        version=__version__,
        title="Browser-tool sandbox (attached)",
        description="The tools of a named run of a running sandbox server.",
        on_list_tools=relayed,
        on_call_tool=relayed,
        on_list_prompts=relayed,
        on_get_prompt=relayed,
    )
    server.middleware = [relay]
    return server
