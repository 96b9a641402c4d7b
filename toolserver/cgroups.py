"""What this process's cgroups allow it: the memory (``cgroup_room_mb``) and the tasks
(``cgroup_task_room``) left, and the cores (``cgroup_cpu_limit``), under the tightest limit of its
groups, cgroup v2 (its group and every group above it) or v1 (its group in the controller's
hierarchy). Read from ``/proc/self/cgroup`` and the cgroup mount; None where there is no limit or
no cgroups. ``toolserver.capacity`` turns them into refusals and its session cap."""

from __future__ import annotations

import math
from pathlib import Path

CGROUP_MOUNT = Path("/sys/fs/cgroup")
OWN_CGROUPS = Path("/proc/self/cgroup")
NO_LIMIT = 1 << 62  # cgroup v1 writes "no limit" as 2**63 - 1 rounded down to a page


def cgroup_room_mb(mount: Path = CGROUP_MOUNT, membership: Path = OWN_CGROUPS) -> int | None:
    """What this process's memory cgroup still allows it, in MB: the tightest limit (cgroup v2:
    ``memory.max`` of its group and of each group above it; v1: the memory controller's
    ``memory.limit_in_bytes``) less what that group uses, counting page cache the kernel can
    drop (``inactive_file``) as free, as the kubelet does. None: no limit, or no cgroups."""
    files = {2: ("memory.max", "memory.current"), 1: ("memory.limit_in_bytes", "memory.usage_in_bytes")}
    found = [group_room(group, *files[version]) for group, version in own_groups("memory", mount, membership)]
    rooms = [room for room in found if room is not None]  # 0 is a room too: the group is full
    return min(rooms) // (1 << 20) if rooms else None


def cgroup_task_room(mount: Path = CGROUP_MOUNT, membership: Path = OWN_CGROUPS) -> int | None:
    """How many more tasks (processes and threads) this process's pids cgroup allows: the
    tightest ``pids.max`` less ``pids.current`` (v2: of its group and each group above it; v1: in
    the pids controller's hierarchy). None: no limit, or no cgroups."""
    found = [pids_room(group) for group, _ in own_groups("pids", mount, membership)]
    rooms = [room for room in found if room is not None]
    return min(rooms) if rooms else None


def cgroup_cpu_limit(mount: Path = CGROUP_MOUNT, membership: Path = OWN_CGROUPS) -> int | None:
    """The cores this process's cpu cgroup lets it use, rounded up: the tightest quota over its
    period (v2: ``cpu.max`` of its group and each group above it; v1: ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us``), as ``docker run --cpus`` or a pod's CPU limit sets it. None: no limit."""
    found = [cpu_cores(group, version) for group, version in own_groups("cpu", mount, membership)]
    limits = [cores for cores in found if cores is not None]
    return min(limits) if limits else None


def own_groups(controller: str, mount: Path, membership: Path) -> list[tuple[Path, int]]:
    """The cgroups whose ``controller`` limits bind this process, each with its cgroup version:
    v2, its group and every group above it; v1, its group in the controller's hierarchy."""
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return []
    groups: list[tuple[Path, int]] = []
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and not controllers:  # v2; under /unified beside a v1 hierarchy
            base = mount if (mount / "cgroup.controllers").exists() else mount / "unified"
            group = own_group(base, path)
            groups += [(level, 2) for level in (group, *(p for p in group.parents if p.is_relative_to(base)))]
        elif controller in controllers.split(","):
            groups.append((own_group(mount / controller, path), 1))
    return groups


def own_group(base: Path, path: str) -> Path:
    """The process's group under ``base``; ``base`` itself when the group is not under it (a
    container that mounts only its own group, with no cgroup namespace)."""
    group = base / path.strip("/")
    return group if group.is_dir() else base


def group_room(group: Path, limit_file: str, usage_file: str) -> int | None:
    """Bytes a group's limit still allows (None: no limit, or unreadable)."""
    try:
        limit_text = (group / limit_file).read_text().strip()
        if limit_text == "max" or int(limit_text) >= NO_LIMIT:
            return None
        usage = int((group / usage_file).read_text())
        stat = dict(line.split()[:2] for line in (group / "memory.stat").read_text().splitlines() if " " in line)
    except (OSError, ValueError):
        return None
    droppable = int(stat.get("total_inactive_file", stat.get("inactive_file", 0)))  # v1 hierarchy: total_
    return max(0, int(limit_text) - usage + droppable)


def pids_room(group: Path) -> int | None:
    """Tasks a group's ``pids.max`` still allows (None: no limit, or unreadable)."""
    try:
        limit_text = (group / "pids.max").read_text().strip()
        if limit_text == "max":
            return None
        return max(0, int(limit_text) - int((group / "pids.current").read_text()))
    except (OSError, ValueError):
        return None


def cpu_cores(group: Path, version: int) -> int | None:
    """The whole cores a group's CPU quota allows, at least 1 (None: no limit, or unreadable)."""
    try:
        if version == 2:
            quota, period = (group / "cpu.max").read_text().split()[:2]
        else:
            quota = (group / "cpu.cfs_quota_us").read_text().strip()
            period = (group / "cpu.cfs_period_us").read_text().strip()
        if quota == "max" or int(quota) <= 0:  # v1 writes no limit as -1
            return None
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError, ZeroDivisionError):
        return None
