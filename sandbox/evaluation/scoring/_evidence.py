"""Evidence: citations ``{"url", "quote"}`` checked against the pack's evidence fixtures.

A citation is valid when its URL equals an accepted source's URL as a string (no decoding,
no reordering, no fragment) and its quote occurs in that source's fixture text:
- ``format: html``: the visible text (BeautifulSoup; head, scripts, styles, templates and
  hidden elements removed; block elements and ``<br>`` break lines, inline elements join);
- ``format: text``: the file as UTF-8 text (JSON fixtures are searched as raw text).
With ``normalize_quote_whitespace`` runs of whitespace in both texts become one space. With
``normalize_linebreak_hyphenation`` a word broken as ``accom-<line break>modation`` is
found as ``accommodation``, as ``accom-modation`` (a real hyphen at a line end) and as the
source's own ``accom- modation``; soft hyphens are dropped; a quote spanning several broken words
may join some and keep the others' hyphens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, Comment

from sandbox.evaluation.evaluator_errors import EvaluatorError, evaluating
from sandbox.evaluation.normalise import collapse_whitespace, describe
from sandbox.evaluation.packs import EvidenceSource, FieldRule, Pack, PackError
from sandbox.evaluation.scoring._cache import derived
from sandbox.evaluation.scoring._report import EvidenceFailure, EvidenceResult

BLOCK_TAGS = {
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "html",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
}
INVISIBLE_TAGS = ["head", "script", "style", "noscript", "template", "iframe", "object", "svg"]
_DISPLAY_NONE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def visible_text(html: str) -> str:
    """Approximate ``innerText`` of an HTML document."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(INVISIBLE_TAGS):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        attrs = tag.attrs or {}
        if "hidden" in attrs or _DISPLAY_NONE.search(str(attrs.get("style", ""))):
            tag.decompose()
    for tag in soup.find_all("br"):
        tag.replace_with("\n")
    for tag in soup.find_all(BLOCK_TAGS):
        tag.insert_before("\n")
        tag.append("\n")
    text = soup.get_text("")
    return re.sub(r"\n[ \t]*\n+", "\n", text).strip()


_BROKEN_WORD = re.compile(r"(?<=\w)-[ \t]*\r?\n\s*(?=\w)")
_BREAK = "\x00"  # a word broken at a line end, in the last haystack: quoted joined or with its hyphen


def _haystacks(text: str, source: EvidenceSource) -> tuple[str, ...]:
    """The texts a quote is searched in: the source's own; with hyphenation normalised, its broken
    words all joined, all hyphenated, and (last) each marked ``_BREAK`` for ``_found``."""
    variants = [text]
    if source.normalize_linebreak_hyphenation:
        unsoft = text.replace("\u00ad", "")
        variants.append(_BROKEN_WORD.sub("", unsoft))
        variants.append(_BROKEN_WORD.sub("-", text))
        variants.append(_BROKEN_WORD.sub(_BREAK, unsoft))
    if source.normalize_quote_whitespace:
        variants = [collapse_whitespace(v) for v in variants]
    return tuple(dict.fromkeys(variants))


def _found(needle: str, haystacks: tuple[str, ...], source: EvidenceSource) -> bool:
    """Whether ``needle`` occurs in a haystack; with hyphenation normalised, also when it quotes
    some broken words joined and others with their hyphen (each break matches either)."""
    if any(needle in haystack for haystack in haystacks):
        return True
    if not source.normalize_linebreak_hyphenation or len(needle) > len(haystacks[-1]):
        return False  # (a quote longer than the source is not in it, and no pattern is made of it)
    pattern = []
    for before, char in zip(" " + needle[:-1], needle, strict=True):
        if char == "-":
            pattern.append(f"[-{_BREAK}]")
            continue
        if before.isalnum() and char.isalnum():
            pattern.append(f"{_BREAK}?")
        pattern.append(re.escape(char))
    return re.search("".join(pattern), haystacks[-1]) is not None


def source_haystacks(pack: Pack, name: str) -> tuple[str, ...]:
    """The searchable texts of one evidence source (cached on the pack; raises PackError
    when the fixture is missing)."""
    cache = derived(pack).haystacks
    if name not in cache:
        source = pack.rules.evidence_sources[name]
        raw = pack.fixture_bytes(name)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PackError(pack.fixture_path(name), f"evidence_sources.{name}", f"not UTF-8 text ({exc})") from None
        if source.format == "html":
            text = visible_text(text)
        cache[name] = _haystacks(text, source)
    return cache[name]


def _normalise_quote(quote: str, source: EvidenceSource) -> str:
    return collapse_whitespace(quote) if source.normalize_quote_whitespace else quote


@dataclass
class _Context:
    pack: Pack
    missing_fixtures: set[str]


def _check_citation(ctx: _Context, citation: Any, names: list[str]) -> tuple[str | None, tuple | None]:
    """(problem, identity) for one citation; identity is (url, normalised quote) when valid."""
    if not isinstance(citation, dict):
        return f"a citation must be an object {{url, quote}}, got {describe(citation)}", None
    url = citation.get("url")
    if not isinstance(url, str):
        return f"url must be a string, got {describe(url)}", None
    sources = ctx.pack.rules.evidence_sources
    candidates = [n for n in names if sources[n].url == url]
    if not candidates:
        accepted = sorted({sources[n].url for n in names})
        shown_url = url if len(url) <= 200 else url[:197] + "..."  # an agent's URL may be megabytes
        return f"URL {shown_url!r} is not an accepted source for this field (accepted, exactly: {accepted})", None
    quote = citation.get("quote")
    problems = []
    for name in candidates:
        source = sources[name]
        if not source.require_quote and quote is None:
            return None, (url, None)
        if not isinstance(quote, str):
            return f"quote must be a string, got {describe(quote)}", None
        needle = _normalise_quote(quote, source)
        if not needle.strip():
            return "quote is empty", None
        try:
            haystacks = source_haystacks(ctx.pack, name)
        except PackError as exc:  # missing, or there and unreadable (then why)
            there = Path(exc.file).exists() or Path(exc.file).is_symlink()
            ctx.missing_fixtures.add(f"{exc.file} ({exc.message})" if there else exc.file)
            problems.append(f"cannot check source {name!r}: {exc}")
            continue
        if _found(needle, haystacks, source):
            return None, (url, needle)
        problems.append(f"quote not found in source {name!r} ({source.path})")
    return "; ".join(problems), None


def _field_evidence(ctx: _Context, rule: FieldRule, evidence: Any) -> str | None:
    """Why the record's evidence for ``rule``'s field is not valid (None: it is)."""
    names = rule.accepted_sources
    need = rule.evidence_min_citations or max(ctx.pack.rules.evidence_sources[n].min_citations or 1 for n in names)
    entry = evidence.get(rule.name) if isinstance(evidence, dict) else None
    if entry is None:
        return "no evidence given for this field"
    if isinstance(entry, dict):
        citations = [entry]
    elif isinstance(entry, list):
        citations = entry
    else:
        return f"evidence must be a citation object or an array of them, got {describe(entry)}"
    problems, identities = [], set()
    for index, citation in enumerate(citations):
        problem, identity = _check_citation(ctx, citation, names)
        if problem:
            problems.append(f"citation {index}: {problem}" if len(citations) > 1 else problem)
        else:
            identities.add(identity)
    if problems:
        return "; ".join(problems)
    if len(identities) < need:
        return f"{len(identities)} distinct valid citation(s), {need} required"
    return None


def check_evidence(
    pack: Pack, record: dict | None, errors: list[EvaluatorError] | None = None, *, field_prefix: str = ""
) -> tuple[EvidenceResult, set[str]]:
    """Score the record's ``evidence`` object against every rule that names sources.
    Returns the result and the set of missing fixture files met on the way. A field's check
    that raises is recorded in ``errors`` (named with ``field_prefix``) and counts as not valid;
    without ``errors`` it propagates."""
    ctx = _Context(pack, set())
    evidence = record.get("evidence") if isinstance(record, dict) else None
    failures: list[EvidenceFailure] = []
    required = valid = 0
    for rule in pack.rules.field_rules:
        if not rule.accepted_sources:
            continue
        required += 1
        problem: str | None = "not judged: the evidence check raised (see errors)"
        with evaluating(f"evidence of field {field_prefix}{rule.name}", errors):
            problem = _field_evidence(ctx, rule, evidence)
        if problem:
            failures.append(EvidenceFailure(field=rule.name, message=problem))
        else:
            valid += 1
    score = Fraction(valid, required) if required else Fraction(1)
    return EvidenceResult(score=float(score), valid=valid, required=required, failures=failures), ctx.missing_fixtures
