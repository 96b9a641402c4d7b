"""Evaluators that raise. A gate, a field rule, an evidence check or the output contract that
raises does not fail its attempt silently, nor stop the scoring or the batch: ``evaluating`` is
the one place that catches what an evaluator raised. It records an ``EvaluatorError`` (which
evaluator, the exception, the traceback) and the attempt's score says ``status: "error"``, apart
from a genuine ``fail`` (WebArena-Verified's ``EvalStatus.ERROR`` beside ``FAILURE``).

Pure module: no Playwright, no aiohttp.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel, ConfigDict, Field


class EvaluatorError(BaseModel):
    """An evaluator raised instead of judging: its attempt cannot be judged until it is fixed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    evaluator: str = Field(
        description='Which evaluator raised: "gate <name>", "rule <kind> on field <name>", '
        '"evidence of field <name>" or "output contract".'
    )
    exception: str = Field(description="The exception's class, e.g. ZeroDivisionError.")
    message: str = Field(description="The exception's message (may be empty).")
    traceback: str = Field(description="The formatted traceback, the raising line last.")

    @classmethod
    def of(cls, evaluator: str, exc: BaseException) -> EvaluatorError:
        return cls(
            evaluator=evaluator,
            exception=type(exc).__name__,
            message=str(exc),
            traceback="".join(traceback.format_exception(exc)),
        )

    def describe(self) -> str:
        """One line: the evaluator and what it raised."""
        return f"{self.evaluator} raised {self.exception}" + (f": {self.message}" if self.message else "")


@contextmanager
def evaluating(evaluator: str, errors: list[EvaluatorError] | None) -> Iterator[None]:
    """Run one evaluator's work. What it raises is added to ``errors`` and the caller goes on
    with its next evaluator; the caller's result for this one stays what it set beforehand.
    Without a list (``None``) nothing is caught: a caller that owns no verdict sees the raise."""
    if errors is None:
        yield
        return
    try:
        yield
    except Exception as exc:  # the error boundary of every evaluator: recorded, never silent
        below = exc.__traceback__.tb_next if exc.__traceback__ else None  # from the evaluator's call on
        errors.append(EvaluatorError.of(evaluator, exc.with_traceback(below)))
