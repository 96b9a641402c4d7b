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
from sandbox.runner.cassettes import CassetteMismatch, check_cassette
from toolserver.formats import tool_definitions
from toolserver.tools import default_registry

CASSETTE = PROJECT_ROOT / "fixtures" / "cassettes" / "openai-bid-intake.yaml"
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
    ],
    ids=["interactions", "interaction", "request", "response", "messages", "tools"],
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
