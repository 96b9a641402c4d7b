"""The controlled-form mirror behaves like the sarah27h simple-multi-step-form demo.

Loads https://sarah27h.github.io/simple-multi-step-form/ in a real headless Chromium whose
every request is answered from the mirror store; anything not mirrored is aborted and
recorded, and each test ends by asserting the page asked for nothing but the mirrored files
and raised no script error. The behaviours checked are those of shared/facts/demo-form.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from toolserver.contract.mirror_check import check
from toolserver.contract.mirrors import MANIFEST, MirrorStore

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MIRROR = PROJECT_ROOT / "mirrors" / "sarah27h.github.io"
GENERATOR = PROJECT_ROOT / "scripts" / "mirrors" / "build_form.py"

FORM_URL = "https://sarah27h.github.io/simple-multi-step-form/"
MIRRORED_URLS = {FORM_URL, f"{FORM_URL}static/js/form.js", f"{FORM_URL}static/css/form.css"}

SYNTHETIC = {
    "name": "João Muñoz",
    "email": "joao.munoz@example.com",
    "city": "São Paulo",
    "bio": "Synthetic contractor intake for a public browser benchmark; no real person, client, bid, or account.",
}
ALERT_TEXT = "Errors! - There are errors in this form, please go back to fix them"
RED = "rgb(238, 0, 0)"

# What Playwright's aria snapshot shows (accessible names from the DOM text, not uppercased).
STEP_1_TREE = """
- banner:
  - heading "Enter User Details (Step 1 of 3)" [level=1]
- text: Name
- textbox "Name"
- text: Email
- textbox "Email"
- button "Next"
"""
STEP_2_TREE = """
- banner:
  - heading "Enter Personal Details (Step 2 of 3)" [level=1]
- text: City
- textbox "City"
- text: Bio
- textbox "Bio"
- paragraph: character Numbers 0
- button "Back"
- button "Next"
"""
STEP_3_TREE = f"""
- banner:
  - heading "Confirm (Step 3 of 3)" [level=1]
- list:
  - listitem:
    - text: name
    - paragraph: {SYNTHETIC["name"]}
  - listitem:
    - text: email
    - paragraph: {SYNTHETIC["email"]}
  - listitem:
    - text: city
    - paragraph: {SYNTHETIC["city"]}
  - listitem:
    - text: bio
    - paragraph: {SYNTHETIC["bio"]}
- button "Back"
- button "Confirm & Next"
"""
STEP_4_TREE = """
- banner:
  - heading "Success (Finished)" [level=1]
- heading "Thank you for your submission!" [level=2]
- heading "you will get an email with further instructions" [level=2]
"""


@dataclass
class FormPage:
    page: Page
    requested: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    script_errors: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    async def heading(self) -> str:
        return (await self.page.locator("h1").inner_text()).strip()

    async def next(self) -> None:
        await self.page.get_by_role("button", name="Next", exact=True).click()

    async def back(self) -> None:
        await self.page.get_by_role("button", name="Back", exact=True).click()

    async def fill_and_leave(self, field_id: str, value: str) -> None:
        """Type a value and leave the field, so its blur validation runs.

        Leaving first matters: an error appearing on blur pushes the buttons down, and a
        click whose mousedown triggers that blur then lands beside the moved button (the
        demo behaves the same way).
        """
        box = self.page.locator(f"#{field_id}")
        await box.fill(value)
        await box.blur()

    async def active_element(self) -> str:
        return await self.page.evaluate(
            "() => { const a = document.activeElement; return a.id || a.textContent || a.tagName; }"
        )


@pytest.fixture(scope="module")
def store() -> MirrorStore:
    return MirrorStore.load(MIRROR)


@pytest.fixture
async def form(browser: Browser, store: MirrorStore):
    context = await browser.new_context()
    page = await context.new_page()
    form = FormPage(page)
    page.on("pageerror", lambda error: form.script_errors.append(str(error)))
    page.on("console", lambda message: form.console.append(f"{message.type}: {message.text}"))

    async def answer_from_mirror(route):
        url = route.request.url
        form.requested.append(url)
        mirrored = store.lookup(url)
        if mirrored is None:
            form.aborted.append(url)
            await route.abort()
            return
        await route.fulfill(status=mirrored.status, headers=mirrored.headers, body=mirrored.body)

    await page.route("**/*", answer_from_mirror)
    await page.goto(FORM_URL)
    yield form
    await context.close()
    assert form.aborted == [], f"requests outside the mirror: {form.aborted}"
    assert set(form.requested) <= MIRRORED_URLS, f"unexpected requests: {form.requested}"
    assert form.script_errors == [], f"script errors: {form.script_errors}"


# ---- the mirror files -------------------------------------------------------------------


def test_mirror_is_valid_and_rebuilds_byte_identically(tmp_path: Path) -> None:
    assert check(MIRROR) == []
    assert set(MirrorStore.load(MIRROR).urls()) == MIRRORED_URLS

    subprocess.run([sys.executable, str(GENERATOR), str(tmp_path)], check=True, capture_output=True)
    rebuilt = tmp_path / MIRROR.name

    committed = {p.relative_to(MIRROR) for p in MIRROR.rglob("*") if p.is_file()} - {Path("README.md")}
    fresh = {p.relative_to(rebuilt) for p in rebuilt.rglob("*") if p.is_file()}
    assert fresh == committed
    for relative in sorted(fresh):
        assert (rebuilt / relative).read_bytes() == (MIRROR / relative).read_bytes(), relative
    assert (rebuilt / MANIFEST).is_file()


def test_mirrored_entries_are_reconstructions_that_document_the_sandbox_hooks(store: MirrorStore) -> None:
    for url in MIRRORED_URLS:
        provenance = store.lookup(url).entry.provenance
        assert provenance.kind == "reconstructed"
        assert "sarah27h/simple-multi-step-form" in provenance.basis
    page_basis = store.lookup(FORM_URL).entry.provenance.basis
    assert 'data-sandbox-state-change="final-submit"' in page_basis
    assert 'data-sandbox-final-state="submitted"' in page_basis


# ---- page structure -----------------------------------------------------------------------


async def test_step_one_structure(form: FormPage) -> None:
    page = form.page
    assert await page.title() == "React App"
    assert await page.locator("form").count() == 0
    assert await page.locator("footer, nav").count() == 0

    header = page.locator("header")
    assert await header.count() == 1
    colours = await header.evaluate("h => { const s = getComputedStyle(h); return [s.backgroundColor, s.color]; }")
    assert colours == ["rgb(63, 81, 181)", "rgb(255, 255, 255)"]
    assert await header.locator("h1").count() == 1
    assert await form.heading() == "Enter User Details (Step 1 of 3)"
    # <h1> text followed by a <span> with the step counter (a separate child in the aria tree).
    assert await header.locator("h1").evaluate(
        "h => [h.firstChild.nodeType, h.firstChild.textContent, h.children.length, h.children[0].tagName, "
        "h.children[0].textContent]"
    ) == [3, "Enter User Details ", 1, "SPAN", "(Step 1 of 3)"]
    # What an agent's snapshot (Playwright's AI mode, as browser_snapshot takes it) shows.
    ai = await page.aria_snapshot(mode="ai")
    assert re.search(
        r'heading "Enter User Details \(Step 1 of 3\)" \[level=1\] \[ref=\w+\]:\n'
        r" +- text: Enter User Details\n +- generic \[ref=\w+\]: \(Step 1 of 3\)\n",
        ai,
    ), ai

    for field_id, label, input_type in (("name", "Name", "text"), ("email", "Email", "email")):
        box = page.locator(f"#{field_id}")
        assert await box.get_attribute("type") == input_type
        assert await box.get_attribute("name") is None
        assert await box.get_attribute("placeholder") is None
        assert await page.locator(f"label[for={field_id}]").inner_text() == label
        await expect(page.get_by_role("textbox", name=label, exact=True)).to_have_id(field_id)

    next_button = page.locator("button")
    assert await next_button.count() == 1
    assert await next_button.get_attribute("type") == "button"
    assert await next_button.text_content() == "Next"
    assert await next_button.inner_text() == "NEXT"
    assert await page.evaluate("() => document.activeElement === document.body")
    await expect(page.locator("body")).to_match_aria_snapshot(STEP_1_TREE)


# ---- the benchmark's path -----------------------------------------------------------------


async def test_synthetic_values_reach_the_confirmation_screen_then_success(form: FormPage) -> None:
    page = form.page
    await page.locator("#name").fill(SYNTHETIC["name"])
    await page.locator("#email").fill(SYNTHETIC["email"])
    await form.next()

    assert await form.heading() == "Enter Personal Details (Step 2 of 3)"
    assert await page.evaluate("() => document.activeElement === document.body")  # no autofocus
    await expect(page.locator("body")).to_match_aria_snapshot(STEP_2_TREE)
    city, bio = page.locator("#city"), page.locator("#bio")
    assert await city.get_attribute("type") == "text"
    assert await bio.evaluate("b => b.tagName") == "TEXTAREA"
    assert await bio.get_attribute("placeholder") == "Placeholder"
    assert await bio.get_attribute("name") is None
    assert await bio.get_attribute("aria-describedby") == "bio-helper-text"
    assert [await b.get_attribute("type") for b in await page.locator("button").all()] == ["button", "button"]
    # The placeholder is only visible while Bio has focus.
    placeholder_opacity = "b => getComputedStyle(b, '::placeholder').opacity"
    assert await bio.evaluate(placeholder_opacity) == "0"
    await bio.focus()
    assert float(await bio.evaluate(placeholder_opacity)) > 0

    one_line = await bio.evaluate("b => b.clientHeight")
    await city.fill(SYNTHETIC["city"])
    await bio.fill(SYNTHETIC["bio"])
    helper = page.locator("#bio-helper-text")
    assert await helper.inner_text() == f"character Numbers {len(SYNTHETIC['bio'])}"
    await expect(page.get_by_role("textbox", name="Bio")).to_have_accessible_description(
        f"character Numbers {len(SYNTHETIC['bio'])}"
    )
    assert await bio.evaluate("b => b.clientHeight") > one_line  # the textarea grows
    await form.next()

    assert await form.heading() == "Confirm (Step 3 of 3)"
    assert await page.evaluate("() => document.activeElement === document.body")
    await expect(page.locator("body")).to_match_aria_snapshot(STEP_3_TREE)
    items = page.get_by_role("listitem")
    assert await items.count() == 4
    for item, (key, value) in zip(await items.all(), SYNTHETIC.items(), strict=False):
        assert (await item.inner_text()).split("\n", 1)[0] == key
        assert value in await item.inner_text()
    body_text = await page.locator("body").inner_text()
    for value in SYNTHETIC.values():
        assert value in body_text
    assert "CONFIRM & NEXT" in body_text
    assert ALERT_TEXT not in body_text
    assert await page.get_by_role("alert").count() == 0
    assert await page.locator("[aria-live]").count() == 0

    confirm = page.locator("button", has_text="Confirm & Next")
    assert await confirm.text_content() == "Confirm & Next"
    assert await confirm.get_attribute("type") == "submit"
    assert await confirm.get_attribute("data-sandbox-state-change") == "final-submit"
    # Chromium's own accessibility tree applies text-transform to the button names.
    assert await chromium_button_names(page) == ["BACK", "CONFIRM & NEXT"]

    await confirm.click()
    assert await form.heading() == "Success (Finished)"
    await expect(page.locator("body")).to_match_aria_snapshot(STEP_4_TREE)
    assert await page.locator("h2").all_inner_texts() == [
        "Thank you for your submission!",
        "you will get an email with further instructions",
    ]
    assert await page.locator("button").count() == 0
    assert await page.locator('[data-sandbox-final-state="submitted"]').count() == 1


async def chromium_button_names(page: Page) -> list[str]:
    session = await page.context.new_cdp_session(page)
    tree = await session.send("Accessibility.getFullAXTree")
    await session.detach()
    return [
        node["name"]["value"]
        for node in tree["nodes"]
        if not node.get("ignored") and node.get("role", {}).get("value") == "button"
    ]


# ---- validation ---------------------------------------------------------------------------


async def test_validation_messages_appear_on_blur_and_clear_on_focus(form: FormPage) -> None:
    page = form.page
    await form.fill_and_leave("name", "Jo")
    await form.fill_and_leave("email", "joao.example.com")
    name_error, email_error = page.locator("#name-error"), page.locator("#email-error")
    assert await name_error.inner_text() == "Error: name require minimum 3 characaters required"
    assert await email_error.inner_text() == "Error: email require contain @ required"
    for error in (name_error, email_error):
        assert await error.evaluate("e => e.tagName") == "P"
        assert await error.get_attribute("aria-live") == "assertive"
        assert await error.evaluate("e => getComputedStyle(e).color") == RED
    assert await page.locator("#name").get_attribute("aria-invalid") == "true"

    await page.locator("#name").focus()  # focusing a field clears its own error only
    assert await name_error.count() == 0
    assert await page.locator("#name").get_attribute("aria-invalid") == "false"
    assert await email_error.count() == 1

    await form.fill_and_leave("name", SYNTHETIC["name"])
    await form.fill_and_leave("email", SYNTHETIC["email"])
    assert await page.locator("[aria-live]").count() == 0
    await form.next()

    await form.fill_and_leave("city", "SP")
    city_error = page.locator("#city-erro")
    assert await city_error.inner_text() == "Error: city require minimum 3 characaters required"
    assert await page.locator("#city").get_attribute("aria-invalid") == "true"

    await form.fill_and_leave("bio", "b" * 249)
    assert await page.locator("#bio-error").count() == 0
    await form.fill_and_leave("bio", "b" * 250)
    assert await page.locator("#bio-error").inner_text() == (
        "Error: bio character Numbers 250 and maximum 250 character required"
    )
    assert await page.locator("#bio-helper-text").inner_text() == "character Numbers 250"
    assert await page.locator("#bio").get_attribute("aria-invalid") == "true"
    await page.locator("#city").focus()
    assert await city_error.count() == 0


async def test_failed_check_shows_the_alert_and_confirm_does_nothing(form: FormPage) -> None:
    page = form.page
    await form.fill_and_leave("name", "Jo")
    await form.fill_and_leave("email", SYNTHETIC["email"])
    await form.next()  # step 1 Next always advances
    await form.fill_and_leave("city", SYNTHETIC["city"])
    await form.fill_and_leave("bio", SYNTHETIC["bio"])
    await form.next()  # step 2 Next always advances, and runs the whole-form check

    assert await form.heading() == "Confirm (Step 3 of 3)"
    alert = page.get_by_role("alert")
    assert await alert.inner_text() == ALERT_TEXT
    assert await alert.evaluate("a => a.tagName") == "H2"
    assert await alert.evaluate("a => getComputedStyle(a).color") == RED

    await page.get_by_role("button", name="Confirm & Next").click()
    assert await form.heading() == "Confirm (Step 3 of 3)"
    assert await page.locator("[data-sandbox-final-state]").count() == 0

    await form.back()  # values (and errors) are kept
    assert await page.locator("#city").input_value() == SYNTHETIC["city"]
    assert await page.locator("#bio").input_value() == SYNTHETIC["bio"]
    await form.back()
    assert await page.locator("#name").input_value() == "Jo"
    assert await page.locator("#name-error").count() == 1

    await form.fill_and_leave("name", SYNTHETIC["name"])
    await form.next()
    await form.next()
    assert await page.get_by_role("alert").count() == 0
    await page.get_by_role("button", name="Confirm & Next").click()
    assert await form.heading() == "Success (Finished)"


async def test_empty_fields_fail_the_whole_form_check(form: FormPage) -> None:
    await form.next()
    await form.next()
    assert await form.heading() == "Confirm (Step 3 of 3)"
    assert await form.page.get_by_role("alert").inner_text() == ALERT_TEXT


# ---- keyboard ----------------------------------------------------------------------------


async def test_keyboard_enter_tab_order_and_focus(form: FormPage) -> None:
    page = form.page
    await page.locator("#name").fill(SYNTHETIC["name"])
    await page.locator("#name").press("Enter")  # no form: Enter does nothing
    assert await form.heading() == "Enter User Details (Step 1 of 3)"
    assert await page.locator("#name").input_value() == SYNTHETIC["name"]

    await page.locator("#name").focus()
    order = []
    for _ in range(2):
        await page.keyboard.press("Tab")
        order.append(await form.active_element())
    assert order == ["email", "Next"]
    await page.locator("#email").fill(SYNTHETIC["email"])
    await page.locator("#email").press("Enter")
    assert await form.heading() == "Enter User Details (Step 1 of 3)"

    await page.get_by_role("button", name="Next").focus()
    await page.keyboard.press("Enter")  # Enter on a focused button activates it
    assert await form.heading() == "Enter Personal Details (Step 2 of 3)"
    assert await page.evaluate("() => document.activeElement === document.body")

    await page.locator("#city").fill(SYNTHETIC["city"])
    await page.locator("#city").press("Enter")
    assert await form.heading() == "Enter Personal Details (Step 2 of 3)"
    order = []
    for _ in range(3):
        await page.keyboard.press("Tab")
        order.append(await form.active_element())
    assert order == ["bio", "Back", "Next"]

    await page.locator("#bio").focus()
    await page.keyboard.type("ab")
    await page.keyboard.press("Enter")  # a newline in Bio, counted in the length
    await page.keyboard.type("c")
    assert await page.locator("#bio").input_value() == "ab\nc"
    assert await page.locator("#bio-helper-text").inner_text() == "character Numbers 4"
    assert await form.heading() == "Enter Personal Details (Step 2 of 3)"

    await page.get_by_role("button", name="Next").focus()
    await page.keyboard.press("Space")
    assert await form.heading() == "Confirm (Step 3 of 3)"
    await page.get_by_role("button", name="Back").focus()
    await page.keyboard.press("Tab")
    assert await form.active_element() == "Confirm & Next"


async def test_the_app_logs_its_error_state_on_every_render_and_change(form: FormPage) -> None:
    page = form.page
    await page.wait_for_timeout(50)  # console events arrive asynchronously
    assert form.console and all(m.startswith("log: ") for m in form.console), form.console
    rendered = len(form.console)
    await form.fill_and_leave("name", "Jo")  # focus, input, blur: one log each at least
    await page.wait_for_timeout(50)
    assert len(form.console) >= rendered + 3, form.console
    await form.next()  # a step change renders again
    await page.wait_for_timeout(50)
    assert len(form.console) >= rendered + 4, form.console
