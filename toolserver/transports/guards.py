"""What the HTTP server checks before a handler runs: who may reach it (loopback Host names,
no foreign Origin, the bearer token, JSON bodies only) and what a body may be (UTF-8 JSON of
bounded size and depth, arriving within its bound). Every refusal is a
``RequestError`` carrying its status; ``http.error_boundary`` answers it. A tool call of a live
run refused for its body or type is still one line in that run's trace (one refused for its
Host, Origin or token is not: who may not reach the server writes nothing into a run's trace)."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from toolserver.api import Sandbox
from toolserver.config import ServerConfig, is_loopback
from toolserver.errors import (
    BodyTooLarge,
    ClientGone,
    ForbiddenHost,
    ForbiddenOrigin,
    InvalidEncoding,
    MalformedHttp,
    MalformedJson,
    RequestError,
    RequestTimeout,
    Unauthorized,
    UnsupportedCharset,
    UnsupportedMediaType,
)
from toolserver.transports.messages import LongInteger, RepeatedKey, json_depth, read_int, unique_keys

log = logging.getLogger("toolserver.transports.guards")
SANDBOX = web.AppKey("sandbox", Sandbox)
CONFIG = web.AppKey("config", ServerConfig)


def hostname(authority: str) -> str | None:
    """The host name of a Host or Origin value, or None when it is not one: a broken bracket
    (``[::1``) or a port that is not one (``localhost:abc``, ``localhost:99999``)."""
    try:
        parts = urlsplit(authority)
        parts.port  # noqa: B018 - raises on a port that is not one
        return parts.hostname or ""
    except ValueError:
        return None


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    name = hostname(f"//{host}")
    return name is not None and (is_loopback(name) or "*" in allowed or name in {a.lower() for a in allowed})


def origin_allowed(origin: str, allowed: tuple[str, ...]) -> bool:
    """A page's origin: a loopback one, or one named by ``--allowed-hosts`` ("*" names no page:
    it lets any Host name reach the server, not any web page drive it)."""
    name = hostname(origin)
    return name is not None and (is_loopback(name) or name in {a.lower() for a in allowed if a != "*"})


@web.middleware
async def local_only(request: web.Request, handler: Any) -> web.StreamResponse:
    """Guards every route (also routes other transports mount): a web page the user visits, or
    a DNS-rebinding attacker, must not be able to drive the browser."""
    config = request.app[CONFIG]
    if not host_allowed(request.host, config.allowed_hosts):
        raise ForbiddenHost(
            f"Host {request.host!r} is not allowed: this server answers loopback "
            "names only (start it with --allowed-hosts NAME to add one)"
        )
    for origin in request.headers.getall("Origin", []):  # every one: a second Origin went unchecked
        if origin_allowed(origin, config.allowed_hosts):
            continue
        raise ForbiddenOrigin(
            f"Origin {origin!r} is not allowed: requests from web pages are "
            "refused (only loopback origins and --allowed-hosts)"
        )
    if config.token is not None:
        given = request.headers.get("Authorization", "")  # a byte that is not UTF-8 comes as a lone surrogate
        if not secrets.compare_digest(given.encode("utf-8", "surrogateescape"), f"Bearer {config.token}".encode()):
            raise Unauthorized(
                "this server needs 'Authorization: Bearer <token>' (the token given with --token or SANDBOX_TOKEN)"
            )
    unrouted = request.match_info.http_exception is not None  # a 404 or 405 says that, whatever the body
    if request.method in ("POST", "PUT", "PATCH") and not unrouted and (refused := unsupported_type(request)):
        await trace_refused_call(request, refused)
        raise refused
    return await handler(request)


def unsupported_type(request: web.Request) -> RequestError | None:
    """A body that is not JSON in UTF-8, by its Content-Type (``/mcp``'s too: it read any charset as UTF-8)."""
    if request.content_type != "application/json":
        # Not a "simple" cross-site request either: a page cannot send this type without a preflight.
        return UnsupportedMediaType(
            f"Content-Type must be application/json, got {request.headers.get('Content-Type')!r}"
        )
    charset = (request.charset or "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        return UnsupportedCharset(
            f"charset {charset!r} is not supported: send JSON in UTF-8 (Content-Type: application/json)"
        )
    return None


async def trace_refused_call(request: web.Request, refused: RequestError) -> None:
    """A tool call of a live run refused before its body is parsed is still a line in that
    run's trace, with the body as it arrived (if it arrives within the body bound). A call to a
    run that is not live is ``unknown_run``, as with any Content-Type; a body whose framing is
    broken is ``MalformedHttp`` (its answer closes the connection), after its line."""
    info = request.match_info
    if "name" not in info or "run_id" not in info or request.method != "POST":
        return
    run = request.app[SANDBOX].get_run(info["run_id"])
    broken: MalformedHttp | None = None
    try:
        body = await read_body(request, request.app[CONFIG])
        raw: str | None = body.decode("utf-8", errors="surrogateescape")
    except MalformedHttp as exc:
        raw, broken = None, exc
    except RequestError:
        raw = None
    await run.record_rejected(info["name"], raw, refused.to_json())
    if broken is not None:
        raise broken


async def read_body(request: web.Request, config: ServerConfig) -> bytes:
    """The request's body, whole within ``request_body_timeout_s`` and no larger than
    ``max_body_bytes`` (the app's ``client_max_size``), else a ``RequestError``; a client that
    leaves before its body arrived is ``ClientGone``: one log line, not a fault with a traceback.
    A body aiohttp's parser refuses after the route began (a malformed chunk arriving after the
    headers) is ``MalformedHttp``, whose answer closes the connection (else aiohttp answered the
    parse error a second time on it)."""
    try:
        async with asyncio.timeout(config.request_body_timeout_s):
            return await request.read()
    except TimeoutError as exc:
        raise RequestTimeout(
            f"the request body did not arrive within {config.request_body_timeout_s:g} s "
            "(shorter than its Content-Length, or an unfinished chunked body); send the whole body"
        ) from exc
    except web.HTTPRequestEntityTooLarge as exc:
        raise BodyTooLarge(f"the request body is larger than {config.max_body_bytes} bytes") from exc
    except (web.RequestPayloadError, HttpProcessingError) as exc:  # the parser's error, given to the payload
        said = " ".join((exc.message if isinstance(exc, HttpProcessingError) else str(exc)).split())
        refused = MalformedHttp(
            f"the request body is not readable HTTP ({type(exc).__name__}: {said[:200]}); check the body's "
            "framing (Content-Length, or chunked: each chunk's size in hex); the connection is closed"
        )
        log.warning("%s %s: %s", request.method, request.path, refused.message)  # a client's error: no traceback
        request.content.feed_eof()  # nothing more is read: aiohttp would linger to read the rest, and log its error
        raise refused from exc
    except ConnectionError as exc:  # aiohttp's "Connection lost"
        log.info("%s %s: the client left before its body arrived", request.method, request.path)
        raise ClientGone(f"the client closed the connection before its body arrived ({exc})") from exc


async def read_json(request: web.Request) -> tuple[Any, str]:
    """The request's JSON body and its raw text, or a ``RequestError`` (carrying the raw text)."""
    config = request.app[CONFIG]
    data = await read_body(request, config)
    raw = data.decode("utf-8", errors="surrogateescape")  # exactly what arrived; the trace escapes what is not text
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEncoding(
            f"the request body is not valid UTF-8 (byte {exc.start}); send JSON in UTF-8", raw
        ) from None
    if not text.strip():
        return {}, raw
    try:  # NaN and Infinity are read, as 1e400 is (as Infinity) and as MCP's reader reads them: a tool call's
        body = json.loads(text, object_pairs_hook=unique_keys, parse_int=read_int)  # argument error, else a field's
    except RepeatedKey as exc:  # the last value would be taken, and traced, in silence
        raise MalformedJson(
            f"request body gives the key {json.dumps(exc.key)} twice in one object; give each once", raw
        ) from None
    except LongInteger as exc:  # Python's own message advised the client to call sys.set_int_max_str_digits()
        raise MalformedJson(f"request body has {exc}", raw) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, deep nesting
        raise MalformedJson(f"request body is not valid JSON: {first_words(exc)}", raw) from None
    if json_depth(body) > config.max_json_depth:
        raise MalformedJson(f"request body is nested deeper than {config.max_json_depth} levels", raw)
    return body, raw


def first_words(exc: BaseException) -> str:
    return (str(exc) or type(exc).__name__)[:300]
