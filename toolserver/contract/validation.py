"""Pydantic's validation errors in one line: each field and what is wrong with it (pydantic's own
text spreads them over several lines, with the input and a link for each)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


def fields_said(exc: ValidationError, *, whole: str, limit: int = 5) -> str:
    """``field: what is wrong`` for the first ``limit`` errors, joined by ``; ``; ``whole`` names
    an error of the whole value (no field)."""
    said = [f"{'.'.join(map(str, e['loc'])) or whole}: {message(e)}" for e in exc.errors(include_url=False)[:limit]]
    more = f" (and {exc.error_count() - limit} more)" if exc.error_count() > limit else ""
    return "; ".join(said) + more


def message(error: Any) -> str:
    """An error's message; a rule's own (a validator's ``ValueError``) without pydantic's "Value error, "."""
    return str(error["ctx"]["error"]) if error["type"] == "value_error" else str(error["msg"])
