"""browser_click and browser_type: act on an element by a ref from the tab's latest snapshot."""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import Field, model_validator

from toolserver.browser import STATE_JS, STATE_NOW_JS, Tab, action_bound, bounded, evaluate, read_state
from toolserver.browser.call_log import click_sent, log_lines
from toolserver.errors import BrowserActionFailed, ToolError, UnknownRef
from toolserver.registry import ToolArgs, tool
from toolserver.response import PageState, Response
from toolserver.run import TabContext
from toolserver.tools._common import act, ask_page, guard_state_change, settle

MARKER = "data-sandbox-state-change"  # on a control (or around it) whose click changes state
UNREAD_MARKER = "(unreadable)"  # the name of a marker whose element went away before it was read
# Typing into a live field ends in a few ms; typing still waiting after this long checks its ref
# (a count costs ~1.5 ms of every typing when sent with it).
REF_CHECK_AFTER_S = 0.05


class RefArgs(ToolArgs):
    # ``target`` is Playwright MCP's current name for ``ref``. Both are published as optional
    # nullable strings (JSON Schema's oneOf is refused at the top level by some model APIs, and
    # a strict converter makes every property required): one of them names the element; null or
    # "" is "not given"; both given must agree.
    ref: str | None = Field(
        None,
        description='Element ref from the latest browser_snapshot of this tab, e.g. "e12" '
        "(required, or given as target).",
    )
    target: str | None = Field(
        None, description="Alias of ref (the name current Playwright MCP uses); null when ref is given."
    )
    element: str | None = Field(None, description="Human-readable description of the element (for the log only).")

    @model_validator(mode="before")
    @classmethod
    def _ref_or_target(cls, data):
        if not isinstance(data, dict):
            return data
        given = {key: data[key] for key in ("ref", "target") if data.get(key) not in (None, "")}
        if not given:
            raise ValueError("missing required argument 'ref' (or its alias 'target')")
        if len(given) == 2 and given["ref"] != given["target"]:
            ref, target = given["ref"], given["target"]
            raise ValueError(f"'ref' ({ref!r}) and its alias 'target' ({target!r}) name different elements: give one")
        rest = {key: value for key, value in data.items() if key not in ("ref", "target")}
        return rest | {"ref": given.get("ref", given.get("target"))}

    @property
    def element_ref(self) -> str:
        """The element's ref (the validator makes sure there is one)."""
        if self.ref is None:
            raise ValueError("no ref")  # unreachable: _ref_or_target requires one
        return self.ref


class ClickArgs(RefArgs):
    pass


class TypeArgs(RefArgs):
    text: str = Field(description="Text to put in the field, exactly (replaces its content).")
    submit: bool = Field(False, description="Press Enter after typing (a state-changing action).")


def ref_locator(tab: Tab, ref: str) -> Locator:
    """The locator of a ref from the tab's latest snapshot (checked without asking the page)."""
    if tab.snapshot.after_close is not None:
        raise UnknownRef(
            f"tab {tab.snapshot.after_close} closed (its page closed it), so tab {tab.id} is the current tab now; "
            f"ref {ref} is not taken for tab {tab.id}: capture a snapshot of it and use a ref from that"
        )
    if tab.snapshot_id is None:
        raise UnknownRef(f"tab {tab.id} has no snapshot yet: capture one with browser_snapshot and use a ref from it")
    if tab.snapshot_document != tab.document:
        raise UnknownRef(
            f"ref {ref} is from snapshot {tab.snapshot_id} of an earlier document (the page has navigated "
            "since). Capture a new snapshot and use a ref from it."
        )
    if ref not in tab.snapshot_refs:
        raise UnknownRef(
            f"Ref {ref} not found in the current page snapshot ({tab.snapshot_id}). Try capturing a new snapshot."
        )
    return tab.page.locator(f"aria-ref={ref}")


def ask_before(tab: Tab, locator: Locator, marker: bool) -> list[asyncio.Future]:
    """Ask, all at once and in this order, whether the ref matches one element, the page's state
    report and (``marker``) which elements on or around it carry a state-change marker: none of
    these waits."""
    asks = [locator.count(), evaluate(tab, STATE_NOW_JS)]
    if marker:
        asks.append(locator.locator(f"xpath=ancestor-or-self::*[@{MARKER}]").element_handles())  # [] for most
    return [asyncio.ensure_future(ask) for ask in asks]  # each sends its message now, in order


async def before_action(ctx: TabContext, tab: Tab, ref: str, locator: Locator, asks: list) -> dict:
    """The answers of ``ask_before``: the page's state report before the action (with the
    element's ``marker`` when it has one); a ref that matches no element is a stale ref."""
    count, state, *found = await ask_page(ctx, tab, asyncio.gather(*asks), "finding the element")
    marked = found[0] if found else []
    try:
        if count != 1:
            raise stale_ref(tab, ref)
        if marked:
            # Read from the element found, never waiting for it: the page may have taken it away
            # meanwhile. A marker that cannot be read counts as one of its own.
            try:
                state["marker"] = await ask_page(ctx, tab, marked[-1].get_attribute(MARKER), "reading the element")
            except PlaywrightError:
                state["marker"] = UNREAD_MARKER
    finally:
        if marked:
            await asyncio.gather(*(handle.dispose() for handle in marked), return_exceptions=True)
    return state


def abandon(ctx: TabContext, tab: Tab, action: asyncio.Future, ref: str) -> None:
    """An action already sent when its call fails (a stale ref, a page that does not answer).
    Playwright cannot take it back: it waits for its element until the action timeout, and a
    ref names one element only, so it can act only if that element comes back. Should it act
    after all, that is recorded (``late_action``, in the failed call's name), never silent."""

    def ended(future: asyncio.Future) -> None:
        if future.cancelled() or future.exception() is not None or ctx.run.closed:
            return  # the usual end: it timed out, or its page or session closed
        ctx.run.record_event("late_action", {"tool": ctx.tool, "ref": ref}, session=ctx.session, tab=tab, call=ctx)

    if action.done():
        ended(action)
    else:
        action.add_done_callback(ended)


def stale_ref(tab: Tab, ref: str) -> UnknownRef:
    return UnknownRef(
        f"Ref {ref} no longer matches an element on the page (it changed since snapshot "
        f"{tab.snapshot_id}). Capture a new snapshot."
    )


def watch_final_state(ctx: TabContext, tab: Tab, before: str | None, after: dict | None) -> None:
    """Record reaching a marked final state (``after``: the page's state once settled); a page
    that could not be read is recorded too, so a final-state change never goes unrecorded silently."""
    if tab.closed or tab.page.is_closed():
        return
    if after is None:
        ctx.run.record_event(
            "final_state_unchecked",
            {"error": "the page's state could not be read after the action"},
            session=ctx.session,
            tab=tab,
        )
        return
    if after.get("final") and after["final"] != before:
        ctx.run.record_state_change("final_state_reached", name=after["final"], session=ctx.session, tab=tab)


@tool(
    "browser_click",
    args=ClickArgs,
    title="Click",
    side_effect="input",
    description="Click an element by its ref from the latest snapshot of the current tab.",
)
async def browser_click(ctx: TabContext, args: ClickArgs, response: Response) -> None:
    tab, ref = ctx.tab, args.element_ref
    locator, document = ref_locator(tab, ref), tab.document
    # A run that blocks state changes must know whether the control is marked before it clicks.
    # Any other run sends the click at once, after the questions: the page answers them first, so
    # they still tell how it stood before the click, and the click waits for no round trip. Its
    # page reports a click on a marked control itself (init.js), even one that acts late.
    blocking = ctx.run.policy.block_state_changes
    asks = ask_before(tab, locator, marker=blocking)
    marks = ctx.session.marks(tab, None)  # before the click is sent: what the router sees next may be its doing
    clicking = None if blocking else asyncio.ensure_future(locator.click())
    try:
        seen = await before_action(ctx, tab, ref, locator, asks)
        marker = seen.get("marker")
        if marker:
            guard_state_change(
                ctx,
                tab,
                "final_state_click",
                marker,
                {"ref": ref},
                f"this control is marked as a state-changing action ({marker!r}); state changes are "
                "blocked in this run, so it was not clicked",
            )
    except BaseException:
        if clicking is not None:
            abandon(ctx, tab, clicking, ref)
        raise
    before = PageState(tab.id, tab.page.url, seen["title"])
    try:
        await act(ctx, clicking if clicking is not None else locator.click(), lambda ms: locator.click(timeout=ms))
    except PlaywrightTimeout as exc:
        if not await click_arrived(ctx, tab, seen, document, exc):
            raise
    after = await settle(ctx, tab, marks.reported(seen), await read_state(tab, ctx.run.config))
    watch_final_state(ctx, tab, seen["final"], after)
    response.page(tab, after["title"] if after is not None else None).changes(before).tabs()


async def click_arrived(ctx: TabContext, tab: Tab, seen: dict, document: int, exc: PlaywrightTimeout) -> bool:
    """Whether a click whose action timeout came after Playwright sent it acted after all: its
    log says it was done, or the page (the same document) counted a trusted click since ``seen``,
    its state before the click (init.js). On a busy machine the page may confirm a click only
    after the timeout; an agent told it failed would click again (a form's step skipped)."""
    sent = click_sent(log_lines(exc) or [])
    if sent == "done":
        return True
    if sent is None or "clicks" not in seen:
        return False
    try:  # a task turn later: the click's own handlers, and what they started, have run
        now = await bounded(evaluate(tab, STATE_JS), ctx.run.config.responsive_probe_s, "reading the page", tab)
    except (PlaywrightError, ToolError):  # navigating, closed or unresponsive: the error says what it can
        return False
    return tab.document == document and now.get("clicks", 0) > seen["clicks"]


# Playwright's words when fill() meets an element that takes no text (a button, a checkbox, a link).
NOT_A_FIELD = ("Element is not an <input>, <textarea>", "cannot be filled")


@tool(
    "browser_type",
    args=TypeArgs,
    title="Type text",
    side_effect="input",
    description="Type text into a field by its ref (exact text; Enter only when submit=true).",
)
async def browser_type(ctx: TabContext, args: TypeArgs, response: Response) -> None:
    tab = ctx.tab
    locator = ref_locator(tab, args.element_ref)
    inputs = tab.inputs
    # Sent at once, in this order: the page's state before typing and the typing. A live ref
    # waits for no answer before the typing. Typing that has not ended within REF_CHECK_AFTER_S
    # asks whether the ref still matches one element: a stale one fails when that count answers
    # (the typing, still waiting for its element, is abandoned).
    asking = asyncio.ensure_future(evaluate(tab, STATE_NOW_JS))
    filling = asyncio.ensure_future(locator.fill(args.text))
    counting = None
    try:
        seen = await ask_page(ctx, tab, asking, "reading the page")
        await asyncio.wait((filling,), timeout=REF_CHECK_AFTER_S)
        if not filling.done():
            counting = asyncio.ensure_future(locator.count())
            await asyncio.wait((filling, counting), return_when=asyncio.FIRST_COMPLETED)
            if not filling.done() and not counting.exception() and counting.result() != 1:
                raise stale_ref(tab, args.element_ref)
        try:
            await act(ctx, filling, lambda ms: locator.fill(args.text, timeout=ms))
        except PlaywrightError as exc:
            if any(said in str(exc) for said in NOT_A_FIELD):
                raise BrowserActionFailed(
                    f"{args.element_ref} is not a field text can be typed into (a textbox, a text area or an "
                    "editable element): pick a textbox's ref from the snapshot; a button or box is clicked"
                ) from None
            raise
    except BaseException:
        abandon(ctx, tab, filling, args.element_ref)
        raise
    finally:
        for future in (asking, counting):
            if future is None:
                continue
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()  # seen: an answer nobody needs is not an unretrieved error
    before = PageState(tab.id, tab.page.url, seen["title"])
    marks = ctx.session.marks(tab, seen)
    if args.submit:
        guard_state_change(
            ctx,
            tab,
            "enter_key",
            "enter",
            {"ref": args.element_ref},
            "submit=true presses Enter, a state-changing action that is blocked in this run; "
            "the text was typed but Enter was not pressed",
        )
        await locator.press("Enter")
    if args.submit:
        probe, typed = await read_state(tab, ctx.run.config), None
    else:
        probe, typed = await typing_report(ctx, tab, locator, inputs)
        if probe is not None:
            # Read after the typing (the count includes its input event): the picture after this
            # call needs no question to the page (toolserver.media).
            ctx.paint = probe.get("paint")
    after = await settle(ctx, tab, marks, probe)
    watch_final_state(ctx, tab, seen["final"], after)
    response.page(tab, after["title"] if after is not None else None).changes(before).tabs()
    if typed is not None:
        response.add(value=typed)


async def typing_report(ctx: TabContext, tab: Tab, locator: Locator, inputs: int) -> tuple[dict | None, str | None]:
    """The page's state after typing and the field's value (a page may limit or reformat it),
    from the page's typing report (sent once its own input handlers ran). A report still on its
    way races the same question asked directly, so a field that sends none (in a frame, or
    typing changed nothing) costs one round trip, never a wait."""

    def reported() -> bool:
        return tab.inputs > inputs and tab.input_state is not None

    if not reported():
        session = ctx.session
        asking = asyncio.ensure_future(
            asyncio.gather(read_state(tab, ctx.run.config, turn=False), locator.input_value())
        )

        def answered(future: asyncio.Future) -> None:
            session.notify()
            if not future.cancelled():
                future.exception()  # an answer the report overtook is not an unretrieved error

        asking.add_done_callback(answered)
        await session.until(lambda: reported() or asking.done(), time.monotonic() + action_bound(ctx.run.config))
        if not reported():
            answer = await ask_page(ctx, tab, asking, "reading the field")
            return answer[0], answer[1]
    state = tab.input_state
    assert state is not None  # reported() holds
    if state.get("value_unread"):  # the page broke the field's value getter: Playwright reads it its own way
        return state, await ask_page(ctx, tab, locator.input_value(), "reading the field")
    return state, state["value"]


TOOLS = [browser_click, browser_type]
