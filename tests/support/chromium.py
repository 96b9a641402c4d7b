"""Flags for the tests' own plain Chromium (the ``browser`` fixture)."""

from __future__ import annotations

from toolserver.browser.chromium import chromium_launch_args

# The sandbox's flags with loopback left out of the dead proxy: anything a test's route does not
# answer goes nowhere, loopback goes direct.
PLAIN_ARGS = [arg for arg in chromium_launch_args() if not arg.startswith("--proxy-bypass-list")]
