"""Run selection, as the benchmark selected runs: an attempt that did not complete because the
infrastructure failed it (an injected fault that fails it, a browser crash, a fault of the sandbox server, a
dead Ray worker, the model endpoint refusing or failing after the agent's own retries, its batch
stopped under it) is an *interruption*, and may be replaced; a wrong answer, a failed gate, an
agent crashing on its own input or a time-out while working is a *genuine failure*, and never is.
Broad on purpose: any such event in an attempt's trace interrupts it, even when the agent went on
after it (the trace cannot tell whether its answer came from what the event lost; docs/guide/agents.md
says so). Decided without the attempt's score: replacing only the interrupted attempts that failed
would raise the pass rate ("regardless of replacement score": an interrupted pass is re-run too).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sandbox.runner.attempt import STOPPED, UNFINISHED, UNRUN, AttemptOutcome
from sandbox.runner.files import folder_file
from toolserver.contract.trace import Trace, parse_trace

# The model SDKs' words for an endpoint that could not be reached or failed (after their retries).
ENDPOINT_FAILURE = re.compile(
    r"APIConnectionError|APITimeoutError|RateLimitError|InternalServerError|ServiceUnavailable|"
    r"Connection refused|\b(?:status(?: code)?|Error code:?) ?(?:429|5\d\d)\b",
    re.IGNORECASE,
)

# The injected faults that fail an attempt as the infrastructure would: its session refused, ended
# or crashed, a page answered 503. A late response (mirror-delay) interrupts nothing; a model
# endpoint's injected 429 or 5xx interrupts only when the agent failed on it (ENDPOINT_FAILURE).
INTERRUPTING_FAULTS = frozenset({"session-refused", "session-dies", "browser-crash", "mirror-5xx"})


def interruption(outcome: AttemptOutcome) -> str:
    """Why the infrastructure interrupted this attempt, or "" (it completed, or failed on its own),
    whatever its score."""
    if outcome.status == STOPPED:
        return "the batch was stopped while it ran"
    if outcome.status == UNFINISHED:
        return "the batch ended before the attempt did (it has no attempt.json)"
    folder = Path(outcome.directory)
    trace = readable_trace(folder)
    if trace is not None:
        for call in trace.calls:
            if call.error is not None and call.error.type == "server_at_capacity":
                return f"the server was at capacity: {call.error.message[:200]}"
        for event in trace.events:
            if event.kind == "fault_injected" and str(event.data["fault"]).split(":")[0] in INTERRUPTING_FAULTS:
                return f"injected fault {event.data['fault']}: {event.data['detail']}"
            if event.kind == "browser_crashed":
                return "the browser crashed under the session"
            if event.kind == "server_fault":
                return f"sandbox server fault: {str(event.data.get('error', ''))[:200]}"
    # Decided on attempt.json's error, live and read back alike (the reason line read back says
    # "agent crashed: ..." before it); the outcome's reason only when the folder has no record.
    recorded = recorded_error(folder)
    error = recorded if recorded is not None else outcome.reason
    if "ray worker died" in error:
        return "the Ray worker died"
    if error.startswith(UNRUN):
        return error
    error = recorded or ""
    if outcome.status in ("error", "crashed") and ENDPOINT_FAILURE.search(error):
        return f"the model endpoint failed: {error[:200]}"
    return ""


def recorded_error(folder: Path) -> str | None:
    """The error in the folder's attempt.json ("" when it gives none); None when there is no
    record to read (not a file inside the folder, not UTF-8, not a JSON object: its reason says so)."""
    record, _ = folder_file(folder, "attempt.json")
    try:
        data = json.loads(record.read_text(encoding="utf-8")) if record is not None else None
    except (OSError, ValueError, RecursionError):  # RecursionError: nested deeper than json reads
        return None
    return str(data.get("error") or "") if isinstance(data, dict) else None


def readable_trace(folder: Path) -> Trace | None:
    """The attempt's trace, if it is a file inside its folder that can be read (else its reason says why):
    `sandbox results` stopped with a UnicodeDecodeError on a trace with a byte that is not UTF-8."""
    trace_file, _ = folder_file(folder, "trace.jsonl")
    try:  # a byte that is not UTF-8 (a damaged file) spoils its line only, as AttemptFolder reads it
        return parse_trace(trace_file.read_text(encoding="utf-8", errors="replace")) if trace_file else None
    except OSError:
        return None
