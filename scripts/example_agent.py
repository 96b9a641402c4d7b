"""A minimal external agent, standard library only: how a ``cmd:`` agent talks to the sandbox.

    .venv/bin/python -m sandbox run bid-intake --agent 'cmd:python3 /path/to/scripts/example_agent.py'

The sandbox gives it SANDBOX_URL, SANDBOX_RUN_ID and SANDBOX_PROMPT_FILE. It reads the site key,
the start URL and the allowed URLs from the prompt, starts the one session, snapshots every
allowed URL, closes the session and prints its answer on stdout. A real agent would read the
snapshots and fill the pack's output schema; this one only reports what it saw.
"""

import json
import os
import re
import urllib.error
import urllib.request

TOOLS_URL = f"{os.environ['SANDBOX_URL']}/runs/{os.environ['SANDBOX_RUN_ID']}/tools/"


def call(tool, **args):
    """POST the arguments as JSON; every reply is {"ok": true, "result"} or {"ok": false, "error"}."""
    request = urllib.request.Request(
        TOOLS_URL + tool, data=json.dumps(args).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:  # tool errors with a 4xx status still carry the JSON reply
        return json.load(error)


def main():
    with open(os.environ["SANDBOX_PROMPT_FILE"], encoding="utf-8") as file:
        prompt = file.read()
    site_key = re.search(r'site_key="([^"]+)"', prompt).group(1)
    start_url = re.search(r'browser_start_session call must pass url="([^"]+)"', prompt).group(1)
    allowed = re.search(r"only these exact resource URLs: (.+?)\.(?: A fragment|\s*$)", prompt, re.M)
    urls = [url.strip() for url in allowed.group(1).split(";")]

    started = call("browser_start_session", provider="kernel", site_key=site_key, clear_cookies=False, url=start_url)
    if not started["ok"] or started["result"].get("provider") != "kernel":
        print(f"BENCHMARK_ERROR: the session did not start on Kernel: {started}")
        return
    seen = []
    for url in [start_url] + [url for url in urls if url != start_url]:
        if url != start_url:
            call("browser_navigate", url=url)
        snapshot = call("browser_snapshot")
        result = snapshot.get("result") or {}
        seen.append({"url": url, "title": result.get("title", ""), "characters": len(result.get("snapshot", ""))})
    call("browser_close")

    record = {"visited": seen}
    print("BENCHMARK_JSON_BEGIN")
    print(json.dumps([record], indent=2))
    print("BENCHMARK_JSON_END")


if __name__ == "__main__":
    main()
