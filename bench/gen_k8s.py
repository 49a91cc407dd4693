#!/usr/bin/env python3
"""Writes a synthetic cluster and pod stream as Kubernetes JSON.

usage: bench/gen_k8s.py --nodes N --pods P [--running R] [--seed S] OUTDIR

OUTDIR/cluster.json: a List of N Nodes (8-128 cores, 32-1024 GiB, zone,
rack and instance-type labels, about 10% in tainted dedicated pools, 2%
cordoned) and R Pods bound to them. OUTDIR/pods.jsonl: P Pods, one per
line: most are replicas of a few dozen deployments, some unique, with
nodeSelectors, required and preferred node affinity, tolerations and a few
host ports. The same seed writes the same files.
"""
import argparse
import json
import os
import random
import sys

ZONES = ["zone-a", "zone-b", "zone-c"]
SHAPES = [  # (cores, GiB, instance type)
    (8, 32, "m.2xlarge"), (16, 64, "m.4xlarge"), (32, 128, "m.8xlarge"),
    (64, 256, "m.16xlarge"), (16, 128, "r.4xlarge"), (64, 512, "r.16xlarge"),
    (128, 1024, "r.32xlarge"), (32, 64, "c.8xlarge")]
POOLS = [("gpu", "NoSchedule"), ("batch", "NoSchedule"), ("infra", "NoExecute")]


def node(i, rng):
    cores, gib, itype = rng.choice(SHAPES)
    zone = ZONES[i % 3]
    labels = {"kubernetes.io/hostname": f"node-{i}",
              "topology.kubernetes.io/zone": zone,
              "topology.kubernetes.io/rack": f"{zone}-r{rng.randrange(20)}",
              "node.kubernetes.io/instance-type": itype,
              "cores": str(cores)}
    spec = {}
    if rng.random() < 0.10:
        pool, effect = rng.choice(POOLS)
        labels["pool"] = pool
        spec["taints"] = [{"key": "dedicated", "value": pool, "effect": effect}]
    if rng.random() < 0.05:
        spec.setdefault("taints", []).append(
            {"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
    if rng.random() < 0.02:
        spec["unschedulable"] = True
    alloc = {"cpu": f"{cores * 1000 - 100}m", "memory": f"{gib - 1}Gi",
             "ephemeral-storage": "100Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": labels},
            "spec": spec,
            "status": {"allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def deployment(d, rng):
    """A pod template: what the replicas of deployment d share."""
    cpu = rng.choice(["100m", "250m", "500m", "1", "2", "4"])
    mem = rng.choice(["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi"])
    spec = {"containers": [{"name": "app", "image": f"app-{d}",
                            "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    r = rng.random()
    if r < 0.15:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
    elif r < 0.25:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "cores", "operator": "Gt", "values": [str(rng.choice([8, 16, 32]))]},
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": rng.sample(ZONES, 2)}]}]}}}
    if rng.random() < 0.20:
        spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randrange(1, 101), "preference": {"matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                 "values": [rng.choice(SHAPES)[2]]}]}}]
    if rng.random() < 0.15:
        pool, effect = rng.choice(POOLS)
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal",
                                "value": pool, "effect": effect}]
        if rng.random() < 0.5:
            spec["nodeSelector"] = {"pool": pool}
    if rng.random() < 0.03:
        spec["containers"][0]["ports"] = [{"containerPort": 9100, "hostPort": 9100}]
    return spec


def pod(name, spec, node_name=None):
    spec = json.loads(json.dumps(spec))
    if node_name:
        spec["nodeName"] = node_name
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if node_name:
        obj["status"] = {"phase": "Running"}
    return obj


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--running", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("outdir")
    a = ap.parse_args()
    if a.nodes < 1 or a.pods < 0 or a.running < 0:
        sys.exit("gen_k8s.py: --nodes must be >= 1, --pods and --running >= 0")
    rng = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)
    deployments = [deployment(d, rng) for d in range(40)]
    small = {"containers": [{"name": "app", "resources": {
        "requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    items = [node(i, rng) for i in range(a.nodes)]
    for i in range(a.running):
        items.append(pod(f"running-{i}", small, f"node-{rng.randrange(a.nodes)}"))
    with open(os.path.join(a.outdir, "cluster.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    with open(os.path.join(a.outdir, "pods.jsonl"), "w") as f:
        for i in range(a.pods):
            if rng.random() < 0.9:
                d = rng.randrange(len(deployments))
                obj = pod(f"deploy-{d}-{i}", deployments[d])
            else:
                obj = pod(f"job-{i}", deployment(1000 + i, rng))
            f.write(json.dumps(obj, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
