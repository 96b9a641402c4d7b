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
"""

from __future__ import annotations

import json
import logging

from aiohttp import web

from toolserver.api import PolicyResolver, Sandbox, TaskProvider, run_header
from toolserver.config import ServerConfig
from toolserver.errors import NoTask, UnknownPack, UnknownRun
from toolserver.transports.mcp import StreamableHttp

log = logging.getLogger("toolserver.transports.http")
SANDBOX = web.AppKey("sandbox", Sandbox)
STATUS_BY_ERROR = {"malformed_json": 400, "unknown_run": 404, "unknown_tool": 404}


def error_response(type_: str, message: str, status: int | None = None) -> web.Response:
    return web.json_response({"ok": False, "error": {"type": type_, "message": message}},
                             status=status or STATUS_BY_ERROR.get(type_, 400))


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


async def read_json(request: web.Request):
    raw = await request.text()
    if not raw.strip():
        return {}, raw, None
    try:
        return json.loads(raw), raw, None
    except json.JSONDecodeError as exc:
        return None, raw, f"request body is not valid JSON: {exc}"


async def create_run(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    body, _raw, problem = await read_json(request)
    if problem:
        return error_response("malformed_json", problem)
    if not isinstance(body, dict):
        return error_response("invalid_arguments", "POST /runs takes a JSON object like {\"pack\": \"bid-intake\"}")
    unknown = set(body) - {"pack", "policy", "block_state_changes", "site_key"}
    if unknown:
        return error_response("invalid_arguments", f"unknown field(s) {sorted(unknown)} in POST /runs")
    pack, policy, block, site_key = body.get("pack"), body.get("policy"), body.get("block_state_changes"), body.get("site_key")
    if pack is not None and not isinstance(pack, str) or policy not in (None, "enforce", "observe") \
            or block not in (None, True, False) or site_key is not None and not (isinstance(site_key, str) and site_key):
        return error_response("invalid_arguments", "pack must be a string, policy 'enforce' or 'observe', "
                                                   "block_state_changes a boolean, site_key a non-empty string")
    try:
        run = sandbox.open_run(pack, transport="http", site_key=site_key, mode=policy, block_state_changes=block)
    except UnknownPack as exc:
        return error_response("invalid_pack", str(exc))
    reply = {"run_id": run.id, "pack": run.policy.pack, "policy": run.trace_policy,
             "block_state_changes": run.policy.block_state_changes, "site_key": run_header(run).get("site_key")}
    if run.trace_policy == "none":
        reply["note"] = ("no pack, so no allow-list: every mirrored URL may be opened and nothing is scored; "
                         'create the run with {"pack": ...} to enforce a pack\'s allowed URLs')
    return web.json_response(reply, status=201)


async def get_task(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    return web.json_response(sandbox.task(ended_or_open_run(request)))


async def post_answer(request: web.Request) -> web.Response:
    body, _raw, problem = await read_json(request)
    if problem:
        return error_response("malformed_json", problem)
    if not isinstance(body, dict) or set(body) != {"output"} or not isinstance(body["output"], str):
        return error_response("invalid_arguments", 'POST /runs/{id}/answer takes {"output": "<the agent\'s final answer>"}')
    return web.json_response(await request.app[SANDBOX].answer(ended_or_open_run(request), body["output"]))


def ended_or_open_run(request: web.Request):
    run = request.app[SANDBOX].runs.get(request.match_info["run_id"])  # ended runs keep their trace
    if run is None:
        raise UnknownRun(f"no run {request.match_info['run_id']!r}")
    return run


async def list_tools(request: web.Request) -> web.Response:
    run = request.app[SANDBOX].get_run(request.match_info["run_id"])
    return web.json_response({"tools": run.tools()})


async def call_tool(request: web.Request) -> web.Response:
    run = request.app[SANDBOX].get_run(request.match_info["run_id"])
    name = request.match_info["name"]
    body, raw, problem = await read_json(request)
    if problem:
        await run.record_rejected(name, raw, {"type": "malformed_json", "message": problem})
        return error_response("malformed_json", problem)
    reply = await run.call(name, body)
    status = 200 if reply["ok"] else STATUS_BY_ERROR.get(reply["error"]["type"], 200)
    return web.json_response(reply, status=status)


async def get_trace(request: web.Request) -> web.Response:
    return web.Response(text=ended_or_open_run(request).trace.text(), content_type="application/x-ndjson")


async def delete_run(request: web.Request) -> web.Response:
    run = await request.app[SANDBOX].end_run(request.match_info["run_id"])
    return web.json_response({"run_id": run.id, "closed": True})


async def health(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX]
    return web.json_response({"ok": True, "runs": len(sandbox.runs), "chromium": sandbox.host.executable,
                              "mirrored_urls": len(sandbox.host.store)})


def create_app(config: ServerConfig | None = None, sandbox: Sandbox | None = None, *,
               policies: PolicyResolver | None = None, tasks: TaskProvider | None = None) -> web.Application:
    """Application factory. Pass a started ``sandbox`` to share it (tests), else one is
    started (with ``policies`` resolving the packs of ``POST /runs``, ``tasks`` their tasks)."""
    app = web.Application(middlewares=[error_boundary])
    owned = sandbox is None
    app[SANDBOX] = sandbox or Sandbox(config, policies=policies, tasks=tasks)

    async def lifecycle(app: web.Application):
        if owned:
            await app[SANDBOX].start()
        yield
        if owned:
            await app[SANDBOX].stop()

    app.cleanup_ctx.append(lifecycle)
    app.router.add_post("/runs", create_run)
    app.router.add_get("/runs/{run_id}/tools", list_tools)
    app.router.add_post("/runs/{run_id}/tools/{name}", call_tool)
    app.router.add_get("/runs/{run_id}/trace", get_trace)
    app.router.add_get("/runs/{run_id}/task", get_task)
    app.router.add_post("/runs/{run_id}/answer", post_answer)
    app.router.add_delete("/runs/{run_id}", delete_run)
    app.router.add_get("/health", health)

    # MCP over streamable HTTP on the same port: /mcp?pack=ID (toolserver/transports/mcp.py)
    mcp_http = StreamableHttp(app[SANDBOX])
    app.cleanup_ctx.append(mcp_http.lifecycle)
    app.router.add_route("*", "/mcp", mcp_http.handle)
    return app

