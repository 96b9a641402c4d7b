"""Reference agent for the SEC contract workflow (pack ``sec-contract``).

Reads the filing metadata from the EDGAR filing index, opens the exhibit (the only other
allowed URL), scrolls it once and reads every agreement term from the exhibit's snapshot
text: defined-term pointers are followed to their destination sections, and the silence
traps (termination fee, aggregate liability cap, arbitration) are answered NOT_STATED /
NOT_FOUND only after searching the whole text for them. Evidence quotes are spans cut out
of the snapshot text itself (curly quotes kept), so they are literal visible text.

``read_sources`` browses; ``derive_filing`` / ``derive_terms`` read the snapshots (pure);
``assemble`` builds the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.runner.agents.reference._aria import Node, normalise_space
from sandbox.runner.agents.reference._reading import (
    NOT_FOUND,
    NOT_STATED,
    BenchmarkError,
    Browser,
    RunPlan,
    iso_date,
    read_run_plan,
    run_guarded,
)
from sandbox.runner.task import AgentTask, Tools

WORKFLOW = "sec-contract"

OPEN_Q, CLOSE_Q = '[“"]', '[”"]'
_SECTION = r"\d+(?:\.\d+)*"
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_NUMBER_WORDS.update(
    {
        "twenty": 20,
        "thirty": 30,
        "forty": 40,
        "forty-five": 45,
        "fifty": 50,
        "sixty": 60,
        "seventy": 70,
        "eighty": 80,
        "ninety": 90,
        "one hundred": 100,
        "one hundred twenty": 120,
        "one hundred eighty": 180,
    }
)
_COMPANY_SUFFIX = (
    r"(?:,? (?:Inc\.|Inc|LLC|L\.L\.C\.|Ltd\.|Ltd|Corp\.|Corporation|Co\.|L\.P\.|plc|N\.V\.|S\.A\.|"
    r"AG|GmbH|B\.V\.))?"
)
# "ninety (90) days", "90 days" or "ninety days"; read by _days().
_DAYS = (
    r"(?:(?P<words>[a-z][a-z\- ]*?)\s*\((?P<digits>\d+)\)|(?P<bare>\d+)|(?P<only>[a-z][a-z\- ]*?))"
    r"\s+(?:calendar |business )?days"
)


@dataclass(frozen=True)
class Found:
    value: object
    quote: str


def _blocks(tree: Node) -> list[str]:
    """Visible text blocks in document order (a paragraph with inline parts joined)."""
    out: list[str] = []

    def visit(node: Node) -> None:
        if node.role.startswith("/"):
            return
        if node.own_text:
            out.append(normalise_space(node.own_text))
            return
        if node.role == "paragraph" and node.children:
            text = normalise_space(node.full_text())
            if text:
                out.append(text)
            return
        for child in node.children:
            visit(child)

    for child in tree.children:
        visit(child)
    return out


def _days(match: re.Match) -> int:
    """The day count of a ``_DAYS`` match: the digits when given, else the number words."""
    digits = match.group("digits") or match.group("bare")
    if digits:
        return int(digits)
    words = match.group("only").strip().lower()
    if words in _NUMBER_WORDS:
        return _NUMBER_WORDS[words]
    raise BenchmarkError(f"cannot read the number {words!r}")


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(". ", 0, start) + 2, text.rfind("\n", 0, start) + 1, 0)
    right_candidates = [i for i in (text.find(". ", end), text.find("\n", end)) if i != -1]
    right = min(right_candidates) + 1 if right_candidates else len(text)
    return text[left:right].strip()


# --- the filing index ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FilingIndex:
    accession_number: str
    form: str
    filing_date: str
    filer: str
    exhibit_number: str


def derive_filing(tree: Node, exhibit_url: str) -> FilingIndex:
    tokens = [normalise_space(n.own_text) for n in tree.walk() if n.own_text and not n.role.startswith("/")]

    def after(label: str, pattern: str) -> str:
        for index, token in enumerate(tokens):
            if token.rstrip(":").casefold() == label.casefold():
                for following in tokens[index + 1 : index + 4]:
                    if re.fullmatch(pattern, following):
                        return following
        raise BenchmarkError(f"the filing index shows no {label!r} value")

    form = next((t[len("Form ") :].strip() for t in tokens if re.fullmatch(r"Form \S+", t)), None)
    filer = next((m.group(1) for m in (re.match(r"(.+?) \(Filer\)", t) for t in tokens) if m), None)
    if form is None or filer is None:
        raise BenchmarkError("the filing index shows no form type or filer")
    return FilingIndex(
        accession_number=after("SEC Accession No.", r"\d{10}-\d{2}-\d{6}"),
        form=form,
        filing_date=after("Filing Date", r"\d{4}-\d{2}-\d{2}"),
        filer=filer,
        exhibit_number=_exhibit_type(tree, exhibit_url),
    )


def _exhibit_type(tree: Node, exhibit_url: str) -> str:
    """The Type cell of the document-table row that links to the exhibit."""
    document = exhibit_url.rsplit("/", 1)[-1]
    for table in tree.find_all("table"):
        headers = [normalise_space(h.own_text or "") for h in table.find_all("columnheader")]
        if "Type" not in headers:
            continue
        for row in table.find_all("row"):
            cells = [c for c in row.children if c.role == "cell"]
            links = [u.own_text or "" for c in cells for u in c.find_all("/url")]
            if len(cells) == len(headers) and any(link.endswith("/" + document) or link == document for link in links):
                return normalise_space(cells[headers.index("Type")].full_text())
    raise BenchmarkError(f"the filing index lists no document {document!r}")


# --- the agreement -------------------------------------------------------------------------------


class Agreement:
    """The exhibit's text blocks with lookups by section number and section title."""

    def __init__(self, blocks: list[str]) -> None:
        self.blocks = blocks
        self.text = "\n".join(blocks)

    def section(self, number: str) -> str | None:
        return next((b for b in self.blocks if re.match(rf"{re.escape(number)}\s", b)), None)

    def titled(self, title_pattern: str) -> tuple[str, str] | None:
        """(section number, block) of the first section whose heading matches."""
        for block in self.blocks:
            match = re.match(rf"({_SECTION})\s+(?:{title_pattern})\.", block, re.I)
            if match:
                return match.group(1), block
        return None

    def search(self, pattern: str, flags: int = 0) -> re.Match | None:
        return re.search(pattern, self.text, flags)

    def defined_terms(self) -> list[str]:
        terms = re.findall(rf"{OPEN_Q}([A-Z][^”\"]{{0,60}}?){CLOSE_Q}", self.text)
        return sorted(set(t.rstrip(".,") for t in terms), key=len, reverse=True)


def derive_terms(agreement: Agreement, task: AgentTask) -> dict[str, Found]:
    a = agreement
    found: dict[str, Found] = {}

    title = next((b for b in a.blocks if re.fullmatch(r"[A-Z][A-Z0-9 ,&'\-]*AGREEMENT", b)), None)
    if title is None:
        raise BenchmarkError("no agreement title (an all-capitals heading ending in AGREEMENT)")
    found["agreement.title"] = Found(title, title)

    date = a.search(
        rf"(?:entered into |made |dated )?(?:as of )?([A-Z][a-z]+ \d{{1,2}}, \d{{4}}) "
        rf"\((?:the )?{OPEN_Q}Effective Date{CLOSE_Q}\)"
    )
    if not date:
        raise BenchmarkError("no effective date definition")
    found["agreement.effective_date"] = Found(iso_date(date.group(1)), date.group(0))

    def party(group: str) -> str:
        # "Name, Inc., a Delaware corporation with ... (“Short”)": the name without jurisdiction
        return (
            rf"(?P<{group}>[A-Z][^,(“\"\n]*?{_COMPANY_SUFFIX})(?:, an? [^()\n]*?)? "
            rf"\((?:the )?{OPEN_Q}(?P<{group}_short>[^”\"]+){CLOSE_Q}\)"
        )

    parties = a.search(rf"by and between {party('a')},? and {party('b')}")
    if not parties:
        raise BenchmarkError("no 'by and between' party recital")
    found["agreement.parties"] = Found([parties.group("a"), parties.group("b")], parties.group(0))
    shorts = [parties.group("a_short"), parties.group("b_short")]

    term = a.titled(r"Term")
    expiry = re.search(r"shall expire (?:upon|on|at) (?:the )?([^.;,\n]+)", term[1] if term else a.text)
    if not expiry:
        raise BenchmarkError("no expiration clause ('shall expire upon ...')")
    after_words = expiry.group(1)
    trigger = next((t for t in a.defined_terms() if after_words.startswith(t)), None)
    if trigger is None:  # not a defined term: keep the capitalised phrase
        phrase = re.match(r"[A-Z][\w-]*(?:\s+(?:of|the|for|and|[A-Z][\w-]*))*", after_words)
        if phrase is None:
            raise BenchmarkError(f"the expiration clause names no defined term or capitalised event: {after_words!r}")
        trigger = phrase.group(0)
    lead_in = expiry.group(0)[: expiry.start(1) - expiry.start(0)]
    found["agreement.expiration_trigger"] = Found(trigger, lead_in + trigger)

    _derive_defined_terms(a, found)
    _derive_termination(a, found)
    _derive_indemnification(a, found, shorts)
    _derive_miscellaneous(a, found, task)
    return found


def _definition_block(a: Agreement, term: str) -> re.Match | None:
    return a.search(
        rf"^({_SECTION})\s+{OPEN_Q}{re.escape(term)}{CLOSE_Q}(?: or {OPEN_Q}[^”\"]+{CLOSE_Q})?\s+"
        rf"(means|shall have the meaning[^.\n]*?Section ({_SECTION}))",
        re.M,
    )


def _derive_defined_terms(a: Agreement, found: dict[str, Found]) -> None:
    pointer = _definition_block(a, "Confidential Information")
    if not pointer or not pointer.group(3):
        raise BenchmarkError("no Article 1 pointer for “Confidential Information”")
    found["defined_terms.confidential_information.pointer_section"] = Found(
        f"Section {pointer.group(1)}", pointer.group(0)
    )
    destination = pointer.group(3)
    block = a.section(destination)
    if block is None:
        raise BenchmarkError(f"the pointer names Section {destination}, which is not in the text")
    means = re.match(rf".*?{OPEN_Q}Confidential Information{CLOSE_Q}\s+means", block)
    found["defined_terms.confidential_information.definition_section"] = Found(
        f"Section {destination}", means.group(0) if means else block[:80]
    )
    override = re.search(r"(?:that )?(?:a )?reasonable person[^.;]*", block)
    found["defined_terms.confidential_information.reasonable_person_override"] = Found(
        bool(override), override.group(0) if override else block[:80]
    )

    claims = _definition_block(a, "Claims")
    if not claims:
        raise BenchmarkError("no definition of “Claims”")
    section = claims.group(1)
    if claims.group(3):  # a pointer: follow it
        section = claims.group(3)
    block = a.section(section) or ""
    found["defined_terms.claims.definition_section"] = Found(f"Section {section}", claims.group(0))
    costs = re.search(
        r"reasonable (?:outside )?(?:attorneys|attorney|legal|counsel)[’'s]* (?:fees|costs|expenses)", block
    )
    found["defined_terms.claims.includes_reasonable_legal_costs"] = Found(bool(costs), costs.group(0) if costs else "")


def _derive_termination(a: Agreement, found: dict[str, Found]) -> None:
    cause = a.titled(r"Termination for (?:Cause|Breach|Material Breach)")
    if cause is None:
        raise BenchmarkError("no termination-for-cause section")
    cure = re.search(rf"(?:fails|failure) to cure[^.]*?within {_DAYS}", cause[1])
    if not cure:
        raise BenchmarkError(f"Section {cause[0]} states no cure period")
    found["termination.for_cause_section"] = Found(f"Section {cause[0]}", cause[1][:40])
    found["termination.breach_cure_days"] = Found(_days(cure), cure.group(0))

    convenience = a.titled(r"Termination for Convenience|Termination without Cause")
    if convenience is None:
        raise BenchmarkError("no termination-for-convenience section")
    notice = re.search(rf"upon {_DAYS}[’']? (?:prior )?(?:written )?notice", convenience[1])
    if not notice:
        raise BenchmarkError(f"Section {convenience[0]} states no notice period")
    found["termination.for_convenience_section"] = Found(f"Section {convenience[0]}", convenience[1][:40])
    found["termination.convenience_notice_days"] = Found(_days(notice), notice.group(0))

    survival = a.search(r"(Articles?\s+\d+(?:(?:,\s*|,?\s+and\s+)\d+)*)\s+(?:shall|will)\s+survive")
    if not survival:
        raise BenchmarkError("no survival clause naming articles")
    found["termination.surviving_articles"] = Found(re.findall(r"\d+", survival.group(1)), survival.group(0))

    fee = a.search(r"(?:early )?termination (?:fee|payment|charge)|break[- ]?up fee", re.I)
    found["termination.termination_fee"] = Found(
        _sentence_around(a.text, fee.start(), fee.end()) if fee else NOT_STATED, ""
    )


def _derive_indemnification(a: Agreement, found: dict[str, Found], shorts: list[str]) -> None:
    for short in shorts:
        section = a.titled(rf"Indemnification by {re.escape(short)}")
        if section is None:
            raise BenchmarkError(f"no 'Indemnification by {short}' section")
        group = re.search(rf"\((?:collectively,? )?(?:the )?{OPEN_Q}([^”\"]*Indemnitees?){CLOSE_Q}\)", section[1])
        if not group:
            raise BenchmarkError(f"Section {section[0]} names no indemnified group")
        found[f"indemnification.{short.casefold()}_indemnifies"] = Found(group.group(1), group.group(0))

    cross = a.search(rf"not solely caused by[^.]*?governed by Section ({_SECTION})")
    if not cross:
        raise BenchmarkError("no cross reference for injuries not solely caused by one party")
    found["indemnification.nonsole_injury_cross_reference"] = Found(f"Section {cross.group(1)}", cross.group(0))

    joint = a.search(r"(?:(?:the|such) )?(?:\w+ )?(?:shall|will) (not )?be jointly and severally liable")
    # Without such words the answer is false; the cross-referenced section is then the evidence.
    found["indemnification.joint_and_several_liability"] = Found(
        joint is not None and not joint.group(1), joint.group(0) if joint else cross.group(0)
    )

    found["indemnification.aggregate_liability_cap"] = Found(_liability_cap(a), "")


def _liability_cap(a: Agreement) -> str:
    """A sentence that caps a party's total liability at an amount or formula, else NOT_STATED.
    A consequential-damages exclusion (no amount) is not a cap."""
    cap_words = re.compile(
        r"aggregate liability|total liability|maximum liability|shall not exceed|"
        r"in excess of|\bcap\b|limited to",
        re.I,
    )
    for sentence in re.split(r"(?<=[.;])\s+|\n", a.text):
        if (
            cap_words.search(sentence)
            and re.search(r"liab", sentence, re.I)
            and re.search(r"\$|dollars|amounts? (?:paid|payable)|fees paid", sentence, re.I)
            and not re.search(r"insurance", sentence, re.I)
        ):
            return normalise_space(sentence)
    return NOT_STATED


def _derive_miscellaneous(a: Agreement, found: dict[str, Found], task: AgentTask) -> None:
    # Only the governing-law clause counts: representations also name a state of organisation.
    titled = a.titled(r"Governing Law(?:;[^.]*)?")
    law = re.search(
        r"governed by[^.]*?laws of (?:the )?(?:State|Commonwealth) of ([A-Z][a-z]+(?: [A-Z][a-z]+)*)",
        titled[1] if titled else a.text,
    )
    if not law:
        raise BenchmarkError("no governing-law clause ('governed by ... the laws of ...')")
    found["miscellaneous.governing_law"] = Found(law.group(1), law.group(0))

    named = re.search(rf"Section ({_SECTION})'s general assignment rule", task.prompt)
    assignment = a.section(named.group(1)) if named else None
    if assignment is None:
        titled = a.titled(r"Assignment")
        assignment = titled[1] if titled else None
    if assignment is None:
        raise BenchmarkError("no assignment section")
    general_rule = re.split(r";\s*provided", assignment, maxsplit=1)[0]
    consent = re.search(r"without (?:the )?(?:prior )?(?:express )?written consent of the other Party", general_rule)
    found["miscellaneous.assignment_requires_consent"] = Found(
        bool(consent), consent.group(0) if consent else general_rule[:80]
    )

    amendment = None
    for sentence in re.split(r"(?<=\.)\s+|\n", a.text):
        if re.search(r"\bamend", sentence, re.I):
            amendment = re.search(r"in writing[^.]*?hereto", sentence)
            if amendment:
                break
    if amendment is None:
        raise BenchmarkError("no amendment formality ('in writing ... hereto')")
    found["miscellaneous.amendment_formality"] = Found(amendment.group(0), amendment.group(0))

    arbitration = a.search(r"arbitrat\w*", re.I)
    found["miscellaneous.arbitration_clause"] = Found(
        _sentence_around(a.text, arbitration.start(), arbitration.end()) if arbitration else NOT_FOUND, ""
    )


# --- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """What the tools showed: the filing index and the exhibit (scrolled once), as snapshots."""

    index_url: str
    exhibit_url: str
    index: Node
    exhibit: Node


async def read_sources(browser: Browser, plan: RunPlan) -> Sources:
    exhibit_url = plan.other_url()
    await browser.start(plan)
    _, index = await browser.snapshot()
    await browser.navigate(exhibit_url)
    await browser.scroll("down")
    _, exhibit = await browser.snapshot()
    await browser.close()
    return Sources(plan.start_url, exhibit_url, index, exhibit)


def _nest(flat: dict[str, object]) -> dict:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``, keeping the order of first appearance."""
    out: dict = {}
    for dotted, value in flat.items():
        *parents, leaf = dotted.split(".")
        node = out
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return out


def assemble(task: AgentTask, sources: Sources, filing: FilingIndex, terms: dict[str, Found]) -> dict:
    index_url, exhibit_url = sources.index_url, sources.exhibit_url
    quotes = {"filing.accession_number": Found(filing.accession_number, filing.accession_number), **terms}
    # The output schema lists the fields that need a citation; filing fields cite the index.
    required = task.output_schema["items"]["properties"]["evidence"]["required"]
    unread = [name for name in required if name not in quotes]
    if unread:
        raise BenchmarkError(f"the output contract asks evidence for {unread}, which this agent does not read")
    evidence = {
        name: {"url": index_url if name.startswith("filing.") else exhibit_url, "quote": quotes[name].quote}
        for name in required
    }
    record = _nest(
        {
            "filing.accession_number": filing.accession_number,
            "filing.form": filing.form,
            "filing.filing_date": filing.filing_date,
            "filing.filer": filing.filer,
            "filing.exhibit_number": filing.exhibit_number,
            **{name: found.value for name, found in terms.items()},
            "official_urls.filing_index": index_url,
            "official_urls.exhibit": exhibit_url,
        }
    )
    return {**record, "evidence": evidence}


async def solve(tools: Tools, task: AgentTask) -> str:
    return await run_guarded(tools, task, _run)


async def _run(browser: Browser, task: AgentTask) -> dict:
    sources = await read_sources(browser, read_run_plan(task))
    filing = derive_filing(sources.index, sources.exhibit_url)
    terms = derive_terms(Agreement(_blocks(sources.exhibit)), task)
    return assemble(task, sources, filing, terms)
