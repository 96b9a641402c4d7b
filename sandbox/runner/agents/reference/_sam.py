"""SAM.gov reading helpers for the reference agents: which supplied URL is which, the notice
data fields, the description's paragraphs, the attachment index and the lifecycle at an
as-of time. Only ``open_notice`` browses (through ``Browser``); the rest is pure and reads
only tool results handed to it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise
from typing import Any

from sandbox.runner.agents.reference._aria import Node
from sandbox.runner.agents.reference._reading import BenchmarkError, Browser, Citations, RunPlan, instant, seen_texts

NOTICE_PAGE = re.compile(r"^https://sam\.gov/opp/[0-9a-f]{32}/view$")
NOTICE_DATA = re.compile(r"^https://sam\.gov/api/prod/opps/v2/opportunities/[0-9a-f]{32}(\?.*)?$")
ATTACHMENT_INDEX = re.compile(r"^https://sam\.gov/api/prod/opps/v3/opportunities/[0-9a-f]{32}/resources$")


@dataclass(frozen=True)
class SamUrls:
    notice: str
    notice_data: list[str]  # in the order the run plan lists them
    attachment_index: str


def classify_urls(urls: tuple[str, ...]) -> SamUrls:
    notice = [u for u in urls if NOTICE_PAGE.match(u)]
    data = [u for u in urls if NOTICE_DATA.match(u)]
    index = [u for u in urls if ATTACHMENT_INDEX.match(u)]
    if len(notice) != 1 or len(index) != 1 or not data:
        raise BenchmarkError(f"cannot tell the notice page, notice data and attachment index apart in {urls}")
    return SamUrls(notice[0], data, index[0])


async def open_notice(browser: Browser, plan: RunPlan, urls: SamUrls, citations: Citations) -> Node:
    """Start the session, open the notice page (unless it is the start URL) and snapshot it
    once its script has rendered the notice (an h1 title); its texts may be cited."""

    def rendered(root: Node) -> bool:
        return any(n.role == "heading" and n.attributes.get("level") == "1" for n in root.walk())

    await browser.start(plan)
    if plan.start_url != urls.notice:
        await browser.navigate(urls.notice)
    _, page = await browser.rendered_snapshot(rendered)
    citations.saw(urls.notice, seen_texts(page))
    return page


def labelled_value(root: Node, label: str) -> str | None:
    """The text shown right after a node whose whole text is ``label`` (header blocks)."""
    nodes = [n for n in root.walk() if n.own_text and not n.role.startswith("/")]
    for node, following in pairwise(nodes):
        if node.own_text == label:
            return following.own_text
    return None


def data2(notice: dict) -> dict:
    return notice.get("data2") or {}


def response_due(notice: dict) -> str | None:
    return ((data2(notice).get("solicitation") or {}).get("deadlines") or {}).get("response")


def primary_naics(notice: dict) -> str | None:
    for entry in data2(notice).get("naics") or []:
        if entry.get("type") == "primary" and entry.get("code"):
            return entry["code"][0]
    return None


def secondary_naics(notice: dict) -> str | None:
    for entry in data2(notice).get("naics") or []:
        if entry.get("type") == "secondary" and entry.get("code"):
            return entry["code"][0]
    return None


def set_aside_category(notice: dict) -> str:
    """SAM set-aside code -> the output enum (SBA is the total small business set-aside)."""
    solicitation = data2(notice).get("solicitation") or {}
    if "setAside" not in solicitation:
        return "NOT_STATED"
    code = (solicitation.get("setAside") or "").strip().upper()
    if code == "SBA":
        return "TOTAL_SMALL_BUSINESS"
    if code in ("", "NONE"):
        return "UNRESTRICTED"
    return "OTHER"


def description_paragraphs(notice: dict) -> list[str]:
    """The description's paragraphs as plain text (the HTML body of the notice data)."""
    body = "".join(d.get("body") or "" for d in notice.get("description") or [])
    parts = re.split(r"</p\s*>|<br\s*/?>", body, flags=re.I)
    texts = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", part)).split()) for part in parts]
    return [t for t in texts if t]


def sentences(paragraph: str) -> list[str]:
    # Not after initials such as "U.S." (a sentence split there would still quote literally).
    return [s for s in re.split(r"(?<=[.!?])(?<![A-Z]\.[A-Z]\.)\s+(?=[A-Z])", paragraph) if s]


def lifecycle_at(notice: dict, as_of: datetime) -> str:
    """ACTIVE / ARCHIVED / CANCELLED at ``as_of``: a notice is archived from its inactive
    (archive) date on; the current ``archived`` flag alone says only how it is now."""
    if notice.get("cancelled"):
        return "CANCELLED"
    archive_date = (data2(notice).get("archive") or {}).get("date")
    if archive_date:
        return "ARCHIVED" if date.fromisoformat(archive_date[:10]) <= as_of.date() else "ACTIVE"
    return "ARCHIVED" if notice.get("archived") else "ACTIVE"


def attachment_files(resources: dict) -> list[dict]:
    """The index's current files (links and deleted files left out), in index order."""
    files = [
        a
        for group in (resources.get("_embedded") or {}).get("opportunityAttachmentList") or []
        for a in group.get("attachments") or []
        if a.get("type") == "file" and str(a.get("deletedFlag", "0")) != "1"
    ]
    return sorted(files, key=lambda a: a.get("attachmentOrder") or 0)


def as_of_from(task_text: str) -> tuple[str, datetime]:
    """The as-of timestamp the task input states (``as of `...` ``)."""
    match = re.search(r"as of `([^`]+)`", task_text)
    if not match:
        raise BenchmarkError("the task input states no as-of timestamp")
    return match.group(1), instant(match.group(1))


def award_amount(notice: dict) -> Any:
    award = data2(notice).get("award") or {}
    return award.get("amount") if award.get("amount") not in (None, "") else None


__all__ = [
    "SamUrls",
    "as_of_from",
    "attachment_files",
    "award_amount",
    "classify_urls",
    "data2",
    "description_paragraphs",
    "labelled_value",
    "lifecycle_at",
    "open_notice",
    "primary_naics",
    "response_due",
    "secondary_naics",
    "sentences",
    "set_aside_category",
]
