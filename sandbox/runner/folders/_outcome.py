"""An attempt folder as the ``AttemptOutcome`` the runner would have returned for it, the agent
its batch states for a damaged folder that names none, and run selection read back from the
folders' names: what rebuilds a batch's summary."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from sandbox.runner.attempt import UNFINISHED, UNREADABLE, AttemptOutcome, AttemptRecord, attempt_status
from sandbox.runner.batch import slug
from sandbox.runner.files import rerun_name, rerun_of
from sandbox.runner.folders._attempt import AttemptFolder
from sandbox.runner.folders._batch import runner_named
from sandbox.runner.prices import finite_number
from sandbox.runner.selection import interruption


def named_agent(folder: AttemptFolder) -> str | None:
    """The agent the folder's own files name: its record's, else score.json's or the trace header's."""
    return (folder.attempt.agent if folder.attempt else None) or folder.named("agent")


def batch_agent(folder: AttemptFolder, agents: Iterable[str]) -> str | None:
    """The agent a batch states for its attempt folder that names none (a damaged one), given the
    ``agents`` its other folders name: the one whose name the runner put in the folder's name
    (``<agent>--<pack>-<n>``, in a batch of several agents), or, for a folder named as in a batch of
    one agent (``<pack>-<n>``), that agent when it is the only one. None when the batch does not say
    (its other folders name no agent, or several and the folder's name none of them): the attempt is
    then in no agent's row, never in one of an invented agent."""
    agents = sorted(set(agents))
    by_folder_name = [agent for agent in agents if folder.name.startswith(f"{slug(agent)}--")]
    if len(by_folder_name) == 1:
        return by_folder_name[0]
    if len(agents) == 1 and "--" not in folder.name and runner_named(folder.path):
        return agents[0]
    return None


def batch_pack(folder: AttemptFolder, agent: str | None) -> str:
    """The pack of a folder whose files name none: the one in the name the runner gave it
    (``<pack>-<n>``, ``<agent>--<pack>-<n>``, a re-run's ``-r<k>`` after either), else its name."""
    if not runner_named(folder.path):
        return folder.name
    first = rerun[0] if (rerun := rerun_of(folder.name)) else folder.name
    pack = first.rpartition("-")[0]
    if agent is not None and pack.startswith(prefix := f"{slug(agent)}--"):
        pack = pack[len(prefix) :]
    return pack if pack and "--" not in pack else folder.name


def outcome(folder: AttemptFolder, agents: Iterable[str] = ()) -> AttemptOutcome:
    """The folder's outcome; a damaged folder's as ``AttemptFolder`` says it counts: a record that
    cannot be counted gives only the attempt's agent (its row); the rest is unknown, none of its
    score counted (field accuracy 0), and the status says why (unfinished, unreadable). ``agents``:
    those the other attempt folders of its batch name, of which ``batch_agent`` takes the one it ran
    when its files name none."""
    agent = named_agent(folder) or batch_agent(folder, agents)
    pack = folder.pack or batch_pack(folder, agent)
    record = folder.attempt if folder.counted else None
    attempt, score = record or AttemptRecord(pack=pack), ({} if folder.lost_reply else folder.score or {})
    calls = attempt.tool_calls_total
    if calls is None and folder.trace is not None:
        calls = len(folder.trace.calls)
    if calls is None and record is not None:  # as before: a counted record that says none, without a trace
        calls = 0
    # No attempt.json: the attempt is still running, or its batch was killed before writing it
    # (unfinished); one there that cannot be counted (unreadable): how it ended is unknown all the
    # same, and so is its time, even when an evaluator raised on its score.
    if record is None:
        status = UNREADABLE if folder.record_damage is not None else UNFINISHED
    else:
        status = attempt_status(attempt.status or "unknown", score.get("status"))
    return AttemptOutcome(
        pack=pack,
        agent=agent,
        directory=folder.path,
        status=status,
        elapsed_seconds=None if attempt.elapsed_seconds is None or record is None else float(attempt.elapsed_seconds),
        qualified_pass=folder.qualified is True,  # a damaged score.json's "yes" is no pass, nor one without a record
        error_free=folder.qualified is True and score.get("error_free") is True,
        field_accuracy=number_or_zero(score.get("field_accuracy")) if record is not None else 0.0,
        tool_calls=None if calls is None else int(calls),  # None: no record to count them, no trace read
        token_usage=attempt.token_usage,
        reason="; ".join(folder.reasons()),
        cost_usd=attempt.cost_usd,
        model=(attempt.agent_details or {}).get("model"),
        pack_checksum=attempt.pack_checksum,
        mirror_checksum=attempt.mirror_checksum,
        faults=(attempt.faults or "") if record is not None and "faults" in record.model_fields_set else None,
    )


def number_or_zero(value: Any) -> float:
    """A score's number as a float; 0 for what is none (a damaged file's ``"abc"``, ``NaN``)."""
    if finite_number(value):
        return float(value)
    return 0.0


def reselected(outcomes: list[AttemptOutcome]) -> list[AttemptOutcome]:
    """Run selection as the batch made it, read back from the folder names: ``<folder>-r<k>`` is
    the approved replacement of the latest earlier attempt of ``<folder>`` there is (``<folder>-r<k-1>``,
    or ``<folder>`` for k = 1), which it replaced: a re-run whose folder could not be written (a full
    disk) or was removed leaves a gap, not two selected attempts of one job."""
    by_name = {o.directory.name: o for o in outcomes}
    replaces: dict[str, str] = {}
    for name in by_name:
        if (rerun := rerun_of(name)) is not None:
            first, k = rerun
            earlier = [rerun_name(first, j) for j in range(k - 1, 0, -1)] + [first]
            if (found := next((e for e in earlier if e in by_name), None)) is not None:
                replaces[name] = found
    replaced = set(replaces.values())
    result = []
    for o in outcomes:
        name = o.directory.name
        if name in replaced:
            o = dataclasses.replace(o, interruption=interruption(o), selection="replaced")
        elif name in replaces:
            o = dataclasses.replace(
                o, interruption=interruption(o), selection="approved replacement", replaces=replaces[name]
            )
        else:  # interrupted and not replaced, or not interrupted: as the batch said it
            o = dataclasses.replace(o, interruption=interruption(o))
        result.append(o)
    return result
