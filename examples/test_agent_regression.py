"""Regression tests for a browser agent, as you would keep them in your own repository.

Install the sandbox (``pip install -e /path/to/browser-tool-sandbox``) and run ``pytest``:
the ``sandbox`` pytest plugin is active, gives each test ``sandbox_run``, and runs the
attempts offline against the mirrors on one warm Chromium.

- ``test_reference_agent_answers_every_field``: the scripted reference agent still gives an
  error-free pass on bid-intake (it reads every value from the pages, so a changed page fails
  it, naming the field, expected and got).
- ``test_recorded_model_conversation_obeys_the_gates``: a recorded model conversation (the
  cassette next to this file, ``cassettes/test_agent_regression/<test>.yaml``) replayed
  through the ``openai:`` agent: it must still complete and obey every gate. Re-record it
  against your model endpoint with ``--sandbox-record-mode all`` and ``OPENAI_BASE_URL``.
"""

import pytest

from sandbox.integrations.pytest_plugin import assert_error_free


@pytest.mark.sandbox_pack("bid-intake")
def test_reference_agent_answers_every_field(sandbox_run):
    assert_error_free(sandbox_run())


@pytest.mark.sandbox_pack("bid-intake")
def test_recorded_model_conversation_obeys_the_gates(sandbox_run):
    attempt = sandbox_run(agent="openai:scripted-browser-1")
    assert attempt.status == "completed", attempt.explain()
    assert attempt.report.gates.ok, attempt.explain()
