"""Reading attempt and batch folders back, including folders written by older versions or by a
killed run: every file is optional; what is missing or unreadable is named in ``problems``,
never raised. One job per module:

    _attempt   AttemptFolder.load(path): one attempt (attempt.json as an ``AttemptRecord``,
               score.json, output.txt, trace.jsonl, agent.stderr.txt); is_attempt_folder(path);
               unopened(path): why an attempt folder cannot be listed (closed_folder(path):
               the system's word for any folder)
    _records   counted_field_damage(data, record): why attempt.json's record cannot be counted
               (read by ``sandbox.runner.attempt.read_attempt_record``, here too);
               score_problem(data): what makes score.json's data no score report
    _batch     batch_attempts(path): a batch folder's attempt folders, in name order
               (attempt_paths(path): their paths, none read); left_out_folders(path): those
               with attempt files under a name the runner never gives, or linked;
               resolve_batch(path): the batch a folder given to the readers names (ClosedFolder:
               one they cannot list or enter; refuse_closed(path) raises it)
    _outcome   outcome(folder, agents): the folder as an AttemptOutcome (for the summary table);
               named_agent(folder): the agent its own files name;
               reselected(outcomes): run selection read back from the folder names
    _summary   read_summary(batch_dir): summary.json, or the same data rebuilt from the folders
    _kinds     the JSON kinds the checks expect, and how a message names them
"""

from sandbox.runner.attempt import read_attempt_record
from sandbox.runner.folders._attempt import (
    ATTEMPT_MARKERS,
    AttemptFolder,
    closed_folder,
    is_attempt_folder,
    unopened,
)
from sandbox.runner.folders._batch import (
    ClosedFolder,
    attempt_paths,
    batch_attempts,
    left_out_folders,
    left_out_note,
    refuse_closed,
    resolve_batch,
    runner_named,
)
from sandbox.runner.folders._outcome import named_agent, number_or_zero, outcome, reselected
from sandbox.runner.folders._records import score_problem
from sandbox.runner.folders._summary import read_summary, summary_problem

__all__ = [
    "ATTEMPT_MARKERS",
    "AttemptFolder",
    "ClosedFolder",
    "attempt_paths",
    "closed_folder",
    "batch_attempts",
    "is_attempt_folder",
    "left_out_folders",
    "left_out_note",
    "number_or_zero",
    "named_agent",
    "outcome",
    "read_attempt_record",
    "read_summary",
    "refuse_closed",
    "reselected",
    "resolve_batch",
    "runner_named",
    "score_problem",
    "summary_problem",
    "unopened",
]
