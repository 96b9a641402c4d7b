"""Generate (or --check) every pack's evidence fixtures from the mirrors.

.venv/bin/python scripts/make_fixtures.py           # write packs/*/fixtures/...
.venv/bin/python scripts/make_fixtures.py --check   # exit 1 if any fixture disagrees with its mirror
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox import MIRRORS_DIR  # noqa: E402
from sandbox.evaluation.packs import list_packs  # noqa: E402
from sandbox.runner.fixtures import expected_fixtures  # noqa: E402
from toolserver.contract.mirrors import MirrorStore  # noqa: E402


async def main(check: bool) -> int:
    roots = (MIRRORS_DIR,)
    store = MirrorStore.load(*roots)
    problems = 0
    for pack in list_packs():
        for rel, data in (await expected_fixtures(pack, store, roots)).items():
            path = pack.dir / rel
            current = path.read_bytes() if path.is_file() else None
            if current == data:
                continue
            if check:
                problems += 1
                print(f"{pack.id}: {rel} {'is missing' if current is None else 'disagrees with its mirror'}")
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                print(f"{pack.id}: wrote {rel} ({len(data)} bytes)")
    if check and not problems:
        print("all evidence fixtures agree with the mirrors")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    sys.exit(asyncio.run(main(parser.parse_args().check)))
