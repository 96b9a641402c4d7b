"""A trace file holds whole lines only (issue 30, item 12): a write the file system refuses, in
full or in part (a full disk), is cut off again, so the trace stays valid JSONL while the disk is
full and after space returns; the writer's other promises hold as before."""

from __future__ import annotations

import errno
import os
import threading

import pytest

from tests.support.disks import fill, small_disk
from toolserver.contract.trace import RunHeader, TraceWriter, parse_trace

LONG = "x" * 9000  # a line longer than two pages: it cannot fit in the tail of the file's last page


def writer(path) -> TraceWriter:
    return TraceWriter(path, RunHeader(run_id="run_000000000000", started_wall=""))


def whole(path) -> list[dict]:
    """The file's records; fails on any partial or glued line."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    trace = parse_trace(text)
    assert trace.problems == []
    return [trace.header, *(c.model_dump() for c in trace.calls), *([trace.end] if trace.end else [])]


def call(seq: int, text: str = "") -> dict:
    return {"type": "call", "seq": seq, "tool": "t", "args": {"text": text}, "ok": True}


def test_a_full_disk_leaves_whole_lines_and_later_lines_are_whole_once_space_returns(tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        trace = writer(disk / "trace.jsonl")
        trace.write(call(1))
        filler = fill(disk)
        with pytest.raises(OSError) as refused:
            trace.write(call(2, LONG))  # part of it fits in the last page: a short write
        assert refused.value.errno == errno.ENOSPC
        assert [r["seq"] for r in whole(disk / "trace.jsonl")[1:]] == [1]
        with pytest.raises(OSError):
            trace.write(call(3, LONG))  # still full: still whole
        filler.unlink()  # space returns
        trace.write(call(4, LONG))
        trace.close("done")
        records = whole(disk / "trace.jsonl")
        assert [r.get("seq") for r in records[1:]] == [1, 4, None] and records[-1]["reason"] == "done"


class HostileWrites:
    """``os.write`` for the trace's file only: a short write of ``take`` bytes, or ENOSPC after
    writing ``take`` bytes (both happen on a full disk); other descriptors are untouched."""

    def __init__(self, path, take: int, fail: bool) -> None:
        self.inode, self.take, self.fail, self.real = os.stat(path).st_ino, take, fail, os.write
        self.armed = True

    def __call__(self, fd: int, data: bytes) -> int:
        if not self.armed or os.fstat(fd).st_ino != self.inode:
            return self.real(fd, data)
        self.armed = False
        written = self.real(fd, data[: self.take])
        if self.fail:
            raise OSError(errno.ENOSPC, "No space left on device")
        return written


@pytest.mark.parametrize("fail", [False, True], ids=["short write", "failed write after a part"])
def test_a_refused_write_is_cut_off_at_the_os_boundary(tmp_path, monkeypatch, fail):
    path = tmp_path / "trace.jsonl"
    trace = writer(path)
    trace.write(call(1))
    hostile = HostileWrites(path, take=17, fail=fail)
    monkeypatch.setattr(os, "write", hostile)
    with pytest.raises(OSError):
        trace.write(call(2, "lost"))
    assert not hostile.armed and [r["seq"] for r in whole(path)[1:]] == [1]
    trace.write(call(3))
    trace.close()
    assert [r.get("seq") for r in whole(path)[1:]] == [1, 3, None]


def test_a_run_end_that_cannot_be_written_still_closes_the_file(tmp_path, monkeypatch):
    path = tmp_path / "trace.jsonl"
    trace = writer(path)
    monkeypatch.setattr(os, "write", HostileWrites(path, take=5, fail=True))
    with pytest.raises(OSError):
        trace.close("deleted")
    assert trace.closed
    trace.write(call(9))  # after close: nothing written, nothing raised
    assert len(whole(path)) == 1


def test_lines_from_many_threads_stay_whole_and_in_memory_mode_keeps_them(tmp_path):
    path = tmp_path / "trace.jsonl"
    on_disk, in_memory = writer(path), writer(None)

    def write_many(start: int) -> None:
        for seq in range(start, start + 200):
            on_disk.write(call(seq, "é" * (seq % 50)))
            in_memory.write(call(seq))

    threads = [threading.Thread(target=write_many, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    on_disk.close()
    in_memory.close()
    assert len(whole(path)) == 1 + 800 + 1
    assert len(parse_trace(in_memory.text()).calls) == 800 and not parse_trace(in_memory.text()).problems
    assert in_memory.path is None and not list(tmp_path.glob("*.jsonl"))[1:]
