"""``cmd:`` agents the batch tests share."""

from __future__ import annotations

import shlex
import sys

# Prints the prompt its run's server gives it (GET /runs/{id}/task).
TASK_PROMPT = (
    "cmd:" + shlex.quote(sys.executable) + " -c " + shlex.quote(
        "import json, os, urllib.request\n"
        "url = os.environ['SANDBOX_URL'] + '/runs/' + os.environ['SANDBOX_RUN_ID'] + '/task'\n"
        "print(json.load(urllib.request.urlopen(url))['prompt'])"
    )
)  # fmt: skip
