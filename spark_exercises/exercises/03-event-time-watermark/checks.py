"""Hidden checks of exercise 03: windowed counts with a watermark, in micro-batches of 10 records.

The expected result is simulated here from the topic's records, micro-batch by micro-batch, as
Spark (>= 3.4) runs a streaming aggregation in append mode:
- batch k reads offsets [10k, 10k + 10) (one partition, maxOffsetsPerTrigger=10);
- its watermark for closing windows is W(k) = max event time of batches < k − delay;
- it drops as late the rows whose window ended at or before W(k−1): the previous batch's
  watermark (SPARK-40925, so that chained stateful operators agree on what is late);
- after the last batch, a no-data batch closes every window that ends at or before the final
  watermark; append mode has emitted exactly those windows.
"""
from __future__ import annotations

import datetime as dt
import json

from spark_exercises.grader.checks import AnswerError, Question, as_mapping, compare_mappings

TOPIC = "clicks"
BATCH = 10
WINDOW = dt.timedelta(minutes=1)
DELAY = dt.timedelta(minutes=2)
EPOCH = dt.datetime(1970, 1, 1)


def _time(value, name: str) -> dt.datetime:
    """A window start or watermark as a naive UTC datetime (from an ISO string or Spark's form)."""
    if not isinstance(value, str):
        raise AnswerError(f"`{name}` should hold timestamps (datetimes or ISO strings), found {type(value).__name__}")
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise AnswerError(f"`{name}` holds {value!r}, which is not a timestamp") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


def _simulate(lab) -> tuple[dict, dict, dt.datetime]:
    """(emitted counts by window start, dropped counts by window start, final watermark)."""
    records = sorted(lab.records(TOPIC), key=lambda r: r["offset"])
    counts: dict[dt.datetime, int] = {}
    dropped: dict[dt.datetime, int] = {}
    watermarks = [EPOCH]                       # W(0)
    latest = None
    for start in range(0, len(records), BATCH):
        late_before = watermarks[-2] if len(watermarks) > 1 else EPOCH
        for r in records[start:start + BATCH]:
            when = _time(json.loads(r["value"])["event_time"], "event_time")
            window = when.replace(second=0, microsecond=0)
            latest = when if latest is None else max(latest, when)
            if window + WINDOW <= late_before:
                dropped[window] = dropped.get(window, 0) + 1
            else:
                counts[window] = counts.get(window, 0) + 1
        watermarks.append(max(watermarks[-1], latest - DELAY))
    final = watermarks[-1]
    return {w: n for w, n in counts.items() if w + WINDOW <= final}, dropped, final


def _by_window(value, name: str, column: str) -> dict[dt.datetime, int]:
    mapping = as_mapping(value, name, key="window_start", value_column=column)
    return {_time(k, name): v for k, v in mapping.items()}


def _window_counts(answers, lab):
    got = _by_window(answers["window_counts"], "window_counts", "count")
    expected, _, final = _simulate(lab)
    ok, feedback = compare_mappings(got, expected, "count", "window")
    if not ok and any(w.year != 2024 for w in got):
        feedback += " — windows should follow the event time in the value, not the record's Kafka timestamp"
    elif not ok and any(w + WINDOW > final for w in got):
        feedback += " — append mode emits a window only once the watermark has passed its end"
    return ok, feedback


def _final_watermark(answers, lab):
    got = _time(answers["final_watermark"], "final_watermark")
    _, _, final = _simulate(lab)
    if got == final:
        return True, "correct"
    return False, "that is not the watermark of the query's last micro-batch (max event time seen − 2 minutes)"


def _dropped(answers, lab):
    got = _by_window(answers["dropped"], "dropped", "dropped")
    _, expected, _ = _simulate(lab)
    return compare_mappings(got, expected, "number of dropped events", "window")


QUESTIONS = [
    Question("window-counts", "Counts per 1-minute event-time window, append mode", 3, ("window_counts",),
             _window_counts),
    Question("final-watermark", "The watermark after the last micro-batch", 1, ("final_watermark",), _final_watermark),
    Question("dropped", "Events dropped as too late, per window", 2, ("dropped",), _dropped),
]
