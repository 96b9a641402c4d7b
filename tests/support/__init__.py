"""Helpers the tests share, one job per module: the test sites of ``fixtures/sites/`` written
into mirrors (``site``, ``hostile``), the canary server (``canary``), tool calls (``calls``), a
sandbox with its own config and an HTTP client for it (``sandboxes``), the processes under a pid
(``processes``), ``sandbox serve`` as a process (``serve``), strict trace lines (``traces``),
opening a report (``reports``), reference attempts (``reference``), a mirror with one fact
changed (``mirrors``), the scripted model server (``models``), a plain Chromium's flags
(``chromium``), chat transcripts derived from a trace (``transcripts``), a small file system
that fills up (``disks``) and bounded waits for what comes in its own time (``polling``).

Test modules and conftest files import from here; nothing here imports a test module, a
conftest or ``scripts/`` (``tests/test_support.py`` checks it)."""
