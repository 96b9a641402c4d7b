"""The cost boundary: what an attempt's model tokens cost, at the prices a TOML file gives.

    credits_per_dollar = 2000          # optional (the benchmark's illustrative rate)

    [models."gpt-x"]                   # the model name in the agent spec (openai:gpt-x)
    input = 2.50                       # USD per million input tokens
    cached_input = 1.25                # USD per million cached input tokens (default: input)
    cache_write_input = 3.125          # USD per million input tokens written to a cache (default: input)
    output = 10.00                     # USD per million output tokens

There is no built-in price list (it would go stale silently). An attempt whose tokens or model
price are unknown costs ``None`` ("unknown"), never zero. Tokens: input (OpenAI ``prompt_tokens``,
Anthropic ``input_tokens``), cached input (``cached_tokens`` / ``cache_read_input_tokens``, when
the agent reports them; counted inside input for OpenAI, beside it for Anthropic), input written
to a cache (Anthropic's ``cache_creation_input_tokens``, beside input) and output
(``completion_tokens`` / ``output_tokens``); a ``cmd:`` agent reports its own in ``usage.json``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

DEFAULT_CREDITS_PER_DOLLAR = 2000.0


class PricesError(ValueError):
    """A prices file that cannot be read or says something impossible."""


def finite_number(value: object) -> TypeGuard[float]:
    """A number as JSON or TOML gives one: an int or a float, not a bool, not NaN or infinity."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Price:
    input: float
    cached_input: float
    output: float
    cache_write_input: float


@dataclass(frozen=True)
class Prices:
    models: dict[str, Price] = field(default_factory=dict)
    credits_per_dollar: float = DEFAULT_CREDITS_PER_DOLLAR

    @classmethod
    def load(cls, path: Path) -> Prices:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise PricesError(f"prices file {path}: {exc}") from None
        models = {}
        for name, entry in (data.get("models") or {}).items():
            try:
                price = Price(
                    input=float(entry["input"]),
                    cached_input=float(entry.get("cached_input", entry["input"])),
                    output=float(entry["output"]),
                    cache_write_input=float(entry.get("cache_write_input", entry["input"])),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise PricesError(
                    f"prices file {path}: [models.{name!r}] needs numbers input and output "
                    f"(USD per million tokens), and may give cached_input and cache_write_input "
                    f"({type(exc).__name__}: {exc})"
                ) from None
            values = (price.input, price.cached_input, price.output, price.cache_write_input)
            if not all(math.isfinite(v) and v >= 0 for v in values):
                raise PricesError(f"prices file {path}: [models.{name!r}] has a price that is negative, nan or inf")
            models[str(name)] = price
        rate = data.get("credits_per_dollar", DEFAULT_CREDITS_PER_DOLLAR)
        if not finite_number(rate) or rate <= 0:
            raise PricesError(f"prices file {path}: credits_per_dollar must be a positive number, not {rate!r}")
        return cls(models, float(rate))

    def cost(self, model: str | None, usage: dict | None) -> float | None:
        """USD for ``usage`` on ``model``; None when either is unknown."""
        price = self.models.get(model) if model else None
        counted = tokens(usage)
        if price is None or counted is None:
            return None
        fresh, cached, written, output = counted
        return (
            fresh * price.input
            + cached * price.cached_input
            + written * price.cache_write_input
            + output * price.output
        ) / 1_000_000


def tokens(usage: dict | None) -> tuple[int, int, int, int] | None:
    """(fresh input, cached input, input written to a cache, output) tokens of a usage dict;
    None if it has no counts."""
    if not usage:
        return None
    if "prompt_tokens" in usage:  # OpenAI: cached tokens are part of the prompt tokens
        cached = int(usage.get("cached_tokens", 0))
        return int(usage["prompt_tokens"]) - cached, cached, 0, int(usage.get("completion_tokens", 0))
    if "input_tokens" in usage:  # Anthropic, and cmd: agents' usage.json
        cached = int(usage.get("cache_read_input_tokens", usage.get("cached_input_tokens", 0)))
        written = int(usage.get("cache_creation_input_tokens", 0))
        return int(usage["input_tokens"]), cached, written, int(usage.get("output_tokens", 0))
    return None
