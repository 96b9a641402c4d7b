"""``Pack``: one loaded pack folder, frozen. Built only by ``load_pack``, which reads and checks
every file (and, for a historical pack, loads its workflow's reviewed pack with it); the
checksums of its scoring files are computed once, on first use, and kept out of its data."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from sandbox.evaluation.packs._errors import PackError
from sandbox.evaluation.packs._models import Card, GatesSpec, Rules
from toolserver.contract.policy import Policy, PolicyMode
from toolserver.contract.site_keys import check_site_key

SITE_KEY_TOKEN = "{site_key}"
SCHEMA_HEADING = "REQUIRED OUTPUT JSON SCHEMA:"
INPUT_HEADING = "FROZEN TASK INPUT:"


class Pack(BaseModel):
    """One loaded pack (see ``load_pack``). The scorer keeps what it derives from a pack (schema
    validator, fixture texts) in its own cache, keyed by the pack object."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dir: Path = Field(description="The pack folder; its name is the pack id.")
    card: Card = Field(description="card.json: workflow, pack number and kind, time limit, scoring pack.")
    gates: GatesSpec = Field(description="gates.json: the execution rules judged over the trace.")
    rules: Rules = Field(description="rules.json: field rules, thresholds and evidence sources.")
    output_schema: dict[str, Any] = Field(description="output.schema.json, parsed (also ``schema``).")
    schema_text: str = Field(description="output.schema.json as written, for the prompt.")
    expected: list[dict[str, Any]] = Field(description="expected.json: the expected records (evaluator only).")
    input_text: str = Field(description="input.md: the frozen task input.")
    task_prompt: str = Field(description="task_prompt.md: the task's own instructions.")
    runner_prompt: str = Field(description=f"runner_prompt.md, holding {SITE_KEY_TOKEN} exactly once.")
    reviewed_pack: Pack | None = Field(
        default=None,
        description="A historical pack's workflow reviewed pack (card.scoring_pack), which scores it; "
        "None for a reviewed pack, which scores itself.",
    )

    _checksums: dict[str, str | None] | None = PrivateAttr(default=None)

    # A pack is one object: the scorer's caches are keyed by identity, never by equal contents.
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<Pack {self.id} ({self.card.workflow} pack {self.card.pack_number}, {self.card.pack_kind})>"

    __str__ = __repr__

    @property
    def id(self) -> str:
        return self.dir.name

    @property
    def schema(self) -> dict[str, Any]:  # type: ignore[override]  # BaseModel.schema is pydantic's deprecated v1 API
        """The output JSON Schema (``output.schema.json``)."""
        return self.output_schema

    # The agent-facing prompt, in the order of the seed's "Reconstructed runner prompt and
    # output contract" block. Expected records are never part of it.
    def render_prompt(self, site_key: str) -> str:
        return "\n".join(text for _, text in self.prompt_parts(site_key)) + "\n"

    def prompt_parts(self, site_key: str) -> list[tuple[str, str]]:
        """The prompt's parts in their order, each with where it comes from (a file of the pack,
        or a heading of the sandbox's)."""
        if not isinstance(site_key, str):
            raise ValueError(f"site_key must be a string, got {site_key!r}")
        check_site_key(site_key)
        return [
            (str(self.dir / "runner_prompt.md"), self.runner_prompt.rstrip("\n").replace(SITE_KEY_TOKEN, site_key)),
            (str(self.dir / "task_prompt.md"), self.task_prompt.rstrip("\n")),
            ("the sandbox's schema heading", SCHEMA_HEADING),
            (str(self.dir / "output.schema.json"), self.schema_text.rstrip("\n")),
            ("the sandbox's input heading", INPUT_HEADING),
            (str(self.dir / "input.md"), self.input_text.rstrip("\n")),
        ]

    def scoring_pack(self) -> Pack:
        """The workflow's reviewed pack (a sibling folder, loaded with this one): the pack itself
        when it is the reviewed one."""
        return self.reviewed_pack or self

    def policy(self, mode: PolicyMode = "enforce", block_state_changes: bool = False) -> Policy:
        """The live policy of a run on this pack: its allowed URLs and allowed state changes."""
        return Policy(
            allowed_urls=tuple(self.gates.allowed_urls),
            mode=mode,
            block_state_changes=block_state_changes,
            allowed_state_changes=frozenset(self.gates.allowed_state_changes),
            pack=self.id,
        )

    # --- evidence fixtures (files of the pack folder, read when asked for) ---
    def fixture_path(self, source: str) -> Path:
        return self.dir / self.rules.evidence_sources[source].path

    def fixture_paths(self) -> list[str]:
        """Distinct fixture paths named by the rules, in a stable order."""
        return sorted({s.path for s in self.rules.evidence_sources.values()})

    def missing_fixtures(self) -> list[str]:
        """Fixture paths that name no readable file of the pack (missing, a folder, or a link
        leading out of the pack folder)."""
        return [p for p in self.fixture_paths() if _fixture_problem(self.dir, p)]

    def fixture_problem(self, source: str) -> str | None:
        """Why the fixture of ``source`` cannot be read (None when it can)."""
        return _fixture_problem(self.dir, self.rules.evidence_sources[source].path)

    def fixture_bytes(self, source: str) -> bytes:
        """The fixture's content; a ``PackError`` when it is missing or unreadable."""
        path = self.fixture_path(source)
        problem = self.fixture_problem(source)
        if problem is None:
            try:
                return path.read_bytes()
            except OSError as exc:
                problem = f"unreadable ({exc.strerror or exc})"
        raise PackError(path, f"evidence_sources.{source}", problem)

    def checksums(self) -> dict[str, str | None]:
        """sha256 of the files scoring depends on (None = missing fixture)."""
        if self._checksums is None:
            out: dict[str, str | None] = {}
            for name in ("rules.json", "expected.json", "output.schema.json", *self.fixture_paths()):
                path = self.dir / name
                try:
                    readable = _fixture_problem(self.dir, name) is None
                    out[name] = hashlib.sha256(path.read_bytes()).hexdigest() if readable else None
                except OSError:
                    out[name] = None
            self._checksums = out
        return self._checksums

    def checksum(self) -> str:
        """One sha256 over the scoring files and their names."""
        digest = hashlib.sha256()
        for name, value in sorted(self.checksums().items()):
            digest.update(f"{name}\0{value or 'missing'}\n".encode())
        return digest.hexdigest()


def _fixture_problem(folder: Path, relative: str) -> str | None:
    """Why ``relative`` names no regular file inside ``folder`` once links are followed (a link
    out of the pack would let a pack read any file of the machine), or None."""
    path = folder / relative
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        return "evidence fixture is missing; fixtures are generated from the mirrors (see docs/concepts/packs.md)"
    except (OSError, RuntimeError) as exc:  # a link loop
        return f"unreadable ({exc})"
    if not resolved.is_relative_to(folder.resolve()):
        return "is a link leading out of the pack folder; a fixture must be a file of the pack"
    if not resolved.is_file():
        return "is not a regular file"
    return None
