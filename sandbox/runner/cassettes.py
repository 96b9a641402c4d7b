"""Checks that a recorded model conversation (a vcrpy cassette of a model agent) fits
the attempt about to replay it: the same pack's task, the same tool schemas.

A replay matches each request on its conversation too, so a cassette recorded for another pack
would fail at its first request; checked before the attempt, the mismatch is said better: which
pack it was recorded for, the prompt's first differing line and its file, the tools that differ.
Its first request says what it was recorded for: the task prompt (site key kept as a
placeholder) and the tools offered to the model. ``nothing_recorded`` says, in every record mode,
when no cassette can be at a path (a folder, a path under a file).
"""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.evaluation.packs import Pack, list_packs
from sandbox.runner.agents._cassette import (
    SITE_KEY_PLACEHOLDER,
    CassetteUnreadable,
    holds_recording,
    not_as_recorded,
    path_problem,
    recorded_interactions,
)

RERECORD = "re-record it (record mode 'all', against your model endpoint) or pass the right cassette"


class CassetteMismatch(Exception):
    """The cassette was recorded for something else; the message says what and what to do."""


def nothing_recorded(path: Path) -> str | None:
    """Why the cassette at ``path`` holds nothing to replay (there is no file, or one without an
    interaction: ``holds_recording``, which vcrpy records into as into none), or None.
    ``CassetteMismatch`` when no cassette can be there at all (a folder, or a path under a file),
    in every record mode: vcrpy would fail when it saves."""
    problem = path_problem(path)
    if problem is not None:
        raise CassetteMismatch(f"{problem}: pass the path of a cassette file")
    if not path.exists():
        return f"no cassette at {path}"
    try:
        empty = not path.read_bytes().strip()
    except OSError as exc:
        raise CassetteMismatch(f"cassette {path} cannot be read: {exc}") from None
    if empty:
        return f"the cassette {path} is empty"
    return None if holds_recording(path) else f"the cassette {path} holds no interactions"


def first_request(path: Path) -> dict | None:
    """The first recorded request's JSON body (None when nothing is recorded, or it is not a JSON
    object); ``CassetteMismatch`` when the cassette is not one vcrpy can replay, saying where."""
    try:
        interactions = recorded_interactions(path)
    except CassetteUnreadable as exc:
        raise CassetteMismatch(f"{exc}: {RERECORD}") from None
    for interaction in interactions:
        body = interaction["request"].get("body")
        if isinstance(body, dict):  # vcrpy may store {"string": ...}
            body = body.get("string")
        if isinstance(body, (str, bytes)) and body:
            try:
                request = json.loads(body)
            except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                return None
            return request if isinstance(request, dict) else None
    return None


def unreadable(path: Path, what: str, value: object, wanted: str) -> CassetteMismatch:
    return CassetteMismatch(f"{not_as_recorded(path, what, value, wanted)}: {RERECORD}")


def recorded_prompt(path: Path, request: dict) -> str | None:
    """The recorded task prompt: the first request's first user message (a text)."""
    messages = request.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise unreadable(path, "the first request's messages", messages, "a list of messages")
    for message in messages or []:
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return None


def first_difference(pack: Pack, recorded: str) -> str:
    """Where the pack's prompt first differs from the ``recorded`` one: the pack file and its line,
    the two texts shortened."""
    current, before = pack.render_prompt(SITE_KEY_PLACEHOLDER).split("\n"), recorded.split("\n")
    common = min(len(before), len(current))
    line = next((n for n in range(common) if before[n] != current[n]), common)
    where, number = prompt_source(pack, line)
    return f"{where} line {number}: recorded {shortened(before, line)}, now {shortened(current, line)}"


def prompt_source(pack: Pack, line: int) -> tuple[str, int]:
    """Where a line of the pack's prompt comes from (``Pack.prompt_parts``), and its line there; a
    line past the prompt's end (a longer recorded one) is its last part's."""
    start = 0
    for name, text in pack.prompt_parts(SITE_KEY_PLACEHOLDER):
        lines = text.count("\n") + 1
        if line < start + lines:
            return name, line - start + 1
        start += lines
    return name, line - start + lines + 1


def shortened(lines: list[str], number: int) -> str:
    if number >= len(lines):
        return "nothing"
    return repr(lines[number][:80]) + ("..." if len(lines[number]) > 80 else "")


def api_of(tools: object) -> str | None:
    """Whose tool definitions these are: OpenAI's (``function``) or Anthropic's (``input_schema``)."""
    first = tools[0] if isinstance(tools, list) and tools and isinstance(tools[0], dict) else {}
    return "OpenAI" if "function" in first else "Anthropic" if "input_schema" in first else None


def tool_name(definition: dict) -> str:
    """A tool definition's name, in OpenAI (``function.name``) or Anthropic/MCP (``name``) form."""
    function = definition.get("function")
    return str((function.get("name") if isinstance(function, dict) else None) or definition.get("name"))


def check_recorded_tools(path: Path, tools: object) -> None:
    """``CassetteMismatch`` unless the first request's tools are a list of tool definitions, an
    OpenAI one's ``function`` a mapping (hand-edited to a text or null, it is no definition)."""
    if not (isinstance(tools, list) and all(isinstance(tool, dict) for tool in tools)):
        raise unreadable(path, "the first request's tools", tools, "a list of tool definitions")
    for number, tool in enumerate(tools, 1):
        if "function" in tool and not isinstance(tool["function"], dict):
            what = f"the first request's tool {number}'s function"
            raise unreadable(path, what, tool["function"], "a mapping of its name, description and parameters")


def tools_differing(recorded: list[dict], offered: list[dict]) -> str:
    """How the recorded tool definitions differ from those ``offered``, by tool name: tools only
    one side has, schemas changed, a tool recorded twice, else the order."""
    before, now = [tool_name(t) for t in recorded], [tool_name(t) for t in offered]
    said = []
    for what, names in (
        ("not recorded", sorted(set(now) - set(before))),
        ("no longer offered", sorted(set(before) - set(now))),
        ("schema changed", sorted({tool_name(t) for t in offered if t not in recorded and tool_name(t) in before})),
        ("recorded more than once", sorted({name for name in before if before.count(name) > 1})),
    ):
        if names:
            said.append(f"{what}: {', '.join(names)}")
    at = next((n for n in range(min(len(before), len(now))) if recorded[n] != offered[n]), None)
    if not said and at is not None:  # the same definitions in another order
        said.append(f"another order: tool {at + 1} was {before[at]}, now {now[at]}")
    elif not said:
        said.append(f"{len(before)} tools recorded, {len(now)} offered")
    return "; ".join(said)


def check_cassette(path: Path, pack: Pack, tools: list[dict]) -> None:
    """Raise ``CassetteMismatch`` when the cassette at ``path`` was recorded for another pack or
    against other tool schemas than ``tools`` (the tool definitions the agent will offer)."""
    request = first_request(path)
    if request is None:
        return  # nothing recorded yet, or not a chat request: vcrpy reports it if it cannot answer
    prompt = recorded_prompt(path, request)
    if prompt is not None and prompt != pack.render_prompt(SITE_KEY_PLACEHOLDER):
        other = next((p.id for p in list_packs() if p.render_prompt(SITE_KEY_PLACEHOLDER) == prompt), None)
        if other is not None and other != pack.id:
            raise CassetteMismatch(f"cassette {path} was recorded for pack {other!r}, not for {pack.id!r}: {RERECORD}")
        what = f"pack {pack.id!r} before its prompt changed" if other else "a task prompt that differs from this pack's"
        raise CassetteMismatch(
            f"cassette {path} was recorded for {what} ({first_difference(pack, prompt)}): {RERECORD}"
        )
    recorded_tools = request.get("tools")
    if recorded_tools is None:
        return
    check_recorded_tools(path, recorded_tools)
    recorded_api, wanted_api = api_of(recorded_tools), api_of(tools)
    if recorded_api and wanted_api and recorded_api != wanted_api:
        raise CassetteMismatch(
            f"cassette {path} was recorded by an {recorded_api} agent; this agent is an {wanted_api} one: {RERECORD}"
        )
    if recorded_tools != tools:
        raise CassetteMismatch(
            f"cassette {path} was recorded against other tool schemas than this sandbox "
            f"offers ({tools_differing(recorded_tools, tools)}): {RERECORD}"
        )
