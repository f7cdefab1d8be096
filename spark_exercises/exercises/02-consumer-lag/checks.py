"""Hidden checks of exercise 02: committed offsets from __consumer_offsets, lag = HW − committed.

The truth is what the groups' coordinators hold (engine.inspect.groups), not a re-decoding of
__consumer_offsets: the checker does not share the learner's method.
"""
from __future__ import annotations

from spark_exercises.grader.checks import AnswerError, Question, as_rows, compare_mappings


def _truth(lab) -> tuple[dict, dict]:
    """{(group, topic, partition): committed offset}, {(group, topic, partition): lag}."""
    committed, lag = {}, {}
    for group in lab.groups():
        for name, offset in group["committed"].items():
            topic, _, partition = name.rpartition("-")
            key = (group["group"], topic, int(partition))
            committed[key] = offset
            lag[key] = lab.high_watermarks(topic)[int(partition)] - offset
    return committed, lag


def _keyed(value, name: str, column: str) -> dict:
    rows = as_rows(value, name, ["group", "topic", "partition", column])
    out = {}
    for row in rows:
        key = (row["group"], row["topic"], row["partition"])
        if key in out:
            raise AnswerError(f"`{name}` has more than one row for some (group, topic, partition): "
                              "keep one, the latest")
        out[key] = row[column]
    return out


def _committed(answers, lab):
    got = _keyed(answers["committed"], "committed", "committed_offset")
    expected, _ = _truth(lab)
    ok, feedback = compare_mappings(got, expected, "committed offset", "(group, topic, partition)")
    if not ok and any(isinstance(v, int) and v > expected.get(k, v) for k, v in got.items()):
        feedback += " — the latest commit counts, even when its offset is lower than an earlier one"
    return ok, feedback


def _lag_report(answers, lab):
    rows = as_rows(answers["lag_report"], "lag_report",
                   ["group", "topic", "partition", "committed_offset", "high_watermark", "lag"])
    committed, lag = _truth(lab)
    for row in rows:
        if row["lag"] != _difference(row):
            return False, "some rows' lag is not high_watermark − committed_offset"
    got = _keyed(rows, "lag_report", "lag")
    hws = {(r["group"], r["topic"], r["partition"]): r["high_watermark"] for r in rows}
    wrong_hw = sum(1 for (g, t, p), hw in hws.items() if (g, t, p) in committed and hw != lab.high_watermarks(t)[p])
    ok, feedback = compare_mappings(got, lag, "lag", "(group, topic, partition)")
    if wrong_hw:
        feedback += f"; {wrong_hw} row(s) with a wrong high_watermark (the offset after a partition's last record)"
    return ok and not wrong_hw, feedback


def _difference(row: dict):
    try:
        return row["high_watermark"] - row["committed_offset"]
    except TypeError:
        return None


def _total_lag(answers, lab):
    value = answers["total_lag"]
    if not isinstance(value, dict):
        raise AnswerError("`total_lag` should be a dict {group: total lag}")
    _, lag = _truth(lab)
    expected: dict[str, int] = {}
    for (group, _, _), n in lag.items():
        expected[group] = expected.get(group, 0) + n
    return compare_mappings(value, expected, "total", "group")


QUESTIONS = [
    Question("committed", "Each group's committed offsets, from __consumer_offsets", 3, ("committed",), _committed),
    Question("lag-report", "Lag per partition: high watermark − committed offset", 3, ("lag_report",), _lag_report),
    Question("total-lag", "Total lag per group", 1, ("total_lag",), _total_lag),
]
