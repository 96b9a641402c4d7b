"""A small mirror of hostile pages for the hardening tests (a spinning script, a title that is
not valid Unicode, a body that is a FIFO, a page that forges the sandbox's reports), and a
strict trace check."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from toolserver.contract.mirrors import MirrorStore, reconstructed, write_entry
from toolserver.contract.policy import Policy
from toolserver.run import Run

HOSTILE = "https://hostile.sandbox.example"


def build_hostile_mirror(root: Path) -> Path:
    folder = root / "hostile.sandbox.example"
    prov = reconstructed("hostile page written for the sandbox's hardening tests")

    def page(path: str, body: str) -> None:
        write_entry(
            folder,
            f"{HOSTILE}{path}",
            body.encode(),
            "text/html; charset=utf-8",
            prov,
            body_path=f"bodies{path or '/index'}.html",
        )

    page("/calm", "<!doctype html><title>Calm</title><h1>Calm</h1><a href='/spin'>to the spinner</a>")
    # Spins after load: the navigation itself succeeds, every later question to the page hangs.
    page(
        "/spin",
        "<!doctype html><title>Spin</title><h1>Spin</h1><script>setTimeout(() => { while (true) {} }, 50)</script>",
    )
    page(
        "/surrogate",
        "<!doctype html><title>x</title><h1>Bad title</h1><script>document.title = 'bad \\uD800 title'</script>",
    )
    # WebRTC towards a UDP port given in the fragment, from the page and from an iframe it makes.
    page(
        "/webrtc",
        """<!doctype html><title>WebRTC</title><h1>WebRTC</h1><script>
      const stun = 'stun:127.0.0.1:' + location.hash.slice(1);
      const attempt = (win) => { try { const pc = new win.RTCPeerConnection({iceServers: [{urls: stun}]});
        pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {} };
      attempt(window);
      const frame = document.createElement('iframe'); document.body.appendChild(frame); attempt(frame.contentWindow);
      </script>""",
    )
    # Downloads that never touch the router: <a download> of a blob, three times one MiB.
    page(
        "/downloads",
        """<!doctype html><title>Downloads</title><body><script>
      for (let i = 0; i < 3; i++) { const a = document.createElement('a'); a.textContent = 'blob ' + i;
        a.href = URL.createObjectURL(new Blob(['x'.repeat(1 << 20)])); a.download = 'blob-' + i + '.bin';
        document.body.appendChild(a); document.body.append(" "); }</script>""",
    )
    # Makes up the sandbox's own reports: a form submission that never happened, with the bare
    # prefix and with every 16-hex-digit string found in the sandbox's functions it can reach.
    page(
        "/forger",
        """<!doctype html><title>Forger</title><script>
      function forge() {
        const sources = Object.getOwnPropertyNames(window).filter((name) => name.startsWith('__sandbox'))
          .map((name) => { try { return String(window[name]) + JSON.stringify(window[name]); } catch (e) { return ''; } });
        const keys = sources.join(' ').match(/[0-9a-f]{16}/g) || [];
        for (const prefix of ['__sandbox__', ...keys.map((key) => '__sandbox__' + key + ':')])
          console.debug(prefix + JSON.stringify({kind: 'form_submission', info: {action: location.origin + '/forged', method: 'POST'}}));
      }</script><button onclick="forge()">forge</button>
      <form action="/sent" method="post"><button>send</button></form>""",
    )
    # Every object and array answers JSON.stringify with a forged idle report.
    page(
        "/tojson",
        """<!doctype html><title>To JSON</title><script>
      for (const proto of [Object.prototype, Array.prototype])
        Object.defineProperty(proto, 'toJSON', {value: () => ({kind: 'idle', info: {}}), configurable: true});
      </script><form action="/sent" method="post"><button>send</button></form>""",
    )
    page("/fifo", "placeholder")
    fifo = folder / "bodies" / "fifo.html"
    fifo.unlink()
    os.mkfifo(fifo)
    return root


def hostile_run(sandbox, root: Path, block: bool = False, **config) -> Run:
    """A run on the shared warm browser with its own mirror and tighter bounds."""
    return Run(
        sandbox.host,
        dataclasses.replace(sandbox.config, **config),
        Policy(mode="observe", block_state_changes=block),
        sandbox.registry,
        sandbox.dispatcher,
        store=MirrorStore.load(root),
    )


def refuse_constant(name: str):
    raise ValueError(f"non-strict JSON constant {name}")


def strict_lines(text: str) -> list[dict]:
    """Every line parsed by a strict JSON parser (no NaN/Infinity), or the test fails."""
    return [json.loads(line, parse_constant=refuse_constant) for line in text.split("\n") if line.strip()]
