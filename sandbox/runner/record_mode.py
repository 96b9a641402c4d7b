"""The record modes of a model agent's cassette (vcrpy's, as ``vcr.record_mode``): the one list
``sandbox run --record-mode``, the pytest plugin's ``--sandbox-record-mode`` and
``AgentOptions.record_mode`` take their values and help texts from.

Imports nothing: the pytest plugin reads it at start-up, before any test asks for a sandbox.
"""

from __future__ import annotations

from enum import StrEnum


class RecordMode(StrEnum):
    """When a cassette records the model's HTTP exchanges and when it replays them."""

    ONCE = "once"
    NONE = "none"
    ALL = "all"
    NEW_EPISODES = "new_episodes"

    @property
    def meaning(self) -> str:
        return MEANINGS[self]

    @classmethod
    def values(cls) -> list[str]:
        """What users type, in the order help texts list them."""
        return [mode.value for mode in cls]

    @classmethod
    def describe(cls) -> str:
        """Every mode and what it does, for help texts."""
        return "; ".join(f"{mode.value}: {mode.meaning}" for mode in cls)


MEANINGS = {
    RecordMode.ONCE: "record when the cassette does not exist, replay when it does",
    RecordMode.NONE: "replay only (a request the cassette does not hold is an error)",
    RecordMode.ALL: "re-record from scratch",
    RecordMode.NEW_EPISODES: "replay what the cassette holds, record the requests it does not",
}
