"""Why an attempt did not qualify, in words a person reads at a glance.

Works on the attempt folder's data (``attempt.json`` as an ``AttemptRecord`` or a dict,
``score.json`` as a dict, the agent's stderr text), so it serves a fresh attempt, ``sandbox
results`` on an old batch, the HTML report and JUnit alike. The most telling cause comes first:
an evaluator that raised (the attempt could not be judged: fix it and re-score); then the
agent's own error (with the last lines of its stderr) or the time limit, which stands alone,
since every other finding follows from it; otherwise gates (naming the call's seq), the output
contract, critical fields (expected vs got), else the score's first reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from sandbox.evaluation.scoring import short_value
from toolserver.floods import cut_text

STDERR_TAIL_LINES = 3
STDERR_LINE_CHARS = 400  # one line of an agent's stderr in its reason (a 2 MB line was printed whole)
ERROR_CHARS = 2000  # the agent's error in its reason (attempt.json keeps it whole)
MAX_LISTED = 2  # per kind of cause; the rest is counted ("+3 more")


class AgentEnding(Protocol):
    """How the agent ended, as ``AttemptRecord`` (``attempt.json``) tells it."""

    @property
    def status(self) -> str | None: ...

    @property
    def error(self) -> str | None: ...


def stderr_tail(text: str | None, lines: int = STDERR_TAIL_LINES) -> str:
    """The last ``lines`` lines of an agent's stderr, each cut at ``STDERR_LINE_CHARS``, on one line."""
    kept = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " | ".join(cut_text(line, STDERR_LINE_CHARS) for line in kept[-lines:])


def _listed(items: list[str], what: str) -> list[str]:
    extra = len(items) - MAX_LISTED
    if extra <= 0:
        return items
    return items[: MAX_LISTED - 1] + [f"{items[MAX_LISTED - 1]} (+{extra} more {what})"]


def evaluation_errors(score: Mapping[str, Any] | None) -> list[str]:
    """One line per evaluator that raised (``score.json`` ``errors``); empty for a judged score."""
    return [
        f"evaluation error: {e.get('evaluator', '?')} raised {e.get('exception', '?')}"
        + (f": {e['message']}" if e.get("message") else "")
        + " (traceback in score.json)"
        for e in (score or {}).get("errors") or []
    ]


def failure_reasons(
    attempt: AgentEnding | Mapping[str, Any] | None, score: Mapping[str, Any] | None, stderr: str | None = None
) -> list[str]:
    """The causes, most telling first; empty for a qualified pass."""
    if attempt is None or isinstance(attempt, Mapping):
        status, error = (attempt or {}).get("status"), (attempt or {}).get("error")
    else:
        status, error = attempt.status, attempt.error
    unjudged = _listed(evaluation_errors(score), "evaluation errors")
    reasons = []
    if status == "timeout":
        reasons.append(f"time limit: {error or 'stopped at the time limit'}")
    elif status not in (None, "completed"):
        tail = stderr_tail(stderr)
        said = cut_text(str(error), ERROR_CHARS) if error else "no message"
        reasons.append(f"agent {status}: {said}" + (f"; stderr: {tail}" if tail else ""))
    if unjudged:  # no verdict to explain: the other evaluators' findings are in score.txt
        return unjudged + reasons
    if score is None:
        return reasons + ["no score.json: the attempt was not scored (run `sandbox score ATTEMPT_DIR`)"]
    if score.get("qualified_pass"):
        return reasons
    if reasons:  # the agent never finished: every finding of the score follows from that
        return reasons + ["the score's findings follow from it (see score.txt)"]
    gates = score.get("gates") or {}
    # a failure at a named call says more than a count over the whole run: those first, by seq
    failures = sorted(gates.get("failures", []), key=lambda f: (f.get("seq") is None, f.get("seq") or 0))
    reasons += _listed(
        [
            f"gate {f['gate']}" + (f" at seq {f['seq']}" if f.get("seq") is not None else "") + f": {f['message']}"
            for f in failures
        ],
        "gate failures",
    )
    contract = score.get("output_contract") or {}
    if not contract.get("ok", True):
        errors = contract.get("errors", [])
        first = f"{errors[0]['code']}: {errors[0]['message']}" if errors else "not met"
        reasons.append(f"output contract: {first}" + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""))
    reasons += _listed(
        [
            f"critical field {f['name']}: expected {short_value(f['expected'], 60)}, got {short_value(f['got'], 60)}"
            for f in score.get("fields", [])
            if f.get("critical") and not f.get("correct")
        ],
        "critical fields",
    )
    if not reasons:
        reasons += score.get("reasons", [])[:1] or ["not a qualified pass (score.json names no reason)"]
    return reasons
