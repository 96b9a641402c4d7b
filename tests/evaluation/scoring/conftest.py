"""Scoring fixtures: a session copy of the packs with synthetic evidence fixtures, and a
factory for small custom packs whose rules, records and fixture texts a test writes itself."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sandbox import PACKS_DIR
from sandbox.evaluation.packs import Pack, load_pack
from sandbox.evaluation.scoring.synthetic import synthetic_packs


@pytest.fixture(scope="session")
def synthetic_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_packs(tmp_path_factory.mktemp("synthetic"))


@pytest.fixture(scope="session")
def synthetic_pack(synthetic_root: Path) -> Callable[[str], Pack]:
    cache: dict[str, Pack] = {}

    def get(pack_id: str) -> Pack:
        if pack_id not in cache:
            cache[pack_id] = load_pack(synthetic_root / pack_id)
        return cache[pack_id]

    return get


@pytest.fixture
def custom_pack(tmp_path: Path) -> Callable[..., Pack]:
    """Build a pack from the controlled-form folder with the test's own rules, expected
    records, schema, gates and fixture files (path relative to the pack -> text). Without
    ``gates``, the form's, with the rules' evidence source URLs allowed."""

    def make(
        rules: dict[str, Any],
        expected: list[dict],
        *,
        fixtures: dict[str, str] | None = None,
        schema: dict | None = None,
        gates: dict | None = None,
        pack_id: str = "custom",
    ) -> Pack:
        folder = tmp_path / "packs" / pack_id
        shutil.copytree(PACKS_DIR / "controlled-form", folder)
        card = json.loads((folder / "card.json").read_text())
        card.update(pack_id=pack_id, scoring_pack=pack_id, record_key=rules["record_key"])
        (folder / "card.json").write_text(json.dumps(card))
        (folder / "rules.json").write_text(json.dumps(rules))
        (folder / "expected.json").write_text(json.dumps(expected))
        (folder / "output.schema.json").write_text(
            json.dumps(
                schema or {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array", "minItems": 1}
            )
        )
        if gates is None:  # the form's gates, opening the test's evidence sources too (the loader checks it)
            gates = json.loads((folder / "gates.json").read_text())
            sources = [s["url"] for s in rules.get("evidence_sources", {}).values()]
            gates["allowed_urls"] += [url for url in sources if url not in gates["allowed_urls"]]
        (folder / "gates.json").write_text(json.dumps(gates))
        for path, text in (fixtures or {}).items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text, encoding="utf-8")
        return load_pack(folder)

    return make
