"""The mirrors through the tool contract (not raw Playwright): the form's validation and the
opinion PDF's holding as an agent sees them."""

from __future__ import annotations

import re

from tests.support.calls import ref_of, snapshot

FORM = "https://sarah27h.github.io/simple-multi-step-form/"
OPINION = "https://www.supremecourt.gov/opinions/22pdf/22-174_k536.pdf"
HOLDING = (
    "Title VII requires an employer that denies a religious accommodation to show that the burden of "
    "granting an accommodation would result in substantial increased costs in relation to the conduct "
    "of its particular business."
)


async def test_form_validation_messages_through_the_tools(sandbox):
    run = sandbox.create_run(pack="controlled-form")
    await run.call("browser_start_session", {"provider": "kernel", "site_key": "validation", "url": FORM})
    snap = (await snapshot(run))["snapshot"]
    await run.call("browser_type", {"ref": ref_of(snap, 'textbox "Name"'), "text": "Jo"})
    await run.call("browser_type", {"ref": ref_of(snap, 'textbox "Email"'), "text": "no-at-sign"})
    snap = (await snapshot(run))["snapshot"]
    assert "Error: name require minimum 3 characaters required" in snap
    await run.call("browser_type", {"ref": ref_of(snap, 'textbox "Name"'), "text": "Joana"})  # blurs Email
    snap = (await snapshot(run))["snapshot"]
    assert "Error: email require contain @ required" in snap
    assert "name require minimum" not in snap  # focusing a field clears its error
    await run.close()


async def test_pdf_snapshot_holds_the_holding_sentence(sandbox):
    run = sandbox.create_run(pack="court-docket")
    await run.call(
        "browser_start_session",
        {
            "provider": "kernel",
            "site_key": "pdf",
            "url": "https://www.supremecourt.gov/docket/docketfiles/html/public/22-174.html",
        },
    )
    reply = await run.call("browser_open_tab", {"url": OPINION})
    assert reply["ok"], reply
    snap = await snapshot(run)
    assert snap["format"] == "pdf_text" and snap["pdf_pages"] > 1
    text = re.sub(r"\s+", " ", re.sub(r"-\n", "", snap["snapshot"]))
    assert "Held: " + HOLDING in text
    assert "-\n" in snap["snapshot"]  # the raw text really is hyphenated at line ends
    await run.close()
