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
        """The prices of a TOML file, checked: a key this version does not know, a price that is no
        number (``true``, ``"2.5"``) or is negative, NaN or infinite, a ``models`` that is no table
        of tables, is a ``PricesError`` naming the file and the key."""
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise PricesError(f"prices file {path}: {exc}") from None
        unknown = sorted(set(data) - {"models", "credits_per_dollar"})
        if unknown:
            raise PricesError(
                f"prices file {path}: unknown key(s) {', '.join(map(repr, unknown))}: "
                'give credits_per_dollar and [models."NAME"] tables'
            )
        given = data.get("models", {})
        if not isinstance(given, dict):
            raise PricesError(
                f'prices file {path}: models is {given!r}, not a table: give each model as [models."NAME"]'
            )
        models = {str(name): model_price(path, str(name), entry) for name, entry in given.items()}
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


PRICE_KEYS = ("input", "output", "cached_input", "cache_write_input")  # the first two required


def model_price(path: Path, name: str, entry: object) -> Price:
    """``[models."NAME"]``'s prices, checked (``Prices.load``)."""
    where = f"prices file {path}: [models.{name!r}]"
    needs = "needs numbers input and output (USD per million tokens), and may give cached_input and cache_write_input"
    if not isinstance(entry, dict):
        raise PricesError(f"{where} is {entry!r}, not a table: it {needs}")
    if unknown := sorted(set(entry) - set(PRICE_KEYS)):
        raise PricesError(f"{where} has unknown key(s) {', '.join(map(repr, unknown))}: it {needs}")
    if missing := [key for key in PRICE_KEYS[:2] if key not in entry]:
        raise PricesError(f"{where} has no {' or '.join(missing)}: it {needs}")
    for key in PRICE_KEYS:
        value = entry.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PricesError(f"{where} {key} is {value!r}, not a number: it {needs}")
        if not finite_number(value) or value < 0:
            raise PricesError(f"{where} {key} is {value!r}: a price that is negative, nan or inf")
    given = {key: float(entry[key]) for key in PRICE_KEYS if key in entry}
    return Price(
        input=given["input"],
        cached_input=given.get("cached_input", given["input"]),
        output=given["output"],
        cache_write_input=given.get("cache_write_input", given["input"]),
    )


def tokens(usage: dict | None) -> tuple[int, int, int, int] | None:
    """(fresh input, cached input, input written to a cache, output) tokens of a usage dict;
    None if it has no counts, or counts that do not add up (``usage_problem``)."""
    if not usage or usage_problem(usage) is not None:
        return None
    return _counts(usage)


UNCOUNTED = "turns_without_usage"  # in a model agent's token_usage: turns the endpoint gave no counts for


def usage_problem(usage: dict | None) -> str | None:
    """Why a usage's counts cannot be priced (a turn the endpoint gave no counts for, an endpoint
    that reports more cached tokens than prompt tokens, a negative count), or None: its cost is
    then unknown, never zero or negative."""
    if usage and usage.get(UNCOUNTED):
        return f"the endpoint gave no token counts for {usage[UNCOUNTED]} model turn(s): the cost is unknown"
    counted = _counts(usage) if usage else None
    if usage is None or counted is None or min(counted) >= 0:
        return None
    if "prompt_tokens" in usage and counted[0] < 0:
        return (
            f"the endpoint reported {usage.get('cached_tokens')} cached tokens of {usage['prompt_tokens']} prompt "
            "tokens (more cached than sent): the cost is unknown"
        )
    return f"the token counts {usage} hold a negative count: the cost is unknown"


def _counts(usage: dict) -> tuple[int, int, int, int] | None:
    if "prompt_tokens" in usage:  # OpenAI: cached tokens are part of the prompt tokens
        cached = int(usage.get("cached_tokens", 0))
        return int(usage["prompt_tokens"]) - cached, cached, 0, int(usage.get("completion_tokens", 0))
    if "input_tokens" in usage:  # Anthropic, and cmd: agents' usage.json
        cached = int(usage.get("cache_read_input_tokens", usage.get("cached_input_tokens", 0)))
        written = int(usage.get("cache_creation_input_tokens", 0))
        return int(usage["input_tokens"]), cached, written, int(usage.get("output_tokens", 0))
    return None
