"""The committed packs: cards, gates, prompts, capture-artefact repairs, and PackError for
broken packs (naming the file and the field)."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from sandbox import PACKS_DIR
from sandbox.evaluation.packs import PackError, list_packs, load_pack

PACK_FILES = (
    "card.json",
    "task_prompt.md",
    "runner_prompt.md",
    "input.md",
    "output.schema.json",
    "expected.json",
    "rules.json",
    "gates.json",
)
CARDS = {  # id: (workflow, pack number, kind, minutes, scoring pack, record key)
    "controlled-form": ("controlled-form", 2, "reviewed", 10, "controlled-form", "record_id"),
    "sec-contract": ("sec-contract", 2, "reviewed", 20, "sec-contract", "filing.accession_number"),
    "court-docket": ("court-docket", 5, "reviewed", 15, "court-docket", "case.docket_number"),
    "court-docket-p4": ("court-docket", 4, "historical", 15, "court-docket", "case.docket_number"),
    "ecfr-regulation": ("ecfr-regulation", 2, "reviewed", 15, "ecfr-regulation", "version_trace.section"),
    "addenda-trace": ("addenda-trace", 7, "reviewed", 15, "addenda-trace", "identity.solicitation_number"),
    "addenda-trace-p6": ("addenda-trace", 6, "historical", 15, "addenda-trace", "identity.solicitation_number"),
    "bid-intake": ("bid-intake", 6, "reviewed", 10, "bid-intake", "identity.solicitation_number"),
}
ECFR_VERSIONS = "https://www.ecfr.gov/api/versioner/v1/versions/title-28.json?part=35&section=35.200"


@pytest.fixture(scope="module")
def packs():
    return {p.id: p for p in list_packs()}


def test_cards(packs):
    assert sorted(packs) == sorted(CARDS)
    for pack_id, (workflow, number, kind, minutes, scoring, key) in CARDS.items():
        card = packs[pack_id].card
        assert (
            card.workflow,
            card.pack_number,
            card.pack_kind,
            card.time_limit_seconds,
            card.scoring_pack,
            card.record_key,
        ) == (workflow, number, kind, minutes * 60, scoring, key)
        assert card.reviewed is (kind == "reviewed")
        assert packs[pack_id].scoring_pack().id == scoring


def test_a_pack_is_frozen_data(packs):
    pack = packs["bid-intake"]
    with pytest.raises(ValidationError, match="frozen"):
        pack.expected = []
    with pytest.raises(ValidationError, match="frozen"):
        pack.card.time_limit_seconds = 1
    assert pack.schema == json.loads(pack.schema_text) == json.loads((pack.dir / "output.schema.json").read_text())
    assert pack.id == "bid-intake" and str(pack) == repr(pack) == "<Pack bid-intake (bid-intake pack 6, reviewed)>"


def test_executed_by(packs):
    assert packs["court-docket"].card.executed_by == ["GPT-6 Astra", "Kimi K3"]
    assert len(packs["court-docket-p4"].card.executed_by) == 6 and len(packs["bid-intake"].card.executed_by) == 8


def test_load_by_id_and_by_path(packs):
    assert load_pack("bid-intake").dir == load_pack(PACKS_DIR / "bid-intake").dir == packs["bid-intake"].dir


def test_form_gates(packs):
    gates = packs["controlled-form"].gates
    assert gates.permitted_tools == [
        "list_tools",
        "browser_start_session",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_scroll",
        "browser_close",
    ]
    assert [(c.tool, c.op, c.value) for c in gates.counts] == [
        ("browser_click", "exactly", 2),
        ("browser_close", "exactly", 1),
        ("browser_snapshot", "at_least", 1),
        ("browser_start_session", "exactly", 1),
        ("browser_type", "at_least", 4),
    ]
    assert gates.start_url == gates.allowed_urls[0] == "https://sarah27h.github.io/simple-multi-step-form/"
    assert gates.start_args.provider == "kernel" and gates.start_args.clear_cookies is False
    assert [(o.tool, o.after_last, o.before) for o in gates.ordering] == [
        ("browser_snapshot", "browser_click", "browser_close")
    ]


def test_every_pack_requires_visits_and_allows_no_state_change(packs):
    for pack in packs.values():
        gates = pack.gates
        assert gates.must_visit == gates.allowed_urls and gates.allowed_state_changes == []
        assert gates.close_forbidden_args == ["session_id", "close_all"] and gates.require_close
        assert gates.result_provider == "kernel"
        assert ("browser_start_session", "exactly", 1) in [(c.tool, c.op, c.value) for c in gates.counts]


def test_url_lists(packs):
    assert len(packs["addenda-trace"].gates.allowed_urls) == 5
    assert packs["addenda-trace"].gates.allowed_urls == packs["addenda-trace"].card.supplied_source_urls
    assert packs["ecfr-regulation"].gates.allowed_urls[2] == ECFR_VERSIONS
    assert packs["bid-intake"].gates.start_url == "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view"
    assert packs["sec-contract"].gates.allowed_urls[1].endswith("d769262dex101.htm")


def test_capture_artefacts_are_repaired_everywhere():
    for path in PACKS_DIR.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md") and path.name != "README.md":
            text = path.read_text(encoding="utf-8")
            assert "\u00a7ion" not in text and "email protected" not in text, path
    ecfr = load_pack("ecfr-regulation")
    assert ecfr.expected[0]["official_urls"]["versions"] == ECFR_VERSIONS
    assert ecfr.rules.evidence_sources["versions"].url == ECFR_VERSIONS
    assert ECFR_VERSIONS in ecfr.input_text and ECFR_VERSIONS in ecfr.runner_prompt
    form = load_pack("controlled-form")
    assert form.expected[0]["fields"]["email"] == "joao.munoz@example.com"
    assert "`joao.munoz@example.com`" in form.input_text
    assert load_pack("bid-intake").expected[0]["contact"]["primary_email"] == "shawn.jenkins@example.com"


def test_rendered_prompt_order_and_site_key(packs):
    for pack in packs.values():
        prompt = pack.render_prompt("run-7f3a")
        assert 'site_key="run-7f3a"' in prompt
        assert "{site_key}" not in prompt and "benchmark-profile-placeholder" not in prompt
        positions = [
            prompt.index(part)
            for part in (
                "BENCHMARK EXECUTION CONTROL (mandatory):",
                "TASK-SPECIFIC BROWSER IDENTITY (mandatory):",
                pack.task_prompt.strip().splitlines()[0],
                "REQUIRED OUTPUT JSON SCHEMA:\n{",
                "FROZEN TASK INPUT:\n#",
            )
        ]
        assert positions == sorted(positions), pack.id
        assert prompt.rstrip().endswith(pack.input_text.rstrip())
        schema_text = prompt.split("REQUIRED OUTPUT JSON SCHEMA:\n", 1)[1].split("\nFROZEN TASK INPUT:", 1)[0]
        assert json.loads(schema_text) == pack.schema


@pytest.mark.parametrize(
    "pack_id, secret",
    [
        ("bid-intake", "BASE ALAMEDA(00031)"),
        ("bid-intake", "Weslaco"),
        ("sec-contract", "Celldex Indemnitees"),
        ("sec-contract", "Completion of the Trial"),
        ("court-docket", "Title VII requires an employer"),
        ("court-docket-p4", "Aaron Streett"),
        ("ecfr-regulation", "89 FR 31337"),
        ("ecfr-regulation", "Preexisting social media posts"),
        ("addenda-trace", "W50S9H26QA0180001 SF 30.pdf"),
        ("addenda-trace-p6", "Camp Douglas"),
    ],
)
def test_expected_records_never_reach_the_prompt(packs, pack_id, secret):
    assert secret in json.dumps(packs[pack_id].expected, ensure_ascii=False)
    prompt = packs[pack_id].render_prompt("k")
    assert secret not in prompt and "Expected output records" not in prompt


@pytest.mark.parametrize("key", ["", "two words", 'quo"te', None, "line\nbreak"])
def test_bad_site_keys_are_refused(packs, key):
    with pytest.raises(ValueError):
        packs["controlled-form"].render_prompt(key)


def test_historical_and_reviewed_docket_packs_differ_only_in_the_card():
    for old, new in (("court-docket-p4", "court-docket"), ("addenda-trace-p6", "addenda-trace")):
        for name in PACK_FILES[1:]:
            assert (PACKS_DIR / old / name).read_text() == (PACKS_DIR / new / name).read_text(), (old, name)


def test_missing_fixtures_are_listed_not_fatal(packs, tmp_path):
    sec = packs["sec-contract"]
    assert set(sec.fixture_paths()) == {
        "fixtures/filing-index.html",
        "fixtures/celldex-oncothyreon-phase-i-agreement.html",
    }
    assert packs["controlled-form"].fixture_paths() == [] and packs["controlled-form"].missing_fixtures() == []
    copy = shutil.copytree(PACKS_DIR / "sec-contract", tmp_path / "sec-contract")
    (copy / "fixtures" / "filing-index.html").unlink()  # the bundled packs have all theirs
    assert load_pack(copy).missing_fixtures() == ["fixtures/filing-index.html"]  # listed, not fatal
    with pytest.raises(PackError) as error:
        load_pack(copy, require_fixtures=True)
    assert "fixtures/filing-index.html" in str(error.value) and "evidence_sources" in str(error.value)


# --- broken packs ---
@pytest.fixture
def broken(tmp_path):
    def make(pack_id: str = "bid-intake") -> Path:
        folder = tmp_path / pack_id
        shutil.copytree(PACKS_DIR / pack_id, folder)
        return folder

    return make


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_bad_rule_kind_names_file_and_field(broken):
    folder = broken()
    edit_json(folder / "rules.json", lambda d: d["field_rules"][3].update(kind="exakt"))
    with pytest.raises(PackError) as error:
        load_pack(folder)
    assert error.value.file.endswith("rules.json") and error.value.field.startswith("field_rules.3")
    assert "exakt" in str(error.value) or "tag" in str(error.value)


@pytest.mark.parametrize("name", PACK_FILES)
def test_missing_file_is_named(broken, name):
    folder = broken()
    (folder / name).unlink()
    with pytest.raises(PackError) as error:
        load_pack(folder)
    assert error.value.file.endswith(name) and "missing" in error.value.message


@pytest.mark.parametrize(
    "file, change, field",
    [
        ("gates.json", lambda d: d["counts"][0].update(op="at most"), "counts.0.op"),
        ("gates.json", lambda d: d.update(extra=1), "extra"),
        ("gates.json", lambda d: d.update(start_url="https://example.com/"), None),
        ("card.json", lambda d: d.update(pack_kind="draft"), "pack_kind"),
        ("card.json", lambda d: d.update(time_limit_seconds=0), "time_limit_seconds"),
        ("card.json", lambda d: d.update(pack_id="other"), "pack_id"),
        ("card.json", lambda d: d.update(record_key="identity.title"), "record_key"),
        ("rules.json", lambda d: d.update(success_threshold=0.9), "success_threshold"),
        ("rules.json", lambda d: d.update(success_threshold="1.5"), "success_threshold"),
        ("rules.json", lambda d: d["field_rules"][1].update(evidence_sources=["nowhere"]), None),
        ("rules.json", lambda d: d["field_rules"][1].update(color="red"), "field_rules.1.exact.color"),
        (
            "rules.json",
            lambda d: d["evidence_sources"]["notice"].update(format="pdf"),
            "evidence_sources.notice.format",
        ),
        (
            "rules.json",
            lambda d: d["evidence_sources"]["notice"].update(path="../../etc/passwd"),
            "evidence_sources.notice.path",
        ),
        ("expected.json", lambda d: d[0]["dates"].update(inactive_date="Dec 6, 2025"), "0.dates.inactive_date"),
        ("expected.json", lambda d: d[0]["classification"].update(set_aside="SBA"), "0.classification.set_aside"),
        ("expected.json", lambda d: d[0]["identity"].pop("title"), "0.identity.title"),
        ("output.schema.json", lambda d: d.update(type="tuple"), "type"),
    ],
)
def test_invalid_content_names_file_and_field(broken, file, change, field):
    folder = broken()
    edit_json(folder / file, change)
    with pytest.raises(PackError) as error:
        load_pack(folder)
    assert error.value.file.endswith(file)
    if field:
        assert error.value.field == field, str(error.value)


def _integer_as_exact_string(rules: dict, expected: list) -> None:
    """A string where the schema wants an integer, under an exact rule (so the rule accepts it)."""
    expected[0]["performance"]["begin_within_calendar_days_after_award"] = "seven"
    for rule in rules["field_rules"]:
        if rule["name"] == "performance.begin_within_calendar_days_after_award":
            rule["kind"] = "exact"


def _rule_for_a_forbidden_field(rules: dict, expected: list) -> None:
    expected[0]["identity"]["nickname"] = "x"
    rules["field_rules"].append({"name": "identity.nickname", "kind": "exact", "critical": True})


def _enum_value_outside_the_schema(rules: dict, expected: list) -> None:
    for rule in rules["field_rules"]:
        if rule["name"] == "qualification.verdict":
            rule["enum_values"].append("MAYBE")
    expected[0]["qualification"]["verdict"] = "MAYBE"


def _evidence_url_not_allowed(rules: dict, expected: list) -> None:
    rules["evidence_sources"]["notice"]["url"] = "https://example.com/not-allowed"


@pytest.mark.parametrize(
    "change, file, field, message",
    [
        (
            _integer_as_exact_string,
            "expected.json",
            "0.performance.begin_within_calendar_days_after_award",
            "violates output.schema.json: 'seven' is not of type 'integer'",
        ),
        (
            _rule_for_a_forbidden_field,
            "rules.json",
            "field_rules.36.name",
            "'identity.nickname' is a field output.schema.json does not allow: identity allows only "
            "lifecycle_status, opportunity_id, solicitation_number, title (additionalProperties false)",
        ),
        (
            _enum_value_outside_the_schema,
            "expected.json",
            "0.qualification.verdict",
            "violates output.schema.json: 'MAYBE' is not one of ['ACTIONABLE_NOW', 'RELEVANT_BUT_CLOSED', "
            "'NOT_RELEVANT']",
        ),
        (
            _evidence_url_not_allowed,
            "rules.json",
            "evidence_sources.notice.url",
            "'https://example.com/not-allowed' is not one of gates.json allowed_urls (https://sam.gov/opp/",
        ),
    ],
)
def test_rules_and_expected_records_must_agree_with_schema_and_gates(broken, change, file, field, message):
    folder = broken()
    rules = json.loads((folder / "rules.json").read_text())
    expected = json.loads((folder / "expected.json").read_text())
    change(rules, expected)
    (folder / "rules.json").write_text(json.dumps(rules))
    (folder / "expected.json").write_text(json.dumps(expected))
    with pytest.raises(PackError) as error:
        load_pack(folder)
    assert error.value.file.endswith(f"bid-intake/{file}") and error.value.field == field
    assert error.value.message.startswith(message), error.value.message


def test_expected_records_need_no_evidence(broken):
    """The schema requires `evidence`; expected records hold only what the rules compare."""
    pack = load_pack(broken())
    assert "evidence" in pack.output_schema["items"]["required"] and "evidence" not in pack.expected[0]


def test_invalid_json_names_the_line(broken):
    folder = broken()
    (folder / "gates.json").write_text('{\n  "permitted_tools": [,\n}')
    with pytest.raises(PackError) as error:
        load_pack(folder)
    assert error.value.file.endswith("gates.json") and error.value.field.startswith("line 2")


def test_a_historical_pack_is_loaded_with_its_reviewed_pack(broken, tmp_path):
    docket = load_pack("court-docket-p4")
    assert docket.scoring_pack() is docket.reviewed_pack and docket.reviewed_pack.id == "court-docket"
    assert (
        load_pack("court-docket").reviewed_pack is None
        and load_pack("court-docket").scoring_pack().id == "court-docket"
    )

    folder = broken("court-docket-p4")  # copied alone: its reviewed pack is not beside it
    with pytest.raises(PackError, match="no such pack folder"):
        load_pack(folder)
    other = shutil.copytree(folder, tmp_path / "court-docket-p4x")  # two historical packs naming each other
    edit_json(folder / "card.json", lambda d: d.update(scoring_pack="court-docket-p4x"))
    edit_json(other / "card.json", lambda d: d.update(pack_id="court-docket-p4x", scoring_pack="court-docket-p4"))
    with pytest.raises(PackError, match="court-docket-p4x is not the reviewed pack of workflow") as error:
        load_pack(folder)  # refused at once: no recursion
    assert error.value.file.endswith("court-docket-p4/card.json") and error.value.field == "scoring_pack"


def test_runner_prompt_needs_the_site_key_placeholder(broken):
    folder = broken()
    (folder / "runner_prompt.md").write_text("no placeholder here\n")
    with pytest.raises(PackError, match="runner_prompt.md"):
        load_pack(folder)


def test_unknown_pack_id():
    with pytest.raises(PackError, match="no such pack folder.*bid-intake"):
        load_pack("no-such-pack")
    with pytest.raises(PackError, match=r"no such pack folder; did you mean bid-intake\? \(packs here: "):
        load_pack("bid_intake")


def test_a_missing_folder_of_ones_own_names_the_bundled_packs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pack here: "packs here: none" said nothing of the packs there are
    with pytest.raises(PackError, match=r"no such pack folder \(the bundled packs: addenda-trace, "):
        load_pack("./nope")


def test_a_dotted_path_is_the_folder_not_the_bundled_pack_of_that_id(tmp_path, monkeypatch):
    """`./controlled-form` loaded the bundled controlled-form: its Path's parts are those of the id."""
    shutil.copytree(PACKS_DIR / "controlled-form", tmp_path / "controlled-form")
    monkeypatch.chdir(tmp_path)
    assert load_pack("./controlled-form").dir.resolve() == tmp_path / "controlled-form"
    assert load_pack("controlled-form").dir == PACKS_DIR / "controlled-form"  # a bare name is an id


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("http://127.0.0.1:9/title.json", "is not a reference within this schema (#/... or #anchor)"),  # it was fetched
        ("other.json#/x", "is not a reference within this schema (#/... or #anchor)"),
        ("#nowhere", "points nowhere in this schema"),
        ("#/$defs/nothing", "points nowhere in this schema"),  # a PointerToNowhere traceback
    ],
)
def test_a_ref_outside_the_schema_or_to_nothing_is_a_pack_error(broken, ref, said):
    folder = broken("addenda-trace")
    edit_json(folder / "output.schema.json", lambda schema: schema["$defs"].update(extra={"$ref": ref}))
    with pytest.raises(PackError, match=re.escape(said)) as error:
        load_pack(folder)
    assert error.value.file.endswith("output.schema.json") and error.value.field == "$defs.extra.$ref"


def test_a_percent_encoded_ref_is_followed_as_the_validator_follows_it(broken):
    """It loaded, then every score raised KeyError: 'shop%20title'."""
    from sandbox.evaluation.scoring._contract import inline_local_refs

    folder = broken("addenda-trace")
    schema = json.loads((folder / "output.schema.json").read_text())
    schema["$defs"]["cited source"] = schema["$defs"].pop("citation")
    text = json.dumps(schema).replace('"#/$defs/citation"', '"#/$defs/cited%20source"')
    (folder / "output.schema.json").write_text(text)
    pack = load_pack(folder)
    assert "cited%20source" not in json.dumps(inline_local_refs(pack.schema))  # every reference followed


def test_a_tool_the_contract_does_not_have_is_refused(broken):
    """A typo (browser_snapshots) loaded, then failed every run: "not permitted", "called 0 times"."""
    folder = broken()
    edit_json(folder / "gates.json", lambda gates: gates["permitted_tools"].append("browser_snapshots"))
    with pytest.raises(PackError, match="browser_snapshots is no tool of the contract"):
        load_pack(folder)


def test_a_number_written_as_a_string_is_refused(broken):
    """ "300" was taken for 300 without a word."""
    folder = broken()
    edit_json(folder / "card.json", lambda card: card.update(time_limit_seconds=str(card["time_limit_seconds"])))
    with pytest.raises(PackError) as error:
        load_pack(folder)
    assert error.value.file.endswith("card.json") and error.value.field == "time_limit_seconds"


def test_a_missing_packs_path_is_said_from_the_working_folder_or_whole(tmp_path, monkeypatch):
    """It was said from the project's folder: `packs/my-shop` named the bundled packs' folder while
    the user's own packs/my-shop sat in the working folder."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PackError) as error:
        load_pack("my-shop")  # an id: looked for among the bundled packs
    assert error.value.file == str(PACKS_DIR / "my-shop")
    (tmp_path / "packs").mkdir()
    with pytest.raises(PackError) as error:
        load_pack("packs/my-shop")  # a path: from here
    assert error.value.file == "packs/my-shop"


def test_a_url_no_browser_requests_as_written_is_refused(broken):
    """`café` as written loaded, and was never matched: the browser asks for caf%C3%A9."""
    folder = broken("controlled-form")
    edit_json(folder / "gates.json", lambda gates: gates["allowed_urls"].append("https://sarah27h.github.io/café"))
    with pytest.raises(PackError, match="a browser requests it as https://sarah27h.github.io/caf%C3%A9") as error:
        load_pack(folder)
    assert error.value.file.endswith("gates.json")


def test_a_ref_to_an_anchor_of_the_schema_loads(broken):
    folder = broken("addenda-trace")
    edit_json(
        folder / "output.schema.json",
        lambda schema: schema["$defs"].update(named={"$anchor": "named", "type": "string"}, user={"$ref": "#named"}),
    )
    assert load_pack(folder).schema["$defs"]["user"] == {"$ref": "#named"}


def _doubling_defs(depth: int, ref: str) -> dict:
    """$defs d0..d<depth>, each step referring to the next twice: 2**depth nodes once followed."""
    defs: dict = {f"d{depth}": {"$anchor": f"d{depth}", "type": "string"}}
    for step in range(depth):
        target = ref.format(step + 1)
        defs[f"d{step}"] = {"$anchor": f"d{step}", "allOf": [{"$ref": target}, {"$ref": target}]}
    return defs


@pytest.mark.parametrize("ref", ["#/$defs/d{}", "#d{}"])
def test_a_schema_whose_refs_grow_exponentially_is_refused_at_load(broken, ref):
    """It loaded, then the first score inlined (or followed) 2**30 copies and never ended."""
    folder = broken("addenda-trace")
    edit_json(folder / "output.schema.json", lambda schema: schema["$defs"].update(_doubling_defs(30, ref)))
    started = time.monotonic()
    with pytest.raises(PackError, match=r"with its \$refs followed has more than 10,000 nodes") as error:
        load_pack(folder)
    assert error.value.file.endswith("output.schema.json") and time.monotonic() - started < 2


def test_a_schema_with_a_few_doubling_refs_loads(broken):
    folder = broken("addenda-trace")
    edit_json(folder / "output.schema.json", lambda schema: schema["$defs"].update(_doubling_defs(8, "#/$defs/d{}")))
    assert "d8" in load_pack(folder).schema["$defs"]


@pytest.mark.parametrize("scoring", ["../{here}/elsewhere/court-docket", "{packs}/court-docket", "court-docket/"])
def test_scoring_pack_is_an_id_never_a_path(broken, tmp_path, scoring):
    """A path loaded: a historical pack could be scored by a pack from anywhere."""
    folder = broken("court-docket-p4")
    shutil.copytree(PACKS_DIR / "court-docket", tmp_path / "elsewhere" / "court-docket")
    scoring = scoring.format(here=tmp_path.name, packs=PACKS_DIR)
    edit_json(folder / "card.json", lambda card: card.update(scoring_pack=scoring))
    with pytest.raises(PackError, match="is no pack id") as error:
        load_pack(folder)
    assert error.value.file.endswith("court-docket-p4/card.json") and error.value.field == "scoring_pack"


@pytest.mark.parametrize(
    ("file", "old", "new", "field"),
    [
        ("rules.json", '"critical": true', '"critical": true, "critical": false', "field_rules.1.critical"),
        ("card.json", '"time_limit_seconds": 600', '"time_limit_seconds": 1, "time_limit_seconds": 600', None),
        ("rules.json", '"evidence_sources": {', '"evidence_sources": {"notice": {}, ', "evidence_sources.notice"),
        ("expected.json", '"identity": {', '"identity": {"title": "other", ', "0.identity.title"),
    ],
)
def test_a_key_repeated_in_a_pack_file_is_refused(broken, file, old, new, field):
    """The last of a repeated key won without a word (an agent's output doing so fails the contract)."""
    folder = broken()
    text = json.dumps(json.loads((folder / file).read_text()))
    assert old in text
    (folder / file).write_text(text.replace(old, new, 1))
    with pytest.raises(PackError, match="appears more than once in one object") as error:
        load_pack(folder)
    assert error.value.file.endswith(file)
    assert error.value.field == (field or "time_limit_seconds")


@pytest.mark.parametrize(
    ("file", "text", "said"),
    [
        ("gates.json", "[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),  # was RecursionError
        ("output.schema.json", '{"items": ' * 500 + "{}" + "}" * 500, "nested deeper than 64 levels"),
        ("card.json", '{"time_limit_seconds": ' + "9" * 5000 + "}", "an integer of 5000 digits"),  # was ValueError
        ("rules.json", '{"success_threshold": NaN}', "NaN is not a JSON value"),
    ],
)
def test_a_pack_file_python_cannot_read_is_a_pack_error(broken, tmp_path, file, text, said):
    folder = broken()
    (folder / file).write_text(text)
    with pytest.raises(PackError, match=said) as error:
        load_pack(folder)
    assert error.value.file.endswith(file)
    with pytest.raises(PackError, match=said):  # one folder's broken file is said, not a traceback
        list_packs(tmp_path)


@pytest.mark.parametrize("path", ["", ".", "fixtures/..", "./"])
def test_a_fixture_path_naming_the_pack_folder_is_refused(broken, path):
    folder = broken()
    edit_json(folder / "rules.json", lambda rules: rules["evidence_sources"]["notice"].update(path=path))
    with pytest.raises(PackError, match="fixture path must name a file inside the pack folder") as error:
        load_pack(folder)
    assert error.value.field == "evidence_sources.notice.path"


def test_a_fixture_that_is_a_folder_or_leads_out_of_the_pack_is_missing(broken, tmp_path):
    """A folder was read (IsADirectoryError at scoring); a link out of the pack was read."""
    folder = broken()
    secret = tmp_path / "secret.txt"
    secret.write_text("private key\n")
    pack = load_pack(folder)
    notice, resources = (folder / pack.rules.evidence_sources[n].path for n in ("notice", "attachment_names"))
    notice.unlink()
    notice.symlink_to(secret)
    resources.unlink()
    resources.mkdir()
    pack = load_pack(folder)
    assert pack.missing_fixtures() == sorted(p.relative_to(folder).as_posix() for p in (notice, resources))
    assert pack.checksums()[notice.relative_to(folder).as_posix()] is None
    with pytest.raises(PackError, match="is a link leading out of the pack folder") as error:
        pack.fixture_bytes("notice")
    assert error.value.file.endswith("sam-notice-visible.txt") and "secret" not in str(error.value)
    with pytest.raises(PackError, match="is not a regular file"):
        pack.fixture_bytes("attachment_names")
    with pytest.raises(PackError, match="is a link leading out of the pack folder"):
        load_pack(folder, require_fixtures=True)


def _cycle_through_all_of(schema: dict) -> None:
    schema["$defs"].update(l1={"allOf": [{"$ref": "#/$defs/l2"}]}, l2={"allOf": [{"$ref": "#/$defs/l1"}]})
    schema["items"]["allOf"] = [{"$ref": "#/$defs/l1"}]


@pytest.mark.parametrize(
    ("change", "cycle"),
    [
        (_cycle_through_all_of, "#/$defs/l2 -> #/$defs/l1 -> #/$defs/l2"),  # a RecursionError from load_pack
        (lambda schema: schema["$defs"].update(n={"not": {"$ref": "#/$defs/n"}}), "#/$defs/n -> #/$defs/n"),
        (lambda schema: schema.update(anyOf=[{"type": "string"}, {"$ref": "#"}]), "# -> #"),
    ],
)
def test_a_ref_cycle_that_never_descends_is_refused(broken, change, cycle):
    folder = broken("addenda-trace")
    edit_json(folder / "output.schema.json", change)
    with pytest.raises(PackError, match=re.escape(f"$ref cycle {cycle}: each refers to the next")) as error:
        load_pack(folder)
    assert error.value.file.endswith("output.schema.json") and error.value.field.endswith(".$ref")


def test_a_schema_that_recurs_through_properties_loads(broken):
    """A tree (each node's children are nodes) recurs through the value, and ends with it."""
    folder = broken("addenda-trace")
    node = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
    edit_json(
        folder / "output.schema.json",
        lambda schema: (
            schema.update({"$id": "https://example.org/addenda.schema.json"}),  # an $id at the root is fine
            schema["$defs"].update(node={"allOf": [{"$ref": "#/$defs/leaf"}], **node}, leaf={"type": "object"}),
            schema["items"].update(allOf=[{"$ref": "#/$defs/node"}]),
        ),
    )
    assert "node" in load_pack(folder).schema["$defs"]


def test_an_id_below_the_root_is_refused(broken):
    """Its $refs resolved against the nested $id, not the file: a PointerToNowhere traceback."""
    folder = broken("addenda-trace")
    edit_json(
        folder / "output.schema.json",
        lambda schema: (
            schema["$defs"].update(record={"type": "object"}),
            schema["items"].update({"$id": "https://example.org/item.json", "allOf": [{"$ref": "#/$defs/record"}]}),
        ),
    )
    with pytest.raises(PackError, match=r"\$id below the schema's root is not supported") as error:
        load_pack(folder)
    assert error.value.file.endswith("output.schema.json") and error.value.field == "items.$id"


def test_a_reference_the_validator_cannot_resolve_is_a_pack_error(broken):
    """An anchor inside a const value is no anchor to the validator: a NoSuchAnchor traceback."""
    folder = broken("addenda-trace")
    edit_json(
        folder / "output.schema.json",
        lambda schema: (
            schema["$defs"].update(example={"const": {"$anchor": "inside"}}),
            schema["items"].update(allOf=[{"$ref": "#inside"}]),
        ),
    )
    with pytest.raises(PackError, match="cannot validate the expected records against it: NoSuchAnchor") as error:
        load_pack(folder)
    assert error.value.file.endswith("output.schema.json")


@pytest.mark.parametrize(("pack_id", "ref", "inside"), [("bid-intake", ".", ""), ("court-docket-p4", "..", "fixtures")])
def test_a_pack_folder_named_from_inside_it_loads(tmp_path, monkeypatch, pack_id, ref, inside):
    """`sandbox run .` in a pack folder said: pack_id 'bid-intake' does not match the folder name ''."""
    for copied in (pack_id, "court-docket"):  # a historical pack's reviewed pack sits beside it
        shutil.copytree(PACKS_DIR / copied, tmp_path / copied)
    monkeypatch.chdir(tmp_path / pack_id / inside)
    pack = load_pack(ref)
    assert pack.id == pack_id and pack.dir == tmp_path / pack_id
    assert pack.card.reviewed or pack.reviewed_pack.dir == tmp_path / "court-docket"
