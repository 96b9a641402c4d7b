"""The tool server: the benchmark's browser-tool contract on Playwright + Chromium.

registry (tools) -> run (the dispatcher, one error boundary) -> tools/ (handlers) ->
browser (sessions, tabs, profiles, the mirror router) ; transports: api (in-process), app (HTTP).
"""
