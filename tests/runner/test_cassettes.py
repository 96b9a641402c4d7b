"""The check of a cassette before it replays (``sandbox.runner.cassettes.check_cassette``): one
vcrpy cannot replay, or recorded for another pack, is refused saying what is wrong where. Pure:
the committed cassette, damaged on a copy, and the bundled packs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from sandbox import PROJECT_ROOT
from sandbox.evaluation.packs import load_pack
from sandbox.runner.agents import MODEL_TOOL_FORMATS
from sandbox.runner.cassettes import RERECORD, CassetteMismatch, check_cassette
from toolserver.formats import tool_definitions
from toolserver.tools import default_registry

CASSETTE = PROJECT_ROOT / "fixtures" / "cassettes" / "openai-bid-intake.yaml"
DEEP = "[" * 100_000 + "]" * 100_000
TOOLS = tool_definitions(MODEL_TOOL_FORMATS["openai"], default_registry().schemas())


def damaged(folder: Path, damage: Callable[[dict], object]) -> Path:
    """A copy of the committed cassette with ``damage`` done to its data."""
    data = yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))
    damage(data)
    path = folder / "damaged.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def first_body(change: Callable[[dict], None]) -> Callable[[dict], None]:
    """A damage to the first request's JSON body."""

    def damage(data: dict) -> None:
        request = data["interactions"][0]["request"]
        body = json.loads(request["body"])
        change(body)
        request["body"] = json.dumps(body)

    return damage


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda data: data.update(interactions="x"), "its interactions is str 'x', not a list"),
        (lambda data: data.update(interactions=["x", "y"]), "interaction 1 is str 'x', not a mapping of a request"),
        (lambda data: data["interactions"][1].update(request="oops"), "interaction 2's request is str 'oops', not a"),
        (lambda data: data["interactions"][2].pop("response"), "interaction 3's response is missing, not a mapping"),
        (first_body(lambda body: body.update(messages="hello")), "the first request's messages is str 'hello', not a"),
        (first_body(lambda body: body.update(tools="none")), "the first request's tools is str 'none', not a list"),
        (lambda data: data.pop("interactions"), "its interactions is missing, not a list"),  # KeyError: 'interactions'
        (lambda data: data["interactions"][0]["request"].pop("uri"), "interaction 1's request has no 'uri' (vcrpy's"),
        (lambda data: data["interactions"][1]["response"]["status"].pop("message"), "interaction 2's response status"),
        (lambda data: data["interactions"][1]["response"]["headers"].update(server="x"), "response header 'server'"),
        # these three were a TypeError (unhashable) when the requests were told apart
        (lambda data: data["interactions"][0]["request"].update(method=["POST"]), "request method is list"),
        (lambda data: data["interactions"][1]["request"].update(uri={"a": 1}), "interaction 2's request uri is dict"),
        (lambda data: data["interactions"][2]["request"].update(headers=["x"]), "3's request headers is list"),
        # vcrpy's loader failed on it, every attempt: TypeError: Request.__init__() got an unexpected keyword argument
        (lambda data: data["interactions"][1]["request"].update(note="x"), "interaction 2's request has 'note', which"),
        # a RecursionError traceback from the check, in every record mode
        (lambda data: data["interactions"][0]["request"].update(body=DEEP), "it holds YAML or JSON nested too deeply"),
    ],
    ids=["interactions", "interaction", "request", "response", "messages", "tools"]
    + ["no-interactions", "uri", "status-message", "header", "method-list", "uri-mapping", "headers-list"]
    + ["request-key", "deep-body"],
)
def test_a_cassette_of_the_wrong_structure_is_refused_saying_where(tmp_path, damage, says):
    """Each ended in an AttributeError traceback (exit 1 from `sandbox run`, a crash in pytest)."""
    path = damaged(tmp_path, damage)
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    said = str(refused.value)
    assert said.startswith(f"cassette {path} cannot be read: ") and says in said and "re-record it" in said, said


def test_the_committed_cassette_fits_its_pack():
    check_cassette(CASSETTE, load_pack("bid-intake"), TOOLS)


def test_a_pack_edited_under_its_own_id_is_said_to_have_changed_where(tmp_path):
    """It was "recorded for pack 'bid-intake', not for 'bid-intake'"."""
    folder = shutil.copytree(PROJECT_ROOT / "packs" / "bid-intake", tmp_path / "mine" / "bid-intake")
    task = (folder / "task_prompt.md").read_text(encoding="utf-8")
    (folder / "task_prompt.md").write_text(task.replace("Review the supplied", "Please review the supplied", 1))
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(CASSETTE, load_pack(folder), TOOLS)
    assert str(refused.value).startswith(
        f"cassette {CASSETTE} was recorded for pack 'bid-intake' before its prompt changed "
        f"({folder}/task_prompt.md line 1: recorded 'Review the supplied archived construction opportunity"
    )
    assert "now 'Please review the supplied" in str(refused.value) and "re-record it" in str(refused.value)


def test_a_prompt_no_pack_has_names_the_first_line_that_differs(tmp_path):
    def change(body: dict) -> None:
        user = body["messages"][1]
        user["content"] = user["content"].replace("FROZEN TASK INPUT:", "FROZEN TASK INPUT:\nan extra line")

    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(damaged(tmp_path, first_body(change)), load_pack("bid-intake"), TOOLS)
    said = str(refused.value)
    assert "was recorded for a task prompt that differs from this pack's (" in said
    assert "/bid-intake/input.md line 1: recorded 'an extra line', now " in said, said


@pytest.mark.parametrize("key", ["status", "headers", "body"])
def test_a_response_without_its_status_headers_or_body_is_refused_naming_the_interaction(tmp_path, key):
    """It passed the check, then ended the attempt in a KeyError (openai:) or in the SDK's bare
    "Connection error." (anthropic:), naming neither the cassette nor the interaction."""
    path = damaged(tmp_path, lambda data: data["interactions"][3]["response"].pop(key))
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    assert str(refused.value).startswith(
        f"cassette {path} cannot be read: interaction 4's response has no {key!r} "
        "(vcrpy's responses hold status, headers and body): re-record it"
    ), refused.value


def test_a_response_body_that_is_not_its_json_is_refused_naming_the_interaction(tmp_path):
    """Replaying it crashed the attempt in a bare JSONDecodeError under record mode new_episodes."""

    def damage(data: dict) -> None:
        data["interactions"][1]["response"]["body"]["string"] = '{"id": "chatcmpl-1", "choi'

    path = damaged(tmp_path, damage)
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    assert str(refused.value).startswith(
        f"cassette {path} cannot be replayed: interaction 2's response body is not the JSON its content-type "
        """says (Unterminated string starting at: line 1 column 22 (char 21)): '{"id": "chatcmpl-1", "choi'"""
    ), refused.value


@pytest.mark.parametrize(
    "cut, says",
    [
        (lambda body: body[:700], "is not the JSON its content-type says (Unterminated string starting at"),
        (lambda body: "[" + body + "]", "is JSON list, not a JSON object"),
    ],
    ids=["cut-in-a-quote", "a-list"],
)
def test_a_request_body_that_is_not_its_json_object_is_refused_naming_the_interaction(tmp_path, cut, says):
    """It loaded, the check skipped the prompt and tools, and the conversation matcher took the body
    for any request: the cassette replayed for another model or task."""
    for number in (0, 2):

        def damage(data: dict, number: int = number) -> None:
            request = data["interactions"][number]["request"]
            request["body"] = cut(request["body"])

        path = damaged(tmp_path, damage)
        with pytest.raises(CassetteMismatch) as refused:
            check_cassette(path, load_pack("bid-intake"), TOOLS)
        assert str(refused.value).startswith(
            f"cassette {path} cannot be replayed: interaction {number + 1}'s request body {says}"
        ), refused.value
        assert "re-record it" in str(refused.value)


@pytest.mark.parametrize("where", [0, 3])
def test_an_interaction_recorded_twice_is_refused_naming_both(tmp_path, where):
    """A conversation recorded twice over replayed its first half and passed; a turn recorded
    twice was answered twice, and the agent repeated its tool call."""
    path = damaged(tmp_path, lambda data: data["interactions"].insert(where + 1, data["interactions"][where]))
    uri = yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))["interactions"][where]["request"]["uri"]
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    assert str(refused.value).startswith(
        f"cassette {path} cannot be replayed: interaction {where + 2} repeats interaction {where + 1}'s request "
        f"(POST {uri}), where a recording holds each request once"
    ), refused.value  # the port is the recording's: another on every recording


def test_a_truncated_cassette_is_refused_saying_where_it_ends(tmp_path):
    """The message was YAML's first line alone, "while scanning a quoted scalar"."""
    text = CASSETTE.read_text(encoding="utf-8")
    path = tmp_path / "truncated.yaml"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    said = str(refused.value)
    assert said.startswith(f"cassette {path} cannot be read: found unexpected end of stream at line "), said


def test_a_path_that_cannot_hold_a_cassette_is_refused_in_every_record_mode(tmp_path):
    """A folder was "no cassette" to the check, and recording into one (or under a file) crashed the
    attempt in an IsADirectoryError or FileExistsError once its whole conversation was over."""
    from sandbox.runner.cassettes import nothing_recorded

    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "empty.yaml").write_text("\n")
    for path, says in [
        (tmp_path / "folder.yaml", f"cassette {tmp_path}/folder.yaml is a folder, not a file: pass the path of a"),
        (tmp_path / "a-file" / "c.yaml", f"cassette {tmp_path}/a-file/c.yaml cannot be written: {tmp_path}/a-file is"),
        # an OSError traceback (Errno 36) from `sandbox run` and the pytest plugin
        (tmp_path / ("x" * 300), f"cassette {tmp_path}/{'x' * 300} cannot be looked up: File name too long"),
    ]:
        with pytest.raises(CassetteMismatch) as refused:
            nothing_recorded(path)
        assert str(refused.value).startswith(says), refused.value
    assert nothing_recorded(tmp_path / "empty.yaml") == f"the cassette {tmp_path}/empty.yaml is empty"
    assert nothing_recorded(tmp_path / "none.yaml") == f"no cassette at {tmp_path}/none.yaml"
    assert nothing_recorded(CASSETTE) is None


@pytest.mark.parametrize(
    "interaction",
    ["!!python/object/new:_io.BytesIO {state: 5}", "!!python/object/apply:builtins.iter {args: 5}"],
    ids=["bytesio", "iter"],
)
def test_a_python_tag_vcrpy_cannot_build_is_refused_as_unreadable(tmp_path, interaction):
    """vcrpy's loader builds these tags (old cassettes' bodies); of other parts, its TypeError
    escaped the check: a traceback from `sandbox run`, a crash in pytest."""
    path = tmp_path / "tagged.yaml"
    path.write_text(f"interactions:\n- {interaction}\nversion: 1\n", encoding="utf-8")
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    said = str(refused.value)
    assert said.startswith(f"cassette {path} cannot be read: a Python tag in it holds what vcrpy cannot build (")
    assert said.endswith(RERECORD), said


@pytest.mark.parametrize("function", ["x", None, ["x"]], ids=["text", "null", "list"])
def test_a_tool_definition_without_its_function_mapping_is_refused_as_unreadable(tmp_path, function):
    """A hand-edited `"function": "x"` (or null) ended the check in an AttributeError."""
    path = damaged(tmp_path, first_body(lambda body: body["tools"][2].update(function=function)))
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    assert str(refused.value).startswith(
        f"cassette {path} cannot be read: the first request's tool 3's function is "
    ), refused.value
    assert "not a mapping of its name, description and parameters: re-record it" in str(refused.value)


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda tools: tools.reverse(), f"(another order: tool 1 was {TOOLS[-1]['function']['name']}, now "),
        (lambda tools: tools.append(tools[0]), f"(recorded more than once: {TOOLS[0]['function']['name']})"),
        (lambda tools: tools.pop(1), f"(not recorded: {TOOLS[1]['function']['name']})"),
        (
            lambda tools: tools[0]["function"].update(description="old"),
            f"(schema changed: {TOOLS[0]['function']['name']})",
        ),
    ],
    ids=["order", "duplicate", "missing", "schema"],
)
def test_tools_that_differ_are_said_how(tmp_path, change, says):
    """Tools recorded in another order, or one recorded twice, were "differing: " and nothing."""
    path = damaged(tmp_path, first_body(lambda body: change(body["tools"])))
    with pytest.raises(CassetteMismatch) as refused:
        check_cassette(path, load_pack("bid-intake"), TOOLS)
    said = str(refused.value)
    assert said.startswith(f"cassette {path} was recorded against other tool schemas than this sandbox offers ")
    assert says in said, said
