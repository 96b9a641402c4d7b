"""An external agent process in any language.

It runs in the directory ``sandbox run`` was started from (so ``cmd:python3 agent.py`` finds
``agent.py`` there), gets SANDBOX_URL (the HTTP tool server), SANDBOX_RUN_ID, SANDBOX_MCP_URL
(the MCP streamable-HTTP endpoint bound to the same run), SANDBOX_PROMPT_FILE and
SANDBOX_ATTEMPT_DIR (its attempt folder, for files it wants kept, and ``usage.json``, where it
may report its model tokens for the cost boundary) in its environment, calls
``POST $SANDBOX_URL/runs/$SANDBOX_RUN_ID/tools/<name>`` or the MCP tools, and prints its final
answer on stdout. It is killed (with its process group) at the pack's time limit; what it leaves
running in its group when it exits is killed then. What an agent killed at its time limit had
printed is kept in ``agent.stdout.txt`` (not its answer: it is not scored).

Its answer is read up to ``MAX_OUTPUT_BYTES`` (16 MiB): an agent that prints more ends as an
error, its first 16 MiB kept as its output. ``agent.stderr.txt`` keeps the last
``MAX_STDERR_BYTES`` (16 MiB) of its standard error once it ended (while it runs, all of it is
on disk). A ``sandbox run`` that ends at once (a second signal, SIGKILL, out of memory) takes its
agents' process groups with it: a small guard process (``GUARD``) kills the groups of the agents
still running when ``sandbox run`` is gone (an agent whose start had not yet been told it, in the
moment ``sandbox run`` died, is missed). A process an agent moved out of its group (``setsid``) is
not in it, and is not killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from sandbox.runner.agents._kinds import AgentOptions, agent_kind
from sandbox.runner.task import AgentResult, AgentTask


class CommandAgent:
    def __init__(self, command: str, workdir: str | os.PathLike[str] = ".") -> None:
        self.command = command
        self.name = f"cmd:{command}"
        # where `sandbox run` was started (its options carry it to a Ray worker): relative paths mean this
        self.cwd = os.path.abspath(workdir)

    async def run(self, task: AgentTask) -> AgentResult:
        if not task.sandbox_url:
            return AgentResult(output="", status="error", error="cmd agents need the HTTP tool server (no sandbox_url)")
        assert task.workdir is not None, "run_attempt always gives the agent its attempt folder"
        prompt_file = task.workdir.resolve() / "prompt.txt"
        env = {
            **os.environ,
            "SANDBOX_URL": task.sandbox_url,
            "SANDBOX_RUN_ID": task.run_id or "",
            "SANDBOX_MCP_URL": f"{task.sandbox_url.rstrip('/')}/mcp?run={task.run_id}",
            "SANDBOX_PROMPT_FILE": str(prompt_file),
            "SANDBOX_ATTEMPT_DIR": str(task.workdir.resolve()),
            "SANDBOX_SITE_KEY": task.site_key,
            "SANDBOX_TIME_LIMIT": f"{task.time_limit_seconds:g}",
        }
        # Its output goes to files, not pipes: a process it started that keeps them open (one that
        # left its process group with setsid, a child in the background) must not keep the attempt
        # waiting for their end, past the agent's exit or its time limit.
        with tempfile.TemporaryFile() as stdout_file, (task.workdir / "agent.stderr.txt").open("wb") as stderr_file:
            spawning = asyncio.ensure_future(
                asyncio.create_subprocess_shell(
                    self.command,
                    stdout=stdout_file,
                    stderr=stderr_file,
                    stdin=asyncio.subprocess.DEVNULL,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,
                )
            )
            try:
                process = await asyncio.shield(spawning)
                tell_guard(f"+{process.pid}")
                await process.wait()
            except asyncio.CancelledError:
                # The time limit or a stop of the batch: end the whole process group, that of a
                # process still starting too (it runs before its output is connected).
                await asyncio.wait([spawning])
                if not spawning.cancelled() and spawning.exception() is None:
                    end_group(spawning.result().pid)
                    await spawning.result().wait()
                keep_stderr_tail(task.workdir / "agent.stderr.txt")
                keep_cut_off_stdout(stdout_file, task.workdir / CUT_OFF_STDOUT)
                if task.workdir is not None:  # what it reported using up to then still costs
                    task.spent.token_usage, facts = reported_usage(task.workdir / USAGE_FILE)
                    task.spent.model, task.spent.details = facts.get("model"), facts  # a usage_problem too
                raise
            end_group(process.pid)  # what it left running in its group ends with it
            stdout_file.seek(0)
            stdout = stdout_file.read(MAX_OUTPUT_BYTES + 1)  # never all of it: an agent may print gigabytes
        keep_stderr_tail(task.workdir / "agent.stderr.txt")
        too_long = len(stdout) > MAX_OUTPUT_BYTES
        output = stdout[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")
        del stdout
        usage, facts = reported_usage(task.workdir / USAGE_FILE)
        details = {"exit_code": process.returncode, **facts}
        if too_long:
            error = f"agent output over {MAX_OUTPUT_BYTES} bytes: its first {MAX_OUTPUT_BYTES} are kept"
        elif process.returncode != 0:
            error = f"agent exited with status {process.returncode} (run in {self.cwd})"
        else:
            return AgentResult(output=output, token_usage=usage, details=details)
        return AgentResult(output=output, status="error", error=error, token_usage=usage, details=details)


def end_group(pid: int) -> None:
    """Kill the process group ``pid`` leads (its own session: ``start_new_session``). A process
    that left it (``setsid``) is not in it, and no longer holds up the attempt."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if _guard is not None:
        tell_guard(f"-{pid}")


MAX_OUTPUT_BYTES = 16 * 1024 * 1024  # of an agent's stdout, read as its answer
CUT_OFF_STDOUT = "agent.stdout.txt"  # what an agent cut off had printed: not an answer


def keep_cut_off_stdout(stdout_file: IO[bytes], path: Path) -> None:
    """What an agent ended at its time limit (or by a stop) had printed, its first
    ``MAX_OUTPUT_BYTES``, kept in ``path`` for the reader (never scored); nothing when it printed
    nothing. Before, it was dropped with the temporary file."""
    stdout_file.seek(0)
    printed = stdout_file.read(MAX_OUTPUT_BYTES)
    if printed:
        with contextlib.suppress(OSError):  # a full disk: the timeout is still recorded
            path.write_bytes(printed)


MAX_STDERR_BYTES = 16 * 1024 * 1024  # of its stderr, kept in agent.stderr.txt (its end)

# The guard: a process of its own session, told each agent's process group as it starts ("+PID")
# and as it is ended ("-PID") on a pipe from this process; when the pipe closes (this process has
# ended, whatever the way: a second SIGTERM, SIGKILL, the OOM killer) it kills the groups still told.
GUARD = """
import os, signal, sys
groups = set()
for line in sys.stdin:
    (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""
_guard: subprocess.Popen | None = None


def tell_guard(line: str) -> None:
    """Tell the guard a process group (started once, by the first ``cmd:`` agent of this process)."""
    global _guard
    if _guard is None or _guard.poll() is not None:
        try:
            _guard = subprocess.Popen(
                [sys.executable, "-c", GUARD],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not in the terminal's Ctrl-C, nor in a kill of this process's group
                close_fds=True,
            )
        except OSError:  # no process or file to spare: raised, it left the agent just started unended
            _guard = None
            return  # the agents' own ends still kill their groups
    assert _guard.stdin is not None
    with contextlib.suppress(OSError):  # a guard gone: the agents' own ends still kill their groups
        _guard.stdin.write(f"{line}\n".encode())
        _guard.stdin.flush()


def keep_stderr_tail(path, limit: int = MAX_STDERR_BYTES) -> None:
    """Cut ``agent.stderr.txt`` to its last ``limit`` bytes, with a line before them saying so."""
    with contextlib.suppress(OSError), open(path, "r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size <= limit:
            return
        handle.seek(size - limit)
        tail = handle.read(limit)
        handle.seek(0)
        handle.write(f"[sandbox: the first {size - limit} bytes of {size} were cut]\n".encode() + tail)
        handle.truncate()


MAX_USAGE_BYTES = 1024 * 1024  # of usage.json: a few counts and a model name
USAGE_FILE = "usage.json"  # in the attempt folder: {"model", "input_tokens", "cached_input_tokens", "output_tokens"}
# (and "cache_creation_input_tokens" for input written to a cache, priced at cache_write_input)


def reported_usage(path) -> tuple[dict[str, int] | None, dict[str, str]]:
    """The tokens a ``cmd:`` agent reported in ``usage.json``, and facts for the attempt's details:
    its ``model``, or the ``usage_problem`` when it wrote something else (its cost is then unknown,
    never zero, and the attempt says why)."""
    try:
        # not blocking: a FIFO the agent left there would hold the event loop, and every attempt
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None, {"usage_problem": f"{USAGE_FILE} is not a regular file: not read"}
            raw = handle.read(MAX_USAGE_BYTES + 1)  # never all of it: an agent may write gigabytes
        if len(raw) > MAX_USAGE_BYTES:
            return None, {"usage_problem": f"{USAGE_FILE} is over {MAX_USAGE_BYTES} bytes: not read"}
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        return None, {}
    except RecursionError:
        return None, {"usage_problem": f"{USAGE_FILE} is unreadable: nested too deep"}
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None, {"usage_problem": f"{USAGE_FILE} is unreadable: {(str(exc).splitlines() or [''])[0][:200]}"}
    if not isinstance(data, dict):
        return None, {"usage_problem": f"{USAGE_FILE} is not a JSON object"}
    # Anthropic's own name for the cached input is taken too: it was dropped unsaid, its tokens never priced
    keys = (
        "input_tokens",
        "cached_input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    )
    counts = {key: data[key] for key in keys if type(data.get(key)) is int and data[key] >= 0}  # not a bool
    facts = {"model": data["model"]} if isinstance(data.get("model"), str) else {}
    bad = [key for key in keys if key in data and key not in counts]
    if "cached_input_tokens" in counts and "cache_read_input_tokens" in counts:  # one count, two names
        bad.append("cached_input_tokens and cache_read_input_tokens both given")
    if bad or "input_tokens" not in counts:
        said = ", ".join(bad) if bad else "input_tokens missing"
        facts["usage_problem"] = f"{USAGE_FILE}: {said} (token counts are whole numbers of at least 0)"
    return (counts if "input_tokens" in counts and not bad else None), facts


@agent_kind("cmd", usage='cmd:"COMMAND"', uses=("workdir",))
def create(command: str, options: AgentOptions) -> CommandAgent:
    return CommandAgent(command, options.workdir)
