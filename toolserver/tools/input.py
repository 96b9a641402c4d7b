"""browser_click and browser_type: act on an element by a ref from the tab's latest snapshot."""

from __future__ import annotations

from pydantic import Field, model_validator

from playwright.async_api import Error as PlaywrightError

from toolserver.browser import Tab, first_line
from toolserver.errors import PolicyViolation, UnknownRef
from toolserver.registry import ToolArgs, tool
from toolserver.dispatch import CallContext
from toolserver.tools._common import action_result, ask_page, now, page_state, settle

_MARKER_JS = """el => { const m = el.closest('[data-sandbox-state-change]');
                        return m ? m.getAttribute('data-sandbox-state-change') : null; }"""
_FINAL_JS = """() => { for (const el of document.querySelectorAll('[data-sandbox-final-state]')) {
                         if (el.checkVisibility()) return el.getAttribute('data-sandbox-final-state'); }
                       return null; }"""


class RefArgs(ToolArgs):
    # ``target`` is Playwright MCP's current name for ``ref``: both are published, exactly one is
    # required (checked below; JSON Schema's oneOf is refused at the top level by some model APIs).
    # Typed ``str`` with no default value of their own: the schema says string, null is refused.
    ref: str = Field(None, description='Element ref from the latest browser_snapshot of this tab, e.g. "e12". '
                                              'Give ref or target (its alias), exactly one.')
    target: str = Field(None, description='Alias of ref (the name current Playwright MCP uses). Give ref or target, exactly one.')
    element: str | None = Field(None, description="Human-readable description of the element (for the log only).")

    @model_validator(mode="before")
    @classmethod
    def _one_of_ref_target(cls, data):
        if not isinstance(data, dict):
            return data
        if "ref" in data and "target" in data:
            raise ValueError("give either 'ref' or its alias 'target', not both")
        if "ref" not in data and "target" not in data:
            raise ValueError("missing required argument 'ref' (or its alias 'target')")
        if "target" in data:
            data = {key: value for key, value in data.items() if key != "target"} | {"ref": data["target"]}
        return data


class ClickArgs(RefArgs):
    pass


class TypeArgs(RefArgs):
    text: str = Field(description="Text to put in the field, exactly (replaces its content).")
    submit: bool = Field(False, description="Press Enter after typing (a state-changing action).")


async def resolve_ref(ctx: CallContext, tab: Tab, ref: str):
    if tab.snapshot_id is None:
        raise UnknownRef(f"tab {tab.id} has no snapshot yet: capture one with browser_snapshot and use a ref from it")
    if tab.snapshot_document != tab.document:
        raise UnknownRef(f"ref {ref} is from snapshot {tab.snapshot_id} of an earlier document (the page has navigated "
                         "since). Capture a new snapshot and use a ref from it.")
    if ref not in tab.snapshot_refs:
        raise UnknownRef(f"Ref {ref} not found in the current page snapshot ({tab.snapshot_id}). Try capturing a new snapshot.")
    locator = tab.page.locator(f"aria-ref={ref}")
    if await ask_page(ctx, locator.count(), "finding the element") != 1:
        raise UnknownRef(f"Ref {ref} no longer matches an element on the page (it changed since snapshot "
                         f"{tab.snapshot_id}). Capture a new snapshot.")
    return locator


async def guard_final_state(ctx: CallContext, tab: Tab, locator, ref: str) -> None:
    marker = await ask_page(ctx, locator.evaluate(_MARKER_JS), "reading the element")
    if marker:
        run = ctx.run
        blocked = run.policy.block_state_changes and not run.policy.state_change_allowed(marker)
        run.record_state_change("final_state_click", name=marker, blocked=blocked,
                                detail={"ref": ref}, session=ctx.session, tab=tab)
        if blocked:
            raise PolicyViolation(f"this control is marked as a state-changing action ({marker!r}); state changes are "
                                  "blocked in this run, so it was not clicked")


async def watch_final_state(ctx: CallContext, tab: Tab, before: str | None) -> None:
    """Record reaching a marked final state; a page that cannot be asked is recorded too, so a
    final-state change never goes unrecorded silently."""
    if tab.closed or tab.page.is_closed():
        return
    try:
        after = await ask_page(ctx, tab.page.evaluate(_FINAL_JS), "reading the page state")
    except PlaywrightError as exc:
        ctx.run.record_event("final_state_unchecked", {"error": first_line(str(exc))}, session=ctx.session, tab=tab)
        return
    if after and after != before:
        ctx.run.record_state_change("final_state_reached", name=after, session=ctx.session, tab=tab)


@tool("browser_click", args=ClickArgs, title="Click", side_effect="input",
      description="Click an element by its ref from the latest snapshot of the current tab.")
async def browser_click(ctx: CallContext, args: ClickArgs) -> dict:
    tab = ctx.tab
    before = await page_state(ctx, tab)
    locator = await resolve_ref(ctx, tab, args.ref)
    final_before = await ask_page(ctx, tab.page.evaluate(_FINAL_JS), "reading the page state")
    await guard_final_state(ctx, tab, locator, args.ref)
    since = now()
    await locator.click()
    await settle(ctx, tab, since, after_action=True)
    await watch_final_state(ctx, tab, final_before)
    return await action_result(ctx, tab, before)


@tool("browser_type", args=TypeArgs, title="Type text", side_effect="input",
      description="Type text into a field by its ref (exact text; Enter only when submit=true).")
async def browser_type(ctx: CallContext, args: TypeArgs) -> dict:
    tab = ctx.tab
    before = await page_state(ctx, tab)
    locator = await resolve_ref(ctx, tab, args.ref)
    final_before = await ask_page(ctx, tab.page.evaluate(_FINAL_JS), "reading the page state")
    since = now()
    await locator.fill(args.text)
    if args.submit:
        run = ctx.run
        blocked = run.policy.block_state_changes and not run.policy.state_change_allowed("enter")
        run.record_state_change("enter_key", name="enter", blocked=blocked, detail={"ref": args.ref},
                                session=ctx.session, tab=tab)
        if blocked:
            raise PolicyViolation("submit=true presses Enter, a state-changing action that is blocked in this run; "
                                  "the text was typed but Enter was not pressed")
        await locator.press("Enter")
    await settle(ctx, tab, since, after_action=args.submit)
    typed = await locator.input_value() if await ask_page(ctx, locator.count(), "finding the element") == 1 else None
    await watch_final_state(ctx, tab, final_before)
    result = await action_result(ctx, tab, before)
    if typed is not None and not args.submit:
        result["value"] = typed
    return result


TOOLS = [browser_click, browser_type]
