"""Reference agent for the controlled-form workflow (packs ``controlled-form``).

Fills the synthetic values of each step named in the task input, clicks the step's ``Next``
once per step (two clicks), then verifies the confirmation screen from a fresh snapshot and
stops there: it never clicks the confirm action and never presses Enter. Every reported
value is what the snapshots showed; the synthetic values, the record id and the expected
heading / action label come from the task text.

A failed browser_start_session (or a provider other than Kernel) is the benchmark error the
runner prompt asks for. A typing or click that fails on the form ends the filling: the record
then reports the state the final snapshot shows (incomplete, not submitted), as the task asks.

``parse_form_task`` reads the task text; ``read_sources`` browses (fills and clicks, then
snapshots the confirmation screen); ``derive_workflow`` judges it (pure); ``assemble``
builds the record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import overload

from sandbox.runner.agents.reference._aria import Node, normalise_space
from sandbox.runner.agents.reference._reading import (
    NOT_FOUND,
    BenchmarkError,
    Browser,
    RunPlan,
    read_run_plan,
    run_guarded,
)
from sandbox.runner.task import AgentTask, ToolCallError, Tools

WORKFLOW = "controlled-form"

_TABLE_ROW = re.compile(r"^\|\s*([^|`]+?)\s*\|\s*([^|`]+?)\s*\|\s*`([^`]*)`\s*\|\s*$")
_STEP_HEADING = re.compile(r"\(Step (\d+) of (\d+)\)")
_FIELD_ROLES = ("textbox", "combobox", "spinbutton", "checkbox", "radio", "listbox")
_PHONE = re.compile(r"phone|\btel\b|mobile", re.I)
_TAX = re.compile(r"\btax\b|\btin\b|\bssn\b|\bein\b|\bvat\b|tax[ _-]?id", re.I)

READY = "READY_FOR_CONFIRMATION_NOT_SUBMITTED"
INCOMPLETE = "INCOMPLETE_NOT_SUBMITTED"
UNAVAILABLE = "FORM_UNAVAILABLE_NOT_SUBMITTED"
ATTEMPTED = "FINAL_SUBMISSION_ATTEMPTED"


@dataclass(frozen=True)
class FormValue:
    step: str
    label: str
    value: str


@dataclass(frozen=True)
class FormTask:
    values: list[FormValue]
    record_id: str
    confirmation_heading: str  # e.g. "Confirm (Step 3 of 3)"
    primary_action: str  # the visible label the task names, e.g. "CONFIRM & NEXT"
    next_label: str  # the button to click once per step, e.g. "Next"
    finished_heading: str | None  # the submitted state the task warns about

    @property
    def steps(self) -> list[str]:
        return list(dict.fromkeys(v.step for v in self.values))


def parse_form_task(task: AgentTask) -> FormTask:
    values = [
        FormValue(normalise_space(m.group(1)), normalise_space(m.group(2)), m.group(3))
        for m in map(_TABLE_ROW.match, task.input_text.splitlines())
        if m
    ]
    if not values:
        raise BenchmarkError("the task input has no table of synthetic values")
    text = task.prompt

    @overload
    def backticked(pattern: str) -> str | None: ...
    @overload
    def backticked(pattern: str, default: str) -> str: ...
    def backticked(pattern: str, default: str | None = None) -> str | None:
        found = re.search(pattern, text)
        return found.group(1) if found else default

    heading = backticked(r"`([^`]*\(Step \d+ of \d+\))`")
    action = backticked(r"primary action (?:says|reads) `([^`]+)`")
    if heading is None or action is None:
        raise BenchmarkError("the prompt names no confirmation heading or primary action")
    return FormTask(
        values=values,
        record_id=backticked(r"Set `record_id` to exactly `([^`]+)`", ""),
        confirmation_heading=heading,
        primary_action=action,
        next_label=backticked(r"click `([^`]+)` once", "Next"),
        finished_heading=backticked(r"`([^`]+)` submission state"),
    )


@dataclass
class Sources:
    """What the tools showed while the steps were filled, and the final screen."""

    headings: list[str] = field(default_factory=list)
    field_names: set[str] = field(default_factory=set)
    typed: dict[str, str] = field(default_factory=dict)  # label -> value the field held after typing
    clicks: int = 0
    failed: str | None = None  # the typing or click on the form that failed, which ended the filling
    final: Node | None = None


def _heading(tree: Node) -> str | None:
    headings = [n for n in tree.find_all("heading") if n.attributes.get("level") == "1"] or tree.find_all("heading")
    return normalise_space(headings[0].own_text or "") if headings else None


def _field(tree: Node, label: str) -> Node | None:
    for node in tree.walk():
        if node.role in _FIELD_ROLES and normalise_space(node.name or "").casefold() == label.casefold():
            return node
    return None


def _button(tree: Node, label: str) -> Node | None:
    for node in tree.find_all("button"):
        if normalise_space(node.name or "").casefold() == label.casefold():
            return node
    return None


def _summary(tree: Node) -> dict[str, str]:
    """Key -> value pairs of the confirmation list (each item: key text, then value text)."""
    pairs: dict[str, str] = {}
    for item in tree.find_all("listitem"):
        texts = [n.own_text for n in item.walk() if n is not item and n.own_text and not n.role.startswith("/")]
        if len(texts) >= 2:
            pairs.setdefault(normalise_space(texts[0]).casefold(), texts[-1])
    return pairs


def _validation_errors(tree: Node) -> int:
    count = 0
    for node in tree.walk():
        words = (node.own_text or "").lstrip()
        if node.role == "alert" or (node.role not in ("button", "/url") and words.startswith("Error")):
            count += 1
    return count


async def _snapshot(browser: Browser, seen: Sources) -> Node:
    _, tree = await browser.snapshot()
    heading = _heading(tree)
    if heading:
        seen.headings.append(heading)
    seen.field_names |= {normalise_space(n.name or "") for n in tree.walk() if n.role in _FIELD_ROLES}
    return tree


async def _fill_steps(browser: Browser, form: FormTask, seen: Sources) -> None:
    for step in form.steps:
        tree = await _snapshot(browser, seen)
        heading = seen.headings[-1] if seen.headings else ""
        if not heading.casefold().startswith(step.casefold()):
            return  # not the step the task describes: stop and report what was seen
        for value in (v for v in form.values if v.step == step):
            target = _field(tree, value.label)
            if target is None or target.ref is None:
                return
            try:
                result = await browser.type(target.ref, value.value)
            except ToolCallError as error:
                seen.failed = str(error)
                return
            if isinstance(result.get("value"), str):  # what the field held, as the tool read it back
                seen.typed[value.label] = result["value"]
        button = _button(tree, form.next_label)
        if button is None or button.ref is None:
            return
        try:
            await browser.click(button.ref)
        except ToolCallError as error:
            seen.failed = str(error)
            return
        seen.clicks += 1


async def read_sources(browser: Browser, plan: RunPlan, form: FormTask) -> Sources:
    """Start the session (a failure stops the run), fill the steps and snapshot the screen
    they lead to, also when a typing or click on the form failed."""
    seen = Sources()
    await browser.start(plan)
    await _fill_steps(browser, form, seen)
    # A fresh snapshot strictly after the last click: the screen the verdict is about.
    seen.final = await _snapshot(browser, seen)
    await browser.close()
    return seen


def _final_summary(seen: Sources) -> dict[str, str]:
    return _summary(seen.final) if seen.final is not None else {}


def derive_fields(form: FormTask, seen: Sources) -> dict[str, str]:
    """Each task field as the confirmation summary showed it (else as the field held it)."""
    summary = _final_summary(seen)
    fields = {}
    for value in form.values:
        shown = summary.get(value.label.casefold())
        fields[value.label.casefold()] = shown if shown is not None else seen.typed.get(value.label, "")
    # The task says the form has no phone or tax-identifier field; report NOT_FOUND only after
    # checking that no field the form showed is one.
    names = seen.field_names | set(summary)
    fields["phone"] = NOT_FOUND if not any(_PHONE.search(n) for n in names) else "PRESENT_NO_VALUE_SUPPLIED"
    fields["tax_identifier"] = NOT_FOUND if not any(_TAX.search(n) for n in names) else "PRESENT_NO_VALUE_SUPPLIED"
    return fields


def derive_workflow(form: FormTask, seen: Sources) -> dict:
    """Where the steps got to, what the final screen shows, and the verdict on it."""
    final = seen.final
    heading = _heading(final) if final is not None else None
    summary = _final_summary(seen)
    summary_matches = bool(summary) and all(summary.get(v.label.casefold()) == v.value for v in form.values)
    errors = _validation_errors(final) if final is not None else 0

    # Playwright's aria snapshot names buttons from their DOM text ("Confirm & Next"); the page
    # renders them with CSS text-transform: uppercase, so a person sees "CONFIRM & NEXT". The
    # task names the visible label, so a button that matches it case-insensitively is reported
    # with the task's label; any other forward button is reported as the snapshot names it.
    buttons = [normalise_space(b.name or "") for b in final.find_all("button")] if final is not None else []
    forward = [b for b in buttons if b.casefold() != "back"]
    primary = next(
        (form.primary_action for b in buttons if b.casefold() == form.primary_action.casefold()),
        forward[-1] if forward else NOT_FOUND,
    )

    step_numbers = [(int(m.group(1)), int(m.group(2))) for m in map(_STEP_HEADING.search, seen.headings) if m]
    total_match = _STEP_HEADING.search(form.confirmation_heading)
    steps_total = max([t for _, t in step_numbers] or [int(total_match.group(2)) if total_match else 0])
    steps_reached = max([n for n, _ in step_numbers] or [0])

    submitted = bool(form.finished_heading) and any(h == form.finished_heading for h in seen.headings)
    verified = (
        heading == form.confirmation_heading
        and summary_matches
        and errors == 0
        and primary == form.primary_action
        and not submitted
        and seen.failed is None
    )
    if not seen.headings or not steps_reached:
        state = UNAVAILABLE
    elif submitted:
        state = ATTEMPTED
    elif verified:
        state = READY
    else:
        state = INCOMPLETE
    return {
        "steps_total": steps_total,
        "steps_reached": steps_reached,
        "current_heading": heading or NOT_FOUND,
        "visible_primary_action": primary,
        "validation_errors_visible": errors,
        "summary_matches_input": summary_matches,
        "final_submission_attempted": submitted,
        "final_state": state,
    }


def assemble(plan: RunPlan, form: FormTask, fields: dict[str, str], workflow: dict) -> dict:
    return {"record_id": form.record_id, "target_url": plan.start_url, "fields": fields, "workflow": workflow}


async def solve(tools: Tools, task: AgentTask) -> str:
    return await run_guarded(tools, task, _run)


async def _run(browser: Browser, task: AgentTask) -> dict:
    form = parse_form_task(task)
    plan = read_run_plan(task)
    sources = await read_sources(browser, plan, form)
    return assemble(plan, form, derive_fields(form, sources), derive_workflow(form, sources))
