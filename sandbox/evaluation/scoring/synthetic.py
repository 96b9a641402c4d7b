"""Synthetic attempts for tests and the scoring benchmark.

- ``TraceBuilder``: write trace lines (the real ``toolserver.contract.trace`` format) call by call.
- ``conforming_trace(pack, site_key)``: a trace that passes every gate of ``pack``.
- ``cited_record(pack)``: the scoring pack's expected record plus an ``evidence`` object whose
  quotes are synthetic sentences, and ``synthetic_fixtures(pack)``: fixture texts that
  contain exactly those quotes. ``synthetic_packs(folder)`` copies ``packs/`` there and
  writes those fixtures into it.
- ``bench_scoring(n)``: score ``n`` synthetic attempts and return the seconds taken.

None of this is a recorded run or a real source document: it only exercises the scorer and
the gates. Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import copy
import html
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from sandbox.evaluation.packs import Pack, list_packs
from sandbox.evaluation.records import record_value
from sandbox.evaluation.scoring._score import score_attempt  # the module, not the package: no ring
from sandbox.paths import PACKS_DIR
from toolserver.contract.events import EventKind, event_of
from toolserver.contract.trace import CallRecord, RunHeader, ToolError, Trace, parse_trace

SITE_KEY = "synthetic-site-key-0001"


class TraceBuilder:
    """Build a trace one call at a time; ``text()`` gives JSONL, ``trace()`` the parsed Trace."""

    def __init__(
        self,
        *,
        pack: str | None = None,
        site_key: str | None = None,
        header: bool = True,
        call_seconds: float = 0.5,
        first_seq: int = 1,
    ) -> None:
        self.lines: list[dict[str, Any]] = []
        self.seq = first_seq - 1
        self.t = 0.0
        self.call_seconds = call_seconds
        self.site_key = site_key or SITE_KEY
        if header:
            extra: dict[str, Any] = {"site_key": site_key} if site_key else {}
            self.lines.append(
                RunHeader(
                    run_id="synthetic", pack=pack, started_wall="1970-01-01T00:00:00.000+00:00", **extra
                ).model_dump(mode="json")
            )

    def call(
        self,
        tool: str,
        args: Any = None,
        *,
        ok: bool = True,
        result: dict | None = None,
        error: str | None = None,
        seq: int | None = None,
    ) -> TraceBuilder:
        self.seq = self.seq + 1 if seq is None else seq
        start, self.t = self.t, round(self.t + self.call_seconds, 6)
        record = CallRecord(
            seq=self.seq,
            tool=tool,
            args={} if args is None else args,
            ok=ok and error is None,
            result=(result if result is not None else {}) if ok and error is None else None,
            error=ToolError(type="tool_error", message=error) if error else None,
            t_start=start,
            t_end=self.t,
            wall_start="",
            wall_end="",
        )
        self.lines.append(record.model_dump(mode="json"))
        return self

    def event(self, kind: EventKind, data: dict[str, Any]) -> TraceBuilder:
        """An event during the last call (also repeated in that call's ``events``)."""
        event = event_of({"kind": kind, "seq": self.seq, "t": self.t, "wall": "", "data": data}).model_dump(mode="json")
        for line in reversed(self.lines):
            if line.get("type") == "call":
                line["events"].append(event)
                break
        self.lines.append(event)
        return self

    def state_change(self, action: str, name: str, *, allowed: bool = False, blocked: bool = False) -> TraceBuilder:
        return self.event("state_change", {"action": action, "name": name, "allowed": allowed, "blocked": blocked})

    # --- the usual tools ---
    def list_tools(self) -> TraceBuilder:
        return self.call("list_tools", {}, result={"tools": []})

    def start(
        self,
        url: str,
        *,
        site_key: str | None = None,
        provider: Any = "kernel",
        clear_cookies: Any = False,
        result_provider: Any = "kernel",
        **extra: Any,
    ) -> TraceBuilder:
        args = {
            "url": url,
            "provider": provider,
            "site_key": site_key or self.site_key,
            "clear_cookies": clear_cookies,
            **extra,
        }
        return self.call(
            "browser_start_session",
            args,
            result={"session_id": "ses_synthetic", "provider": result_provider, "url": url},
        )

    def navigate(self, url: str, **kwargs: Any) -> TraceBuilder:
        return self.call("browser_navigate", {"url": url}, result={"url": url}, **kwargs)

    def open_tab(self, url: str, **kwargs: Any) -> TraceBuilder:
        return self.call("browser_open_tab", {"url": url}, result={"url": url}, **kwargs)

    def snapshot(self) -> TraceBuilder:
        return self.call("browser_snapshot", {}, result={"snapshot": "- document"})

    def click(self, ref: str = "e1") -> TraceBuilder:
        return self.call("browser_click", {"ref": ref}, result={})

    def type(self, ref: str = "e1", text: str = "x") -> TraceBuilder:
        return self.call("browser_type", {"ref": ref, "text": text}, result={})

    def scroll(self) -> TraceBuilder:
        return self.call("browser_scroll", {"direction": "down"}, result={})

    def close(self, **args: Any) -> TraceBuilder:
        return self.call("browser_close", args, result={"closed": True})

    def end(self) -> TraceBuilder:
        self.lines.append({"type": "run_end", "t": self.t, "wall": "", "reason": "closed"})
        return self

    def text(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines)

    def trace(self) -> Trace:
        return parse_trace(self.text())


def conforming_trace(pack: Pack, site_key: str = SITE_KEY) -> TraceBuilder:
    """Calls that satisfy every gate of ``pack``: start, visit the other listed URLs, the
    counted calls (inputs before clicks, snapshots last), then close."""
    spec = pack.gates
    builder = TraceBuilder(pack=pack.id, site_key=site_key)
    if "list_tools" in spec.permitted_tools:
        builder.list_tools()
    builder.start(spec.start_url, site_key=site_key)
    visit = builder.navigate if "browser_navigate" in spec.permitted_tools else builder.open_tab
    for url in spec.must_visit:
        if url != spec.start_url:
            visit(url)
    need = {rule.tool: rule.value for rule in spec.counts}
    for tool, make in (
        ("browser_type", builder.type),
        ("browser_click", builder.click),
        ("browser_scroll", builder.scroll),
    ):
        for _ in range(need.get(tool, 0)):
            make()
    for _ in range(max(need.get("browser_snapshot", 0), 1)):
        builder.snapshot()
    builder.close()
    return builder.end()


def _quotes(rule_name: str, value: Any, count: int) -> list[str]:
    items = value if isinstance(value, list) and count > 1 else [value]
    quotes = [
        f"Synthetic quote for {rule_name} item {i}: {json.dumps(v, ensure_ascii=False)}" for i, v in enumerate(items)
    ]
    quotes += [f"Synthetic quote for {rule_name} item {i}" for i in range(len(quotes), count)]
    return quotes


def cited_record(pack: Pack, record: dict | None = None) -> dict:
    """The scoring pack's expected record (or ``record``) with synthetic citations added for
    every rule that requires evidence (first accepted source, as many citations as needed)."""
    scoring = pack.scoring_pack()
    out = copy.deepcopy(record if record is not None else scoring.expected[0])
    evidence: dict[str, Any] = {}
    for rule in scoring.rules.field_rules:
        names = rule.accepted_sources
        if not names:
            continue
        source = scoring.rules.evidence_sources[names[0]]
        need = rule.evidence_min_citations or max(scoring.rules.evidence_sources[n].min_citations or 1 for n in names)
        citations = [
            {"url": source.url, "quote": q}
            for q in _quotes(rule.name, record_value(scoring.expected[0], rule.name), need)
        ]
        evidence[rule.name] = citations[0] if need == 1 else citations
    if evidence:
        out["evidence"] = evidence
    return out


def synthetic_fixtures(pack: Pack) -> dict[str, str]:
    """Fixture path -> text holding every quote ``cited_record`` cites from that file."""
    scoring = pack.scoring_pack()
    quotes: dict[str, list[str]] = {s.path: [] for s in scoring.rules.evidence_sources.values()}
    for rule in scoring.rules.field_rules:
        names = rule.accepted_sources
        if names:
            need = rule.evidence_min_citations or max(
                scoring.rules.evidence_sources[n].min_citations or 1 for n in names
            )
            path = scoring.rules.evidence_sources[names[0]].path
            quotes[path] += _quotes(rule.name, record_value(scoring.expected[0], rule.name), need)
    files = {}
    for name, source in sorted(scoring.rules.evidence_sources.items()):
        lines = quotes[source.path] or [f"Synthetic fixture for source {name}."]
        if source.format == "html":
            body = "".join(f"<p>{html.escape(q)}</p>\n" for q in lines)
            files[source.path] = (
                f"<!doctype html>\n<html><head><title>synthetic</title></head><body>\n{body}</body></html>\n"
            )
        else:
            files[source.path] = "".join(q + "\n" for q in lines)
    return files


def synthetic_packs(folder: Path, packs_dir: Path | None = None) -> Path:
    """Copy the packs into ``folder/packs`` and write synthetic fixtures into every reviewed pack."""
    root = Path(folder) / "packs"
    shutil.copytree(packs_dir or PACKS_DIR, root, ignore=shutil.ignore_patterns("fixtures"))
    for pack in list_packs(root):
        if pack.card.reviewed:
            for path, text in synthetic_fixtures(pack).items():
                target = pack.dir / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    return root


def attempt_output(*records: dict, before: str = "", after: str = "") -> str:
    """Model output text: the records as one JSON array between the benchmark markers."""
    body = json.dumps(list(records), ensure_ascii=False, indent=2)
    return f"{before}BENCHMARK_JSON_BEGIN\n{body}\nBENCHMARK_JSON_END\n{after}"


def bench_scoring(n: int = 240) -> float:
    """Seconds to parse the traces of and score ``n`` synthetic attempts (fresh packs, so
    per-pack caches are built inside the timed part). Goal: < 0.5 s for 240."""
    with tempfile.TemporaryDirectory() as tmp:
        packs = list_packs(synthetic_packs(Path(tmp)))
        attempts = []
        for i in range(n):
            pack = packs[i % len(packs)]
            record = cited_record(pack)
            if i % 3 == 1:  # a wrong value and a paraphrased quote: exercise the failure paths too
                first = pack.scoring_pack().rules.field_rules[0].name
                parent = record
                *path, last = first.split(".")
                for part in path:
                    parent = parent[part]
                parent[last] = "WRONG"
                for cited in record.get("evidence", {}).values():
                    (cited if isinstance(cited, dict) else cited[0])["quote"] = "a paraphrase"
                    break
            attempts.append((pack, attempt_output(record), conforming_trace(pack).text()))
        started = time.perf_counter()
        for pack, output, trace_text in attempts:
            score_attempt(pack, output, parse_trace(trace_text), None, site_key=SITE_KEY)
        return time.perf_counter() - started


__all__ = [
    "SITE_KEY",
    "TraceBuilder",
    "attempt_output",
    "bench_scoring",
    "cited_record",
    "conforming_trace",
    "synthetic_fixtures",
    "synthetic_packs",
]
