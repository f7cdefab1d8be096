"""Hidden checks of exercise 01: records per partition, murmur2 key routing, misrouted records."""
from __future__ import annotations

from engine.clients.partitioner import partition_for_key
from spark_exercises.grader.checks import (
    CORRECT,
    AnswerError,
    Question,
    as_mapping,
    as_tuples,
    compare_mappings,
    compare_sets,
    int_keys,
)

TOPIC = "orders"


def _partition_counts(answers, lab):
    got = int_keys(as_mapping(answers["partition_counts"], "partition_counts", key="partition",
                              value_column="count"), "partition_counts")
    expected = {p: 0 for p in range(lab.partitions(TOPIC))}
    for r in lab.records(TOPIC):
        expected[r["partition"]] += 1
    return compare_mappings(got, expected, "count", "partition")


def _key_partitions(answers, lab):
    got = as_mapping(answers["key_partitions"], "key_partitions", key="key", value_column="partition")
    n = lab.partitions(TOPIC)
    keys = {r["key"] for r in lab.records(TOPIC) if r["key"] is not None}
    expected = {k: partition_for_key(k.encode(), n) for k in keys}
    if None in got:
        return False, "records without a key have no key partition: leave them out"
    ok, feedback = compare_mappings(got, expected, "partition", "key")
    if not ok and set(got) == set(expected) and all(isinstance(v, int) for v in got.values()):
        feedback += " (is the hash murmur2 of the key's bytes, made positive, modulo the number of partitions?)"
    return ok, feedback


def _misrouted(answers, lab):
    got = as_tuples(answers["misrouted"], "misrouted", ("partition", "offset"))
    if not all(isinstance(p, int) and isinstance(o, int) for p, o in got):
        raise AnswerError("`misrouted` should hold (partition, offset) pairs of whole numbers")
    records = lab.records(TOPIC)
    n = lab.partitions(TOPIC)
    expected = [(r["partition"], r["offset"]) for r in records
                if r["key"] is not None and partition_for_key(r["key"].encode(), n) != r["partition"]]
    ok, feedback = compare_sets(got, expected, "records")
    null_keys = {(r["partition"], r["offset"]) for r in records if r["key"] is None}
    if not ok and set(got) & null_keys:
        feedback += "; records without a key are never misrouted (the null-key partitioner may use any partition)"
    return ok, feedback if not ok else CORRECT


QUESTIONS = [
    Question("partition-counts", "Records per partition", 2, ("partition_counts",), _partition_counts),
    Question("key-partitions", "The partition murmur2 picks for each key", 3, ("key_partitions",), _key_partitions),
    Question("misrouted", "Keyed records on the wrong partition", 3, ("misrouted",), _misrouted),
]
