"""Hosts no browser takes are a problem said, never an exception, and hosts Chromium escapes are
said in their escaped form. Each expectation is what Chromium 156's ``new URL(...)`` gave for it
(and, for the escaped ones, what a route saw when navigated there)."""

from __future__ import annotations

import hashlib
import json

import pytest

from toolserver.contract.mirror_check import check
from toolserver.contract.policy import requested_form, url_problem


@pytest.mark.parametrize(
    "url",
    [
        "https://[zz/",  # raised ValueError ("Invalid IPv6 URL") from urlsplit
        "https://[::1/",
        "https://%zz/",  # an escape that is none leaves a "%" in the host
        "https://%25.example/",
        "https://a%7C.example/",
        "https://a^b/",
        "https://a%00b/",
        "https://a%3Cb/",
        "https://a%2Fb/",
    ],
)
def test_a_host_chromium_refuses_is_a_problem_not_an_error(url):
    assert requested_form(url) is None
    assert url_problem(url) == "a host name that is not one"


@pytest.mark.parametrize(
    ("url", "requested"),
    [
        ("https://a b/", "https://a%20b/"),  # was None: the entry was never matched
        ("https://a*b/", "https://a%2Ab/"),
        ("https://a%2ab/", "https://a%2Ab/"),
    ],
)
def test_a_host_chromium_escapes_is_said_escaped(url, requested):
    assert url_problem(url) == f"a browser requests it as {requested}"


@pytest.mark.parametrize("url", ["https://a%20b/", "https://a%2Ab/", "https://xn--/", "https://a!$&'()+,;=`{}~b/"])
def test_a_host_as_chromium_requests_it_has_no_problem(url):
    # "https://xn--/" included: Chromium 156 requests it as written (a route saw it)
    assert url_problem(url) is None


def test_mirror_check_says_a_bracketed_host_that_is_no_address(tmp_path):
    """``sandbox mirror check`` ended in a traceback (ValueError from urlsplit) on such an entry."""
    (tmp_path / "a.txt").write_bytes(b"hi")
    entry = {
        "url": "https://[zz/",
        "status": 200,
        "headers": {"content-type": "text/plain"},
        "body": "a.txt",
        "sha256": hashlib.sha256(b"hi").hexdigest(),
        "provenance": {"kind": "reconstructed", "basis": "a test"},
    }
    (tmp_path / "manifest.json").write_text(json.dumps({"entries": [entry]}))
    assert any("https://[zz/: never requested as written: a host name that is not one" in p for p in check(tmp_path))
