"""A request the page opens again from its own load handler (``xhr.open`` then ``send`` on the
same XMLHttpRequest): the first request's loadend comes after that, and is not the reopened
request's end. Before, it ended the reopened request in the page's count of requests in flight,
so the page said it was idle while the reopened request was still out, and a click returned
before the page had handled its answer."""

from __future__ import annotations

from pathlib import Path

from tests.support.calls import ref_of
from tests.support.hostile import snapshot_text
from toolserver.contract.mirrors import reconstructed, write_entry
from toolserver.contract.policy import Policy
from toolserver.contract.trace import parse_trace
from toolserver.faults import parse_faults

ORIGIN = "https://reopen.sandbox.example"
PAGE = """<!doctype html><title>Reopen</title><h1>Reopen</h1>
<button id="go">Fetch twice</button>
<script>
document.getElementById('go').addEventListener('click', () => {
  const xhr = new XMLHttpRequest();
  let step = 1;
  xhr.addEventListener('load', () => {
    if (step === 1) {   // the first answer: the same request object goes out again
      step = 2;
      document.title = 'first handled';
      xhr.open('GET', '/second');
      xhr.send();
    } else {
      document.title = 'second handled';
    }
  });
  xhr.open('GET', '/first');
  xhr.send();
});
</script>
"""


def reopen_mirror(root: Path) -> Path:
    folder, made = root / "reopen.sandbox.example", reconstructed("page written for the sandbox's settle tests")
    write_entry(folder, f"{ORIGIN}/page", PAGE.encode(), "text/html; charset=utf-8", made)
    for path in ("/first", "/second"):
        write_entry(folder, f"{ORIGIN}{path}", f"answer {path}".encode(), "text/plain; charset=utf-8", made)
    return root


async def test_a_click_waits_for_the_request_its_page_opened_again(sandbox, tmp_path):
    # Every mirrored answer comes 400 ms late: the reopened request is out well after the first's loadend.
    run = sandbox.create_run(
        policy=Policy(mode="observe"),
        mirror_roots=(reopen_mirror(tmp_path / "mirror"),),
        faults=parse_faults("mirror-delay:ms=400"),
    )
    try:
        started = await run.call(
            "browser_start_session", {"provider": "kernel", "site_key": "reopen", "url": f"{ORIGIN}/page"}
        )
        assert started["ok"], started
        clicked = await run.call("browser_click", {"ref": ref_of(await snapshot_text(run), 'button "Fetch twice"')})
        assert clicked["ok"], clicked
        assert clicked["result"]["title"] == "second handled", clicked["result"]
    finally:
        await run.close()
    events = parse_trace(run.trace.text()).events
    assert [e.data for e in events if e.kind == "settle_timeout"] == []
