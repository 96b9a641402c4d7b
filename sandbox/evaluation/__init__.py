"""Evaluation: packs (models, loader, ``Pack.policy()``), field rules and normalisers, gates,
scoring.

Pure layer over ``sandbox.core``: no Playwright, no aiohttp, no ``toolserver`` and no runner.
"""
