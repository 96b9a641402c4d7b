"""An external agent that speaks MCP, with the official MCP Python client: run it unchanged under

    sandbox run controlled-form --agent "cmd:$PWD/.venv/bin/python $PWD/scripts/example_mcp_agent.py"

The sandbox gives it SANDBOX_MCP_URL (the streamable-HTTP endpoint bound to its run) and
SANDBOX_PROMPT_FILE. It solves the controlled-form task: fills each step's values from the
task's table, clicks Next once per step, reads the confirmation screen from a fresh snapshot,
never clicks the final action, and prints the record the pack's schema asks for.
"""

import asyncio
import json
import os
import re

from mcp import Client

VALUE_ROW = re.compile(r"^\|\s*([^|`]+?)\s*\|\s*([^|`]+?)\s*\|\s*`([^`]*)`\s*\|\s*$", re.M)


def ref(snapshot: str, role: str, name: str) -> str:
    found = re.search(rf'{role} "{re.escape(name)}[^"]*"[^\n]*\[ref=(\w+)\]', snapshot)
    if not found:
        raise SystemExit(f"no {role} {name!r} in the snapshot:\n{snapshot}")
    return found.group(1)


async def solve(client: Client, prompt: str) -> dict:
    async def call(tool: str, **args) -> dict:
        result = await client.call_tool(tool, args)
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result.structured_content}")
        return result.structured_content

    def backticked(pattern: str) -> str:
        return re.search(pattern, prompt).group(1)

    rows = VALUE_ROW.findall(prompt)  # (step, label, value)
    site_key = backticked(r'site_key="([^"]+)"')
    url = backticked(r'browser_start_session call must pass url="([^"]+)"')
    heading = backticked(r"`([^`]*\(Step \d+ of \d+\))`")
    action = backticked(r"primary action (?:says|reads) `([^`]+)`")

    await call("browser_start_session", provider="kernel", site_key=site_key, clear_cookies=False, url=url)
    for step in dict.fromkeys(step for step, _, _ in rows):
        snapshot = (await call("browser_snapshot"))["snapshot"]
        for _, label, value in (row for row in rows if row[0] == step):
            await call("browser_type", ref=ref(snapshot, "textbox", label), text=value)
        await call("browser_click", ref=ref(snapshot, "button", "Next"))
    final = (await call("browser_snapshot"))["snapshot"]
    await call("browser_close")

    # The snapshot names buttons by DOM text ("Confirm & Next"); CSS shows it upper-case, as the task says.
    shows_action = re.search(rf'button "{re.escape(action)}"', final, re.I) is not None
    matches = all(value in final for _, _, value in rows)
    errors = len(re.findall(r"^\s*- alert\b", final, re.M))
    ready = f'heading "{heading}"' in final and matches and shows_action and errors == 0
    steps = re.search(r"Step (\d+) of (\d+)", heading)
    return {
        "record_id": backticked(r"Set `record_id` to exactly `([^`]+)`"),
        "target_url": url,
        "fields": {
            **{label.lower(): value for _, label, value in rows},
            "phone": "NOT_FOUND",
            "tax_identifier": "NOT_FOUND",
        },
        "workflow": {
            "steps_total": int(steps.group(2)),
            "steps_reached": int(steps.group(1)) if ready else 0,
            "current_heading": heading if ready else "NOT_FOUND",
            "visible_primary_action": action if shows_action else "NOT_FOUND",
            "validation_errors_visible": errors,
            "summary_matches_input": matches,
            "final_submission_attempted": False,
            "final_state": "READY_FOR_CONFIRMATION_NOT_SUBMITTED" if ready else "INCOMPLETE_NOT_SUBMITTED",
        },
    }


async def main() -> None:
    with open(os.environ["SANDBOX_PROMPT_FILE"], encoding="utf-8") as file:
        prompt = file.read()
    async with Client(os.environ["SANDBOX_MCP_URL"]) as client:
        record = await solve(client, prompt)
    print("BENCHMARK_JSON_BEGIN")
    print(json.dumps([record], ensure_ascii=False, indent=2))
    print("BENCHMARK_JSON_END")


if __name__ == "__main__":
    asyncio.run(main())
