"""Task packs: load and validate ``packs/<pack-id>/`` (data only; the scorer and the gates
live in ``sandbox.evaluation.scoring`` and ``sandbox.evaluation.gates``).

A pack folder holds ``card.json``, ``task_prompt.md``, ``runner_prompt.md``, ``input.md``,
``output.schema.json``, ``expected.json`` (evaluator only), ``rules.json``, ``gates.json``
and evidence fixtures under ``fixtures/``. Every JSON file is read into frozen pydantic
models with ``extra="forbid"`` and ``Literal`` kinds, so a typo fails at load time with a
``PackError`` that names the file and the field.

Evidence fixtures are generated from the mirrors by scripts/make_fixtures.py; a missing fixture
is not a load error (see ``Pack.missing_fixtures``) unless ``load_pack(..., require_fixtures=True)``.

    _models    the JSON files' data: Card, GatesSpec, Rules and their parts (no file reading)
    _pack      Pack: one loaded pack folder, frozen (prompt, policy, fixtures, checksums)
    _loader    load_pack: read and check a folder; PackError names the file and the field
    _resolver  pack ids to packs: list_packs, pack_policy (the tool server's policy resolver)

Pure package: no Playwright, no aiohttp.
"""

from sandbox.evaluation.packs._errors import PackError
from sandbox.evaluation.packs._loader import PACK_FILES, load_pack, pack_dirs, resolve_pack_dir
from sandbox.evaluation.packs._models import (
    AliasesRule,
    Card,
    CountRule,
    DateRule,
    DatetimeRule,
    ElementKind,
    EnumRule,
    EvidenceSource,
    ExactRule,
    FieldRule,
    GatesSpec,
    IntegerRule,
    OrderedListRule,
    OrderingRule,
    Rules,
    SeedReference,
    StartArgs,
    UnorderedSetRule,
    WhitespaceNormalizedRule,
)
from sandbox.evaluation.packs._pack import INPUT_HEADING, SCHEMA_HEADING, SITE_KEY_TOKEN, Pack
from sandbox.evaluation.packs._resolver import PACK_ID, list_packs, pack_policy

__all__ = [
    "INPUT_HEADING",
    "PACK_FILES",
    "PACK_ID",
    "SCHEMA_HEADING",
    "SITE_KEY_TOKEN",
    "AliasesRule",
    "Card",
    "CountRule",
    "DateRule",
    "DatetimeRule",
    "ElementKind",
    "EnumRule",
    "EvidenceSource",
    "ExactRule",
    "FieldRule",
    "GatesSpec",
    "IntegerRule",
    "OrderedListRule",
    "OrderingRule",
    "Pack",
    "PackError",
    "Rules",
    "SeedReference",
    "StartArgs",
    "UnorderedSetRule",
    "WhitespaceNormalizedRule",
    "list_packs",
    "load_pack",
    "pack_dirs",
    "pack_policy",
    "resolve_pack_dir",
]
