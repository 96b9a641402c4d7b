"""The CLI's reading of a ``--pack`` option; the wiring itself is ``sandbox.runner.wiring``."""

from __future__ import annotations

import sys
from pathlib import Path

from sandbox.evaluation.packs import PACK_ID, Pack, PackError, load_pack, pack_policy
from toolserver.contract.policy import PolicyNotFound


class UnusablePack(Exception):
    """A ``--pack`` the command cannot use (the reason is already on stderr)."""


def pack_option(command: str, pack: str | None) -> Pack | None:
    """The pack ``--pack`` names, by id or by a pack folder's path, loaded whole (None without
    the option). Raises ``UnusablePack`` after saying why on stderr."""
    if pack is None:
        return None
    try:
        return load_pack(pack)
    except PackError as exc:
        said = str(exc)
        if PACK_ID.fullmatch(pack) and not Path(pack).is_dir():
            try:
                pack_policy(pack)
            except PolicyNotFound as unknown:  # an unknown id is said as the server says it
                said = str(unknown)
        print(f"sandbox {command}: {said}", file=sys.stderr)
        raise UnusablePack(said) from None
