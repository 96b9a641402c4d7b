"""Named runs: what a run name may be, and when a client asking for a name may join the live
run of that name (a client that opens a connection per tool call keeps one run by naming it)."""

from __future__ import annotations

import re

from toolserver.contract.policy import PolicyMode
from toolserver.errors import InvalidRunName
from toolserver.run import Run

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_run_name(name: object) -> None:
    if not isinstance(name, str) or not RUN_NAME.fullmatch(name):
        raise InvalidRunName(
            f"run name {name!r}: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )


def joined_differently(
    run: Run, pack: str | None, site_key: str | None, mode: PolicyMode | None, block: bool | None
) -> str | None:
    """How a named run differs from what a joiner asked for (what the joiner leaves out is not
    asked), or None."""
    if run.policy.pack != pack:
        return f"pack {pack_said(run.policy.pack)}, not {pack_said(pack)}"
    if site_key is not None and run.trace.header.get("site_key") != site_key:
        return f"another site key than {site_key!r}"
    if mode is not None and run.policy.mode != mode:
        return f"policy {run.policy.mode!r}, not {mode!r}"
    if block is not None and run.policy.block_state_changes != block:
        return f"block_state_changes {str(run.policy.block_state_changes).lower()}, not {str(block).lower()}"
    return None


def pack_said(pack: str | None) -> str:
    return "no pack" if pack is None else repr(pack)
