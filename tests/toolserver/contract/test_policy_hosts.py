"""``url_problem`` reads a host as Chromium does (the WHATWG URL standard), so a pack author is
told the URL a browser really requests. Each expected form is what Chromium 156 requested when
navigated to the URL (a route saw it) and what its ``new URL(...).href`` gave."""

from __future__ import annotations

import pytest

from toolserver.contract.policy import url_problem


@pytest.mark.parametrize(
    ("url", "requested"),
    [
        # UTS-46 non-transitional: ß stays a letter of its own (IDNA 2003 made it "ss")
        ("https://straße.de/", "https://xn--strae-oqa.de/"),
        ("https://faß.example/x", "https://xn--fa-hia.example/x"),
        ("https://ＡＢＣ.example/", "https://abc.example/"),  # full-width letters, mapped
        ("https://h%41.example/", "https://ha.example/"),  # a host is percent-decoded
        # a "\\" ends the host: the rest is the path, not a user name before another host
        ("https://allowed.com\\@evil.com/", "https://allowed.com/@evil.com/"),
        ("https://example.com\\\\evil/", "https://example.com//evil/"),
        # a host that ends in a number is an IPv4 address, in any of its spellings
        ("https://0x7f.1/", "https://127.0.0.1/"),
        ("https://0177.0.0.1/", "https://127.0.0.1/"),
        ("https://1.2.3/", "https://1.2.0.3/"),
        ("https://10/", "https://0.0.0.10/"),
        ("https://h.example:0443/", "https://h.example/"),
        ("https://[0:0::1]/x", "https://[::1]/x"),
    ],
)
def test_a_host_is_read_as_a_browser_reads_it(url, requested):
    assert url_problem(url) == f"a browser requests it as {requested}"


@pytest.mark.parametrize("url", ["https://a.b.c.0x1/", "https://1.2.3.4.5/", "https://x.0/"])
def test_a_host_that_ends_in_a_number_but_is_no_address_is_no_host(url):
    # Chromium: "Failed to construct 'URL': Invalid URL"
    assert url_problem(url) == "a host name that is not one"


@pytest.mark.parametrize("url", ["https://xn--strae-oqa.de/", "https://h_x.example/", "https://h.example./"])
def test_a_host_as_requested_has_no_problem(url):
    assert url_problem(url) is None
