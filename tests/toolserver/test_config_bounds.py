"""ServerConfig refuses a wait or a limit that bounds nothing: the Python API takes a config
whole, with no CLI flag checking it first. NaN ended every wait at once (each call answered
page_unresponsive), inf let a frozen browser hold up shutdown for ever, 0 made a busy poll."""

from __future__ import annotations

import math

import pytest

from toolserver.config import ServerConfig


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("call_timeout_s", math.nan),
        ("settle_timeout_s", math.nan),
        ("shutdown_timeout_s", math.inf),
        ("close_timeout_s", -1.0),
        ("mcp_disconnect_poll_s", 0),
        ("download_check_s", 0.0),
        ("ended_run_ttl_s", math.nan),
        ("popup_grace_s", True),
    ],
)
def test_a_wait_that_is_not_a_positive_number_of_seconds_is_refused(field, value):
    with pytest.raises(ValueError, match=f"{field} must be a positive number of seconds"):
        ServerConfig(**{field: value})


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("action_timeout_ms", 0, "milliseconds of at least 1"),
        ("screenshot_timeout_ms", -1, "milliseconds of at least 1"),
        ("navigation_timeout_ms", 1.5, "milliseconds of at least 1"),
        ("max_sessions_per_run", 0, "at least 1"),
        ("max_tabs_per_session", -3, "at least 1"),
        ("max_page_text_chars", 0, "at least 1"),
        ("max_page_requests", 0, "at least 1"),
        ("max_ended_runs", -1, ">= 0 (0: none kept)"),
        ("max_page_event_lines", -1, ">= 0 (0: none written)"),
        ("viewport", (0, 0), "viewport must be two whole numbers"),
        ("viewport", (1280,), "viewport must be two whole numbers"),
    ],
)
def test_a_limit_that_bounds_nothing_is_refused(field, value, said):
    with pytest.raises(ValueError, match=f"{said}".replace("(", r"\(").replace(")", r"\)")):
        ServerConfig(**{field: value})


def test_the_defaults_and_a_meaningful_zero_are_taken():
    ServerConfig()
    ServerConfig(max_downloads=0, max_page_event_lines=0, max_sessions_per_core=0, min_free_fds=0, port=0)
