"""vcrpy cassettes for the model agents (``openai:``, ``anthropic:``): record and replay a model's
HTTP exchanges, offline and deterministically.

Requests match on method, scheme, host, port and path, in order, and on the conversation: the
request body without the tool results, which hold run-specific values (session ids, page
content). So a replaying agent whose requests changed since the recording (another model, system
prompt or parameter, a turn more) is told where (``sandbox.runner.agents._conversation``), and a
replay that leaves recorded requests unmade is an error too (``Cassette.unplayed``). Before vcrpy
loads a cassette, ``recorded_interactions`` checks that it can replay it, naming the interaction
and the part that is wrong. Credentials and cookies are never recorded: not in headers, nor a
user, password or key in the request's URI. The attempt's site key is saved as the placeholder
``<SANDBOX_SITE_KEY>`` and restored as the replaying attempt's fresh key, so a replay issues the
same tool calls with the key its gates expect. The record modes are
``sandbox.runner.record_mode.RecordMode``; ``all`` re-records from scratch, without reading the
file. vcrpy patches the HTTP library process-wide (only httpx2, the SDKs' transport), so while a
cassette is in use it answers every model request of the process: an attempt with a cassette has
the model to itself, and those without one share it among them (``Cassette.turn``, per event
loop, which ``sandbox run`` takes before an attempt's clock starts: the wait for it is a dispatch
wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import os
import re
import secrets
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import yaml

from sandbox.runner.agents._conversation import canonical, conversation, differences, masked
from sandbox.runner.files import NAME_MAX
from sandbox.runner.record_mode import RecordMode

SITE_KEY_PLACEHOLDER = "<SANDBOX_SITE_KEY>"
MATCH_ON = ("method", "scheme", "host", "port", "path", "conversation")
NOT_RECORDED_HEADERS = ("authorization", "x-api-key", "openai-organization", "openai-project", "cookie")
# of the request URI, beside its user and password: the query parameters that carry a key (Azure's, Google's)
NOT_RECORDED_QUERY_PARAMETERS = frozenset({"key", "api-key", "api_key", "apikey", "access_token"})
# of the responses: the account's cookies, organisation and project, which the endpoints send back
NOT_RECORDED_RESPONSE_HEADERS = frozenset(
    {"set-cookie", "openai-organization", "openai-project", "anthropic-organization-id"}
)
_HOLDING = contextvars.ContextVar("cassette_turn_held", default=False)  # this attempt has its turn


class CassetteError(Exception):
    """A cassette could not answer a request (missing cassette, unmatched or extra request, a
    recorded response that cannot be read)."""


class CassetteUnreadable(CassetteError):
    """The cassette is not one vcrpy can load: not YAML, or its interactions of another structure."""


def recorded_interactions(path: Path) -> list[dict]:
    """The cassette's interactions, each a request and a response as vcrpy replays them; an empty
    file holds none. ``CassetteUnreadable`` says what is wrong where: a file that is not a
    cassette, a part missing or of another type, a response body that is not the JSON its headers
    say, a request recorded twice."""
    try:
        return checked_interactions(path)
    except RecursionError:  # YAML's and JSON's readers recurse per level: a hand-made or hostile file
        raise CassetteUnreadable(
            f"cassette {path} cannot be read: it holds YAML or JSON nested too deeply (deeper than Python's "
            "recursion limit)"
        ) from None


def checked_interactions(path: Path) -> list[dict]:
    from vcr.serializers import yamlserializer  # vcrpy's own YAML loader, so we read what it reads

    if Path(path).is_dir():
        raise CassetteUnreadable(f"cassette {path} is a folder, not a file")
    try:
        data = yamlserializer.deserialize(Path(path).read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:  # where: a truncated file ends in "unexpected end of stream"
        mark = exc.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise CassetteUnreadable(f"cassette {path} cannot be read: {exc.problem or exc.context}{at}") from None
    except (TypeError, LookupError) as exc:  # a Python tag vcrpy builds (an old BytesIO body) of other parts
        raise CassetteUnreadable(
            f"cassette {path} cannot be read: a Python tag in it holds what vcrpy cannot build "
            f"({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    except (OSError, ValueError, yaml.YAMLError) as exc:  # not readable, not UTF-8, not YAML
        raise CassetteUnreadable(f"cassette {path} cannot be read: {str(exc).splitlines()[0][:200]}") from None
    if data is None:
        return []  # an empty file: vcrpy records it as if it were missing
    if not isinstance(data, dict):
        raise CassetteUnreadable(f"cassette {path} cannot be read: not a vcrpy cassette (a YAML mapping)")
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        raise CassetteUnreadable(not_as_recorded(path, "its interactions", interactions, "a list"))
    requests: dict[tuple, int] = {}
    for number, interaction in enumerate(interactions, 1):
        if not isinstance(interaction, dict):
            wanted = "a mapping of a request and a response"
            raise CassetteUnreadable(not_as_recorded(path, f"interaction {number}", interaction, wanted))
        for part in ("request", "response"):
            if not isinstance(interaction.get(part), dict):
                what = f"interaction {number}'s {part}"
                raise CassetteUnreadable(not_as_recorded(path, what, interaction.get(part), "a mapping"))
        check_request(path, number, interaction["request"])
        check_response(path, number, interaction["response"])
        request = interaction["request"]
        key = (request["method"], request["uri"], canonical(body_bytes(request["body"])) or number)
        if key in requests:
            raise CassetteUnreadable(
                f"cassette {path} cannot be replayed: interaction {number} repeats interaction {requests[key]}'s "
                f"request ({request['method']} {request['uri']}), where a recording holds each request once"
            )
        requests[key] = number
    return interactions


def missing_part(path: Path, number: int, part: str, key: str, holds: str) -> CassetteUnreadable:
    return CassetteUnreadable(
        f"cassette {path} cannot be read: interaction {number}'s {part} has no {key!r} (vcrpy's {part}s hold {holds})"
    )


REQUEST_KEYS = ("method", "uri", "body", "headers")


def check_request(path: Path, number: int, request: dict) -> None:
    """A request as vcrpy replays it: a method and a uri (texts), a body, headers (a mapping); a body
    its content-type says is JSON a JSON object (the conversation matcher judges it: one that is not
    would match any request, and the cassette would replay for another model or task)."""
    for key in REQUEST_KEYS:
        if key not in request:
            raise missing_part(path, number, "request", key, "method, uri, body and headers")
    if other := sorted(map(str, request.keys() - set(REQUEST_KEYS))):  # vcrpy builds its Request of them all
        raise CassetteUnreadable(
            f"cassette {path} cannot be read: interaction {number}'s request has {', '.join(map(repr, other))}, "
            "which vcrpy's requests do not hold (they hold method, uri, body and headers alone)"
        )
    for key, kind, holds in (("method", str, "a text"), ("uri", str, "a text"), ("headers", dict, "a mapping")):
        if not isinstance(request[key], kind):
            what = f"interaction {number}'s request {key}"
            raise CassetteUnreadable(not_as_recorded(path, what, request[key], holds))
    body = body_bytes(request["body"])
    if body is None or "json" not in headers_said(request["headers"]).get("content-type", ""):
        return
    problem: str | None = None
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        problem = f"is not the JSON its content-type says ({exc})"
    else:
        if not isinstance(parsed, dict):
            problem = f"is JSON {type(parsed).__name__}, not a JSON object"
    if problem is not None:
        shown = body[:60].decode("utf-8", errors="replace")
        raise CassetteUnreadable(
            f"cassette {path} cannot be replayed: interaction {number}'s request body {problem}: {shown!r}"
        )


def check_response(path: Path, number: int, response: dict) -> None:
    """A response as vcrpy's httpx stub replays it: a status code and message, headers as lists of
    values, a body string; a successful JSON one whose body is JSON (the SDK would fail on it)."""
    wanted = {"status": "a mapping of code and message", "headers": "a mapping", "body": "a mapping of a string"}
    for key, holds in wanted.items():
        if key not in response:
            raise missing_part(path, number, "response", key, "status, headers and body")
        if not isinstance(response[key], dict):
            what = f"interaction {number}'s response {key}"
            raise CassetteUnreadable(not_as_recorded(path, what, response[key], holds))
    status, headers, body = response["status"], response["headers"], response["body"]
    if not isinstance(status.get("code"), int) or "message" not in status:
        what = f"interaction {number}'s response status"
        raise CassetteUnreadable(not_as_recorded(path, what, status, "a mapping of code (a number) and message"))
    for name, values in headers.items():
        if not isinstance(values, list):
            what = f"interaction {number}'s response header {name!r}"
            raise CassetteUnreadable(not_as_recorded(path, what, values, "a list of values"))
    text = body.get("string")
    if not isinstance(text, (str, bytes)):
        raise CassetteUnreadable(not_as_recorded(path, f"interaction {number}'s response body string", text, "a text"))
    said = headers_said(headers)
    if 200 <= status["code"] < 300 and "json" in said.get("content-type", "") and "content-encoding" not in said:
        try:
            json.loads(text)
        except ValueError as exc:
            raise CassetteUnreadable(
                f"cassette {path} cannot be replayed: interaction {number}'s response body is not the JSON its "
                f"content-type says ({exc}): {str(text)[:60]!r}"
            ) from None


def headers_said(headers: dict) -> dict[str, str]:
    """Recorded headers (lists of values, or a text) by lower-case name, each one text."""
    return {
        str(name).lower(): " ".join(map(str, values)) if isinstance(values, list) else str(values)
        for name, values in headers.items()
    }


def answered_well(response: dict) -> bool:
    """Whether the endpoint's answer is a success (2xx). Only those are recorded: an error (a key
    refused, a model not found, a request refused as invalid, a rate limit the SDK retries) is
    said by the attempt that met it, and recorded it would be replayed from then on."""
    return 200 <= response["status"]["code"] < 300


def body_bytes(body: object) -> bytes | None:
    """A recorded request body's bytes (vcrpy may store it as ``{"string": ...}``)."""
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, str):
        return body.encode("utf-8")
    return body if isinstance(body, bytes) else None


def not_as_recorded(path: Path, what: str, value: object, wanted: str) -> str:
    """A cassette's ``what`` is ``value`` where vcrpy wants ``wanted``: the value shown, short."""
    shown = "missing" if value is None else f"{type(value).__name__} {str(value)[:60]!r}"
    return f"cassette {path} cannot be read: {what} is {shown}, not {wanted}"


def without_credentials(uri: str) -> str:
    """``uri`` without its user and password (``http://user:secret@proxy/v1``) and without the
    query parameters that carry a key (``NOT_RECORDED_QUERY_PARAMETERS``); the rest as it was."""
    try:
        parts = urlsplit(uri)
    except ValueError:  # not a URL urllib can split (an unclosed "[" of an IPv6 host): its user part cut out
        return re.sub(r"//[^/?#]*@", "//", uri, count=1)
    host = parts.netloc.rpartition("@")[2]
    kept = [
        pair
        for pair in parts.query.split("&")
        if unquote_plus(pair.partition("=")[0]).lower() not in NOT_RECORDED_QUERY_PARAMETERS
    ]
    if host == parts.netloc and len(kept) == len(parts.query.split("&")):
        return uri
    return urlunsplit(parts._replace(netloc=host, query="&".join(kept)))


def same_endpoint(one: str, other: str) -> bool:
    """Whether two base URLs name one endpoint: their scheme, host, port and path, without
    credentials, case (of scheme and host) or a trailing slash."""
    try:
        one_parts, other_parts = (urlsplit(without_credentials(url).rstrip("/")) for url in (one, other))
    except ValueError:  # not one urllib can split (an unclosed "[")
        return one.rstrip("/") == other.rstrip("/")
    return (one_parts.scheme.lower(), one_parts.netloc.lower(), one_parts.path) == (
        other_parts.scheme.lower(),
        other_parts.netloc.lower(),
        other_parts.path,
    )


def recorded_without_credentials(request):
    """vcrpy's ``before_record_request``: the request's URI ``without_credentials``. vcrpy passes
    every request made through it before matching it too, so a replay matches as recorded."""
    request.uri = without_credentials(request.uri)
    return request


def holds_recording(path: Path) -> bool:
    """Whether the cassette file at ``path`` holds a recording: an interaction at least. A file
    without one (empty, only a comment, ``---``, ``interactions: []``) is as good as none, in every
    check and in vcrpy's loader (``persister``): it is recorded into, never replayed. One that
    cannot be read holds something: the check that reads it says what is wrong."""
    try:
        found = path.stat()
    except OSError:
        return False
    if not path.is_file():
        return False
    return _holds_interactions(str(path), found.st_mtime_ns, found.st_size, found.st_ino)


@functools.lru_cache(maxsize=64)  # read once per version of the file: a long cassette is slow to parse
def _holds_interactions(path: str, mtime_ns: int, size: int, inode: int) -> bool:
    try:
        return bool(recorded_interactions(Path(path)))
    except CassetteUnreadable:
        return True


def path_problem(path: Path) -> str | None:
    """Why a cassette cannot be at ``path`` at all (read or written), or None."""
    try:
        if path.exists() and not path.is_file():
            return f"cassette {path} is a {'folder' if path.is_dir() else 'special file'}, not a file"
        for folder in path.parents:
            if folder.exists():
                return (
                    None if folder.is_dir() else f"cassette {path} cannot be written: {folder} is a file, not a folder"
                )
    except OSError as exc:  # a name too long, a folder not ours to enter
        return f"cassette {path} cannot be looked up: {exc.strerror or exc}"
    return None


class Cassette:
    def __init__(self, path: Path | None, record_mode: RecordMode, rerecord_hint: str) -> None:
        self.path, self.record_mode, self.rerecord_hint = path, RecordMode(record_mode), rerecord_hint
        self.recording: Any = None  # vcrpy's cassette while ``use`` holds it
        self.whole = False  # the conversation completed (``completed``): the recording may be saved
        self.unsaved: str | None = None  # why the last ``use`` left the file as it was, if it did

    @property
    def replaying(self) -> bool:
        """Whether vcrpy replays rather than records: under ``none``, and under ``once`` when the
        file holds a recording (it records into an empty file as into none)."""
        if self.path is None:
            return False
        if self.record_mode is RecordMode.NONE:
            return True
        return self.record_mode is RecordMode.ONCE and holds_recording(Path(self.path))

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """This attempt's turn at the model: with a cassette, the only one (vcrpy's patch answers
        every model request in the process while it is in use); without one, shared with the other
        attempts without one. ``use`` within it takes no other."""
        if _HOLDING.get():
            yield
            return
        own = self.path is not None
        turns = Turns.of_running_loop()
        await turns.take(own)
        held = _HOLDING.set(True)
        try:
            yield
        finally:
            _HOLDING.reset(held)
            turns.give_back(own)

    @asynccontextmanager
    async def use(self, site_key: str):
        """The vcrpy cassette while the attempt talks to its model (None without a cassette).
        ``CassetteUnreadable`` before any request when the file cannot hold a cassette, or holds one
        vcrpy could not replay (``recorded_interactions``; record mode ``all`` does not read it)."""
        self.whole, self.unsaved = False, None  # this conversation's
        if self.path is None:
            yield None
            return
        import vcr
        from vcr.patch import PATCHER_NAMES

        path = Path(self.path)
        problem = path_problem(path)
        if problem is None and self.record_mode is not RecordMode.ALL and path.is_file():
            try:
                recorded_interactions(path)
            except CassetteUnreadable as exc:
                problem = str(exc)
        if problem is not None:
            raise CassetteUnreadable(f"{problem}; {self.rerecord_hint}")

        loading = True  # vcrpy passes the responses it loads through ``recordable`` too

        def recordable(response: dict) -> dict | None:
            """The response as recorded, without cookies, organisation or project; None (not
            recorded) for one a replay would refuse: a successful JSON answer that is not JSON (the
            attempt fails on it now, and the cassette stays one that replays), or an error answer
            (``answered_well``; one the SDK retries has its retry recorded, and the request once)."""
            headers = response.get("headers", {})
            response["headers"] = {k: v for k, v in headers.items() if k.lower() not in NOT_RECORDED_RESPONSE_HEADERS}
            try:
                check_response(path, 0, response)
            except CassetteUnreadable:
                return None
            return None if not loading and not answered_well(response) else response

        recorder = vcr.VCR(
            record_mode=self.record_mode.value,
            # a conversation stopped or timed out is saved only where one cut short is (``saved_whole_only``)
            record_on_exception=self.record_mode is RecordMode.NEW_EPISODES,
            match_on=MATCH_ON,
            filter_headers=NOT_RECORDED_HEADERS,
            before_record_request=recorded_without_credentials,
            before_record_response=recordable,
            decode_compressed_response=True,
            drop_unused_requests=self.record_mode is RecordMode.ALL,
            filter_sensitive_data={SITE_KEY_PLACEHOLDER: site_key},
            skip_patchers=tuple(name for name in PATCHER_NAMES if name != "httpx2"),
        )
        recorder.register_matcher("conversation", conversation)
        recorder.register_persister(persister(self))
        async with self.turn():
            with ExitStack() as stack:
                try:
                    self.recording = stack.enter_context(recorder.use_cassette(str(path)))
                    loading = False
                except Exception as exc:  # vcrpy's loader, on damage recorded_interactions does not know
                    raise CassetteUnreadable(
                        f"cassette {path} cannot be loaded ({type(exc).__name__}: {exc}); {self.rerecord_hint}"
                    ) from exc
                try:
                    yield self.recording
                finally:
                    if self.recording.dirty and not self.saved_whole_only():  # vcrpy saves as ``use`` ends
                        self.unsaved = self.not_saved("the conversation did not complete")
                    self.recording = None

    def saved_whole_only(self) -> bool:
        """Whether the cassette is saved now: under ``all`` and ``once``, which record a whole
        conversation, only when it completed (``completed``); a timed-out, stopped or failed
        one would replace the recording with a part of it, or be a recording that replays a
        failure. ``new_episodes`` saves what it added in any case, also when the attempt timed out
        or was stopped (the next recording goes on from there)."""
        return self.whole or self.record_mode not in (RecordMode.ALL, RecordMode.ONCE)

    def completed(self) -> None:
        """The conversation ended well: the recording is saved when ``use`` ends."""
        self.whole = True

    def not_saved(self, why: str) -> str:
        """What the attempt says when its recording is not saved: why, and what the file holds."""
        kept = "the earlier recording is kept" if holds_recording(Path(str(self.path))) else "no recording was made"
        return f"cassette {self.path} (record mode {self.record_mode}) was not saved: {why}; {kept}"

    def keep_made_only(self, recording) -> None:
        """After a conversation that ended well under ``new_episodes``: the cassette is saved with
        the requests it made (replayed or recorded) only. Those recorded that it did not make are
        an earlier agent's (its prompt changed, it took another turn), and the next replay, which
        must make every recorded request (``unplayed``), would fail on them. A conversation cut
        short keeps them all: it may not have come to them."""
        if recording is not None and self.record_mode is RecordMode.NEW_EPISODES:
            recording.drop_unused_requests = True  # read as vcrpy saves it, when ``use`` ends

    def unplayed(self, recording) -> str | None:
        """After a conversation that ended well: on replay, the recorded requests it never made (a
        faithful replay makes them all), said as the attempt's error; else None."""
        if recording is None or not recording.write_protected:  # recording, not replaying
            return None
        left = [number for number in range(1, len(recording) + 1) if not recording.play_counts[number - 1]]
        if not left:
            return None
        return (
            f"cassette {self.path} (record mode {self.record_mode}) holds {len(recording)} model requests, the "
            f"attempt made {len(recording) - len(left)}: interaction(s) {numbers(left)} were not replayed, so the "
            f"agent's conversation is not the recorded one; {self.rerecord_hint}"
        )

    def recorded_base_url(self, cassette, endpoint_path: str) -> str | None:
        """The endpoint the cassette was recorded against, when it replays every request
        (``replaying``): a replay needs no flag, and nothing leaves the process. Recording (also
        new episodes) goes to the endpoint configured, never to one a cassette names: the API key
        goes with the request (``recording_endpoint``). ``cassette``: vcrpy's, once loaded."""
        if not self.replaying:
            return None
        return self.recording_endpoint(cassette, endpoint_path)

    def recording_endpoint(self, cassette, endpoint_path: str) -> str | None:
        """The endpoint of the recording the file holds, which a mode that reads it (every one but
        ``all``) adds to or replays; None when there is none. ``cassette``: vcrpy's, once loaded;
        before, the file's first request."""
        if self.path is None or self.record_mode is RecordMode.ALL:
            return None
        if cassette is not None:
            uri = cassette.requests[0].uri if cassette.requests else None
        else:
            try:
                interactions = recorded_interactions(Path(self.path)) if Path(self.path).is_file() else []
            except CassetteUnreadable:  # said when the attempt loads it
                interactions = []
            uri = interactions[0]["request"]["uri"] if interactions else None
        if isinstance(uri, str) and uri.endswith(endpoint_path):
            return uri[: -len(endpoint_path)]
        return None

    def other_endpoint(self, endpoint: str, endpoint_path: str, how_to_point: str) -> str | None:
        """Recording new episodes at ``endpoint`` into a recording made at another (its scheme,
        host, port or path): why not, or None. Its requests would all be new ones, and the
        cassette would mix two endpoints, of which a replay goes to the first only."""
        if self.replaying:
            return None
        recorded = self.recording_endpoint(None, endpoint_path)
        if recorded is None or same_endpoint(recorded, endpoint):
            return None
        return (
            f"cassette {self.path} (record mode {self.record_mode}) was recorded against {recorded}, and this "
            f"attempt's endpoint is {without_credentials(endpoint)}: new episodes are recorded only where the "
            f"recording was made. Point {how_to_point} at {recorded}, or {self.rerecord_hint}"
        )

    def failure(self, exc: BaseException) -> BaseException | None:
        """What makes ``exc`` a failed model request rather than a crash: the cassette's miss behind
        it (vcrpy's or ours), or a response the SDK could not read as JSON (the SDKs raise that
        unwrapped), recorded or live."""
        found = failure_in(exc)
        if found is None and isinstance(exc, json.JSONDecodeError):
            return exc
        return found

    def replayed_error(self, exc: BaseException, request_number: int) -> str | None:
        """When ``exc`` is the SDK's error for an error answer the cassette replayed, the attempt's
        error, which says so; else None. Error answers are no longer recorded (``answered_well``),
        so one the recording holds, played in this conversation, is an older recording's."""
        code = getattr(exc, "status_code", None)
        if self.path is None or self.recording is None or not isinstance(code, int):
            return None
        played = [
            number
            for number, (_, response) in enumerate(self.recording.data, 1)
            if self.recording.play_counts[number - 1] and response["status"]["code"] == code
        ]
        if not played:
            return None
        return (
            f"cassette {self.path} (record mode {self.record_mode}) answered model request {request_number} with "
            f"the error answer it holds as interaction {played[-1]} ({type(exc).__name__}: {exc}): the endpoint "
            f"did not answer it now, and error answers are no longer recorded; {self.rerecord_hint}"
        )

    def describe_failure(self, exc: BaseException, request_number: int) -> str | None:
        """The attempt's error when ``exc`` is the cassette's doing (``failure``, or an error answer
        it replayed: ``replayed_error``), else None (a live answer that is not JSON is the
        endpoint's)."""
        replayed = self.replayed_error(exc, request_number)
        if replayed is not None:
            return replayed
        found = self.failure(exc)
        if found is None or self.path is None:
            return None
        cassette = f"cassette {self.path} (record mode {self.record_mode})"
        if isinstance(found, json.JSONDecodeError):
            if self.recording is None or self.recording.play_count < request_number:
                return None  # the endpoint answered it (the request was recorded, not replayed)
            problem = f"holds a response to model request {request_number} that is not JSON ({found})"
            return f"{cassette} {problem}; {self.rerecord_hint}"
        # vcrpy's own "How to fix" speaks of its options (allow_playback_repeats ...), not the sandbox's
        said = explained_miss(found) or str(found).split("\nHow to fix:")[0].rstrip()
        sent = getattr(getattr(found, "failed_request", None), "uri", None)
        if isinstance(sent, str):  # as it was made, with the base URL's password: said as it is recorded
            said = said.replace(sent, without_credentials(sent))
        return f"{cassette} cannot answer model request {request_number}; {self.rerecord_hint}.\n{said}"


def persister(owner: Cassette):
    """vcrpy's file persister, for ``owner``'s cassette: it saves a recording only when the
    conversation is whole (``Cassette.saved_whole_only``), and writes it to a new file beside the
    old one, then puts it in its place, so a full disk or a kill mid-write leaves the old
    recording whole; a save that fails is said (``Cassette.unsaved``), not raised. Under record
    mode ``all``, which records from scratch, it does not read the file, so a damaged one is
    replaced rather than refused."""
    from vcr.persisters.filesystem import CassetteNotFoundError, FilesystemPersister
    from vcr.serialize import serialize

    class Persister(FilesystemPersister):
        @classmethod
        def load_cassette(cls, cassette_path, serializer):
            if owner.record_mode is RecordMode.ALL or not holds_recording(Path(cassette_path)):
                raise CassetteNotFoundError()  # recorded into, as a missing file is
            return super().load_cassette(cassette_path, serializer)

        @staticmethod
        def save_cassette(cassette_path, cassette_dict, serializer):
            if not owner.saved_whole_only():
                owner.unsaved = owner.not_saved("the conversation did not complete")
                return
            try:
                replace_file(Path(cassette_path), serialize(cassette_dict, serializer))
            except OSError as exc:
                owner.unsaved = owner.not_saved(f"it could not be written ({exc})")

    return Persister


def replace_file(path: Path, text: str) -> None:
    """``path`` holds ``text``, or (an error on the way) what it held before: written to a new
    file in its folder, flushed to the disk, then renamed over it."""
    path = Path(os.path.realpath(path))  # a link to the cassette stays a link: its target is replaced
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = f".{secrets.token_hex(4)}.partial"  # the name cut so that the whole stays one the file system takes
    new = path.with_name(os.fsdecode(b"." + os.fsencode(path.name)[: NAME_MAX - 1 - len(suffix)]) + suffix)
    handle = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # as open() makes it, under the umask
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        if path.is_file():
            os.chmod(new, path.stat().st_mode & 0o7777)  # the old file's permissions
        os.replace(new, path)
    except BaseException:
        new.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # the rename itself to the disk (where a folder can be opened)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def explained_miss(found: BaseException) -> str | None:
    """What vcrpy's miss means, against the cassette's order: the agent made more requests than the
    recording holds, or one unlike the next one recorded (its endpoint, or where the conversation
    differs). None when the cassette is empty or missing, which vcrpy's own message says well."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    if not isinstance(found, CannotOverwriteExistingCassetteException) or found.failed_request is None:
        return None
    recording, sent = found.cassette, found.failed_request
    if not len(recording):
        return None
    number = next((n for n in range(len(recording)) if not recording.play_counts[n]), None)
    if number is None:
        return f"{sent.method} {sent.uri}: the agent made more requests than the {len(recording)} recorded"
    recorded = recording.data[number][0]
    request = f"{sent.method} {sent.uri} is not the request recorded as interaction {number + 1}"
    if (recorded.method, recorded.uri) != (sent.method, sent.uri):
        return f"{request}, {recorded.method} {recorded.uri}"
    said = differences(masked(recorded.body), masked(sent.body))
    if not said:
        return None
    return f"{request}: the agent's request changed since the recording ({'; '.join(said)})"


def numbers(values: list[int]) -> str:
    """``[3, 4, 5, 9]`` as ``3-5, 9``."""
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


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


class Turns:
    """The model agents' turns in one event loop: a cassette's turn is taken alone, a live one
    beside other live ones; first come, first served, so a cassette's attempt is not kept waiting
    by live ones that came after it. Given back without awaiting (also while a stop goes on)."""

    _of_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Turns] = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self.live = 0  # live turns held
        self.alone = False  # a cassette's turn held
        self.waiting: deque[tuple[bool, asyncio.Future[None]]] = deque()

    @classmethod
    def of_running_loop(cls) -> Turns:
        loop = asyncio.get_running_loop()
        found = cls._of_loop.get(loop)
        if found is None:
            found = cls._of_loop[loop] = cls()
        return found

    def free_for(self, alone: bool) -> bool:
        return not self.alone and (self.live == 0 if alone else True)

    def hold(self, alone: bool) -> None:
        if alone:
            self.alone = True
        else:
            self.live += 1

    async def take(self, alone: bool) -> None:
        if not self.waiting and self.free_for(alone):
            self.hold(alone)
            return
        entry = (alone, asyncio.get_running_loop().create_future())
        self.waiting.append(entry)
        try:
            await entry[1]
        except asyncio.CancelledError:
            if entry[1].done() and not entry[1].cancelled():  # given it as it was stopped
                self.give_back(alone)
            elif entry in self.waiting:
                self.waiting.remove(entry)
                self.pass_on()
            raise

    def give_back(self, alone: bool) -> None:
        if alone:
            self.alone = False
        else:
            self.live -= 1
        self.pass_on()

    def pass_on(self) -> None:
        """The turns the first in line can have now, in order."""
        while self.waiting and (self.waiting[0][1].cancelled() or self.free_for(self.waiting[0][0])):
            alone, future = self.waiting.popleft()
            if not future.cancelled():  # a stopped one gives up its place
                self.hold(alone)
                future.set_result(None)
