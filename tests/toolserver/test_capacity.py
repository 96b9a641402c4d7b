"""At a real limit of the machine (issue 32) the server refuses new work with an error naming the
limit and its figures, and every run goes on: a session start gets ``server_at_capacity`` (a tool
error, recorded in the trace; the run stays usable), a new run ``429 server_at_capacity`` (over
MCP the JSON-RPC ``SERVER_BUSY``). On the real Chromium, over real loopback servers; the memory
reserve is set above what the machine has, the descriptor check is given a tiny limit."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.support.sandboxes import http_client
from tests.support.serve import free_port, wait_healthy
from toolserver.capacity import (
    available_memory_mb,
    cores,
    file_descriptor_shortage,
    machine_tasks,
    memory_shortage,
    open_file_descriptors,
    open_session_shortage,
    session_cap,
    task_shortage,
    user_task_room,
)
from toolserver.cgroups import cgroup_cpu_limit, cgroup_room_mb, cgroup_task_room
from toolserver.config import ServerConfig
from toolserver.contract.trace import parse_trace
from toolserver.transports.mcp import SERVER_BUSY

START = {"provider": "kernel"}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


def beyond_the_machine() -> int:
    """A memory reserve (MB) larger than all the memory this machine has available."""
    available = available_memory_mb()
    assert available is not None, "these tests read /proc/meminfo (Linux)"
    return available + 1_000_000


def calls_of(trace_text: str) -> list[tuple[str, str | None]]:
    return [(c.tool, c.error.type if c.error else None) for c in parse_trace(trace_text).calls]


async def test_a_session_start_short_of_memory_is_refused_and_the_run_goes_on(own_sandbox):
    async with own_sandbox() as own:
        run = own.create_run()
        fits = run.config
        run.config = dataclasses.replace(fits, min_free_memory_mb=beyond_the_machine())  # memory ran short since
        refused = await run.call("browser_start_session", START)
        assert not refused["ok"] and refused["error"]["type"] == "server_at_capacity"
        message, details = refused["error"]["message"], refused["error"]["details"]
        assert "memory" in message and "min_free_memory_mb" in message and "later" in message
        assert details["limit"] == "memory" and details["threshold"] == run.config.min_free_memory_mb
        assert 0 < details["measured"] < details["threshold"] and str(details["measured"]) in message
        assert run.sessions == {}  # no browser context was made

        run.config = fits  # memory is back: the same run starts its session
        started = await run.call("browser_start_session", START)
        assert started["ok"], started
        await run.close()
        assert calls_of(run.trace.text()) == [
            ("browser_start_session", "server_at_capacity"),
            ("browser_start_session", None),
        ]


async def test_a_session_start_beyond_max_open_sessions_is_refused_until_one_closes(own_sandbox):
    # Its own Chromium: the count is of the sessions open on the server's browser, all runs together.
    async with own_sandbox(own_browser=True, max_open_sessions=1) as own, http_client(own) as server:

        async def new_run() -> str:
            return (await (await server.post("/runs", json={})).json())["run_id"]

        async def call(run_id: str, name: str, args: dict) -> dict:
            return await (await server.post(f"/runs/{run_id}/tools/{name}", json=args)).json()

        first, second = await new_run(), await new_run()
        opened = await call(first, "browser_start_session", START)
        assert opened["ok"], opened
        refused = await call(second, "browser_start_session", START)
        assert not refused["ok"] and refused["error"]["type"] == "server_at_capacity"
        assert "open sessions" in refused["error"]["message"] and "max_open_sessions 1" in refused["error"]["message"]
        assert refused["error"]["details"] == {
            "limit": "open_sessions",
            "measured": 1,
            "threshold": 1,
            "unit": "sessions",
        }

        assert (await call(first, "browser_close", {"session_id": opened["result"]["session_id"]}))["ok"]
        assert (await call(second, "browser_start_session", START))["ok"]
        await server.delete(f"/runs/{second}")
        trace = await (await server.get(f"/runs/{second}/trace")).text()
        assert calls_of(trace) == [("browser_start_session", "server_at_capacity"), ("browser_start_session", None)]


async def test_starts_arriving_together_are_counted_one_after_another(own_sandbox):
    async with own_sandbox(own_browser=True, max_open_sessions=2) as own:
        runs = [own.create_run() for _ in range(4)]
        replies = await asyncio.gather(*(run.call("browser_start_session", START) for run in runs))
        refused = [reply["error"]["type"] for reply in replies if not reply["ok"]]
        assert refused == ["server_at_capacity"] * 2, replies  # not four contexts, each checked before any opened
        await asyncio.gather(*(run.close() for run in runs))


async def test_a_new_run_short_of_memory_is_refused_with_429_over_http_and_mcp(own_sandbox):
    reserve = beyond_the_machine()
    async with own_sandbox(min_free_memory_mb=reserve) as own, http_client(own) as server:
        answer = await server.post("/runs", json={})
        body = await answer.json()
        assert answer.status == 429 and body["error"]["type"] == "server_at_capacity", body
        assert "memory" in body["error"]["message"] and f"{reserve} MB" in body["error"]["message"]
        assert "retry later" in body["error"]["message"]

        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
        accept = {"accept": "application/json, text/event-stream"}
        answer = await server.post("/mcp?pack=controlled-form", json=message, headers=accept)
        error = (await answer.json())["error"]
        assert answer.status == 429 and error["code"] == SERVER_BUSY and error["data"] == {"type": "server_at_capacity"}
        assert own.runs == {}  # nothing was made


def test_the_descriptor_check_keeps_a_reserve_below_the_soft_limit():
    config = ServerConfig()
    used = open_file_descriptors()
    assert used is not None, "this test reads /proc/self/fd (Linux)"
    shortage = file_descriptor_shortage(config, soft_limit=used + 10)  # 10 left: fewer than the 256 kept free
    assert shortage is not None and shortage.limit == "file_descriptors"
    assert (shortage.measured, shortage.threshold) == (used, used + 10 - 256)
    assert f"{used} open file descriptors" in shortage.explanation and "RLIMIT_NOFILE" in shortage.explanation
    assert file_descriptor_shortage(config, soft_limit=used + 300) is None
    big = used + 100_000  # 10 % of a large limit is kept free, more than min_free_fds
    assert file_descriptor_shortage(config, open_fds=big - 5_000, soft_limit=big) is not None
    assert file_descriptor_shortage(dataclasses.replace(config, min_free_fds=0), soft_limit=used + 1) is None
    assert file_descriptor_shortage(config) is None  # this process is far from its own limit


def test_the_session_cap_is_per_core_when_that_is_fewer():
    assert session_cap(ServerConfig(max_sessions_per_core=3)) == (
        3 * cores(),
        f"max_sessions_per_core 3 × {cores()} cores",
    )
    assert session_cap(ServerConfig(max_sessions_per_core=3, max_open_sessions=2)) == (2, "max_open_sessions 2")
    assert session_cap(ServerConfig(max_sessions_per_core=0, max_open_sessions=9)) == (9, "max_open_sessions 9")
    shortage = open_session_shortage(ServerConfig(max_sessions_per_core=1), cores())
    assert shortage is not None and shortage.threshold == cores() and "max_sessions_per_core 1" in shortage.explanation
    assert open_session_shortage(ServerConfig(max_sessions_per_core=1), cores() - 1) is None


@pytest.mark.parametrize(
    "field, value",
    [
        ("min_free_memory_mb", -1),
        ("min_free_fds", 1.5),
        ("min_free_tasks", -1),
        ("max_open_sessions", 0),
        ("max_sessions_per_core", -2),
    ],
)
def test_a_capacity_field_out_of_range_is_refused(field, value):
    with pytest.raises(ValueError, match=field):
        ServerConfig(**{field: value})


MIB = 1 << 20


def cgroup_tree(root, files: dict[str, str]):
    """A cgroup mount and /proc/self/cgroup as files under ``root`` (real files, read as the kernel's)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "mount", root / "proc-self-cgroup"


def test_a_containers_cgroup_v2_limit_above_its_group_counts_with_its_droppable_cache(tmp_path):
    # A Kubernetes pod: the limit is on the pod's group, the process sits in its container's below it.
    mount, membership = cgroup_tree(
        tmp_path,
        {
            "proc-self-cgroup": "0::/kubepods/pod1/ctr\n",
            "mount/cgroup.controllers": "cpu memory\n",
            "mount/kubepods/memory.max": "max\n",
            "mount/kubepods/pod1/memory.max": f"{1024 * MIB}\n",
            "mount/kubepods/pod1/memory.current": f"{900 * MIB}\n",
            "mount/kubepods/pod1/memory.stat": f"anon {700 * MIB}\ninactive_file {100 * MIB}\n",
            "mount/kubepods/pod1/ctr/memory.max": "max\n",
            "mount/kubepods/pod1/ctr/memory.current": f"{890 * MIB}\n",
            "mount/kubepods/pod1/ctr/memory.stat": "inactive_file 0\n",
        },
    )
    assert cgroup_room_mb(mount, membership) == 1024 - 900 + 100


def test_a_cgroup_v1_limit_is_read_from_the_mount_when_the_group_path_is_not_under_it(tmp_path):
    # Docker on cgroup v1 without a cgroup namespace: /proc/self/cgroup names the host's path,
    # the container's mount shows its own group at the top.
    mount, membership = cgroup_tree(
        tmp_path,
        {
            "proc-self-cgroup": "5:devices:/docker/abc\n4:memory:/docker/abc\n0::/\n",
            "mount/memory/memory.limit_in_bytes": f"{512 * MIB}\n",
            "mount/memory/memory.usage_in_bytes": f"{500 * MIB}\n",
            "mount/memory/memory.stat": f"inactive_file {MIB}\ntotal_inactive_file {4 * MIB}\n",
        },
    )
    assert cgroup_room_mb(mount, membership) == 512 - 500 + 4


def test_a_full_cgroup_has_no_room_left(tmp_path):
    mount, membership = cgroup_tree(
        tmp_path,
        {
            "proc-self-cgroup": "0::/\n",
            "mount/cgroup.controllers": "memory\n",
            "mount/memory.max": f"{2048 * MIB}\n",
            "mount/memory.current": f"{2100 * MIB}\n",  # above its limit while the kernel reclaims
            "mount/memory.stat": "inactive_file 0\n",
        },
    )
    assert cgroup_room_mb(mount, membership) == 0
    shortage = memory_shortage(ServerConfig(), available_mb=20_000, cgroup_mb=cgroup_room_mb(mount, membership))
    assert shortage is not None and shortage.measured == 0 and shortage.threshold == 512


def test_no_cgroup_limit_is_no_figure(tmp_path):
    # As on this machine: cgroup v1 writes "no limit" as 2**63 - 1 rounded down to a page.
    mount, membership = cgroup_tree(
        tmp_path,
        {
            "proc-self-cgroup": "4:memory:/process_api/x\n0::/\n",
            "mount/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
            "mount/memory/process_api/x/memory.usage_in_bytes": f"{1790 * MIB}\n",
            "mount/memory/process_api/x/memory.stat": "total_inactive_file 0\n",
            "mount/unified/cgroup.procs": "",
        },
    )
    assert cgroup_room_mb(mount, membership) is None
    assert cgroup_room_mb(mount, tmp_path / "no-such-file") is None


def test_the_tighter_of_the_machine_and_its_cgroup_is_the_memory_left():
    config = ServerConfig(min_free_memory_mb=512)
    by_cgroup = memory_shortage(config, available_mb=20_000, cgroup_mb=300)
    assert by_cgroup is not None and by_cgroup.measured == 300 and "cgroup" in by_cgroup.explanation
    by_machine = memory_shortage(config, available_mb=400, cgroup_mb=9_000)
    assert by_machine is not None and by_machine.measured == 400 and "MemAvailable" in by_machine.explanation
    assert memory_shortage(config, available_mb=20_000, cgroup_mb=600) is None


def test_a_pids_cgroup_limit_is_read_up_the_v2_tree_and_from_the_v1_hierarchy(tmp_path):
    mount, membership = cgroup_tree(
        tmp_path / "v2",
        {
            "proc-self-cgroup": "0::/kubepods/pod1/ctr\n",
            "mount/cgroup.controllers": "cpu memory pids\n",
            "mount/kubepods/pod1/pids.max": "1024\n",  # a pod's pid limit, above the container's group
            "mount/kubepods/pod1/pids.current": "1000\n",
            "mount/kubepods/pod1/ctr/pids.max": "max\n",
            "mount/kubepods/pod1/ctr/pids.current": "990\n",
        },
    )
    assert cgroup_task_room(mount, membership) == 24
    mount, membership = cgroup_tree(
        tmp_path / "v1",
        {
            "proc-self-cgroup": "8:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n",
            "mount/pids/docker/abc/pids.max": "100\n",  # docker run --pids-limit 100
            "mount/pids/docker/abc/pids.current": "120\n",  # over it: no room
        },
    )
    assert cgroup_task_room(mount, membership) == 0
    mount, membership = cgroup_tree(
        tmp_path / "none", {"proc-self-cgroup": "8:pids:/\n0::/\n", "mount/pids/pids.max": "max\n"}
    )
    assert cgroup_task_room(mount, membership) is None


def test_the_tightest_task_limit_is_the_one_named():
    config = ServerConfig(min_free_tasks=128)
    shortage = task_shortage(config, {"cgroup": 40, "machine": 30_000, "user": None})
    assert shortage is not None and (shortage.limit, shortage.measured, shortage.threshold) == ("tasks", 40, 128)
    assert "pids cgroup allows 40 more tasks" in shortage.explanation and "min_free_tasks" in shortage.explanation
    by_machine = task_shortage(config, {"cgroup": None, "machine": 100, "user": 5_000})
    assert by_machine is not None and "kernel.pid_max" in by_machine.explanation
    assert task_shortage(config, {"cgroup": 500, "machine": 30_000, "user": 129}) is None
    assert task_shortage(config, {"cgroup": None, "machine": None, "user": None}) is None
    assert task_shortage(ServerConfig(min_free_tasks=0), {"cgroup": 0, "machine": 0, "user": 0}) is None
    assert task_shortage(config) is None  # this machine is far from its limits


def test_rlimit_nproc_counts_the_users_tasks_on_the_whole_machine(monkeypatch):
    # RLIMIT_NPROC does not bind root: the test runs the check as if this user were not root.
    real_getrlimit = resource.getrlimit
    soft = 100_000
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: (soft, soft) if which == resource.RLIMIT_NPROC else real_getrlimit(which)
    )
    room = user_task_room()
    own_tasks = len(os.listdir("/proc/self/task"))
    assert room is not None and room <= soft - own_tasks  # this process's threads count, and others of the user
    existing = machine_tasks()
    assert existing is not None and existing >= own_tasks
    assert user_task_room(enough=128, existing=existing) is None  # 100,000 cannot bind: nothing counted
    counted = user_task_room(enough=soft, existing=existing)  # it might bind: counted
    assert counted is not None and counted <= soft - own_tasks
    soft = soft - room + 10  # 10 left
    shortage = task_shortage(ServerConfig(), {"cgroup": None, "machine": None, "user": user_task_room()})
    assert shortage is not None and "ulimit -u" in shortage.explanation and shortage.measured <= 10


def writable_pids_group(name: str) -> Path | None:
    """A new, empty pids cgroup, or None where this process may not make one (root on a v1 pids
    hierarchy, or on a v2 root group that hands its children the pids controller)."""
    v1, v2 = Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")
    for parent in (v1, v2):
        if (parent == v1 and (v1 / "cgroup.procs").exists()) or "pids" in read_or_empty(
            parent / "cgroup.subtree_control"
        ).split():
            try:
                (parent / name).mkdir()
            except OSError:
                continue
            return parent / name
    return None


def read_or_empty(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


async def test_a_server_at_its_pids_cgroup_limit_refuses_sessions_and_runs_and_recovers(tmp_path):
    """A real pids cgroup around a real `sandbox serve`: with fewer tasks left than it keeps free, a
    session start is `server_at_capacity` naming the tasks, a new run 429; with the limit raised, the
    same run starts its session. Without the check, the start would take the last tasks itself."""
    group = writable_pids_group(f"sandbox-test-{os.getpid()}")
    if group is None:
        pytest.skip("needs a pids cgroup this process may create (root, cgroup v1 or a delegated v2 group)")
    port, reserve = free_port(), 64
    base = f"http://127.0.0.1:{port}"
    serve = f"{sys.executable} -m sandbox serve --port {port} --trace-dir {tmp_path} --min-free-tasks {reserve}"
    server = subprocess.Popen(
        ["sh", "-c", f"echo $$ > {group}/cgroup.procs && exec {serve}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await wait_healthy(base, server)
        async with aiohttp.ClientSession() as http:

            async def post(path: str, body: dict) -> tuple[int, dict]:
                async with http.post(f"{base}{path}", json=body) as response:
                    return response.status, await response.json()

            _, run = await post("/runs", {})
            in_use = int((group / "pids.current").read_text())
            (group / "pids.max").write_text(str(in_use + reserve - 1))  # one task short of the reserve
            _, refused = await post(f"/runs/{run['run_id']}/tools/browser_start_session", START)
            error = refused["error"]
            assert error["type"] == "server_at_capacity" and "server at capacity (tasks)" in error["message"], error
            assert error["details"]["limit"] == "tasks" and error["details"]["threshold"] == reserve
            assert error["details"]["measured"] < reserve and "pids cgroup" in error["message"]
            status, body = await post("/runs", {})
            assert status == 429 and body["error"]["type"] == "server_at_capacity", body

            (group / "pids.max").write_text("max")
            _, started = await post(f"/runs/{run['run_id']}/tools/browser_start_session", START)
            assert started["ok"], started
        server.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(server.wait, 30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for _ in range(100):  # the group empties as Chromium's processes end
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            await asyncio.sleep(0.1)


def test_a_cpu_cgroup_limit_is_read_up_the_v2_tree_and_from_the_v1_hierarchy(tmp_path):
    # docker run --cpus 1.5 (v1), a pod's CPU limit above its container's group (v2): the per-core
    # session cap counted every core of the host, which the container could not use.
    mount, membership = cgroup_tree(
        tmp_path / "v2",
        {
            "proc-self-cgroup": "0::/kubepods/pod1/ctr\n",
            "mount/cgroup.controllers": "cpu memory pids\n",
            "mount/kubepods/pod1/cpu.max": "200000 100000\n",
            "mount/kubepods/pod1/ctr/cpu.max": "max 100000\n",
        },
    )
    assert cgroup_cpu_limit(mount, membership) == 2
    mount, membership = cgroup_tree(
        tmp_path / "v1",
        {
            "proc-self-cgroup": "3:cpu,cpuacct:/docker/abc\n0::/\n",
            "mount/cpu/docker/abc/cpu.cfs_quota_us": "150000\n",
            "mount/cpu/docker/abc/cpu.cfs_period_us": "100000\n",
        },
    )
    assert cgroup_cpu_limit(mount, membership) == 2
    mount, membership = cgroup_tree(
        tmp_path / "none",
        {
            "proc-self-cgroup": "3:cpu,cpuacct:/\n0::/\n",
            "mount/cpu/cpu.cfs_quota_us": "-1\n",
            "mount/cpu/cpu.cfs_period_us": "100000\n",
        },
    )
    assert cgroup_cpu_limit(mount, membership) is None
