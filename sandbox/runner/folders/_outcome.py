"""An attempt folder as the ``AttemptOutcome`` the runner would have returned for it, and run
selection read back from the folders' names: what rebuilds a batch's summary."""

from __future__ import annotations

import dataclasses
from typing import Any

from sandbox.runner.attempt import UNFINISHED, UNREADABLE, AttemptOutcome, AttemptRecord, attempt_status
from sandbox.runner.files import rerun_name, rerun_of
from sandbox.runner.folders._attempt import AttemptFolder
from sandbox.runner.prices import finite_number
from sandbox.runner.selection import interruption


def outcome(folder: AttemptFolder) -> AttemptOutcome:
    """The folder's outcome; a damaged folder's as ``AttemptFolder`` says it counts: a record that
    cannot be counted gives only the attempt's agent (its row); the rest is unknown, none of its
    score counted (field accuracy 0), and the status says why (unfinished, unreadable)."""
    record = folder.attempt if folder.counted else None
    attempt, score = record or AttemptRecord(pack=folder.pack or folder.name), folder.score or {}
    calls = attempt.tool_calls_total
    if calls is None:
        calls = len(folder.trace.calls) if folder.trace else 0
    # No attempt.json: the attempt is still running, or its batch was killed before writing it
    # (unfinished); one there that cannot be counted (unreadable): how it ended is unknown all the
    # same, and so is its time, even when an evaluator raised on its score.
    if record is None:
        status = UNREADABLE if folder.record_damage is not None else UNFINISHED
    else:
        status = attempt_status(attempt.status or "unknown", score.get("status"))
    return AttemptOutcome(
        pack=folder.pack or folder.name,
        agent=(folder.attempt.agent if folder.attempt else None) or folder.named("agent") or "unknown",
        directory=folder.path,
        status=status,
        elapsed_seconds=None if attempt.elapsed_seconds is None or record is None else float(attempt.elapsed_seconds),
        qualified_pass=folder.qualified is True,  # a damaged score.json's "yes" is no pass, nor one without a record
        error_free=folder.qualified is True and score.get("error_free") is True,
        field_accuracy=number_or_zero(score.get("field_accuracy")) if record is not None else 0.0,
        tool_calls=int(calls),
        token_usage=attempt.token_usage,
        reason="; ".join(folder.reasons()),
        cost_usd=attempt.cost_usd,
        model=(attempt.agent_details or {}).get("model"),
        pack_checksum=attempt.pack_checksum,
    )


def number_or_zero(value: Any) -> float:
    """A score's number as a float; 0 for what is none (a damaged file's ``"abc"``, ``NaN``)."""
    if finite_number(value):
        return float(value)
    return 0.0


def reselected(outcomes: list[AttemptOutcome]) -> list[AttemptOutcome]:
    """Run selection as the batch made it, read back from the folder names: ``<folder>-r<k>`` is
    the approved replacement of ``<folder>`` (k = 1) or of ``<folder>-r<k-1>``, which it replaced."""
    by_name = {o.directory.name: o for o in outcomes}
    replaces: dict[str, str] = {}
    for name in by_name:
        if (rerun := rerun_of(name)) is not None:
            first, k = rerun
            earlier = first if k == 1 else rerun_name(first, k - 1)
            if earlier in by_name:
                replaces[name] = earlier
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
