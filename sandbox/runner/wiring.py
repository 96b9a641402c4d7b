"""What the application hands the tool server, which never imports packs, scoring or the
project's folders itself: the bundled mirror roots, the pack policies and a run's task and
score. Every entry point (the CLI, the runner, the pytest plugin, Inspect AI) builds its
``Sandbox`` here."""

from __future__ import annotations

from typing import Any

from sandbox.evaluation.packs import Pack, load_pack, pack_policy
from sandbox.evaluation.scoring import score_attempt
from sandbox.paths import MIRRORS_DIR
from toolserver.api import Sandbox
from toolserver.config import ServerConfig
from toolserver.contract.policy import Policy, PolicyNotFound
from toolserver.contract.trace import parse_trace


def app_config(**fields: Any) -> ServerConfig:
    """The tool server's configuration with the bundled mirrors (``mirror_roots`` given wins)."""
    return ServerConfig(**{"mirror_roots": (MIRRORS_DIR,), **fields})


def app_sandbox(config: ServerConfig | None = None, *, pack: Pack | None = None) -> Sandbox:
    """A ``Sandbox`` wired to the packs: runs created by pack id get the pack's allow-list, and
    ``/task`` and ``/answer`` work. ``pack``: a pack loaded from a folder of the user's own, known
    to this sandbox by its id beside the bundled ones (and before them)."""
    tasks = PackTasks(pack)
    return Sandbox(config or app_config(), policies=tasks.policy, tasks=tasks)


class PackTasks:
    """``toolserver.api.TaskProvider`` over the packs: the prompt, allowed URLs and time limit,
    and the reviewed scoring pack's verdict with the gates. ``extras``: packs loaded from folders
    of the user's own, found by their ids before the bundled packs."""

    def __init__(self, *extras: Pack | None) -> None:
        self.extras = {pack.card.pack_id: pack for pack in extras if pack is not None}

    def add(self, pack: Pack) -> None:
        """Know ``pack`` by its id from now on, before a bundled pack of that id (a batch's packs:
        one of the user's own, or a changed copy of a bundled one)."""
        self.extras[pack.card.pack_id] = pack

    def load(self, pack: str) -> Pack:
        return self.extras.get(pack) or load_pack(pack)

    def policy(self, pack: str) -> Policy:
        """The tool server's policy resolver: an extra pack's, else ``pack_policy`` (ids only)."""
        extra = self.extras.get(pack)
        if extra is not None:
            return extra.policy()
        try:
            return pack_policy(pack)
        except PolicyNotFound as unknown:  # the packs of one's own are known too: said with the others
            if not self.extras:
                raise
            raise PolicyNotFound(f"{unknown}; and from folders: {', '.join(sorted(self.extras))}") from None

    def task(self, pack: str, site_key: str) -> dict:
        loaded = self.load(pack)
        return {
            "prompt": loaded.render_prompt(site_key),
            "allowed_urls": list(loaded.policy().allowed_urls or ()),
            "time_limit_seconds": loaded.card.time_limit_seconds,
        }

    def score(self, pack: str, output: str, trace_text: str, elapsed_seconds: float, site_key: str | None) -> dict:
        report = score_attempt(self.load(pack), output, parse_trace(trace_text), elapsed_seconds, site_key=site_key)
        return report.model_dump(mode="json")
