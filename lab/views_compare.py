"""The two truncation modes of a built-in scenario, side by side: an htmx partial of the Scenario tab.

KIP-101 changed how a returning follower truncates: before Kafka 0.11 it cut its log to its own
high watermark ("high-watermark"), since then to the end offset its leader gives for its last
leader epoch ("leader-epoch"). The built-in scenarios tell the stories where that matters. This
view runs the chosen scenario headless twice (engine.scenarios.runner.run_scenario, with the
cluster's `truncation` replaced, each in a scratch dir) and shows the two end states: per
partition each replica's records, log end and high watermark, the leader, what each mode
truncated — every removed record lost or fetched back (lab.truncations) — and which
acknowledged records the partition no longer holds. A run is deterministic (same scenario, same
seed, same mode: same result), so each (scenario, mode) is computed once per process.
"""
from __future__ import annotations

import functools
import shutil
import tempfile
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from engine.cluster import Cluster
from engine.scenarios.runner import ScenarioError, builtin_names, load_scenario, run_scenario
from lab.truncations import TruncationJournal

MODES = ("leader-epoch", "high-watermark")   # engine.replication.fetcher.TRUNCATION_MODES, in reading order
MODE_WORDS = {
    "leader-epoch": gettext_lazy("Truncate to the leader's end offset for the follower's last leader epoch "
                                 "(KIP-101, Kafka 0.11+)"),
    "high-watermark": gettext_lazy("Truncate to the follower's own high watermark (Kafka before 0.11)"),
}


@require_GET
def compare_modes(request: HttpRequest, name: str) -> HttpResponse:
    if name not in builtin_names():
        raise Http404(f"No built-in scenario {name!r}")
    try:
        comparison = compare(name)
    except ScenarioError as error:
        return render(request, "lab/partials/panel_error.html", {"message": str(error), "kafka_error": None},
                      status=400)
    return render(request, "lab/partials/truncation_compare.html", comparison)


@functools.lru_cache(maxsize=64)
def compare(name: str) -> dict[str, Any]:
    """Both modes' end states of built-in scenario `name`, with what differs between them marked."""
    scenario = load_scenario(name)
    runs = [run_in_mode(name, mode) for mode in MODES]
    _mark_differences(runs)
    return {"name": name, "description": scenario.get("description", ""),
            "scenario_mode": (scenario.get("cluster") or {}).get("truncation") or "leader-epoch", "runs": runs}


@functools.lru_cache(maxsize=128)
def run_in_mode(name: str, mode: str) -> dict[str, Any]:
    """Built-in scenario `name` played headless with truncation `mode`: its end state, summarised."""
    scenario = load_scenario(name)
    scenario = {**scenario, "cluster": {**(scenario.get("cluster") or {}), "truncation": mode}}
    journal: list[TruncationJournal] = []

    def trace(event: Any) -> None:
        if journal:
            journal[0].on_event(event)

    def factory(**shape: Any) -> Cluster:
        cluster = Cluster(**shape)
        journal.append(TruncationJournal(cluster))
        return cluster

    scratch = tempfile.mkdtemp(prefix="lab-compare-")
    try:
        cluster, result = run_scenario(scenario, scratch, trace=trace, cluster_factory=factory)
        try:
            truncations = [t for t in journal[0].section(None) if not t["internal"]]
        finally:
            cluster.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    partitions = [_partition(p) for p in result["partitions"] if not p["topic"].startswith("__")]
    lost_acked = _acknowledged_lost(result, partitions)
    return {"mode": mode, "words": MODE_WORDS.get(mode, mode), "partitions": partitions, "truncations": truncations,
            "lost_acknowledged": lost_acked, "removed": sum(t["records_removed"] for t in truncations),
            "lost": sum(t["lost"] for t in truncations), "refetched": sum(t["refetched"] for t in truncations)}


def _partition(p: dict) -> dict[str, Any]:
    replicas = []
    for broker in p["replicas"]:
        rep = p["replica_states"].get(str(broker), {})
        replicas.append({"broker": broker, "alive": rep.get("alive", False), "leader": broker == p["leader"],
                         "in_isr": broker in p["isr"], "log_end_offset": rep.get("log_end_offset", 0),
                         "high_watermark": rep.get("high_watermark", 0),
                         "records": [{"offset": r["offset"], "key": r["key"], "value": r["value"],
                                      "committed": r["offset"] < rep.get("high_watermark", 0)}
                                     for r in rep.get("records", [])]})
    return {"label": f"{p['topic']}-{p['partition']}", "topic": p["topic"], "partition": p["partition"],
            "leader": p["leader"], "leader_epoch": p["leader_epoch"], "isr": p["isr"],
            "high_watermark": p["high_watermark"], "replicas": replicas}


def _acknowledged_lost(result: dict, partitions: list[dict]) -> list[dict]:
    """Records the producer was told were written (acked, with an offset) that the partition's
    leader does not hold at that offset at the end (or no replica leads it)."""
    leaders = {}
    for p in partitions:
        leader = next((r for r in p["replicas"] if r["leader"]), None)
        leaders[(p["topic"], p["partition"])] = {r["offset"]: r["value"] for r in leader["records"]} if leader else None
    out = []
    for record in result["produced"]:
        if not record["acked"] or record["offset"] is None or record["offset"] < 0:
            continue
        held = leaders.get((record["topic"], record["partition"]), {})
        if held is None or held.get(record["offset"]) != record["value"]:
            out.append({"label": f"{record['topic']}-{record['partition']}", "offset": record["offset"],
                        "key": record["key"], "value": record["value"],
                        "acks": "all" if record["acks"] == -1 else str(record["acks"]),
                        "now": None if held is None else held.get(record["offset"])})
    return out


def _mark_differences(runs: list[dict]) -> None:
    """Mark each record that the other mode does not hold at the same replica and offset."""
    def values(run: dict) -> dict[tuple, Any]:
        return {(p["label"], rep["broker"], r["offset"]): r["value"]
                for p in run["partitions"] for rep in p["replicas"] for r in rep["records"]}
    held = [values(run) for run in runs]
    for i, run in enumerate(runs):
        others = [h for j, h in enumerate(held) if j != i]
        for p in run["partitions"]:
            for rep in p["replicas"]:
                for r in rep["records"]:
                    key = (p["label"], rep["broker"], r["offset"])
                    r["differs"] = any(other.get(key, object()) != r["value"] for other in others)
