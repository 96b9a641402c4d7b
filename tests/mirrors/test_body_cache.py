"""The mirror store keeps bodies it has read in memory: a page loaded again needs no disk read
(and, in the router, no thread), within a byte bound, keyed by the body the manifest declares."""

from __future__ import annotations

from toolserver.contract.bodies import BodyCache
from toolserver.contract.mirrors import MirrorStore, reconstructed, write_entry

PAGE = "text/html; charset=utf-8"


def store_of(tmp_path, bodies: dict[str, bytes]) -> MirrorStore:
    for name, body in bodies.items():
        write_entry(tmp_path, f"https://cache.test/{name}", body, PAGE, reconstructed("test page"), body_path=name)
    return MirrorStore.load(tmp_path)


def test_a_body_read_once_is_served_from_memory(tmp_path):
    store = store_of(tmp_path, {"a.html": b"<p>a</p>"})
    assert store.cached("https://cache.test/a.html") is None  # nothing read yet
    assert store.lookup("https://cache.test/a.html").body == b"<p>a</p>"
    (tmp_path / "a.html").unlink()  # the disk is not read again
    again = store.cached("https://cache.test/a.html#part")
    assert again is not None and again.body == b"<p>a</p>" and again.status == 200
    assert store.lookup("https://cache.test/a.html").body == b"<p>a</p>"
    assert store.cached("https://cache.test/missing") is None


def test_the_least_recently_served_bodies_go_first_and_big_ones_are_not_kept(tmp_path):
    store = store_of(tmp_path, {"a.html": b"a" * 40, "b.html": b"b" * 40, "c.html": b"c" * 40, "big.html": b"x" * 90})
    store.bodies = BodyCache(max_bytes=100, max_body=80)
    for name in ("a.html", "b.html", "big.html"):
        store.lookup(f"https://cache.test/{name}")
    assert store.cached("https://cache.test/big.html") is None  # over the per-body bound: read each time
    store.cached("https://cache.test/a.html")  # a served again: b is now the oldest
    store.lookup("https://cache.test/c.html")  # 120 bytes > 100: b goes
    kept = [name for name in ("a.html", "b.html", "c.html") if store.cached(f"https://cache.test/{name}")]
    assert kept == ["a.html", "c.html"]


def test_a_new_store_of_changed_files_serves_the_new_bodies(tmp_path):
    store = store_of(tmp_path, {"a.html": b"old"})
    store.lookup("https://cache.test/a.html")
    write_entry(tmp_path, "https://cache.test/a.html", b"new", PAGE, reconstructed("test page"), body_path="a.html")
    assert MirrorStore.load(tmp_path).lookup("https://cache.test/a.html").body == b"new"
    assert store.lookup("https://cache.test/a.html").body == b"old"  # the body its manifest declared
