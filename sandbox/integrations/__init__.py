"""Integrations with the tools users already run their agents in (pytest).

Top layer, beside ``sandbox.cli``: they wire the runner, packs and the tool server together
for the user, as the CLI does.
"""
