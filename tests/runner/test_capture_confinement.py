"""`sandbox mirror import-har` writes only inside --into: a HAR entry whose host is `..`, `.`
or otherwise not a host name is refused before anything is written (issue 12, item 12)."""

from __future__ import annotations

import json

import pytest

from sandbox.cli import main
from toolserver.contract.mirrors import MirrorStore


def har_with(*urls: str) -> dict:
    return {
        "log": {
            "entries": [
                {
                    "startedDateTime": "2024-05-01T10:00:00.000Z",
                    "request": {"method": "GET", "url": url, "headers": []},
                    "response": {
                        "status": 200,
                        "headers": [{"name": "Content-Type", "value": "text/plain"}],
                        "content": {"size": 2, "mimeType": "text/plain", "text": "hi"},
                    },
                }
                for url in urls
            ]
        }
    }


@pytest.mark.parametrize(
    "bad", ["http://../x", "http://./x", "https://a..b/x", "http://.hidden/x", "http://bad_host!/x", "http://%2e%2e/x"]
)
def test_a_host_that_is_not_a_host_name_is_refused_and_nothing_is_written(tmp_path, capsys, bad):
    har = tmp_path / "work" / "input.har"
    har.parent.mkdir()
    har.write_text(json.dumps(har_with("https://example.org/kept.txt", bad)))
    into = tmp_path / "work" / "store"
    assert main(["mirror", "import-har", str(har), "--into", str(into)]) == 2
    err = capsys.readouterr().err
    assert "is not a host name" in err and "Traceback" not in err
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["work/input.har"]


def test_ip_hosts_and_ports_still_make_folders(tmp_path):
    har = tmp_path / "input.har"
    har.write_text(json.dumps(har_with("http://127.0.0.1:8080/a", "http://[::1]/b", "https://Example.ORG/c")))
    into = tmp_path / "store"
    assert main(["mirror", "import-har", str(har), "--into", str(into)]) == 0
    assert sorted(p.name for p in into.iterdir()) == ["127.0.0.1_8080", "__1", "example.org"]
    assert len(MirrorStore.load(into)) == 3
