"""The data of a pack's JSON files, as frozen pydantic models with ``extra="forbid"`` and
``Literal`` kinds: ``card.json`` (``Card``), ``gates.json`` (``GatesSpec``) and ``rules.json``
(``Rules``, its field rules and evidence sources). Data only: nothing here reads a file."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from toolserver.contract.names import TOOL_NAMES
from toolserver.contract.policy import url_problem

PACK_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # matched in full: never a path, never a newline


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

    @field_validator("scoring_pack")
    @classmethod
    def _scoring_pack_is_an_id(cls, value: str, info: ValidationInfo) -> str:
        # Another pack's id names a folder beside this one: a path ("../x", "/x") would load a
        # pack from anywhere. The pack's own id is its folder's name, whatever that is.
        if value != info.data.get("pack_id") and not PACK_ID.fullmatch(value):
            raise ValueError(
                f"{value!r} is no pack id (lowercase letters, digits and -): a historical pack names its "
                "workflow's reviewed pack by its id, a folder beside its own"
            )
        return value

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
        for url in (*self.allowed_urls, self.start_url):
            problem = url_problem(url)
            if problem:  # never matched: the browser's request has the URL in another form
                raise ValueError(f"URL {url!r} is never requested as written: {problem}")
        bare = {u.split("#", 1)[0] for u in self.allowed_urls}
        if self.start_url.split("#", 1)[0] not in bare:
            raise ValueError(f"start_url {self.start_url!r} is not one of allowed_urls")
        for url in self.must_visit:
            if url.split("#", 1)[0] not in bare:
                raise ValueError(f"must_visit URL {url!r} is not one of allowed_urls")
        tools = set(self.permitted_tools)
        unknown = sorted(tools - set(TOOL_NAMES))
        if unknown:
            raise ValueError(
                f"permitted_tools: {', '.join(unknown)} is no tool of the contract ({', '.join(TOOL_NAMES)})"
            )
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
        parts = PurePosixPath(value).parts
        if value.startswith("/") or ".." in parts or not parts:  # "" and "." name the folder itself
            raise ValueError("fixture path must name a file inside the pack folder (relative, no ..)")
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
