"""The CLI's check of a ``--pack`` option; the wiring itself is ``sandbox.runner.wiring``."""

from __future__ import annotations

import sys

from sandbox.evaluation.packs import pack_policy
from toolserver.contract.policy import PolicyNotFound


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
