"""``url_problem``: a URL written otherwise than a browser requests it is never matched (an
allow-list entry, a mirror entry): the form to write instead is said."""

from __future__ import annotations

import pytest

from toolserver.contract.policy import url_problem


@pytest.mark.parametrize(
    ("url", "requested"),
    [
        ("https://h.example/café", "https://h.example/caf%C3%A9"),
        ("http://127.0.0.1:18770", "http://127.0.0.1:18770/"),
        ("HTTP://h.example/UP", "http://h.example/UP"),
        ("https://h.example:443/x", "https://h.example/x"),
        ("https://h.example/?q=a b", "https://h.example/?q=a%20b"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("https://h.example/x/../y", "https://h.example/y"),
        ("https://h.example/a/./b", "https://h.example/a/b"),
        # as Chromium 156 sent them: ^ ` { | } escaped in a path, ' in a query, a "\\" in a path is "/"
        ("https://h.example/p|a^th{x}`", "https://h.example/p%7Ca%5Eth%7Bx%7D%60"),
        ("https://h.example/s?q=e'f", "https://h.example/s?q=e%27f"),
        ("https://h.example/a\\b", "https://h.example/a/b"),
        ("https://h.example/p#a`b c", "https://h.example/p#a%60b%20c"),
        ("https://h.example/a/%2e%2e/b", "https://h.example/b"),  # escaped dot segments, as Chromium 156 resolved them
        ("https://h.example/a/%2E/b", "https://h.example/a/b"),
        ("https://h.example/a/b/.%2E", "https://h.example/a/"),
    ],
)
def test_the_form_a_browser_requests_is_said(url, requested):
    assert url_problem(url) == f"a browser requests it as {requested}"


@pytest.mark.parametrize(
    "url",
    [
        "https://sam.gov/opp/9998b42f9e27421caa565fead7d8d416/view",
        "https://www.ecfr.gov/api/versioner/v1/versions/title-48.json?part=52&section=52.236-1",
        "https://h.example/x?",
        "https://h.example/caf%C3%A9#part",
        "http://[::1]:8080/x",
        # a real browser's request, from Chromium 156: a HAR of it is imported as it is
        "https://example.org/p!%22$&'()*+,-.:;%3C=%3E@[]%5E_%60%7B%7C%7D~%20%C3%A9"
        "?q=!%22$&%27()*+,-.:;%3C=%3E@[]^_`{|}~%20%C3%A9%41",
        "https://h.example/search?q=a|b{c}^d`e\\f",
        "https://h.example/p#!#$&'()*+,-./:;=?@[\\]^_{|}~",
    ],
)
def test_a_url_as_requested_has_no_problem(url):
    assert url_problem(url) is None
