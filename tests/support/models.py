"""The scripted model server (``scripts/scripted_model_server.py``, a real OpenAI- and
Anthropic-compatible server on loopback), loaded from its file as the program under test."""

from __future__ import annotations

import importlib.util

from sandbox import PROJECT_ROOT


def scripted_server():
    spec = importlib.util.spec_from_file_location(
        "scripted_model_server", PROJECT_ROOT / "scripts" / "scripted_model_server.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
