"""browser_open_tab while a page opens a popup: the tool's tab is exactly the page its own
``new_page()`` returned, and the popup is a popup as any other (a ``tab_opened`` line naming its
opener, held to the tab cap). Before, a page that appeared while the tool waited for its page was
taken for a tab the tool opened: no ``tab_opened`` line, no opener, no cap.

The race is made deterministic: the context's ``new_page`` (Chromium's, unchanged) is wrapped so
that the page's popup appears just before, or just after, the tool's page, and before the tool
has its answer."""

from __future__ import annotations

import pytest

from tests.support.calls import start
from tests.support.site import SITE
from toolserver.contract.trace import parse_trace
from toolserver.run import Run

POPUP = f"{SITE}/second"  # what t1 opens
OPENED = f"{SITE}/long"  # what the tool opens


def racing_popup(run: Run, popup_first: bool, popups: int = 1) -> None:
    """Make t1 open ``popups`` popups (window.open) while the next ``new_page`` of the run's session
    is under way: before Chromium makes the tool's page, or after it (the page's event seen) but
    before the tool has the answer."""
    session = run.current_session()
    context, opener = session.context, session.tabs["t1"].page
    make = context.new_page

    async def open_popups() -> None:
        for _ in range(popups):
            async with context.expect_page() as popup:  # its page and popup events handled, as the tool's
                await opener.evaluate(f"window.open({POPUP!r}), 1")
            await popup.value

    async def new_page():
        context.new_page = make  # type: ignore[method-assign]  # once
        if popup_first:
            await open_popups()
        page = await make()
        if not popup_first:
            await open_popups()
        return page

    context.new_page = new_page  # type: ignore[method-assign]


@pytest.mark.parametrize("popup_first", [True, False], ids=["popup-before-the-tools-page", "popup-after-it"])
async def test_open_tab_takes_its_own_page_and_a_racing_popup_is_a_popup(run, popup_first):
    await start(run, f"{SITE}/")
    racing_popup(run, popup_first)
    opened = await run.call("browser_open_tab", {"url": OPENED})
    session = run.current_session()
    assert opened["ok"], opened
    tool_tab = opened["result"]["tab"]
    assert opened["result"]["url"] == OPENED and session.active_tab_id == tool_tab, opened
    assert {t["tab"]: t["url"] for t in opened["result"]["tabs"]} == {
        "t1": f"{SITE}/",
        tool_tab: OPENED,
        next(t for t in session.tabs if t not in ("t1", tool_tab)): POPUP,
    }, opened
    await run.close()
    trace = parse_trace(run.trace.text())
    line = trace.calls[-1]
    said = [e["data"] for e in line.events if e["kind"] == "tab_opened"]
    assert len(said) == 1 and said[0]["opener"] == "t1" and said[0]["tab"] != tool_tab, said
    assert opened["result"]["changes"]["new_tabs"] == said, opened


async def test_popups_racing_open_tab_are_held_to_the_tab_cap(own_sandbox):
    """The tool's tab was counted against max_tabs_per_session before it opened; popups that
    appear meanwhile are popups over the cap, closed at once and recorded as such."""
    async with own_sandbox(max_tabs_per_session=2) as own:
        run = own.create_run()
        await start(run, f"{SITE}/")
        racing_popup(run, popup_first=True, popups=2)
        opened = await run.call("browser_open_tab", {"url": OPENED})
        tabs = sorted(run.current_session().tabs)
        await run.close()
    assert opened["ok"], opened
    assert len(tabs) == 2 and opened["result"]["tab"] in tabs, (tabs, opened)
    events = parse_trace(run.trace.text()).calls[-1].events
    refused = [e["data"] for e in events if e["kind"] == "blocked_request" and e["data"]["reason"] == "too_many_tabs"]
    assert refused, events
