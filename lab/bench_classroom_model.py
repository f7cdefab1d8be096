"""The page's copy of the model, kept by a bench client the way static/js/lab-state.js keeps it.

A `hello` brings the whole model (`apply_model`); a `state` brings it too, and every `events` frame
brings patches, applied in order, then the frame's own step, time and seq (`apply_frame`, as
session.js does). Top-level sections are replaced whole, partitions one by one, and each
replica's records merged: drop what is held from `records_from` on, add the new ones, keep
offsets in [log start, log end), keep the newest RECORDS_KEPT. `digest()` hashes what the page
would show, section by section and partition by partition, so that two clients can be compared
at the same frame without sending models around, and a difference says where it is. Nothing
here is computed from events: like the page, the bench trusts the patches.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

RECORDS_KEPT = 32   # lab-state.js RECORDS_KEPT (lab/model.py RECORDS_PER_REPLICA)
_SECTIONS = ("controller", "brokers", "links_cut", "topics", "groups", "consumers", "clients", "produced_count",
             "timers", "truncations", "step", "time_ms", "seq")


class PageModel:
    def __init__(self) -> None:
        self.sections: dict[str, Any] = {}
        self.partitions: dict[str, dict[str, Any]] = {}
        self.frame = -1

    def apply_model(self, model: dict[str, Any], frame: int) -> None:
        self.partitions = {}
        self._set_sections(model)
        for entry in (model.get("partitions") or {}).values():
            self._set_partition(entry, whole=True)
        self.frame = frame

    def apply_patch(self, patch: dict[str, Any]) -> None:
        self._set_sections(patch)
        for entry in (patch.get("partitions") or {}).values():
            self._set_partition(entry, whole=False)

    def apply_frame(self, frame: dict[str, Any]) -> None:
        """An `events` or `state` frame: its patches (or model), then the frame's own position —
        the page's clock stands where the frame says even when no patch moved it (session.js)."""
        if frame["type"] == "state":
            self.apply_model(frame["model"], frame["frame"])
        else:
            for patch in frame.get("patches") or []:
                self.apply_patch(patch)
            self.frame = frame["frame"]
        for key in ("step", "time_ms", "seq"):
            if isinstance(frame.get(key), int):
                self.sections[key] = frame[key]

    @property
    def step(self) -> int:
        return self.sections.get("step", 0)

    def digest(self) -> dict[str, str]:
        """A short hash of each section and each partition: two clients' digests are equal when
        they show the same, and where they differ the keys say what differs."""
        shown = {**self.sections, **{f"partition {key}": entry for key, entry in self.partitions.items()}}
        return {key: hashlib.blake2b(json.dumps(value, sort_keys=True).encode(), digest_size=8).hexdigest()
                for key, value in shown.items()}

    def _set_sections(self, model: dict[str, Any]) -> None:
        for key in _SECTIONS:
            if key in model and model[key] is not None:
                self.sections[key] = model[key]

    def _set_partition(self, entry: dict[str, Any], whole: bool) -> None:
        key = f"{entry['topic']}-{entry['partition']}"
        old = None if whole else self.partitions.get(key)
        replicas = {}
        for broker, state in (entry.get("replica_states") or {}).items():
            before = old["replica_states"].get(broker) if old else None
            replicas[broker] = _replica(state, before)
        self.partitions[key] = {**{k: v for k, v in entry.items() if k != "replica_states"},
                                "replica_states": replicas}


def _replica(state: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    records: dict[int, list] = {}
    start = state.get("records_from")
    if before is not None:
        for offset, record in before["records"].items():
            if start is None or offset < start:
                records[offset] = record
    for offset, key, value in state.get("records") or []:
        records[offset] = [key, value]
    low, high = state.get("log_start_offset"), state.get("log_end_offset")
    if low is not None and high is not None:
        records = {o: r for o, r in records.items() if low <= o < high}
    if len(records) > RECORDS_KEPT:
        records = {o: records[o] for o in sorted(records)[-RECORDS_KEPT:]}
    return {**{k: v for k, v in state.items() if k not in ("records", "records_from")},
            "records": dict(sorted(records.items()))}
