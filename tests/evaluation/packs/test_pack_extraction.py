"""scripts/extract_packs.py: the committed packs are exactly what the seed produces, and an
unknown runner line stops the extraction instead of being dropped."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from sandbox import PACKS_DIR, PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "extract_packs.py"


@pytest.fixture(scope="module")
def extractor():
    spec = importlib.util.spec_from_file_location("extract_packs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def seed(extractor) -> Path:
    if not extractor.DEFAULT_SEED.is_file():
        pytest.skip(f"the benchmark text is not at {extractor.DEFAULT_SEED}")
    return extractor.DEFAULT_SEED


def test_committed_packs_match_the_seed(extractor, seed):
    packs = extractor.extract(seed)
    assert sorted(packs) == sorted(p.name for p in PACKS_DIR.iterdir() if (p / "card.json").exists())
    for pack_id, files in packs.items():
        for name, content in files.items():
            assert (PACKS_DIR / pack_id / name).read_text(encoding="utf-8") == content, f"{pack_id}/{name}"


def test_check_mode_reports_no_difference(extractor, seed, capsys):
    assert extractor.main(["--seed", str(seed), "--check"]) == 0
    assert "0 files differ" in capsys.readouterr().out


def test_check_mode_finds_a_changed_file(extractor, seed, tmp_path, capsys):
    assert extractor.main(["--seed", str(seed), "--out", str(tmp_path)]) == 0
    (tmp_path / "bid-intake" / "input.md").write_text("edited\n")
    assert extractor.main(["--seed", str(seed), "--out", str(tmp_path), "--check"]) == 1
    assert "bid-intake/input.md" in capsys.readouterr().out


def test_unknown_runner_line_is_an_error(extractor):
    lines = [
        '- Every browser_start_session call must pass site_key="benchmark-profile-placeholder" exactly. '
        "It is an ephemeral profile identifier frozen in this run plan; do not turn it into a URL or "
        "Markdown link.",
        "- Every browser_start_session call must pass clear_cookies=false exactly.",
        "- The only permitted tool names for this task are: list_tools, browser_close.",
        "- Take a screenshot every minute.",
    ]
    with pytest.raises(extractor.ExtractError, match="unknown runner line"):
        extractor.parse_identity(lines, "test")


def test_counts_line_is_parsed(extractor):
    counts = extractor.parse_counts("browser_click: exactly 2; browser_snapshot: at least 3", "test")
    assert [(c["tool"], c["op"], c["value"]) for c in counts] == [
        ("browser_click", "exactly", 2),
        ("browser_snapshot", "at_least", 3),
    ]
    with pytest.raises(extractor.ExtractError):
        extractor.parse_counts("browser_click: at most 2", "test")


def test_repairs(extractor):
    assert (
        extractor.repair("title-28.json?part=35\u00a7ion=35.200", None, "t") == "title-28.json?part=35&section=35.200"
    )
    assert extractor.repair("mail `[email protected]`", "a@example.com", "t") == "mail `a@example.com`"
    with pytest.raises(extractor.ExtractError):
        extractor.repair("[email protected]", None, "t")


def test_rendered_prompt_reproduces_the_seed_block(extractor, seed):
    """render_prompt(placeholder) equals the seed's reconstructed block line for line (the seed
    lost leading indentation; the two capture artefacts are repaired)."""
    from sandbox.evaluation.packs import load_pack

    for section in extractor.split_sections(seed.read_text(encoding="utf-8")):
        _, email = extractor.WORKFLOWS[section.title]
        pack_id, files = extractor.extract_section(section, seed.name)
        block = extractor.between(section.text, extractor.RUNNER_MARK, extractor.EXPECTED_MARK).strip("\n")
        block = extractor.repair(block, email, pack_id)
        rendered = load_pack(pack_id).render_prompt(extractor.SITE_KEY_PLACEHOLDER)
        assert [line.lstrip() for line in rendered.rstrip("\n").split("\n")] == block.split("\n"), pack_id
