"""Evaluation: packs (models, loader, ``Pack.policy()``), field rules and normalisers, gates,
scoring, and what an evaluator that raises leaves behind (``evaluator_errors``: status error).

Pure: it uses ``toolserver.contract`` (trace, policy, names) and nothing else of the tool server;
no Playwright, no aiohttp, no runner.
"""
