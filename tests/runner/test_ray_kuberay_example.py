"""The KubeRay example (examples/kuberay/) stays consistent: the RayCluster runs the image the
Dockerfile builds, on this Ray version, with one browser per worker pod's CPUs and the Ray
Client port open; the image installs Debian's chromium and this package with the ray extra.
Read with yaml.safe_load only: no Kubernetes or Docker here."""

from __future__ import annotations

import re

import ray
import yaml

from sandbox.paths import PROJECT_ROOT
from sandbox.runner.executors.ray_pool import CPUS_PER_BROWSER

EXAMPLE = PROJECT_ROOT / "examples" / "kuberay"


def test_the_raycluster_runs_the_dockerfiles_image_on_this_ray():
    dockerfile = (EXAMPLE / "Dockerfile").read_text()
    cluster = yaml.safe_load((EXAMPLE / "raycluster.yaml").read_text())
    (tag,) = re.findall(r"docker build -f examples/kuberay/Dockerfile -t (\S+) \.", dockerfile)
    assert re.search(rf"^ARG RAY_VERSION={re.escape(ray.__version__)}$", dockerfile, re.MULTILINE)
    assert re.search(r"apt-get install .*\bchromium\b", dockerfile)
    assert "pip install --no-cache-dir -e '.[ray]'" in dockerfile  # editable: the mirrors stay beside it
    assert (cluster["apiVersion"], cluster["kind"]) == ("ray.io/v1", "RayCluster")
    assert cluster["spec"]["rayVersion"] == ray.__version__
    head = cluster["spec"]["headGroupSpec"]
    (head_container,) = head["template"]["spec"]["containers"]
    assert head["rayStartParams"]["num-cpus"] == "0"  # no attempts on the head
    assert 10001 in [port["containerPort"] for port in head_container["ports"]]
    for group in cluster["spec"]["workerGroupSpecs"]:
        spec = group["template"]["spec"]
        (container,) = spec["containers"]
        assert container["image"] == head_container["image"] == tag
        resources = container["resources"]
        assert resources["requests"]["cpu"] == resources["limits"]["cpu"]
        assert int(resources["limits"]["cpu"]) % CPUS_PER_BROWSER == 0
        mounts = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
        volumes = {volume["name"]: volume for volume in spec["volumes"]}
        (shm,) = [name for name, path in mounts.items() if path == "/dev/shm"]
        assert volumes[shm]["emptyDir"]["medium"] == "Memory"


def test_the_image_leaves_local_state_out():
    ignored = (EXAMPLE / "Dockerfile.dockerignore").read_text().split()
    assert {".git", ".venv", "node/node_modules", "runs"} <= set(ignored)
