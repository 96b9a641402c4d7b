"""From pack ids to packs: every pack of a folder (``list_packs``) and the policy resolver the
tool server is handed (``pack_policy``), which takes an id and never a path."""

from __future__ import annotations

from pathlib import Path

from sandbox.evaluation.packs._errors import PackError
from sandbox.evaluation.packs._loader import load_pack, pack_dirs
from sandbox.evaluation.packs._models import PACK_ID
from sandbox.evaluation.packs._pack import Pack
from sandbox.paths import PACKS_DIR
from toolserver.contract.policy import Policy, PolicyNotFound

__all__ = ["PACK_ID", "list_packs", "pack_policy"]


def list_packs(packs_dir: Path | None = None) -> list[Pack]:
    """All packs in ``packs_dir`` (default ``packs/``), sorted by id."""
    return [load_pack(p) for p in pack_dirs(packs_dir or PACKS_DIR)]


def pack_policy(pack_id: str) -> Policy:
    """The policy resolver the CLI hands the tool server: a pack id (never a path) -> its policy.
    Every unknown or unusable pack gets the same message, naming the known ids."""
    if isinstance(pack_id, str) and PACK_ID.fullmatch(pack_id) and (PACKS_DIR / pack_id / "card.json").is_file():
        try:
            return load_pack(pack_id).policy()
        except PackError as exc:
            raise PolicyNotFound(f"pack {pack_id!r} cannot be used: {exc}") from exc
    known = ", ".join(p.name for p in pack_dirs(PACKS_DIR))
    raise PolicyNotFound(f"unknown pack {pack_id!r}; known packs: {known}")
