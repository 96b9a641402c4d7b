"""What the model agents (``openai:``, ``anthropic:``) share: the endpoint choice, the cassette,
the attempt details, and how a failed model request or the turn limit ends the attempt. Each
agent module writes only its SDK's conversation loop (``converse``)."""

from __future__ import annotations

import dataclasses
import os
import re
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx2  # the SDKs' HTTP library, and the one the cassettes (vcrpy) patch

from sandbox.runner.agents._cassette import Cassette, CassetteUnreadable, without_credentials
from sandbox.runner.agents._kinds import AgentOption, AgentOptions
from sandbox.runner.prices import UNCOUNTED
from sandbox.runner.task import AgentResult, AgentTask
from sandbox.runner.transcript import Transcript

MODEL_OPTIONS: tuple[AgentOption, ...] = (  # all of them
    "base_url",
    "cassette",
    "record_mode",
    "max_turns",
    "rerecord_hint",
    "workdir",  # a relative cassette's
)

PREFLIGHT_TIMEOUT_S = 10.0
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")  # a URL in a message, to its end

SYSTEM_PROMPT = (
    "You are a browser agent. Do the task using only the browser tools provided, following "
    "every rule in the task exactly, and end with your final answer as plain text."
)


def without_password(text: str) -> str:
    """``text`` (a URL, or a message naming URLs) with every URL in it ``without_credentials``, the
    rule the cassettes record by: no user or password, no query parameter that carries a key.
    Attempt records and errors are read, shared and published; an endpoint's key is no part of
    what they say."""
    return URL.sub(lambda found: without_credentials(found.group()), text)


class ModelAgent:
    kind: str = ""
    endpoint_path: str = ""  # what the SDK appends to its base URL for each model request
    base_url_env: str = ""  # the SDK's base-URL environment variable
    api_key_env: str = ""  # the SDK's API-key environment variable ("sk-local" when unset)
    tool_format: str = ""  # the format the tools are offered in (toolserver.formats), also in cassettes
    base_url_suffix: str = ""  # how the SDK's base URLs end, named when one without it answers 404
    server_kind: str = ""  # what serves the API, as an unreachable endpoint's message names it

    def __init__(self, model: str, options: AgentOptions | None = None) -> None:
        self.model = model
        self.options = options or AgentOptions()
        self.name = f"{self.kind}:{model}"
        self.cassette = Cassette(self.options.cassette, self.options.record_mode, self.options.rerecord_hint)

    def base_url(self, cassette) -> str | None:
        """``--base-url``; the endpoint the cassette was recorded against, when it replays every
        request (record mode ``none``, or ``once`` with a recording); the SDK's environment
        variable; else None (the SDK's default). A recording goes to the endpoint configured, never
        to one a cassette names, which would be sent the API key (``Cassette.other_endpoint``)."""
        return (
            self.options.base_url
            or self.cassette.recorded_base_url(cassette, self.endpoint_path)
            or os.environ.get(self.base_url_env)
            or None
        )

    def endpoint_decided(self) -> AgentOptions:
        """The options with the endpoint this process chooses (``base_url``) written in, for the agent
        made elsewhere (a Ray worker, whose environment is another): ``$OPENAI_BASE_URL`` or
        ``$ANTHROPIC_BASE_URL`` here, unless ``--base-url`` or the cassette's replay chooses."""
        chosen = os.environ.get(self.base_url_env)
        if self.options.base_url or not chosen or self.cassette.recorded_base_url(None, self.endpoint_path):
            return self.options
        return dataclasses.replace(self.options, base_url=chosen)

    def client_options(self, cassette, task: AgentTask | None = None) -> dict[str, Any]:
        options: dict[str, Any] = {
            "base_url": self.base_url(cassette),
            "api_key": os.environ.get(self.api_key_env) or "sk-local",
            "max_retries": 0 if self.cassette.replaying else 2,
        }
        run = getattr(task.client, "run", None) if task is not None else None
        faults = getattr(run, "faults", None)
        if faults is not None and (faults.plan.of("model-429") or faults.plan.of("model-5xx")):
            # built on httpx2 like the SDKs, so the cassette (which patches httpx2's transport) still answers
            options["http_client"] = httpx2.AsyncClient(transport=FaultyEndpoint(run, httpx2.AsyncHTTPTransport()))
        return options

    def details(self, cassette) -> dict[str, Any]:
        details: dict[str, Any] = {
            "model": self.model,
            "base_url": without_password(self.base_url(cassette) or "SDK default"),
            "turns": 0,
            "tool_calls": 0,
        }
        if cassette is not None:
            details.update(
                cassette=str(self.options.cassette),
                record_mode=self.options.record_mode.value,
                replayed=self.cassette.replaying,
            )
        return details

    def turn(self) -> AbstractAsyncContextManager[None]:
        """The attempt's turn at the model (alone, with a cassette), taken before its clock starts
        (``run_attempt``)."""
        return self.cassette.turn()

    async def endpoint_refused(self) -> str | None:
        """Why the attempt may not record new episodes into its cassette (a recording made at
        another endpoint than the one configured, or the SDK's default), or None."""
        if self.cassette.path is None or self.cassette.replaying:
            return None
        endpoint = self.base_url(None)
        if endpoint is None:  # the SDK's default, as its client says it
            client = self.sdk_client({"api_key": "sk-local", "max_retries": 0})
            endpoint = str(client.base_url)
            await client.close()
        return self.cassette.other_endpoint(endpoint, self.endpoint_path, f"--base-url / ${self.base_url_env}")

    async def run(self, task: AgentTask) -> AgentResult:
        refused = await self.endpoint_refused()
        if refused is not None:  # before any request: none may carry the key to the cassette's host
            return AgentResult(output="", status="error", details=self.details(None), error=refused)
        try:
            async with self.cassette.turn(), self.cassette.use(task.site_key) as cassette:
                result = await self.converse(task, cassette)
                if result.status == "completed":
                    self.cassette.keep_made_only(cassette)
                    unplayed = self.cassette.unplayed(cassette)
                    if unplayed is not None:  # a replay that ended sooner than the recording
                        result = dataclasses.replace(result, status="error", error=unplayed)
                    else:
                        self.cassette.completed()
        except CassetteUnreadable as exc:  # vcrpy could not load it: no request was made
            return AgentResult(output="", status="error", details=self.details(None), error=str(exc))
        finally:  # a recording left unsaved is said in the transcript, also when the attempt timed out
            if self.cassette.unsaved is not None:
                Transcript(task.workdir).write({"kind": "cassette", "error": self.cassette.unsaved})
        unsaved = self.cassette.unsaved
        if unsaved is not None:  # a completed conversation whose recording could not be written fails too
            error = f"{result.error}; {unsaved}" if result.error else unsaved
            result = dataclasses.replace(
                result, status="error" if result.status == "completed" else result.status, error=error
            )
        return result

    async def converse(self, task: AgentTask, cassette) -> AgentResult:
        raise NotImplementedError

    def sdk_client(self, options: dict[str, Any]) -> Any:
        """The SDK's async client, built with ``options`` (``client_options``)."""
        raise NotImplementedError

    def sdk_errors(self) -> tuple[type[Exception], type[Exception]]:
        """The SDK's error for a failure to connect or a time-out, and its base error."""
        raise NotImplementedError

    async def preflight(self) -> str | None:
        """Before a batch: can the endpoint be reached at all? (None: yes, or a cassette answers.)
        Only a connection failure or a time-out counts: an endpoint that answers the model list with
        an error (no ``/models`` route, a key refused) is reached. A cassette recorded against
        another endpoint than the one configured is said first (``endpoint_refused``)."""
        if self.cassette.replaying:
            return None
        refused = await self.endpoint_refused()
        if refused is not None:
            return refused
        client = self.sdk_client({**self.client_options(None), "max_retries": 0, "timeout": PREFLIGHT_TIMEOUT_S})
        unreachable, answered = self.sdk_errors()
        try:
            await client.models.list()
        except unreachable as exc:  # a time-out is one too
            return (
                f"cannot reach the model endpoint {without_password(str(client.base_url))} ({type(exc).__name__}: "
                f"{without_password(str(exc))}); start your "
                f"{self.server_kind} server there, or point --base-url / ${self.base_url_env} at it"
            )
        except answered:
            return None
        finally:
            await client.close()
        return None

    def request_failed(self, exc: BaseException, output: str, usage, details: dict, transcript=None) -> AgentResult:
        details = {**details, "base_url": without_password(str(details["base_url"]))}  # the SDK client's own
        error = (
            self.cassette.describe_failure(exc, details["turns"] + 1)
            or f"model API error at {details['base_url']} ({type(exc).__name__}): {exc}"
        )
        base, suffix = str(details["base_url"]).rstrip("/"), self.base_url_suffix
        if getattr(exc, "status_code", None) == 404 and suffix and not base.endswith(suffix):
            error += f" (the endpoint answered 404: such a base URL usually ends in {suffix}, as {base}{suffix})"
        if transcript is not None:
            transcript.write({"kind": "error", "error": error})
        return AgentResult(output=output, status="error", token_usage=usage, details=details, error=error)

    def cut_short(self, output: str, usage, details: dict, transcript, error: str) -> AgentResult:
        """A turn that asks for no tool but is no final answer either (the model hit its token
        limit, a filter stopped it, it refused): the attempt's error, said in the transcript too."""
        transcript.write({"kind": "error", "error": error})
        return AgentResult(output=output, status="error", token_usage=usage, details=details, error=error)

    def out_of_turns(self, output: str, usage, details: dict) -> AgentResult:
        return AgentResult(
            output=output,
            status="error",
            token_usage=usage,
            details=details,
            error=f"no final answer after {self.options.max_turns} model turns (--max-turns)",
        )


class FaultyEndpoint(httpx2.AsyncBaseTransport):
    """The ``model-429`` / ``model-5xx`` faults (``toolserver.faults``): a request to the model
    endpoint answered 429 or 503 before it leaves (or before a cassette answers it), each recorded
    in the run's trace."""

    def __init__(self, run: Any, inner: httpx2.AsyncBaseTransport) -> None:
        self.run, self.inner = run, inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        for kind, status in (("model-429", 429), ("model-5xx", 503)):
            fault = self.run.faults.draw(kind)
            if fault is not None:
                detail = f"{request.method} {request.url.path} answered {status}"
                self.run.record_event("fault_injected", {"fault": fault.name, "detail": detail})
                body = {"error": {"message": f"injected fault {fault.name}", "type": "injected_fault"}}
                return httpx2.Response(status, json=body, request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def add_usage(total: dict[str, int] | None, usage: Any, keys: tuple[str, ...]) -> dict[str, int] | None:
    """Token counts summed over the turns (``keys``: the SDK's usage fields), and the cached
    input tokens when the endpoint reports any (OpenAI's ``prompt_tokens_details.cached_tokens``,
    counted inside ``prompt_tokens``; Anthropic's ``cache_read_input_tokens`` and
    ``cache_creation_input_tokens``, beside ``input_tokens``): the cost boundary prices them
    apart (``sandbox.runner.prices``)."""
    total = dict(total or dict.fromkeys(keys, 0))
    if usage is None or any(getattr(usage, key, None) is None for key in keys if key != "total_tokens"):
        # a turn whose counts the endpoint did not give: the attempt's cost is unknown, never priced as 0
        total[UNCOUNTED] = total.get(UNCOUNTED, 0) + 1
    if usage is None:
        return total
    for key in keys:
        total[key] += int(getattr(usage, key, 0) or 0)
    for key, cached in cached_input(usage).items():
        if cached:
            total[key] = total.get(key, 0) + cached
    return total


def garbled_usage(usage: Any, keys: tuple[str, ...]) -> str | None:
    """Why an endpoint's usage is not what the API returns, or None (the SDKs build their objects
    without checking the answer: a list, or a count that is text, ended the attempt as crashed)."""
    if usage is None:
        return None
    if not callable(getattr(usage, "model_dump", None)):
        return f"its usage is {type(usage).__name__}, not an object"
    for key in keys:
        value = getattr(usage, key, None)
        if value is not None and type(value) is not int:  # a negative count is priced as unknown, not an error
            return f"its usage {key} is {value!r:.40}, not a count"
    try:
        cached_input(usage)
    except (TypeError, ValueError):
        return "its usage's cached input counts are not counts"
    return None


def cached_input(usage: Any) -> dict[str, int]:
    details = getattr(usage, "prompt_tokens_details", None)
    return {
        "cached_tokens": int(getattr(details, "cached_tokens", 0) or 0),
        "cache_read_input_tokens": int(getattr(usage, "cache_read_input_tokens", 0) or 0),
        "cache_creation_input_tokens": int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
    }
