"""What every client of the compatibility suite shares: its job (from the runner), the policy,
and the one line it reports back. Standard library only: it is imported by path into every
framework's venv (each client puts ``scripts/compat`` on ``sys.path``).

A client is run by ``scripts/compat/run.py`` as

    .compat/<framework>/bin/python scripts/compat/<framework>/client.py workflow --job JSON
    .compat/<framework>/bin/python scripts/compat/<framework>/client.py schemas --tools DIR

``workflow`` drives the controlled-form workflow over one transport with the framework's agent
and its scripted model; ``schemas`` runs the framework's own schema converters on the published
tool definitions in ``DIR`` (``sandbox tools --format ...`` as ``<format>.json``). Either way the
last line of standard output is ``COMPAT_CLIENT {json}``; an exception that ends the client is
reported there too, with its type and message (the traceback goes to standard error).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import form_policy as policy  # the same folder; re-exported for the clients

REPORT_MARKER = "COMPAT_CLIENT "
SERVER = "sandbox"  # the MCP server's name in every framework's configuration
INSTRUCTIONS = "You drive a browser through the sandbox's tools. Follow the task exactly."


@dataclass(frozen=True)
class Job:
    """One client run: the transport and where the server is, the scripted model, the variant."""

    transport: str  # "stdio" or "http"
    command: str = ""  # stdio: the server program (``sandbox``) ...
    args: list[str] = field(default_factory=list)  # ... and its arguments
    url: str = ""  # http: the streamable-HTTP MCP endpoint
    model_url: str = ""  # the scripted model server's OpenAI base URL (``.../v1``)
    model: str = policy.MODEL
    prompt_file: str = ""  # the task, for clients whose framework cannot read MCP prompts
    variant: str = ""  # e.g. "strict", "get_tools"

    @property
    def stdio(self) -> bool:
        return self.transport == "stdio"

    def prompt(self) -> str:
        if not self.prompt_file:
            raise RuntimeError("this client reads the task from a prompt file, and the runner gave none")
        return Path(self.prompt_file).read_text(encoding="utf-8")


def report(**fields: Any) -> None:
    print(REPORT_MARKER + json.dumps(fields, ensure_ascii=False, default=str), flush=True)


def prompt_text(messages: Any) -> str:
    """The text of an MCP ``prompts/get`` reply's messages, whatever object model holds them."""
    texts = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", message)
        if isinstance(content, dict):
            text = content.get("text")
        else:  # the MCP SDK's TextContent has .text; pydantic-ai's own has .content
            text = getattr(content, "text", None) or getattr(content, "content", None)
        texts.append(text if isinstance(text, str) else str(content))
    return "\n".join(texts)


def nullable(schema: dict) -> bool:
    kinds = schema.get("type")
    return (
        kinds == "null"
        or (isinstance(kinds, list) and "null" in kinds)
        or any(nullable(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []) if isinstance(s, dict))
    )


def forced_values(original: dict, converted: dict) -> list[str]:
    """Properties that ``original`` leaves optional with no default to fall back on (none, or
    null) and ``converted`` (a strict converter's output) makes required without allowing null:
    a model held to ``converted`` must invent a value for them."""
    required = set(converted.get("required") or [])
    properties = original.get("properties") or {}
    optional = set(properties) - set(original.get("required") or [])
    no_default = {p for p in optional if properties[p].get("default") is None}
    props = converted.get("properties") or {}
    return sorted(p for p in no_default if p in required and not nullable(props.get(p, {})))


def tally(results: dict[str, str | None], what: str) -> str:
    """``N/M what``, then the first problem: ``results`` maps a tool to its problem or None."""
    problems = {name: problem for name, problem in results.items() if problem}
    line = f"{len(results) - len(problems)}/{len(results)} {what}"
    if problems:
        name, problem = next(iter(problems.items()))
        line += f"; {len(problems)} not: {name}: {problem}"
    return line


def main(
    workflow: Callable[[Job], Awaitable[dict[str, Any]]],
    schemas: Callable[[dict[str, Any]], dict[str, str] | Awaitable[dict[str, str]]] | None = None,
) -> None:
    """Run ``workflow`` (its dict: ``final`` the agent's last output, ``task_source``, notes) or
    ``schemas`` (check name -> one-line result) as the command line asks, and report it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["workflow", "schemas"])
    parser.add_argument("--job", help="the job, as JSON (workflow)")
    parser.add_argument("--tools", help="folder of published tool definitions, <format>.json (schemas)")
    options = parser.parse_args()
    try:
        if options.what == "workflow":
            job = Job(**json.loads(options.job))
            outcome = asyncio.run(workflow(job))
            record = policy.read_result(str(outcome.get("final", "")))
            report(**outcome, result=record)
        else:
            folder = Path(options.tools)
            published = {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
            checked = schemas(published) if schemas else {}
            if inspect.isawaitable(checked):
                checked = asyncio.run(checked)
            report(schemas=checked)
    except BaseException as exc:  # noqa: BLE001  (the report is the point: what ended the client)
        if isinstance(exc, KeyboardInterrupt):
            raise
        traceback.print_exc()
        report(error=exception_line(exc))
        sys.exit(1)


def exception_line(exc: BaseException) -> str:
    """``Type: message`` of the innermost exception, through exception groups and causes."""
    while True:
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        elif exc.__cause__ is not None and not str(exc):
            exc = exc.__cause__
        else:
            break
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:400]}"
