#!/usr/bin/env python3
"""Generate the task packs in ``packs/`` from the benchmark text (the seed).

Usage (from the project root):
    .venv/bin/python scripts/extract_packs.py [--seed SEED.txt] [--out packs] [--check]

The seed's workflow sections are regular: a card (description, pack number, executed-by,
time limit), "Supplied source URLs", "Task prompt template", "Reconstructed runner prompt
and output contract" (runner lines + task prompt + "REQUIRED OUTPUT JSON SCHEMA:" + schema +
"FROZEN TASK INPUT:" + input), "Expected output records — evaluator only" and "Field
comparison and evidence rules". Every runner line must match a known pattern; an unknown
line stops the script instead of being dropped. The output is deterministic (same bytes on
every run), so the committed packs can be checked with ``--check``.

The two capture artefacts of the seed are repaired here (see docs/concepts/packs.md): ``§ion=``
-> ``&section=`` and the obfuscated ``[email protected]`` -> a documented stand-in.
Evidence fixtures (``packs/<id>/fixtures/``) are NOT written here: they are generated from
the mirrors by a separate script.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SEED_NAME = "000_4ca4eb304c2e93a5.txt"
# The benchmark text lives in shared/ beside the checkout (CI lays a copy there too).
DEFAULT_SEED = next(
    (
        c
        for c in (
            Path(__file__).resolve().parents[2] / "shared" / "seed" / SEED_NAME,
            Path("/work/shared/seed") / SEED_NAME,
        )
        if c.is_file()
    ),
    Path(__file__).resolve().parents[2] / "shared" / "seed" / SEED_NAME,
)

SITE_KEY_PLACEHOLDER = "benchmark-profile-placeholder"
SITE_KEY_TOKEN = "{site_key}"

WORKFLOWS = {  # seed heading -> (workflow id, email stand-in for "[email protected]")
    "Controlled form": ("controlled-form", "joao.munoz@example.com"),
    "SEC contract": ("sec-contract", None),
    "Court docket": ("court-docket", None),
    "eCFR regulation": ("ecfr-regulation", None),
    "Addenda trace": ("addenda-trace", None),
    "Bid intake": ("bid-intake", "shawn.jenkins@example.com"),
}
OBFUSCATED_EMAIL = "[email protected]"
AMPERSAND_ARTEFACT = ("\u00a7ion=", "&section=")

CARD_LINE = re.compile(
    r"^(?P<case>.+)\. Pack (?P<number>\d+); "
    r"(?P<kind>reviewed scoring pack|historical execution pack)\.$"
)
EXECUTED_BY = re.compile(r"^Executed by: (?P<names>.+)\.$")
TIME_LIMIT = re.compile(r"^Time limit: (?P<minutes>\d+) minutes\.$")

PROMPT_MARK = "Task prompt template"
RUNNER_MARK = "Reconstructed runner prompt and output contract"
SCHEMA_MARK = "REQUIRED OUTPUT JSON SCHEMA:"
INPUT_MARK = "FROZEN TASK INPUT:"
EXPECTED_MARK = "Expected output records \u2014 evaluator only"
RULES_MARK = "Field comparison and evidence rules"
CONTROL_HEAD = "BENCHMARK EXECUTION CONTROL (mandatory):"
IDENTITY_HEAD = "TASK-SPECIFIC BROWSER IDENTITY (mandatory):"

# The execution-control block is the same for every pack; its rules are mapped to gates by
# hand below, so a changed text must be looked at, not parsed by guesswork.
EXECUTION_CONTROL = """BENCHMARK EXECUTION CONTROL (mandatory):
- Use browser tools for the browser work in this task.
- Every browser_start_session call must explicitly pass provider="kernel".
- Start with the supplied reserved ephemeral site_key and pass
clear_cookies=false exactly. The run plan generated this never-before-issued
profile key so the browser starts empty without triggering asynchronous
deletion of another measured attempt's profile.
- Call browser_start_session exactly once. If that start fails, report the
benchmark error and stop instead of retrying with the same or another key.
- Never omit provider and never request Browserbase or automatic fallback.
- Inspect each browser session result. If it identifies any provider other than
Kernel, stop immediately and return a benchmark error instead of continuing.
- When the browser work is complete, call browser_close with neither session_id
nor close_all so the current chat's session is released without an approval.
- Do not take any state-changing action except the task card's explicitly
allowed benchmark-owned Save draft action."""

IDENTITY_PATTERNS = {
    "site_key": re.compile(
        r'^- Every browser_start_session call must pass site_key="(?P<key>[^"]+)" exactly\. '
        r"It is an ephemeral profile identifier frozen in this run plan; do not turn it "
        r"into a URL or Markdown link\.$"
    ),
    "clear_cookies": re.compile(r"^- Every browser_start_session call must pass clear_cookies=false exactly\.$"),
    "permitted_tools": re.compile(r"^- The only permitted tool names for this task are: (?P<tools>[a-z_, ]+)\.$"),
    "counts": re.compile(r"^- The measured tool-invocation counts must satisfy: (?P<counts>.+)\.$"),
    "start_url": re.compile(
        r'^- Every browser_start_session call must pass url="(?P<url>[^"]+)" exactly\. '
        r"This is the canonical start URL for the task\.$"
    ),
    "allowed_urls": re.compile(
        r"^- URL-bearing browser calls may use only these exact resource URLs: (?P<urls>.+?)\. "
        r"A fragment-only page or anchor selector is allowed on a listed resource; do not "
        r"alter its scheme, host, path, or query\.$"
    ),
    "must_visit": re.compile(
        r"^- You must visit every listed URL using at least one URL-bearing browser call; "
        r"opening only a subset fails the measured run\.$"
    ),
    "ordering": re.compile(
        r"^- A final (?P<tool>browser_\w+) invocation must occur strictly after the last "
        r"(?P<after>browser_\w+) invocation and before (?P<before>browser_\w+)\.$"
    ),
}
COUNT_ITEM = re.compile(r"^(?P<tool>[a-z_]+): (?P<op>exactly|at least) (?P<value>\d+)$")


class ExtractError(Exception):
    pass


@dataclass
class Section:
    title: str
    first_line: int  # 1-based line number of the workflow heading in the seed
    last_line: int
    text: str


def split_sections(seed: str) -> list[Section]:
    """Cut the seed at each card line; the heading is the line before it (a JSON block's
    closing brace may be glued to its front, e.g. ``}Court docket``)."""
    lines = seed.split("\n")
    starts: list[int] = []
    for index, line in enumerate(lines):
        if CARD_LINE.match(line) and index > 0:
            heading = lines[index - 1].lstrip("}]")
            if heading in WORKFLOWS:
                starts.append(index - 1)
    if not starts:
        raise ExtractError("no workflow card line found in the seed")
    sections = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        body = lines[start:end]
        body[0] = body[0].lstrip("}]")
        if n + 1 < len(starts):  # the next heading's glued prefix belongs to this section
            glued = lines[end][: len(lines[end]) - len(lines[end].lstrip("}]"))]
            body.append(glued)
        sections.append(Section(body[0], start + 1, end, "\n".join(body).rstrip("\n")))
    return sections


def take_json(text: str, start: int) -> tuple[object, int]:
    """Decode the JSON value at ``start`` (after whitespace); return it and the end offset."""
    decoder = json.JSONDecoder()
    while text[start] in " \n":
        start += 1
    value, end = decoder.raw_decode(text, start)
    return value, end


def between(text: str, begin: str, end: str) -> str:
    i = text.index(begin) + len(begin)
    j = text.index(end, i)
    return text[i:j]


def repair(text: str, email: str | None, where: str) -> str:
    """Undo the seed's two capture artefacts."""
    text = text.replace(*AMPERSAND_ARTEFACT)
    if OBFUSCATED_EMAIL in text:
        if email is None:
            raise ExtractError(f"{where}: obfuscated e-mail with no documented stand-in")
        text = text.replace(OBFUSCATED_EMAIL, email)
    if "\u00a7ion" in text or "email protected" in text.replace("\u00a0", " "):
        raise ExtractError(f"{where}: capture artefact left after repair")
    return text


def repair_json(value: object, email: str | None, where: str) -> object:
    return json.loads(repair(json.dumps(value, ensure_ascii=False), email, where))


def collapse(text: str) -> str:
    return " ".join(text.split())


def parse_counts(spec: str, where: str) -> list[dict]:
    counts = []
    for item in spec.split("; "):
        match = COUNT_ITEM.match(item)
        if not match:
            raise ExtractError(f"{where}: unreadable count item {item!r}")
        counts.append(
            {
                "tool": match["tool"],
                "op": "exactly" if match["op"] == "exactly" else "at_least",
                "value": int(match["value"]),
                "source": "runner counts line",
            }
        )
    return counts


def parse_identity(lines: list[str], where: str) -> dict:
    """Turn the task-specific runner lines into the gates spec (unknown line = error)."""
    found: dict[str, re.Match] = {}
    for line in lines:
        for name, pattern in IDENTITY_PATTERNS.items():
            match = pattern.match(line)
            if match:
                if name in found:
                    raise ExtractError(f"{where}: runner rule {name!r} appears twice")
                found[name] = match
                break
        else:
            raise ExtractError(f"{where}: unknown runner line {line!r}")
    for required in ("site_key", "clear_cookies", "permitted_tools", "start_url", "allowed_urls"):
        if required not in found:
            raise ExtractError(f"{where}: runner rule {required!r} missing")
    if found["site_key"]["key"] != SITE_KEY_PLACEHOLDER:
        raise ExtractError(f"{where}: unexpected site key {found['site_key']['key']!r}")

    counts = parse_counts(found["counts"]["counts"], where) if "counts" in found else []
    if not any(c["tool"] == "browser_start_session" for c in counts):
        # "Call browser_start_session exactly once." (execution control, every pack)
        counts.append({"tool": "browser_start_session", "op": "exactly", "value": 1, "source": "execution control"})
    counts.sort(key=lambda c: c["tool"])
    allowed = found["allowed_urls"]["urls"].split("; ")
    ordering = []
    if "ordering" in found:
        m = found["ordering"]
        ordering.append(
            {
                "kind": "between",
                "tool": m["tool"],
                "after_last": m["after"],
                "before": m["before"],
                "text": m.group(0)[2:],
            }
        )
    return {
        "permitted_tools": found["permitted_tools"]["tools"].split(", "),
        "counts": counts,
        "start_url": found["start_url"]["url"],
        "start_args": {"provider": "kernel", "clear_cookies": False},
        "site_key": "run_plan",
        "close_forbidden_args": ["session_id", "close_all"],
        "require_close": True,
        "allowed_urls": allowed,
        "must_visit": list(allowed) if "must_visit" in found else [],
        "ordering": ordering,
        "result_provider": "kernel",
        "allowed_state_changes": [],
    }


def extract_section(section: Section, seed_name: str) -> tuple[str, dict[str, str]]:
    """Return (pack id, {relative path: file text}) for one workflow section."""
    workflow, email = WORKFLOWS[section.title]
    where = f"{section.title} (seed lines {section.first_line}-{section.last_line})"
    lines = section.text.split("\n")
    card = CARD_LINE.match(lines[1])
    executed = EXECUTED_BY.match(lines[2])
    limit = TIME_LIMIT.match(lines[3])
    if not (card and executed and limit) or lines[4] != "Supplied source URLs":
        raise ExtractError(f"{where}: card lines not as expected: {lines[1:5]!r}")
    supplied = []
    index = 5
    while lines[index].startswith("- "):
        supplied.append(lines[index][2:])
        index += 1
    if lines[index] != PROMPT_MARK:
        raise ExtractError(f"{where}: {PROMPT_MARK!r} expected at line {index}")

    text = section.text
    template = between(text, PROMPT_MARK + "\n", RUNNER_MARK)
    runner_block = between(text, RUNNER_MARK, SCHEMA_MARK).strip("\n")
    if not runner_block.startswith(EXECUTION_CONTROL + "\n" + IDENTITY_HEAD + "\n"):
        raise ExtractError(f"{where}: execution-control block differs from the known text")
    after_head = runner_block[len(EXECUTION_CONTROL) + 1 + len(IDENTITY_HEAD) + 1 :].split("\n")
    identity_lines = []
    while after_head and after_head[0].startswith("- "):
        identity_lines.append(after_head.pop(0))
    task_prompt = "\n".join(after_head)
    if collapse(task_prompt) != collapse(template):
        raise ExtractError(f"{where}: task prompt in the runner block differs from the template")
    runner_prompt = "\n".join([EXECUTION_CONTROL, IDENTITY_HEAD, *identity_lines])

    schema, schema_end = take_json(text, text.index(SCHEMA_MARK) + len(SCHEMA_MARK))
    if text[schema_end:].lstrip("\n")[: len(INPUT_MARK)] != INPUT_MARK:
        raise ExtractError(f"{where}: {INPUT_MARK!r} does not follow the schema")
    input_text = between(text, INPUT_MARK + "\n", EXPECTED_MARK).rstrip("\n")
    expected, expected_end = take_json(text, text.index(EXPECTED_MARK) + len(EXPECTED_MARK))
    if not text[expected_end:].startswith(RULES_MARK):
        raise ExtractError(f"{where}: {RULES_MARK!r} does not follow the expected records")
    rules, rules_end = take_json(text, expected_end + len(RULES_MARK))
    if text[rules_end:].strip("}] \n"):
        raise ExtractError(f"{where}: unexpected text after the rules: {text[rules_end : rules_end + 80]!r}")

    number = int(card["number"])
    reviewed = card["kind"].startswith("reviewed")
    pack_id = workflow if reviewed else f"{workflow}-p{number}"
    gates = parse_identity([repair(line, email, where) for line in identity_lines], where)
    runner_prompt = repair(runner_prompt, email, where)
    if runner_prompt.count(SITE_KEY_PLACEHOLDER) != 1:
        raise ExtractError(f"{where}: site-key placeholder not found exactly once in the runner prompt")
    runner_prompt = runner_prompt.replace(SITE_KEY_PLACEHOLDER, SITE_KEY_TOKEN)

    card_data = {
        "pack_id": pack_id,
        "workflow": workflow,
        "workflow_title": section.title,
        "fixed_case": card["case"],
        "pack_number": number,
        "pack_kind": "reviewed" if reviewed else "historical",
        "executed_by": executed["names"].split(", "),
        "time_limit_seconds": int(limit["minutes"]) * 60,
        "scoring_pack": workflow,
        "record_key": rules["record_key"],
        "supplied_source_urls": [repair(u, email, where) for u in supplied],
        "seed": {"file": seed_name, "first_line": section.first_line, "last_line": section.last_line},
    }

    def dump(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

    files = {
        "card.json": dump(card_data),
        "task_prompt.md": repair(task_prompt, email, where) + "\n",
        "runner_prompt.md": runner_prompt + "\n",
        "input.md": repair(input_text, email, where) + "\n",
        # sort_keys reproduces the seed's key order (the schema was printed sorted)
        "output.schema.json": json.dumps(
            repair_json(schema, email, where), indent=2, sort_keys=True, ensure_ascii=False
        )
        + "\n",
        "expected.json": dump(repair_json(expected, email, where)),
        "rules.json": dump(repair_json(rules, email, where)),
        "gates.json": dump(gates),
    }
    return pack_id, files


def extract(seed_path: Path) -> dict[str, dict[str, str]]:
    seed = seed_path.read_text(encoding="utf-8")
    packs: dict[str, dict[str, str]] = {}
    for section in split_sections(seed):
        pack_id, files = extract_section(section, seed_path.name)
        if pack_id in packs:
            raise ExtractError(f"pack {pack_id} appears twice in the seed")
        packs[pack_id] = files
    reviewed = {
        json.loads(f["card.json"])["workflow"]
        for f in packs.values()
        if json.loads(f["card.json"])["pack_kind"] == "reviewed"
    }
    if reviewed != {w for w, _ in WORKFLOWS.values()}:
        raise ExtractError(f"every workflow needs one reviewed pack; found {sorted(reviewed)}")
    return packs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=Path, default=DEFAULT_SEED, help="the benchmark text")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "packs", help="packs folder to write")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the committed packs differ from the seed"
    )
    args = parser.parse_args(argv)
    try:
        packs = extract(args.seed)
    except (ExtractError, OSError, ValueError) as exc:
        print(f"extract_packs: {exc}", file=sys.stderr)
        return 2
    differences = []
    for pack_id, files in sorted(packs.items()):
        folder = args.out / pack_id
        for name, content in files.items():
            path = folder / name
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current == content:
                continue
            differences.append(str(path))
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
    verb = "differ" if args.check else "written"
    print(f"{len(packs)} packs; {len(differences)} files {verb}" + "".join(f"\n  {d}" for d in differences))
    return 1 if args.check and differences else 0


if __name__ == "__main__":
    sys.exit(main())
