"""Injected faults, so that an agent's error handling and the run-selection rule can be tried
offline: seeded, reproducible, and recorded in the trace as ``fault_injected`` events, so gates,
scoring, replay and the report can tell an injected fault from a real one.

    --faults SPEC        comma-separated faults, each KIND[:KEY=VALUE...]
    --faults-seed N      the seed (default 0): the same seed gives the same faults

Kinds:

    session-refused[:p=P]        browser_start_session answers provider_unavailable (probability P, default 1)
    session-dies[:after=N][:p=P] after the run's N-th call (default 2) its session ends under the agent
                                 (later calls answer no_session), as a provider dropping a session would;
                                 P is the share of runs that get it
    mirror-delay[:ms=M][:p=P]    a mirrored response is answered M ms late (default 1000)
    mirror-5xx[:p=P]             a mirrored document is answered 503 instead (the page shows an error)
    browser-crash[:after=N][:p=P] after the run's N-th call (default 2) Chromium crashes (CDP Browser.crash):
                                 every session on it gets browser_crashed, and the next session a new
                                 browser. It is the server's one browser: use it with one run at a time
    model-429[:p=P], model-5xx[:p=P]  a model agent's request to its endpoint is answered 429 or 503
                                 (each request, retries included, draws anew): for openai: and anthropic:

P is a share between 0 and 1, M a number of milliseconds of 0 or more, N a whole number of calls
of 0 or more: anything else (nan, inf, -5, after=2.5) is a ``FaultSpecError``.

Each run draws from its own generator, seeded with the seed and the run's fault key (the runner
gives each attempt one from its pack, agent and number), so concurrency does not change who gets
which fault.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

KINDS: dict[str, dict[str, float]] = {  # kind -> its parameters and their defaults
    "session-refused": {"p": 1.0},
    "session-dies": {"after": 2, "p": 1.0},
    "mirror-delay": {"ms": 1000, "p": 1.0},
    "mirror-5xx": {"p": 1.0},
    "browser-crash": {"after": 2, "p": 1.0},
    "model-429": {"p": 1.0},
    "model-5xx": {"p": 1.0},
}


class FaultSpecError(ValueError):
    """A fault spec that does not parse; the message shows the grammar."""


@dataclass(frozen=True)
class Fault:
    kind: str
    params: dict[str, float]

    @property
    def name(self) -> str:
        return self.kind + "".join(f":{k}={v:g}" for k, v in self.params.items())


@dataclass(frozen=True)
class FaultPlan:
    faults: tuple[Fault, ...]
    seed: int = 0

    @property
    def label(self) -> str:
        """The plan as ``--faults`` reads it, with its seed, the same for the same plan: faults in the
        order of their kinds (each run draws by kind), values exact: ``mirror-5xx:p=1 (seed 0)``."""
        faults = (fault.kind + "".join(f":{k}={exact(v)}" for k, v in fault.params.items()) for fault in self.faults)
        return ",".join(sorted(faults)) + f" (seed {self.seed})"

    def of(self, kind: str) -> Fault | None:
        return next((fault for fault in self.faults if fault.kind == kind), None)

    def for_run(self, key: str) -> RunFaults:
        return RunFaults(self, random.Random(f"{self.seed}:{key}"))


@dataclass
class RunFaults:
    """One run's draws: each fault is decided once per occasion, from the run's own generator."""

    plan: FaultPlan
    rng: random.Random
    decided: set[str] = field(default_factory=set)

    def draw(self, kind: str) -> Fault | None:
        """The fault of ``kind`` if it fires on this occasion."""
        fault = self.plan.of(kind)
        if fault is None or self.rng.random() >= fault.params["p"]:
            return None
        return fault

    def once(self, kind: str) -> Fault | None:
        """For a fault a run has at most once: decided at its first occasion (with probability
        ``p``: the share of runs that get it), and given then or never."""
        if kind in self.decided:
            return None
        self.decided.add(kind)
        return self.draw(kind)


def exact(value: float) -> str:
    """A parameter as short as it reads back the same (``1``, ``0.5``, ``0.12345671``)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def parse_faults(spec: str | None, seed: int = 0) -> FaultPlan | None:
    """``session-dies:after=3,mirror-delay:ms=500:p=0.2`` -> a plan; None for no spec."""
    if not spec:
        return None
    faults = []
    for item in spec.split(","):
        kind, *pairs = item.strip().split(":")
        if kind not in KINDS:
            raise FaultSpecError(f"unknown fault {kind!r}: use one of {', '.join(KINDS)} (see --help)")
        params = dict(KINDS[kind])
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or key not in params:
                raise FaultSpecError(f"fault {kind}: {pair!r} is not one of {', '.join(f'{k}=N' for k in params)}")
            try:
                params[key] = float(value)
            except ValueError:
                raise FaultSpecError(f"fault {kind}: {key}={value!r} is not a number") from None
        check_params(kind, params)
        faults.append(Fault(kind, params))
    return FaultPlan(tuple(faults), seed)


def check_params(kind: str, params: dict[str, float]) -> None:
    """A ``FaultSpecError`` for a value no fault can mean: a share outside 0..1, a delay that is
    negative or not finite (``asyncio.sleep(nan)`` never returns), a call count that is not a
    whole number of 0 or more (``after=nan`` would fire at every call)."""
    p, ms, after = params["p"], params.get("ms"), params.get("after")
    if not 0 <= p <= 1:
        raise FaultSpecError(f"fault {kind}: p must be between 0 and 1, not {p:g}")
    if ms is not None and not 0 <= ms < math.inf:
        raise FaultSpecError(f"fault {kind}: ms must be a number of milliseconds of 0 or more, not {ms:g}")
    if after is not None and not (0 <= after < math.inf and after == int(after)):
        raise FaultSpecError(f"fault {kind}: after must be a whole number of calls, 0 or more, not {after:g}")
