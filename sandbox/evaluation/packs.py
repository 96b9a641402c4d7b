"""Task packs: load and validate ``packs/<pack-id>/`` (data only; the scorer and the gates
live in ``sandbox.evaluation.scoring`` and ``sandbox.evaluation.gates``).

A pack folder holds ``card.json``, ``task_prompt.md``, ``runner_prompt.md``, ``input.md``,
``output.schema.json``, ``expected.json`` (evaluator only), ``rules.json``, ``gates.json``
and evidence fixtures under ``fixtures/``. Every JSON file is read into frozen pydantic
models with ``extra="forbid"`` and ``Literal`` kinds, so a typo fails at load time with a
``PackError`` that names the file and the field.

Evidence fixtures are generated from the mirrors by scripts/make_fixtures.py; a missing fixture is not a load
error (see ``Pack.missing_fixtures``) unless ``load_pack(..., require_fixtures=True)``.

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sandbox.core.paths import PACKS_DIR, PROJECT_ROOT
from sandbox.core.policy import Policy, PolicyMode, PolicyNotFound
from sandbox.evaluation.records import record_value
from sandbox.evaluation.rules import expected_problem

SITE_KEY_TOKEN = "{site_key}"
SCHEMA_HEADING = "REQUIRED OUTPUT JSON SCHEMA:"
INPUT_HEADING = "FROZEN TASK INPUT:"
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


class PackError(Exception):
    """A pack cannot be used. ``file`` and ``field`` say where (field may be None)."""

    def __init__(self, file: Path | str, field: str | None, message: str) -> None:
        self.file = str(_display(Path(file)))
        self.field = field
        self.message = message
        where = f"{self.file}: {field}" if field else self.file
        super().__init__(f"{where}: {message}")


def _display(path: Path) -> Path:
    try:
        return path.resolve().relative_to(PROJECT_ROOT)
    except ValueError:
        return path


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- card.json --------------------------------------------------------------------------------


class SeedReference(_Frozen):
    file: str
    first_line: int
    last_line: int


class Card(_Frozen):
    pack_id: str
    workflow: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="The workflow this pack belongs to.")
    workflow_title: str
    fixed_case: str
    pack_number: int = Field(ge=1)
    pack_kind: Literal["reviewed", "historical"] = Field(
        description="reviewed: the workflow's scoring pack; historical: an earlier execution pack"
    )
    executed_by: list[str]
    time_limit_seconds: int = Field(gt=0)
    scoring_pack: str = Field(description="Id of the workflow's reviewed pack; scoring always uses it.")
    record_key: str = Field(description="Dotted field that matches output records to expected records.")
    supplied_source_urls: list[str] = Field(default_factory=list)
    seed: SeedReference | None = None

    @property
    def reviewed(self) -> bool:
        return self.pack_kind == "reviewed"


# --- gates.json -------------------------------------------------------------------------------


class CountRule(_Frozen):
    tool: str
    op: Literal["exactly", "at_least"]
    value: int = Field(ge=0)
    source: str = Field(default="", description="Where the rule comes from (runner counts line / execution control).")


class OrderingRule(_Frozen):
    """A ``tool`` call strictly after the last ``after_last`` call and before ``before``."""

    kind: Literal["between"]
    tool: str
    after_last: str
    before: str
    text: str = ""


class StartArgs(_Frozen):
    provider: str
    clear_cookies: bool


class GatesSpec(_Frozen):
    permitted_tools: list[str] = Field(min_length=1)
    counts: list[CountRule]
    start_url: str
    start_args: StartArgs
    site_key: Literal["run_plan"] = Field(description="The key is the run plan's (--site-key / trace header).")
    close_forbidden_args: list[str]
    require_close: bool
    allowed_urls: list[str] = Field(min_length=1)
    must_visit: list[str]
    ordering: list[OrderingRule]
    result_provider: str
    allowed_state_changes: list[str] = Field(
        description="Names of benchmark-owned state-changing actions this card allows (e.g. a Save draft)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> GatesSpec:
        bare = {u.split("#", 1)[0] for u in self.allowed_urls}
        if self.start_url.split("#", 1)[0] not in bare:
            raise ValueError(f"start_url {self.start_url!r} is not one of allowed_urls")
        for url in self.must_visit:
            if url.split("#", 1)[0] not in bare:
                raise ValueError(f"must_visit URL {url!r} is not one of allowed_urls")
        tools = set(self.permitted_tools)
        for count in self.counts:
            if count.tool not in tools:
                raise ValueError(f"count rule for {count.tool!r}, which is not a permitted tool")
        for rule in self.ordering:
            for tool in (rule.tool, rule.after_last, rule.before):
                if tool not in tools:
                    raise ValueError(f"ordering rule names {tool!r}, which is not a permitted tool")
        return self


# --- rules.json -------------------------------------------------------------------------------

ElementKind = Literal["exact", "enum", "date", "datetime", "integer", "aliases", "whitespace_normalized"]


class _RuleBase(_Frozen):
    name: str = Field(min_length=1, description="Dotted path of the field in the record.")
    critical: bool = False
    evidence_source: str | None = None
    evidence_sources: list[str] | None = Field(default=None, min_length=1)
    evidence_min_citations: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_source_form(self) -> _RuleBase:
        if self.evidence_source is not None and self.evidence_sources is not None:
            raise ValueError("give evidence_source or evidence_sources, not both")
        if self.evidence_min_citations is not None and not self.accepted_sources:
            raise ValueError("evidence_min_citations without an evidence source")
        return self

    @property
    def accepted_sources(self) -> list[str]:
        if self.evidence_source is not None:
            return [self.evidence_source]
        return list(self.evidence_sources or [])


class ExactRule(_RuleBase):
    kind: Literal["exact"]


class EnumRule(_RuleBase):
    kind: Literal["enum"]
    enum_values: list[str] = Field(min_length=1)


class DateRule(_RuleBase):
    kind: Literal["date"]


class DatetimeRule(_RuleBase):
    kind: Literal["datetime"]


class IntegerRule(_RuleBase):
    kind: Literal["integer"]


class AliasesRule(_RuleBase):
    kind: Literal["aliases"]
    aliases: dict[str, str] = Field(min_length=1, description="accepted form -> canonical form")


class WhitespaceNormalizedRule(_RuleBase):
    kind: Literal["whitespace_normalized"]


class _ListRule(_RuleBase):
    element_kind: ElementKind = "exact"
    element_aliases: dict[str, str] | None = None
    element_enum_values: list[str] | None = None

    @model_validator(mode="after")
    def _element_options(self) -> _ListRule:
        if (self.element_kind == "enum") != (self.element_enum_values is not None):
            raise ValueError("element_enum_values is required with element_kind 'enum' and only then")
        if (self.element_kind == "aliases") != (self.element_aliases is not None):
            raise ValueError("element_aliases is required with element_kind 'aliases' and only then")
        return self


class OrderedListRule(_ListRule):
    kind: Literal["ordered_list"]


class UnorderedSetRule(_ListRule):
    kind: Literal["unordered_set"]


FieldRule = Annotated[
    ExactRule
    | EnumRule
    | DateRule
    | DatetimeRule
    | IntegerRule
    | AliasesRule
    | WhitespaceNormalizedRule
    | OrderedListRule
    | UnorderedSetRule,
    Field(discriminator="kind"),
]


class EvidenceSource(_Frozen):
    url: str = Field(description="The exact URL a citation must carry (string equality).")
    path: str = Field(description="Fixture file, relative to the pack folder.")
    format: Literal["html", "text"]
    require_quote: bool = True
    normalize_quote_whitespace: bool = False
    normalize_linebreak_hyphenation: bool = False
    min_citations: int | None = Field(default=None, ge=1)
    derived_from: str | None = Field(
        default=None, description="The original document the text fixture is derived from."
    )

    @field_validator("path")
    @classmethod
    def _inside_pack(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts:
            raise ValueError("fixture path must stay inside the pack folder")
        return value


_THRESHOLD = r"^(0(\.[0-9]+)?|1(\.0+)?)$"


class Rules(_Frozen):
    record_key: str
    success_threshold: str = Field(pattern=_THRESHOLD, description='Decimal string, e.g. "0.90".')
    evidence_threshold: str = Field(pattern=_THRESHOLD)
    field_rules: list[FieldRule] = Field(min_length=1)
    evidence_sources: dict[str, EvidenceSource]

    @model_validator(mode="after")
    def _references(self) -> Rules:
        names = [rule.name for rule in self.field_rules]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate field rules: {duplicates}")
        if self.record_key not in names:
            raise ValueError(f"record_key {self.record_key!r} has no field rule")
        for rule in self.field_rules:
            for source in rule.accepted_sources:
                if source not in self.evidence_sources:
                    raise ValueError(f"field rule {rule.name!r} names unknown evidence source {source!r}")
        return self

    @property
    def success_threshold_decimal(self) -> Decimal:
        return Decimal(self.success_threshold)

    @property
    def evidence_threshold_decimal(self) -> Decimal:
        return Decimal(self.evidence_threshold)

    def rule(self, name: str) -> FieldRule:
        for rule in self.field_rules:
            if rule.name == name:
                return rule
        raise KeyError(name)


# --- the pack ---------------------------------------------------------------------------------


class Pack:
    """One loaded pack. Attributes are read-only by convention. The scorer keeps what it derives
    from a pack (schema validator, fixture texts) in its own cache, keyed by the pack object."""

    def __init__(
        self,
        *,
        directory: Path,
        card: Card,
        gates: GatesSpec,
        rules: Rules,
        schema: dict,
        expected: list[dict],
        input_text: str,
        task_prompt: str,
        runner_prompt: str,
    ) -> None:
        self.dir = directory
        self.id = directory.name
        self.card = card
        self.gates = gates
        self.rules = rules
        self.schema = schema
        self.expected = expected
        self.input_text = input_text
        self.task_prompt = task_prompt
        self.runner_prompt = runner_prompt
        self._checksums: dict[str, str | None] | None = None
        self._scoring_pack: Pack | None = None

    def __repr__(self) -> str:
        return f"<Pack {self.id} ({self.card.workflow} pack {self.card.pack_number}, {self.card.pack_kind})>"

    # The agent-facing prompt, in the order of the seed's "Reconstructed runner prompt and
    # output contract" block. Expected records are never part of it.
    def render_prompt(self, site_key: str) -> str:
        if not isinstance(site_key, str) or not site_key or any(c in site_key for c in '"\n\r\t '):
            raise ValueError(f"site_key must be a non-empty string without quotes or whitespace, got {site_key!r}")
        return (
            "\n".join(
                [
                    self.runner_prompt.rstrip("\n").replace(SITE_KEY_TOKEN, site_key),
                    self.task_prompt.rstrip("\n"),
                    SCHEMA_HEADING,
                    self.schema_text.rstrip("\n"),
                    INPUT_HEADING,
                    self.input_text.rstrip("\n"),
                ]
            )
            + "\n"
        )

    @property
    def schema_text(self) -> str:
        return (self.dir / "output.schema.json").read_text(encoding="utf-8")

    def scoring_pack(self) -> Pack:
        """The workflow's reviewed pack (a sibling folder), loaded once."""
        if self.card.scoring_pack == self.id:
            return self
        if self._scoring_pack is None:
            scoring = load_pack(self.dir.parent / self.card.scoring_pack)
            if not scoring.card.reviewed or scoring.card.workflow != self.card.workflow:
                raise PackError(
                    self.dir / "card.json",
                    "scoring_pack",
                    f"{scoring.id} is not the reviewed pack of workflow {self.card.workflow}",
                )
            self._scoring_pack = scoring
        return self._scoring_pack

    # --- evidence fixtures ---
    def fixture_path(self, source: str) -> Path:
        return self.dir / self.rules.evidence_sources[source].path

    def fixture_paths(self) -> list[str]:
        """Distinct fixture paths named by the rules, in a stable order."""
        return sorted({s.path for s in self.rules.evidence_sources.values()})

    def missing_fixtures(self) -> list[str]:
        return [p for p in self.fixture_paths() if not (self.dir / p).is_file()]

    def fixture_bytes(self, source: str) -> bytes:
        path = self.fixture_path(source)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise PackError(
                path,
                f"evidence_sources.{source}",
                "evidence fixture is missing; fixtures are generated from the mirrors (see docs/concepts/packs.md)",
            ) from None

    def checksums(self) -> dict[str, str | None]:
        """sha256 of the files scoring depends on (None = missing fixture)."""
        if self._checksums is None:
            out: dict[str, str | None] = {}
            for name in ("rules.json", "expected.json", "output.schema.json", *self.fixture_paths()):
                path = self.dir / name
                out[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
            self._checksums = out
        return self._checksums

    def policy(self, mode: PolicyMode = "enforce", block_state_changes: bool = False) -> Policy:
        """The live policy of a run on this pack: its allowed URLs and allowed state changes."""
        return Policy(
            allowed_urls=tuple(self.gates.allowed_urls),
            mode=mode,
            block_state_changes=block_state_changes,
            allowed_state_changes=frozenset(self.gates.allowed_state_changes),
            pack=self.id,
        )

    def checksum(self) -> str:
        """One sha256 over the scoring files and their names."""
        digest = hashlib.sha256()
        for name, value in sorted(self.checksums().items()):
            digest.update(f"{name}\0{value or 'missing'}\n".encode())
        return digest.hexdigest()


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackError(path, None, "file is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(path, None, f"unreadable ({exc})") from exc


def _read_json(path: Path) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PackError(path, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from exc


def _validate(model: type[BaseModel], path: Path) -> Any:
    data = _read_json(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        more = f" (and {exc.error_count() - 1} more errors)" if exc.error_count() > 1 else ""
        raise PackError(path, field, f"{first['msg']}{more}") from None


def resolve_pack_dir(ref: str | Path, packs_dir: Path | None = None) -> Path:
    path = Path(ref)
    if isinstance(ref, str) and len(path.parts) == 1 and not path.is_absolute():
        candidate = (packs_dir or PACKS_DIR) / ref
        if candidate.is_dir() or not path.is_dir():
            return candidate
    return path


def load_pack(ref: str | Path, *, packs_dir: Path | None = None, require_fixtures: bool = False) -> Pack:
    """Load a pack by id (from ``packs_dir``, default ``packs/``) or by folder path."""
    directory = resolve_pack_dir(ref, packs_dir)
    if not directory.is_dir():
        known = ", ".join(p.name for p in _pack_dirs(directory.parent)) or "none"
        raise PackError(directory, None, f"no such pack folder (packs here: {known})")
    card: Card = _validate(Card, directory / "card.json")
    if card.pack_id != directory.name:
        raise PackError(
            directory / "card.json", "pack_id", f"{card.pack_id!r} does not match the folder name {directory.name!r}"
        )
    if card.reviewed != (card.scoring_pack == card.pack_id):
        raise PackError(
            directory / "card.json",
            "scoring_pack",
            "a reviewed pack scores itself; a historical pack names its workflow's reviewed pack",
        )
    gates: GatesSpec = _validate(GatesSpec, directory / "gates.json")
    rules: Rules = _validate(Rules, directory / "rules.json")
    if rules.record_key != card.record_key:
        raise PackError(
            directory / "card.json",
            "record_key",
            f"{card.record_key!r} differs from rules.json record_key {rules.record_key!r}",
        )
    schema = _read_json(directory / "output.schema.json")
    _check_schema(schema, directory / "output.schema.json")
    expected = _read_json(directory / "expected.json")
    if not (isinstance(expected, list) and expected and all(isinstance(r, dict) for r in expected)):
        raise PackError(directory / "expected.json", None, "must be a non-empty JSON array of records")
    runner_prompt = _read_text(directory / "runner_prompt.md")
    if runner_prompt.count(SITE_KEY_TOKEN) != 1:
        raise PackError(
            directory / "runner_prompt.md", None, f"must contain the site-key placeholder {SITE_KEY_TOKEN} exactly once"
        )
    pack = Pack(
        directory=directory,
        card=card,
        gates=gates,
        rules=rules,
        schema=schema,
        expected=expected,
        input_text=_read_text(directory / "input.md"),
        task_prompt=_read_text(directory / "task_prompt.md"),
        runner_prompt=runner_prompt,
    )
    _check_expected(pack)
    if require_fixtures:
        for name, source in rules.evidence_sources.items():
            if not (directory / source.path).is_file():
                raise PackError(
                    directory / source.path,
                    f"rules.json evidence_sources.{name}.path",
                    "evidence fixture is missing; fixtures are generated from the mirrors",
                )
    return pack


_CHECKED_SCHEMAS: set[str] = set()  # digests of schemas already checked in this process


def _check_schema(schema: Any, path: Path) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        raise PackError(path, None, "schema must be a JSON object")
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    if digest in _CHECKED_SCHEMAS:  # the metaschema check costs ~30 ms; packs share schemas
        return
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise PackError(path, ".".join(str(p) for p in exc.absolute_path) or None, exc.message) from None
    _CHECKED_SCHEMAS.add(digest)


def _check_expected(pack: Pack) -> None:
    """Every rule must find a valid expected value (a wrong expected record is a pack error)."""
    path = pack.dir / "expected.json"
    keys = set()
    for index, record in enumerate(pack.expected):
        for rule in pack.rules.field_rules:
            problem = expected_problem(rule, record)
            if problem:
                raise PackError(path, f"{index}.{rule.name}", problem)
        keys.add(json.dumps(record_value(record, pack.rules.record_key), sort_keys=True))
    if len(keys) != len(pack.expected):
        raise PackError(path, pack.rules.record_key, "expected records must have distinct record keys")


def _pack_dirs(packs_dir: Path) -> list[Path]:
    if not packs_dir.is_dir():
        return []
    return sorted(p for p in packs_dir.iterdir() if p.is_dir() and (p / "card.json").is_file())


def list_packs(packs_dir: Path | None = None) -> list[Pack]:
    """All packs in ``packs_dir`` (default ``packs/``), sorted by id."""
    return [load_pack(p) for p in _pack_dirs(packs_dir or PACKS_DIR)]


PACK_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # matched in full: never a path, never a newline


def pack_policy(pack_id: str) -> Policy:
    """The policy resolver the CLI hands the tool server: a pack id (never a path) -> its policy.
    Every unknown or unusable pack gets the same message, naming the known ids."""
    if isinstance(pack_id, str) and PACK_ID.fullmatch(pack_id) and (PACKS_DIR / pack_id / "card.json").is_file():
        try:
            return load_pack(pack_id).policy()
        except PackError as exc:
            raise PolicyNotFound(f"pack {pack_id!r} cannot be used: {exc}") from exc
    known = ", ".join(p.name for p in _pack_dirs(PACKS_DIR))
    raise PolicyNotFound(f"unknown pack {pack_id!r}; known packs: {known}")
