"""The command line: sandbox score / gates / packs and their exit codes (0 pass, 1 not, 2 usage)."""

from __future__ import annotations

import json
import shutil

import pytest

from sandbox.cli import main
from sandbox.evaluation.packs import load_pack
from sandbox.evaluation.scoring.synthetic import SITE_KEY, attempt_output, cited_record, conforming_trace


@pytest.fixture
def attempt(synthetic_pack, tmp_path):
    pack = synthetic_pack("bid-intake")
    output = tmp_path / "output.txt"
    trace = tmp_path / "trace.jsonl"
    output.write_text(attempt_output(cited_record(pack)), encoding="utf-8")
    trace.write_text(conforming_trace(pack).text(), encoding="utf-8")
    return str(pack.dir), str(output), str(trace)


def test_score_pass_exits_zero(attempt, capsys):
    pack, output, trace = attempt
    assert main(["score", "--pack", pack, "--output", output, "--trace", trace, "--site-key", SITE_KEY]) == 0
    assert "QUALIFIED PASS (error-free)" in capsys.readouterr().out


def test_score_json(attempt, capsys):
    pack, output, trace = attempt
    assert (
        main(
            [
                "score",
                "--pack",
                pack,
                "--output",
                output,
                "--trace",
                trace,
                "--site-key",
                SITE_KEY,
                "--elapsed",
                "30",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["qualified_pass"] is True and data["pack"] == "bid-intake" and data["gates"]["ok"] is True


def test_score_without_trace_exits_one(attempt, capsys):
    pack, output, _ = attempt
    assert main(["score", "--pack", pack, "--output", output]) == 1
    assert "gates not measured" in capsys.readouterr().out


def test_score_over_time_exits_one(attempt):
    pack, output, trace = attempt
    assert main(["score", "--pack", pack, "--output", output, "--trace", trace, "--elapsed", "601"]) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--pack", "no-such-pack", "--output", "{output}"],
        ["score", "--pack", "{pack}", "--output", "/nonexistent/output.txt"],
        ["score", "--pack", "{pack}", "--output", "{output}", "--trace", "/nonexistent/trace.jsonl"],
        ["score", "--pack", "{pack}", "--output", "{output}", "--elapsed", "-1"],
        ["gates", "--pack", "{pack}", "--trace", "/nonexistent/trace.jsonl"],
    ],
)
def test_bad_usage_exits_two(attempt, argv, capsys):
    pack, output, trace = attempt
    assert main([a.format(pack=pack, output=output) for a in argv]) == 2
    assert capsys.readouterr().err.startswith(f"sandbox {argv[0]}: ")


def test_an_attempt_of_a_pack_folder_of_ones_own_is_pointed_to_pack(synthetic_pack, tmp_path, capsys):
    own = shutil.copytree(synthetic_pack("bid-intake").dir, tmp_path / "my-own-intake")  # no such id in packs/
    card = json.loads((own / "card.json").read_text())
    (own / "card.json").write_text(json.dumps({**card, "pack_id": "my-own-intake", "scoring_pack": "my-own-intake"}))
    pack = load_pack(own)
    folder = tmp_path / "attempt"
    folder.mkdir()
    (folder / "output.txt").write_text(attempt_output(cited_record(pack)), encoding="utf-8")
    (folder / "trace.jsonl").write_text(conforming_trace(pack).text(), encoding="utf-8")
    assert main(["score", str(folder)]) == 2
    assert "a pack of your own is named by its folder's path" in capsys.readouterr().err
    assert main(["score", str(folder), "--pack", str(pack.dir), "--site-key", SITE_KEY]) == 0


@pytest.mark.parametrize(
    "argv", [["gates", "--pack", "x"], ["score", "--pack", "x", "--output", "y", "--elapsed", "soon"]]
)
def test_argparse_errors_exit_two(argv):
    with pytest.raises(SystemExit) as error:
        main(argv)
    assert error.value.code == 2


@pytest.mark.parametrize("argv", [["score", "--output", "x"], ["score", "--pack", "x"]])
def test_score_without_a_folder_needs_pack_and_output(argv, capsys):
    assert main(argv) == 2
    assert "give an attempt folder (sandbox score ATTEMPT_DIR) or both --pack and --output" in capsys.readouterr().err


def test_gates_command(attempt, tmp_path, capsys):
    pack, _, trace = attempt
    assert main(["gates", "--pack", pack, "--trace", trace, "--site-key", SITE_KEY]) == 0
    assert "gates passed" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("")
    assert main(["gates", "--pack", pack, "--trace", str(bad), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["failures"][0]["gate"] == "measurement"


def test_packs_command(capsys):
    assert main(["packs", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows][:3] == ["addenda-trace", "addenda-trace-p6", "bid-intake"] and len(rows) == 8
    docket = next(r for r in rows if r["id"] == "court-docket-p4")
    assert docket == {
        **docket,
        "workflow": "court-docket",
        "pack_number": 4,
        "kind": "historical",
        "time_limit_seconds": 900,
        "scoring_pack": "court-docket",
    }
    assert main(["packs"]) == 0
    assert "court-docket-p4" in capsys.readouterr().out


def test_an_attempt_folder_without_output_is_scored_as_an_empty_answer(attempt, tmp_path, capsys):
    """A folder of a killed run: `score` stopped at "cannot read output" (exit 2), though the
    folders reference says what is missing is named, never fatal."""
    pack, _, trace = attempt
    folder = tmp_path / "killed"
    folder.mkdir()
    shutil.copy(trace, folder / "trace.jsonl")
    assert main(["score", str(folder), "--pack", pack, "--site-key", SITE_KEY]) == 1
    captured = capsys.readouterr()
    assert "has no output.txt (its run was cut short): scored as an empty answer" in captured.err
    assert "NOT A QUALIFIED PASS" in captured.out
