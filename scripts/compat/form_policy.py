"""The scripted "model" of the compatibility suite: a fixed policy for the controlled-form
workflow, a pure function of the conversation (the task prompt and the tool calls made so far
with what came back, as the framework showed it to the model).

Every client of ``scripts/compat/`` drives the same conversation, whether the policy sits
behind the scripted OpenAI-compatible server (model ``scripted-form-1`` of
``scripts/scripted_model_server.py``) or inside a framework's own test model (pydantic-ai's
``FunctionModel``, a google-adk ``BaseLlm``, a smolagents ``Model``):

1. ``browser_start_session`` with provider "kernel" and the site key and URL the prompt gives;
2. ``browser_snapshot``;
3. the error path: ``browser_click`` on the ref ``e9999`` (not in the page: a ``stale_ref``) and
   ``browser_snapshot`` with ``max_chars="lots"`` (a wrongly typed argument); each must come
   back as a tool error the model reads, and the policy goes on;
4. ``browser_type`` into the first step's fields and ``browser_click`` on ``Next``, every ref
   read from the snapshot text the tool returned;
5. ``browser_snapshot``, which must show the second step's heading and fields;
6. ``browser_close``, then the answer: a line ``COMPAT_RESULT {json}`` saying what it saw.

A step that fails (an unexpected tool error, a ref not found in the text) ends the
conversation with ``COMPAT_RESULT {"ok": false, ...}`` naming the step and quoting what the
model was shown; the policy never retries, so a call its framework refuses fails the run. The
policy reads the task and the tool results only: no fixture, no mirror, no hard-coded ref.
Standard library only: it is imported by path into every framework's venv.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MODEL = "scripted-form-1"
RESULT_MARKER = "COMPAT_RESULT "
MISSING_REF = "e9999"  # a ref no snapshot of the form has: the server must answer stale_ref
WRONG_TYPE = {"max_chars": "lots"}  # an integer argument given as a word: invalid_arguments

SITE_KEY = re.compile(r'site_key="([^"]+)"')
START_URL = re.compile(r'browser_start_session call must pass url="([^"]+)"')
VALUE_ROW = re.compile(r"^\|\s*([^|`]+?)\s*\|\s*([^|`]+?)\s*\|\s*`([^`]*)`\s*\|\s*$", re.M)
STEP_HEADING = re.compile(r'heading "([^"]*\(Step (\d+) of (\d+)\))"')
# The server's error shape {"type": ..., "message": ...} (either order), possibly JSON-escaped
# inside another string.
SERVER_ERROR = (
    re.compile(r'\\?"type\\?":\s*\\?"(?P<type>[a-z_]+)\\?",\s*\\?"message\\?":\s*\\?"(?P<message>.{0,300}?)\\?"[,}]'),
    re.compile(r'\\?"message\\?":\s*\\?"(?P<message>.{0,300}?)\\?",\s*\\?"type\\?":\s*\\?"(?P<type>[a-z_]+)\\?"[,}]'),
)
CLIENT_ERROR = re.compile(r"\b(error|invalid|exception|failed|validation)\b", re.I)


@dataclass(frozen=True)
class Turn:
    """One tool call the model made and the result the framework gave back, as text."""

    name: str
    args: dict[str, Any]
    result: str


@dataclass(frozen=True)
class Task:
    site_key: str
    url: str
    steps: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (form step, ((field label, value), ...))


def read_task(prompt: str) -> Task | None:
    """The site key, the start URL and the values per form step, from the task prompt."""
    site_key, url = SITE_KEY.search(prompt), START_URL.search(prompt)
    rows = VALUE_ROW.findall(prompt)
    if not (site_key and url and rows):
        return None
    steps: dict[str, list[tuple[str, str]]] = {}
    for step, label, value in rows:
        steps.setdefault(step, []).append((label, value))
    return Task(site_key.group(1), url.group(1), tuple((s, tuple(v)) for s, v in steps.items()))


def readable(text: str) -> str:
    """The tool result as a model reads it: JSON-encoded content (a list of blocks, a quoted
    string) decoded, so a snapshot inside it reads as lines again."""
    parts = [text]
    try:
        decoded = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        decoded = None
    stack = [decoded]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if "\\n" in text:  # a repr or a JSON string the framework did not decode
        parts.append(text.replace("\\n", "\n").replace('\\"', '"'))
    return "\n".join(parts)


def find_ref(result: str, role: str, name: str) -> str | None:
    found = re.search(rf'- {role} "{re.escape(name)}"[^\n]*?\[ref=(e\d+)\]', readable(result))
    return found.group(1) if found else None


def error_in(result: str) -> str | None:
    """The error a tool result reports: the server's ``type: message``, else a framework's own
    wording (a client-side validation error, an exception turned into text); None for a result."""
    for pattern in SERVER_ERROR:
        server = pattern.search(result)
        if server:
            return f"{server.group('type')}: {server.group('message')}"
    if not re.search(r'\\?"(snapshot|session_id|tab|url)\\?":', result) and CLIENT_ERROR.search(result):
        return " ".join(result.split())[:300]
    return None


def shown(result: str, limit: int = 300) -> str:
    return " ".join(result.split())[:limit]


def answer(record: dict[str, Any]) -> dict[str, Any]:
    summary = "The form reached its second step." if record.get("ok") else "The workflow failed."
    return {"answer": f"{summary}\n{RESULT_MARKER}{json.dumps(record, ensure_ascii=False)}"}


def failed(step: str, why: str, result: str = "") -> dict[str, Any]:
    return answer({"ok": False, "step": step, "why": why, "shown": shown(result)})


def next_step(prompt: str, turns: list[Turn]) -> dict[str, Any]:
    """``{"call": (tool name, arguments)}`` or ``{"answer": text}``: the next step after ``turns``."""
    task = read_task(prompt)
    if task is None:
        return answer({"ok": False, "step": "task", "why": "the prompt names no site key, start URL or values"})
    (_first_step, first_fields), *_ = task.steps
    plan: list[tuple[str, dict[str, Any]]] = [
        (
            "browser_start_session",
            {"provider": "kernel", "site_key": task.site_key, "clear_cookies": False, "url": task.url},
        ),
        ("browser_snapshot", {}),
        ("browser_click", {"ref": MISSING_REF}),
        ("browser_snapshot", dict(WRONG_TYPE)),
    ]
    checked: dict[str, Any] = {"ok": True}
    for index, turn in enumerate(turns):
        name = bare_name(turn.name)
        if index < len(plan) and name != plan[index][0]:
            return failed(f"call {index + 1}", f"the framework reported {turn.name!r}, expected {plan[index][0]!r}")
        error = error_in(turn.result)
        if index == 0:
            if error or "kernel" not in turn.result:
                return failed("browser_start_session", error or "no Kernel session in the result", turn.result)
        elif index == 1:
            if error and "[ref=" not in turn.result:
                return failed("browser_snapshot", error, turn.result)
            refs = {label: find_ref(turn.result, "textbox", label) for label, _ in first_fields}
            refs["Next"] = find_ref(turn.result, "button", "Next")
            missing = [label for label, ref in refs.items() if ref is None]
            if missing:
                return failed("browser_snapshot", f"no ref for {missing} in the snapshot text", turn.result)
            plan += [("browser_type", {"ref": refs[label], "text": value}) for label, value in first_fields]
            plan += [("browser_click", {"ref": refs["Next"]}), ("browser_snapshot", {}), ("browser_close", {})]
            checked["refs"] = refs
        elif index in (2, 3):
            key = "stale_ref_error" if index == 2 else "wrong_type_error"
            if error is None:
                return failed(name, f"{plan[index][1]} was not reported as a tool error", turn.result)
            checked[key] = error
        elif name == "browser_snapshot":  # after Next: the form's second step
            heading = STEP_HEADING.search(readable(turn.result))
            if heading is None or heading.group(2) != "2":
                why = error or "the second step's heading is not in the snapshot text"
                return failed("browser_snapshot after Next", why, turn.result)
            _second, second_fields = task.steps[1]
            absent = [label for label, _ in second_fields if find_ref(turn.result, "textbox", label) is None]
            if absent:
                return failed("browser_snapshot after Next", f"no textbox {absent} on the second step", turn.result)
            checked["heading"] = heading.group(1)
        elif error:
            return failed(name, error, turn.result)
    if len(turns) < len(plan):
        name, args = plan[len(turns)]
        return {"call": (name, args)}
    if "heading" not in checked:
        return failed("browser_snapshot after Next", "no snapshot after Next was read")
    return answer(checked)


def completed(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``args`` with every property that ``schema`` (a JSON schema, as the framework showed the
    tool to the model) requires and the policy left out: null where the property allows null,
    else the empty value of its type. A model whose output is held to the schema (OpenAI's strict
    mode, a framework that makes every input required) has to send something, and says nothing."""
    done = dict(args)
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in done and name in properties:
            done[name] = None if allows_null(properties[name]) else empty_value(properties[name])
    return done


def allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        schema.get("nullable") is True
        or kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or any(allows_null(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []) if isinstance(s, dict))
    )


def empty_value(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(kind, "")


TOOLS = (
    "browser_start_session",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_navigate",
    "browser_scroll",
    "browser_open_tab",
    "browser_switch_tab",
    "browser_close_tab",
    "browser_close",
    "list_tools",
)


def bare_name(name: str) -> str:
    """The sandbox's name of a tool a framework offers under a prefix (``sandbox__browser_click``)."""
    return next((tool for tool in sorted(TOOLS, key=len, reverse=True) if name.endswith(tool)), name)


def offered_name(name: str, offered: set[str] | list[str]) -> str:
    """The name under which a framework offers the tool ``name`` (some prefix the server's name,
    e.g. ``sandbox-browser_click``)."""
    if name in offered:
        return name
    matches = [o for o in offered if o.endswith(name) and not o[-len(name) - 1].isalnum()]
    return matches[0] if len(matches) == 1 else name


def read_result(text: str) -> dict[str, Any] | None:
    """The ``COMPAT_RESULT`` record in an agent's final output, or None."""
    at = text.rfind(RESULT_MARKER)
    if at < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[at + len(RESULT_MARKER) :])[0]
    except json.JSONDecodeError:
        return None
