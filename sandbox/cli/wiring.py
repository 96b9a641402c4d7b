"""What the CLI hands the tool server so that it never imports packs or scoring itself: the
pack policies (``sandbox.evaluation.packs.pack_policy``) and a run's task and score."""

from __future__ import annotations

import sys

from sandbox.core.policy import PolicyNotFound
from sandbox.core.trace import parse_trace
from sandbox.evaluation.packs import load_pack, pack_policy
from sandbox.evaluation.scoring import score_attempt


def pack_is_usable(command: str, pack: str | None) -> bool:
    """False (after saying why on stderr) when ``pack`` is given and cannot be used."""
    if pack is None:
        return True
    try:
        pack_policy(pack)
    except PolicyNotFound as exc:
        print(f"sandbox {command}: {exc}", file=sys.stderr)
        return False
    return True


class PackTasks:
    """``toolserver.api.TaskProvider`` over the packs: the prompt, allowed URLs and time limit,
    and the reviewed scoring pack's verdict with the gates."""

    def task(self, pack: str, site_key: str) -> dict:
        loaded = load_pack(pack)
        return {
            "prompt": loaded.render_prompt(site_key),
            "allowed_urls": list(loaded.policy().allowed_urls or ()),
            "time_limit_seconds": loaded.card.time_limit_seconds,
        }

    def score(self, pack: str, output: str, trace_text: str, elapsed_seconds: float, site_key: str | None) -> dict:
        report = score_attempt(load_pack(pack), output, parse_trace(trace_text), elapsed_seconds, site_key=site_key)
        return report.model_dump(mode="json")
