"""sandbox run: run an agent on packs offline, score every attempt, print the comparison."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from sandbox.cli.arguments import check_writable, mirror_roots_option, positive_seconds, whole_number
from sandbox.cli.exits import declare_exits


def register(subparsers) -> None:
    from sandbox.runner.agents import AGENT_KINDS
    from sandbox.runner.executors import EXECUTORS
    from sandbox.runner.record_mode import RecordMode

    p = subparsers.add_parser("run", help="run an agent on packs (all: every pack) and score the attempts")
    p.add_argument(
        "packs",
        nargs="*",
        default=["all"],
        metavar="PACK",
        help="pack ids, pack folders' paths (./my-pack), or 'all' (default)",
    )
    p.add_argument(
        "--agent",
        required=True,
        action=AgentAction,
        dest="agents",
        help=" | ".join(AGENT_KINDS.usages()) + ". Repeat it to compare agents in one batch.",
    )
    p.add_argument(
        "--with",
        action=WithAction,
        dest="agents",
        metavar="KEY=VALUE",
        help="an option of the --agent before it: " + ", ".join(sorted(WITH_KEYS)) + " (e.g. --agent "
        "openai:gpt-x --with base-url=http://127.0.0.1:8000/v1 --with label=gpt-x-local); the options "
        "below apply to every agent that takes them",
    )
    p.add_argument("--repeats", type=int, default=1, help="attempts of each pack by each agent")
    p.add_argument(
        "--concurrency", type=int, default=1, help="attempts at once (a local batch: at most the server's sessions)"
    )
    p.add_argument("--out", type=Path, default=Path("runs"), help="where attempt folders go (default runs/)")
    p.add_argument("--json", action="store_true", help="print the summary (and attempts) as JSON")
    p.add_argument(
        "--time-limit",
        type=positive_seconds,
        help="how long each agent may run (seconds; default its pack's limit); the time gate still judges "
        "the pack's limit, as the benchmark did",
    )
    p.add_argument(
        "--base-url",
        help="model agents: OpenAI-compatible or Anthropic Messages-compatible endpoint "
        "(default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL)",
    )
    p.add_argument("--cassette", type=Path, help="model agents: record/replay the model's HTTP exchanges here")
    p.add_argument(
        "--record-mode",
        choices=RecordMode.values(),
        default=RecordMode.ONCE.value,
        help=f"model agents: when the cassette records. {RecordMode.describe()}",
    )
    p.add_argument(
        "--max-turns", type=whole_number(1), default=80, help="model agents: most model turns per attempt (1 or more)"
    )
    p.add_argument(
        "--policy",
        choices=["enforce", "observe"],
        default="enforce",
        help="refuse (enforce, default) or only record (observe) calls outside the pack's allowed URLs",
    )
    p.add_argument(
        "--block-state-changes", action="store_true", help="prevent state-changing actions instead of recording them"
    )
    p.add_argument(
        "--executor",
        default="local",
        metavar="|".join(EXECUTORS.usages()),
        help="where attempts run: " + "; ".join(f"{e.usage}: {e.summary}" for e in EXECUTORS),
    )
    p.add_argument(
        "--retries",
        type=int,
        help="ray: re-run an attempt whose worker died up to this many times (default 0; "
        "an executor that does not retry refuses it)",
    )
    p.add_argument(
        "--mirrors",
        type=Path,
        action="append",
        help="a mirror root the attempts are served from instead of the bundled mirrors/ (repeatable; "
        "for a pack of your own with pages of its own)",
    )
    p.add_argument(
        "--screenshots",
        choices=["all", "failures", "none"],
        default="all",
        help="viewport PNG after every tool call in <attempt>/shots/: all (default), failures "
        "(kept only for attempts that did not qualify), none",
    )
    p.add_argument(
        "--playwright-trace",
        action="store_true",
        help="also save each session's Playwright trace as <attempt>/playwright-trace.zip "
        "(playwright show-trace; costs more attempt time than the screenshots)",
    )
    p.add_argument(
        "--junit",
        type=Path,
        metavar="FILE",
        help="also write JUnit XML here: one test case per attempt, failure message = why it did not qualify",
    )
    p.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="the cost boundary: a TOML file of USD per million input, cached input and output tokens per "
        'model ([models."NAME"] input=, cached_input=, output=; credits_per_dollar=); without it costs '
        "are unknown",
    )
    p.add_argument(
        "--faults",
        metavar="SPEC",
        help="inject faults, recorded in the trace: comma-separated KIND[:KEY=VALUE...], KIND one of "
        "session-refused[:p=P], session-dies[:after=N][:p=P], mirror-delay[:ms=M][:p=P], mirror-5xx[:p=P], "
        "browser-crash[:after=N][:p=P], model-429[:p=P], model-5xx[:p=P]",
    )
    p.add_argument("--faults-seed", type=int, default=0, help="the faults' seed: the same seed, the same faults")
    p.add_argument(
        "--replace-interrupted",
        type=int,
        default=0,
        metavar="N",
        help="run selection: re-run an attempt the infrastructure interrupted (an injected fault, a browser "
        "crash, a server fault, a dead Ray worker, a failing model endpoint) up to N times; genuine "
        "failures are never re-run",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=command)
    declare_exits(
        p,
        {
            0: "every attempt a qualified pass",
            1: "some attempt is not (agent errors and time-outs included)",
            2: "bad usage: unknown pack, agent or executor, --repeats/--concurrency below 1, "
            "an option the agent or executor does not take, an unreachable model endpoint, no Ray at the "
            "executor's address or no warm pool of that name",
            129: "stopped by SIGHUP (as 130)",
            130: "stopped by Ctrl-C (SIGINT): the attempts running were stopped and recorded (status stopped), the "
            "table, summary.json and the report cover what ended",
            143: "stopped by SIGTERM (as 130)",
        },
    )


WITH_KEYS = {"label", "base-url", "cassette", "record-mode", "max-turns"}


class AgentAction(argparse.Action):
    """``--agent SPEC``: one more agent of the batch, with no options of its own yet."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        agents = list(getattr(namespace, self.dest, None) or [])
        agents.append({"spec": values, "with": {}})
        setattr(namespace, self.dest, agents)


class WithAction(argparse.Action):
    """``--with KEY=VALUE``: an option of the ``--agent`` given last."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        agents = getattr(namespace, self.dest, None) or []
        key, sep, value = str(values).partition("=")
        if not agents:
            parser.error("--with must follow the --agent it belongs to")
        if not sep or key not in WITH_KEYS:
            parser.error(f"--with {values!r}: use KEY=VALUE with KEY one of {', '.join(sorted(WITH_KEYS))}")
        if key in agents[-1]["with"]:
            parser.error(f"--with {key} given twice for --agent {agents[-1]['spec']}")
        if key == "label" and not value.strip():
            parser.error(f"--with label= is empty: give --agent {agents[-1]['spec']} a name (--with label=NAME)")
        if key == "max-turns":
            try:
                whole_number(1)(value)
            except argparse.ArgumentTypeError as exc:
                parser.error(f"--with max-turns: {exc}")
        agents[-1]["with"][key] = value


def batch_agents(args: argparse.Namespace) -> list:
    """The batch's agents: each ``--agent`` with its ``--with`` options over the shared ones. A
    shared model option goes to every agent that takes it; with several agents, one cassette
    file cannot serve two of them."""
    from sandbox.runner.agents import AGENT_KINDS, AgentOptions, RecordMode, make_agent
    from sandbox.runner.batch import check_names
    from sandbox.runner.executors import BatchAgent

    for entry in args.agents:  # a bad spec is its kind's error, not what uses() makes of it ("unknown agent ''")
        make_agent(entry["spec"])
    several = len(args.agents) > 1
    cassette_users = sum("cassette" in AGENT_KINDS.uses(entry["spec"]) for entry in args.agents) if several else 0
    agents = []
    for entry in args.agents:
        spec, own = entry["spec"], entry["with"]
        uses = AGENT_KINDS.uses(spec) if several else None
        shared = {"base_url": args.base_url, "cassette": args.cassette}
        if uses is not None:  # several agents: the shared options go where they are used
            shared = {key: value for key, value in shared.items() if key in uses}
            if shared.get("cassette") is not None and cassette_users > 1:
                raise ValueError("--cassette with several model agents: give each its own (--with cassette=FILE)")
        max_turns = int(own.get("max-turns", args.max_turns))  # checked as it was read (WithAction)
        options = AgentOptions(
            base_url=own.get("base-url", shared.get("base_url")),
            cassette=Path(own["cassette"]) if "cassette" in own else shared.get("cassette"),
            record_mode=RecordMode(own.get("record-mode", args.record_mode)),
            max_turns=max_turns,
        )
        agents.append(BatchAgent(spec, options, own.get("label", "")))
    check_names(agents)
    cassettes = [agent.options.cassette.resolve() for agent in agents if agent.options.cassette is not None]
    if (twice := next((path for path in cassettes if cassettes.count(path) > 1), None)) is not None:
        raise ValueError(f"cassette {twice} is given to several agents: give each its own (--with cassette=FILE)")
    return agents


def unpriced(agents: list, outcomes: list, prices) -> list[str]:
    """The models the prices file does not price, with the agents that used them (their cost is
    unknown): a model agent's own model, and any model a ``cmd:`` agent reported."""
    from sandbox.runner.agents import AGENT_KINDS
    from sandbox.runner.batch import decided

    if prices is None:
        return []
    users: dict[str, set[str]] = {}
    for agent in agents:
        kind, _, model = AGENT_KINDS.unwrap(agent.spec).partition(":")
        if kind in ("openai", "anthropic"):
            users.setdefault(model, set()).add(decided(agent).name)  # as its attempts name it
    for outcome in outcomes:
        if outcome.model and outcome.token_usage:
            users.setdefault(outcome.model, set()).add(outcome.agent)
    return [
        f"the prices file has no price for model {model!r} ({', '.join(sorted(names))}): its cost is unknown"
        for model, names in sorted(users.items())
        if model not in prices.models
    ]


def command(args: argparse.Namespace) -> int:
    from sandbox.evaluation.packs import PackError
    from sandbox.runner.agents import make_agent
    from sandbox.runner.batch import (
        AgentUnavailable,
        BatchFolderUnavailable,
        BatchStopped,
        format_reasons,
        format_table,
        resolve_packs,
        run_batch,
        selected,
        summarise,
    )
    from sandbox.runner.cassettes import CassetteMismatch
    from sandbox.runner.compare import comparison, format_comparison
    from sandbox.runner.executors import ExecutorUnavailable, parse_executor
    from sandbox.runner.prices import DEFAULT_CREDITS_PER_DOLLAR, Prices
    from toolserver.errors import ChromiumUnavailable
    from toolserver.faults import parse_faults
    from toolserver.stopping import EXIT_STATUS, StopSignals

    if args.repeats < 1 or args.concurrency < 1 or (args.retries is not None and args.retries < 0):
        print("sandbox run: --repeats and --concurrency must be at least 1, --retries at least 0", file=sys.stderr)
        return 2
    try:
        executor = parse_executor(args.executor, {"retries": args.retries} if args.retries is not None else {})
        packs = resolve_packs(args.packs)
        agents = batch_agents(args)
        prices = Prices.load(args.prices) if args.prices else None
        faults = parse_faults(args.faults, args.faults_seed)
        if args.replace_interrupted < 0:
            raise ValueError("--replace-interrupted must be at least 0")
        mirror_roots = mirror_roots_option(args.mirrors)
        for agent in agents:
            make_agent(agent.spec, agent.options)  # an unknown kind, a bad value, an option it does not use
            check_cassettes(agent, packs, executor.kind.name, args.concurrency if args.repeats > 1 else 1)
        if args.junit is not None:
            check_writable(args.junit, "--junit")
    except (PackError, ValueError, CassetteMismatch) as exc:
        print(f"sandbox run: {exc}", file=sys.stderr)
        return 2
    signals: list[StopSignals] = []

    async def batch() -> list:
        signals.append(StopSignals())  # a signal stops the batch: see BatchStopped
        try:
            return await run_batch(
                packs,
                agents,
                repeats=args.repeats,
                concurrency=args.concurrency,
                out=args.out,
                progress=not args.no_progress and not args.json,
                time_limit=args.time_limit,
                policy=args.policy,
                block_state_changes=args.block_state_changes or None,
                screenshots=args.screenshots,
                playwright_trace=args.playwright_trace,
                executor=args.executor,
                retries=args.retries,
                prices=prices,
                faults=faults,
                replace_interrupted=args.replace_interrupted,
                mirror_roots=mirror_roots,
            )
        finally:
            signals[0].restore()

    stopped_by = None
    try:
        outcomes = asyncio.run(batch())
    except (AgentUnavailable, ExecutorUnavailable, BatchFolderUnavailable, ChromiumUnavailable) as exc:
        print(f"sandbox run: {exc}", file=sys.stderr)
        return 2
    except BatchStopped as stopped:
        stopped_by, outcomes = signals[0].by or "SIGINT", stopped.outcomes
        print(f"sandbox run: stopped by {stopped_by}: {stopped}", file=sys.stderr)
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:  # before the attempts started, or a second signal
        by = signals[0].by if signals else None
        if isinstance(exc, KeyboardInterrupt) and by:  # the first signal gave Ctrl-C back to Python
            said = "at once by a second signal: the batch folder may lack its summary"
        else:  # the browser starting, the agents' checks, ...
            said = f"by {by or 'SIGINT'} before its attempts"
        print(f"sandbox run: stopped {said}", file=sys.stderr)
        return EXIT_STATUS[by or "SIGINT"]
    rows = summarise(outcomes)
    attempts = [o.to_json() for o in outcomes]
    if args.json:
        rate = prices.credits_per_dollar if prices else DEFAULT_CREDITS_PER_DOLLAR
        print(json.dumps({"summary": rows, "comparison": comparison(attempts, rate), "attempts": attempts}, indent=2))
    else:
        print(format_table(rows))
        rate = prices.credits_per_dollar if prices else DEFAULT_CREDITS_PER_DOLLAR
        if len(agents) > 1 or prices or args.replace_interrupted:
            print("\n" + format_comparison(comparison(attempts, rate)))
        for note in unpriced(agents, outcomes, prices):
            print(f"note: {note}")
        reasons = format_reasons([o.to_json() for o in outcomes])
        if reasons:
            print(reasons)
        print(f"\nattempt folders: {outcomes[0].directory.parent if outcomes else args.out}")
    if outcomes:
        from sandbox.cli.commands.report import write_pages
        from sandbox.runner.junit import write_junit

        shown, folder = (sys.stderr if args.json else sys.stdout), outcomes[0].directory.parent
        try:
            print(f"report: {write_pages(folder, 'run')[0]}", file=shown)
            if args.junit:
                print(f"junit: {write_junit(folder, args.junit)}", file=shown)
        except OSError as exc:  # a full disk: the attempts are recorded; `sandbox report` writes these later
            print(f"sandbox run: cannot write the report ({exc}); `sandbox report` writes it later", file=sys.stderr)
    if stopped_by is not None:
        return EXIT_STATUS[stopped_by]
    counted = selected(outcomes)  # replacements in, the attempts they replaced out
    return 0 if counted and all(o.qualified_pass for o in counted) else 1


def check_cassettes(agent, packs: list, executor: str = "local", at_once: int = 1) -> None:
    """A model agent's cassette (a ``think:`` agent's too), before the batch: it serves one pack
    only (it holds one pack's conversation); one that replays (record mode ``none`` or ``once``)
    must have been recorded for that pack's task and this sandbox's tools (as the pytest plugin
    checks), and with ``none`` it must exist. One that records is recorded by one attempt at a time
    (``at_once``: how many of the agent's attempts may run at once): an executor other than
    ``local`` runs them in other processes, where they do not take turns."""
    from sandbox.runner.agents import AGENT_KINDS, MODEL_TOOL_FORMATS, RecordMode
    from sandbox.runner.cassettes import check_cassette, nothing_recorded
    from toolserver.formats import tool_definitions
    from toolserver.tools import default_registry

    kind = AGENT_KINDS.unwrap(agent.spec).split(":", 1)[0]  # a wrapper's (think:) model agent is checked too
    cassette, mode = agent.options.cassette, agent.options.record_mode
    if cassette is None or kind not in MODEL_TOOL_FORMATS:
        return
    if len(packs) > 1:  # the first pack's attempt would record it, and every other pack fail to replay it
        raise ValueError(
            f"--cassette {cassette} with {len(packs)} packs ({', '.join(pack.id for pack in packs)}): a cassette "
            f"holds one pack's conversation; run one pack per cassette (sandbox run PACK --cassette FILE)"
        )
    missing = nothing_recorded(cassette)  # a folder or a path under a file: refused in every mode
    if missing is not None and mode is RecordMode.NONE:
        raise ValueError(f"{missing} and the record mode is 'none': record one first")
    records = mode in (RecordMode.ALL, RecordMode.NEW_EPISODES) or (mode is RecordMode.ONCE and missing is not None)
    if records and executor != "local" and at_once > 1:  # each worker's turn is its own; each saves over the others
        raise ValueError(
            f"--executor {executor} with --cassette {cassette} recording (record mode {mode}) at --concurrency "
            f"{at_once}: its attempts would record it at once in separate worker processes, each over the others' "
            f"conversation; record it with --concurrency 1 (or --repeats 1), then replay it at any concurrency"
        )
    if missing is not None or mode is RecordMode.ALL:
        return
    tools = tool_definitions(MODEL_TOOL_FORMATS[kind], default_registry().schemas())
    for pack in packs:
        check_cassette(cassette, pack, tools)
