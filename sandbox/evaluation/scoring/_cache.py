"""What scoring derives from a pack once (schema validator, evidence texts), kept per pack
object so a pack reused across attempts is scored quickly; the pack itself stays data."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from jsonschema import Draft202012Validator

from sandbox.evaluation.packs import Pack


@dataclass
class PackDerived:
    validator: Draft202012Validator | None = None
    haystacks: dict[str, tuple[str, ...]] = field(default_factory=dict)


_DERIVED: weakref.WeakKeyDictionary[Pack, PackDerived] = weakref.WeakKeyDictionary()


def derived(pack: Pack) -> PackDerived:
    found = _DERIVED.get(pack)
    if found is None:
        found = _DERIVED[pack] = PackDerived()
    return found
