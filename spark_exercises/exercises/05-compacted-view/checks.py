"""Hidden checks of exercise 05: latest value per key by offset, tombstones, what compaction keeps."""
from __future__ import annotations

import os
import tempfile

from engine.storage import record_batch as rb
from engine.storage.cleaner import LogCleanerManager
from engine.storage.log import Log
from spark_exercises.grader.checks import (
    AnswerError,
    Question,
    as_int,
    as_list,
    as_mapping,
    compare_mappings,
    compare_sets,
)

TOPIC = "profiles"


def _last_records(lab) -> dict[str, dict]:
    """The latest record of each key (its partition orders its records by offset)."""
    last: dict[str, dict] = {}
    for r in sorted(lab.records(TOPIC), key=lambda r: (r["partition"], r["offset"])):
        if r["key"] is not None:
            last[r["key"]] = r
    return last


def _latest(answers, lab):
    got = as_mapping(answers["latest"], "latest", key="key", value_column="value")
    last = _last_records(lab)
    expected = {k: r["value"] for k, r in last.items() if r["value"] is not None}
    if any(v is None for v in got.values()):
        return False, "some keys map to a null value: a tombstone deletes its key, leave those keys out"
    ok, feedback = compare_mappings(got, expected, "value", "key")
    if not ok and set(got) == set(expected):
        feedback += " (the latest record of a key is the one with the highest offset)"
    return ok, feedback


def _deleted(answers, lab):
    got = as_list(answers["deleted_keys"], "deleted_keys")
    if not all(isinstance(k, str) for k in got):
        raise AnswerError("`deleted_keys` should be a list of keys (strings)")
    expected = [k for k, r in _last_records(lab).items() if r["value"] is None]
    ok, feedback = compare_sets(got, expected, "keys")
    ever_deleted = {r["key"] for r in lab.records(TOPIC) if r["value"] is None}
    if not ok and set(got) - set(expected) <= ever_deleted:
        feedback += "; a key written again after its tombstone is alive"
    return ok, feedback


def _cleaned_log(lab) -> list[dict]:
    """What the lab's own log cleaner (engine/storage/cleaner.py) leaves of the topic: each partition's
    records copied, offsets and timestamps as they are, into a compacted log whose every record lies
    below the active segment, then cleaned once — a complete compaction, before delete.retention.ms."""
    by_partition: dict[int, list[dict]] = {}
    for r in lab.records(TOPIC):
        by_partition.setdefault(r["partition"], []).append(r)
    left = []
    with tempfile.TemporaryDirectory(prefix="kafka-lab-05-") as directory:
        logs = {}
        for partition, records in sorted(by_partition.items()):
            log = Log(os.path.join(directory, f"{TOPIC}-{partition}"),
                      {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0}, clock_ms=lambda: 0, fsync=False)
            for r in sorted(records, key=lambda r: r["offset"]):
                key, value = r["key"].encode(), None if r["value"] is None else r["value"].encode()
                log.append_batches(rb.encode_batch([(key, value, r["timestamp_ms"])], base_offset=r["offset"]),
                                   assign_offsets=False)
            log.roll()
            logs[(TOPIC, partition)] = log
        now = max((r["timestamp_ms"] for r in lab.records(TOPIC)), default=0)
        LogCleanerManager(directory, fsync=False).clean_all(directory, logs, now)
        for (_topic, partition), log in logs.items():
            left += [{"partition": partition, "offset": r.offset, "key": r.key.decode()} for r in log.records_from(0)]
            log.close()
    return left


def _kept(answers, lab):
    got = as_int(answers["kept_by_compaction"], "kept_by_compaction")
    expected = len(_cleaned_log(lab))      # the real cleaner's answer, not a model of it
    if got == expected:
        return True, "correct"
    if got == sum(1 for r in _last_records(lab).values() if r["value"] is not None):
        return False, "not quite: until delete.retention.ms passes, compaction keeps the tombstones too"
    return False, "that is not what compaction keeps (think: how many records per key survive it?)"


QUESTIONS = [
    Question("latest", "The latest value of every live key", 3, ("latest",), _latest),
    Question("deleted-keys", "Keys deleted by a tombstone", 2, ("deleted_keys",), _deleted),
    Question("kept-by-compaction", "Records a full compaction keeps", 1, ("kept_by_compaction",), _kept),
]
