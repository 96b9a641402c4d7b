"""The HTTP transport (aiohttp): a thin layer over ``Sandbox``/``Run``; one error boundary.

    POST   /runs                      {"pack"?, "policy"?, "block_state_changes"?, "site_key"?} -> {"run_id", ...}
    GET    /runs/{id}/tools           -> {"tools": [...]}
    POST   /runs/{id}/tools/{name}    JSON arguments -> {"ok": true, "result"} | {"ok": false, "error"}
    GET    /runs/{id}/trace           -> the JSONL trace
    GET    /runs/{id}/task            -> the pack's prompt, site key, allowed URLs, time limit
    POST   /runs/{id}/answer          {"output"} -> ends the run; the score report and gates
    DELETE /runs/{id}                 ends the run, closes its sessions
    GET    /health
    *      /mcp?pack=ID               MCP over streamable HTTP (one MCP session = one run)

Every route is guarded by ``local_only``: loopback Host names only (plus ``allowed_hosts``),
no foreign Origin, JSON bodies only, and the bearer token when one is configured. Request
bodies are read within ``request_body_timeout_s`` and refused unless they are UTF-8 JSON of
bounded size and depth, without NaN/Infinity; a refused tool call is still one trace line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from urllib.parse import urlsplit

from aiohttp import web

from toolserver.api import PolicyResolver, Sandbox, TaskProvider, run_header
from toolserver.config import ServerConfig, is_loopback
from toolserver.errors import NoTask, TooManyRuns, UnknownPack, UnknownRun
from toolserver.transports.mcp import StreamableHttp

log = logging.getLogger("toolserver.transports.http")
SANDBOX = web.AppKey("sandbox", Sandbox)
CONFIG = web.AppKey("config", ServerConfig)
STATUS_BY_ERROR = {"malformed_json": 400, "unknown_run": 404, "unknown_tool": 404}

# The error types this transport answers with besides the tools' own (toolserver.errors), with
# their HTTP status. The error reference is generated from this table; a test checks that the
# transport uses no type missing from it.
TRANSPORT_ERRORS: dict[str, tuple[int, str]] = {
    "malformed_json": (400, "the body is not JSON, or is nested deeper than `max_json_depth`"),
    "invalid_arguments": (400, "a body of the wrong shape, or a number JSON cannot carry (NaN, Infinity)"),
    "invalid_encoding": (400, "the body is not valid UTF-8"),
    "invalid_pack": (400, "`POST /runs` names a pack the server cannot resolve (pack ids only, never paths)"),
    "no_task": (400, "`/task` or `/answer` for a run without a pack"),
    "unauthorized": (401, "a token is set and the request lacks `Authorization: Bearer <token>`"),
    "forbidden_host": (403, "the Host is not a loopback name nor in `allowed_hosts`"),
    "forbidden_origin": (403, "the request comes from a web page (a foreign or `null` Origin)"),
    "unknown_run": (404, "the run does not exist, or has ended and been forgotten"),
    "request_timeout": (408, "the body did not arrive within `request_body_timeout_s`"),
    "body_too_large": (413, "the body is larger than `max_body_bytes`"),
    "unsupported_media_type": (415, "a POST whose Content-Type is not `application/json`"),
    "unsupported_charset": (415, "a body declared in a charset other than UTF-8"),
    "too_many_runs": (429, "`max_runs` live runs already; end one first"),
    "http_error": (0, "any other HTTP error (no such route, wrong method), with aiohttp's status"),
    "server_fault": (500, "an unexpected exception, logged with its traceback; the server stays up"),
}


class BadRequest(Exception):
    """A request body the server refuses; ``raw`` is what arrived (kept in the trace)."""

    def __init__(self, type_: str, message: str, status: int, raw: str | None = None) -> None:
        super().__init__(message)
        self.type, self.message, self.status, self.raw = type_, message, status, raw

    def response(self) -> web.Response:
        return error_response(self.type, self.message, self.status)


def error_response(type_: str, message: str, status: int | None = None) -> web.Response:
    return web.json_response(
        {"ok": False, "error": {"type": type_, "message": message}}, status=status or STATUS_BY_ERROR.get(type_, 400)
    )


@web.middleware
async def error_boundary(request: web.Request, handler):
    try:
        return await handler(request)
    except UnknownRun as exc:
        return error_response("unknown_run", str(exc))
    except NoTask as exc:
        return error_response("no_task", str(exc))
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return error_response("http_error", f"{exc.status} {exc.reason}: {request.method} {request.path}", exc.status)
    except Exception as exc:  # never a bare 500 page; log with traceback
        log.exception("unexpected error on %s %s", request.method, request.path)
        return error_response("server_fault", f"internal error: {exc!r}", 500)


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    name = urlsplit(f"//{host}").hostname or ""
    return is_loopback(name) or "*" in allowed or name in {a.lower() for a in allowed}


@web.middleware
async def local_only(request: web.Request, handler):
    """Guards every route (also routes other transports mount): a web page the user visits, or
    a DNS-rebinding attacker, must not be able to drive the browser."""
    config = request.app[CONFIG]
    if not host_allowed(request.host, config.allowed_hosts):
        return error_response(
            "forbidden_host",
            f"Host {request.host!r} is not allowed: this server answers loopback "
            "names only (start it with --allowed-hosts NAME to add one)",
            403,
        )
    origin = request.headers.get("Origin")
    if origin is not None and not host_allowed(urlsplit(origin).netloc, config.allowed_hosts):
        return error_response(
            "forbidden_origin",
            f"Origin {origin!r} is not allowed: requests from web pages are "
            "refused (only loopback origins and --allowed-hosts)",
            403,
        )
    if config.token is not None:
        given = request.headers.get("Authorization", "")
        if not secrets.compare_digest(given.encode(), f"Bearer {config.token}".encode()):
            return error_response(
                "unauthorized",
                "this server needs 'Authorization: Bearer <token>' (the token given with --token or SANDBOX_TOKEN)",
                401,
            )
    if request.method in ("POST", "PUT", "PATCH") and request.content_type != "application/json":
        # Not a "simple" cross-site request either: a page cannot send this type without a preflight.
        message = f"Content-Type must be application/json, got {request.headers.get('Content-Type')!r}"
        await trace_refused_call(request, "unsupported_media_type", message)
        return error_response("unsupported_media_type", message, 415)
    return await handler(request)


async def trace_refused_call(request: web.Request, kind: str, message: str) -> None:
    """A tool call of a live run refused before its body is parsed is still a line in that
    run's trace, with the body as it arrived (if it arrives within the body bound)."""
    info = request.match_info
    if "name" not in info or "run_id" not in info or request.method != "POST":
        return
    try:
        run = request.app[SANDBOX].get_run(info["run_id"])
    except UnknownRun:
        return
    try:
        body = await asyncio.wait_for(request.read(), request.app[CONFIG].request_body_timeout_s)
        raw = body.decode("utf-8", errors="surrogateescape")
    except (TimeoutError, web.HTTPRequestEntityTooLarge):
        raw = None
    await run.record_rejected(info["name"], raw, {"type": kind, "message": message})


async def read_json(request: web.Request):
    """The request's JSON body and its raw text, or ``BadRequest``."""
    config = request.app[CONFIG]
    try:
        data = await asyncio.wait_for(request.read(), config.request_body_timeout_s)
    except TimeoutError as exc:
        raise BadRequest(
            "request_timeout",
            f"the request body did not arrive within {config.request_body_timeout_s:g} s "
            "(shorter than its Content-Length, or an unfinished chunked body); send the whole body",
            408,
        ) from exc
    except web.HTTPRequestEntityTooLarge as exc:
        raise BadRequest(
            "body_too_large", f"the request body is larger than {config.max_body_bytes} bytes", 413
        ) from exc
    raw = data.decode("utf-8", errors="surrogateescape")  # exactly what arrived; the trace escapes what is not text
    charset = (request.charset or "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise BadRequest(
            "unsupported_charset",
            f"charset {charset!r} is not supported: send JSON in UTF-8 (Content-Type: application/json)",
            415,
            raw,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(
            "invalid_encoding", f"the request body is not valid UTF-8 (byte {exc.start}); send JSON in UTF-8", 400, raw
        ) from None
    if not text.strip():
        return {}, raw
    try:
        body = json.loads(text, parse_constant=refuse_constant)
    except NonFiniteNumber as exc:
        raise BadRequest("invalid_arguments", f"{exc} is not a JSON number: pass a finite number", 400, raw) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5,000-digit integer, deep nesting
        raise BadRequest("malformed_json", f"request body is not valid JSON: {first_words(exc)}", 400, raw) from None
    if json_depth(body) > config.max_json_depth:
        raise BadRequest(
            "malformed_json", f"request body is nested deeper than {config.max_json_depth} levels", 400, raw
        )
    return body, raw


class NonFiniteNumber(ValueError):
    pass


def refuse_constant(name: str):
    raise NonFiniteNumber(name)


def first_words(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__)[:300]


def json_depth(value) -> int:
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
    return depth - 1


async def create_run(request: web.Request) -> web.Response:
    """Create a run. Body: `{"pack"?, "policy"?: "enforce"|"observe", "block_state_changes"?, "site_key"?}`
    (all optional; without `site_key` a pack's run gets a new one). Reply 201:
    `{"run_id", "pack", "policy", "block_state_changes", "site_key"}`, and a `note` for a run
    without a pack (it has no allow-list and no task)."""
    sandbox = request.app[SANDBOX]
    try:
        body, _raw = await read_json(request)
    except BadRequest as exc:
        return exc.response()
    if not isinstance(body, dict):
        return error_response("invalid_arguments", 'POST /runs takes a JSON object like {"pack": "bid-intake"}')
    unknown = set(body) - {"pack", "policy", "block_state_changes", "site_key"}
    if unknown:
        return error_response("invalid_arguments", f"unknown field(s) {sorted(unknown)} in POST /runs")
    pack, policy, block, site_key = (
        body.get("pack"),
        body.get("policy"),
        body.get("block_state_changes"),
        body.get("site_key"),
    )
    if (
        pack is not None
        and not isinstance(pack, str)
        or policy not in (None, "enforce", "observe")
        or block not in (None, True, False)
        or site_key is not None
        and not (isinstance(site_key, str) and site_key)
    ):
        return error_response(
            "invalid_arguments",
            "pack must be a string, policy 'enforce' or 'observe', "
            "block_state_changes a boolean, site_key a non-empty string",
        )
    try:
        run = sandbox.open_run(pack, transport="http", site_key=site_key, mode=policy, block_state_changes=block)
    except UnknownPack as exc:
        return error_response("invalid_pack", str(exc))
    except TooManyRuns as exc:
        return error_response("too_many_runs", str(exc), 429)
    reply = {
        "run_id": run.id,
        "pack": run.policy.pack,
        "policy": run.trace_policy,
        "block_state_changes": run.policy.block_state_changes,
        "site_key": run_header(run).get("site_key"),
    }
    if run.trace_policy == "none":
        reply["note"] = (
            "no pack, so no allow-list: every mirrored URL may be opened and nothing is scored; "
            'create the run with {"pack": ...} to enforce a pack\'s allowed URLs'
        )
    return web.json_response(reply, status=201)


async def get_task(request: web.Request) -> web.Response:
    """The run's task: the pack's prompt for the run's site key, the site key, the allowed URLs
    and the time limit."""
    sandbox = request.app[SANDBOX]
    return web.json_response(sandbox.task(ended_or_open_run(request)))


async def post_answer(request: web.Request) -> web.Response:
    """Body: `{"output": "<the final answer>"}`. Ends the run and replies with the reviewed
    scoring pack's report on its trace (`qualified_pass`, fields, gates); elapsed time counts
    from the run's creation."""
    try:
        body, _raw = await read_json(request)
    except BadRequest as exc:
        return exc.response()
    if not isinstance(body, dict) or set(body) != {"output"} or not isinstance(body["output"], str):
        return error_response(
            "invalid_arguments", 'POST /runs/{id}/answer takes {"output": "<the agent\'s final answer>"}'
        )
    return web.json_response(await request.app[SANDBOX].answer(ended_or_open_run(request), body["output"]))


def ended_or_open_run(request: web.Request):
    run = request.app[SANDBOX].runs.get(request.match_info["run_id"])  # ended runs keep their trace
    if run is None:
        raise UnknownRun(f"no run {request.match_info['run_id']!r}")
    return run


async def list_tools(request: web.Request) -> web.Response:
    """`{"tools": [...]}`: every tool's name, title, description, side effect and input schema."""
    run = request.app[SANDBOX].get_run(request.match_info["run_id"])
    return web.json_response({"tools": run.tools()})


async def call_tool(request: web.Request) -> web.Response:
    """Call a tool. Body: its JSON arguments. Reply: `{"ok": true, "result": {...}}` or
    `{"ok": false, "error": {"type", "message"}}` (200; 404 for an unknown tool). Every call,
    also a refused one, is one trace line."""
    run = request.app[SANDBOX].get_run(request.match_info["run_id"])
    name = request.match_info["name"]
    try:
        body, _raw = await read_json(request)
    except BadRequest as exc:
        await run.record_rejected(name, exc.raw, {"type": exc.type, "message": exc.message})
        return exc.response()
    reply = await run.call(name, body)
    status = 200 if reply["ok"] else STATUS_BY_ERROR.get(reply["error"]["type"], 200)
    return web.json_response(reply, status=status)


async def get_trace(request: web.Request) -> web.Response:
    """The run's JSONL trace (`application/x-ndjson`), also after the run ended."""
    text = request.app[SANDBOX].trace_text(request.match_info["run_id"])  # ended runs keep their trace
    return web.Response(text=text, content_type="application/x-ndjson")


async def delete_run(request: web.Request) -> web.Response:
    """End the run: its sessions close, its trace gets its `run_end` line. Reply `{"run_id", "closed": true}`."""
    run = await request.app[SANDBOX].end_run(request.match_info["run_id"])
    return web.json_response({"run_id": run.id, "closed": True})


async def health(request: web.Request) -> web.Response:
    """The server's state: `{"ok", "runs", "ended_runs", "chromium", "browser": {"connected", "launches",
    "crashes"}, "mirrored_urls"}`; 503 while the browser is down (it is relaunched for the next session)."""
    sandbox = request.app[SANDBOX]
    host = sandbox.host
    live = sum(not run.closed for run in sandbox.runs.values())
    return web.json_response(
        {
            "ok": host.connected,
            "runs": live,
            "ended_runs": len(sandbox.runs) - live,
            "chromium": host.executable,
            "browser": {"connected": host.connected, "launches": host.launches, "crashes": host.crashes},
            "mirrored_urls": len(host.store),
        },
        status=200 if host.connected else 503,
    )


# The HTTP API, in the order the reference lists it (the handlers' docstrings describe each route).
ROUTES = (
    ("POST", "/runs", create_run),
    ("GET", "/runs/{run_id}/tools", list_tools),
    ("POST", "/runs/{run_id}/tools/{name}", call_tool),
    ("GET", "/runs/{run_id}/task", get_task),
    ("POST", "/runs/{run_id}/answer", post_answer),
    ("GET", "/runs/{run_id}/trace", get_trace),
    ("DELETE", "/runs/{run_id}", delete_run),
    ("GET", "/health", health),
)


def create_app(
    config: ServerConfig | None = None,
    sandbox: Sandbox | None = None,
    *,
    policies: PolicyResolver | None = None,
    tasks: TaskProvider | None = None,
) -> web.Application:
    """Application factory. Pass a started ``sandbox`` to share it (tests), else one is
    started (with ``policies`` resolving the packs of ``POST /runs``, ``tasks`` their tasks).
    The HTTP limits and guards come from ``config`` (default: the sandbox's)."""
    owned = sandbox is None
    sandbox = sandbox or Sandbox(config, policies=policies, tasks=tasks)
    config = config or sandbox.config
    app = web.Application(middlewares=[error_boundary, local_only], client_max_size=config.max_body_bytes)
    app[SANDBOX] = sandbox
    app[CONFIG] = config

    async def lifecycle(app: web.Application):
        if owned:
            await app[SANDBOX].start()
        yield
        if owned:
            await app[SANDBOX].stop()

    app.cleanup_ctx.append(lifecycle)
    if owned:  # on shutdown, before aiohttp waits for requests in flight: their runs end, so they answer
        app.on_shutdown.append(lambda app: app[SANDBOX].end_runs("server_stopped"))
    for method, path, handler in ROUTES:
        app.router.add_route(method, path, handler)

    # MCP over streamable HTTP on the same port: /mcp?pack=ID (toolserver/transports/mcp.py)
    mcp_http = StreamableHttp(app[SANDBOX])
    app.cleanup_ctx.append(mcp_http.lifecycle)
    app.router.add_route("*", "/mcp", mcp_http.handle)
    return app
