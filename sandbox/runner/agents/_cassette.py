"""vcrpy cassettes for the model agents (``openai:``, ``anthropic:``): record and replay a model's
HTTP exchanges, offline and deterministically.

Requests match on method, scheme, host, port and path, in order — bodies are not matched because
they hold run-specific values (session ids, tool results). Credentials and cookies are never
recorded. The attempt's site key is saved as the placeholder ``<SANDBOX_SITE_KEY>`` and restored
as the replaying attempt's fresh key, so a replay issues the same tool calls with the key its
gates expect. The record modes are ``sandbox.runner.record_mode.RecordMode``; ``all`` re-records
from scratch. vcrpy patches the HTTP library process-wide, so attempts that use a cassette take
turns (a per-event-loop lock, ``Cassette.turn``, which ``sandbox run`` takes before an attempt's
clock starts: the wait for it is a dispatch wait); only httpx2 (the SDKs' transport) is patched.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import weakref
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path

import yaml

from sandbox.runner.record_mode import RecordMode

SITE_KEY_PLACEHOLDER = "<SANDBOX_SITE_KEY>"
MATCH_ON = ("method", "scheme", "host", "port", "path")
NOT_RECORDED_HEADERS = ("authorization", "x-api-key", "openai-organization", "openai-project", "cookie")
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
_HOLDING = contextvars.ContextVar("cassette_turn_held", default=False)  # this attempt has its turn


class CassetteError(Exception):
    """A cassette could not answer a request (missing cassette, unmatched or extra request, a
    recorded response that cannot be read)."""


class CassetteUnreadable(CassetteError):
    """The cassette is not one vcrpy can load: not YAML, or its interactions of another structure."""


def recorded_interactions(path: Path) -> list[dict]:
    """The cassette's interactions, each a mapping with a ``request`` and a ``response`` mapping;
    ``CassetteUnreadable`` says what is wrong where."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, ValueError, yaml.YAMLError) as exc:  # not readable, not UTF-8, not YAML
        raise CassetteUnreadable(f"cassette {path} cannot be read: {str(exc).splitlines()[0][:200]}") from None
    if not isinstance(data, dict):
        raise CassetteUnreadable(f"cassette {path} cannot be read: not a vcrpy cassette (a YAML mapping)")
    interactions = data.get("interactions") or []
    if not isinstance(interactions, list):
        raise CassetteUnreadable(not_as_recorded(path, "its interactions", interactions, "a list"))
    for number, interaction in enumerate(interactions, 1):
        if not isinstance(interaction, dict):
            wanted = "a mapping of a request and a response"
            raise CassetteUnreadable(not_as_recorded(path, f"interaction {number}", interaction, wanted))
        for part in ("request", "response"):
            if not isinstance(interaction.get(part), dict):
                what = f"interaction {number}'s {part}"
                raise CassetteUnreadable(not_as_recorded(path, what, interaction.get(part), "a mapping"))
    return interactions


def not_as_recorded(path: Path, what: str, value: object, wanted: str) -> str:
    """A cassette's ``what`` is ``value`` where vcrpy wants ``wanted``: the value shown, short."""
    shown = "missing" if value is None else f"{type(value).__name__} {str(value)[:60]!r}"
    return f"cassette {path} cannot be read: {what} is {shown}, not {wanted}"


class Cassette:
    def __init__(self, path: Path | None, record_mode: RecordMode, rerecord_hint: str) -> None:
        self.path, self.record_mode, self.rerecord_hint = path, RecordMode(record_mode), rerecord_hint

    @property
    def replaying(self) -> bool:
        return self.path is not None and (
            self.record_mode is RecordMode.NONE or (self.record_mode is RecordMode.ONCE and Path(self.path).is_file())
        )

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """This attempt's turn at the cassettes (none needed without one); ``use`` within it takes
        no other."""
        if self.path is None or _HOLDING.get():
            yield
            return
        async with lock():
            held = _HOLDING.set(True)
            try:
                yield
            finally:
                _HOLDING.reset(held)

    @asynccontextmanager
    async def use(self, site_key: str):
        """The vcrpy cassette while the attempt talks to its model (None without a cassette)."""
        if self.path is None:
            yield None
            return
        import vcr
        from vcr.patch import PATCHER_NAMES

        def drop_cookies(response: dict) -> dict:
            response["headers"] = {k: v for k, v in response.get("headers", {}).items() if k.lower() != "set-cookie"}
            return response

        recorder = vcr.VCR(
            record_mode=self.record_mode.value,
            match_on=MATCH_ON,
            filter_headers=NOT_RECORDED_HEADERS,
            before_record_response=drop_cookies,
            decode_compressed_response=True,
            drop_unused_requests=self.record_mode is RecordMode.ALL,
            filter_sensitive_data={SITE_KEY_PLACEHOLDER: site_key},
            skip_patchers=tuple(name for name in PATCHER_NAMES if name != "httpx2"),
        )
        async with self.turn():
            with ExitStack() as stack:
                try:
                    cassette = stack.enter_context(recorder.use_cassette(str(self.path)))
                except Exception as exc:  # vcrpy's loader: a KeyError, TypeError ... on a damaged file
                    raise CassetteUnreadable(self.unloadable(exc)) from exc
                yield cassette

    def unloadable(self, exc: Exception) -> str:
        """What is wrong with a cassette vcrpy could not load: where, when its structure says."""
        try:
            recorded_interactions(Path(self.path or ""))
        except CassetteUnreadable as found:
            return f"{found}; {self.rerecord_hint}"
        return f"cassette {self.path} cannot be loaded ({type(exc).__name__}: {exc}); {self.rerecord_hint}"

    def recorded_base_url(self, cassette, endpoint_path: str) -> str | None:
        """On replay, the endpoint the cassette was recorded against (so replays need no flag)."""
        if cassette is not None and self.replaying and cassette.requests:
            uri = cassette.requests[0].uri
            if uri.endswith(endpoint_path):
                return uri[: -len(endpoint_path)]
        return None

    def failure(self, exc: BaseException) -> BaseException | None:
        """The cassette's part in ``exc``: the miss behind it (vcrpy's or ours), or, on replay, a
        recorded response the SDK could not read as JSON (the SDKs raise that unwrapped)."""
        found = failure_in(exc)
        if found is None and self.replaying and isinstance(exc, json.JSONDecodeError):
            return exc
        return found

    def describe_failure(self, exc: BaseException, request_number: int) -> str | None:
        """The attempt's error when ``exc`` is the cassette's doing (``failure``), else None."""
        found = self.failure(exc)
        if found is None:
            return None
        cassette = f"cassette {self.path} (record mode {self.record_mode})"
        if isinstance(found, json.JSONDecodeError):
            problem = f"holds a response to model request {request_number} that is not JSON ({found})"
            return f"{cassette} {problem}; {self.rerecord_hint}"
        # vcrpy's own "How to fix" speaks of its options (allow_playback_repeats ...), not the sandbox's
        said = str(found).split("\nHow to fix:")[0].rstrip()
        return f"{cassette} cannot answer model request {request_number}; {self.rerecord_hint}.\n{said}"


def failure_in(exc: BaseException) -> BaseException | None:
    """The vcrpy error behind an SDK error, if any (the SDKs wrap transport errors)."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (CannotOverwriteExistingCassetteException, CassetteError)):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    found = _LOCKS.get(loop)
    if found is None:
        found = _LOCKS[loop] = asyncio.Lock()
    return found
