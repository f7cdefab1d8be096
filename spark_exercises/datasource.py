"""A PySpark data source for the lab's topics: `spark.read.format("lab")`, `spark.readStream.format("lab")`.

Write the code you would write against Kafka with Spark's Kafka source; only the format name and
the two `lab.*` options differ:

    from spark_exercises.datasource import register
    register(spark)
    df = (spark.read.format("lab")
          .option("lab.url", "http://127.0.0.1:8000").option("lab.session", "<session id>")
          .option("subscribe", "clicks").option("startingOffsets", "earliest").load())

Columns, as Spark's Kafka source: key binary, value binary, topic string, partition int,
offset long, timestamp timestamp, timestampType int, headers array<struct<key: string, value:
binary>> (Spark adds headers only with includeHeaders=true; here they are always there).
Options (as Spark's Kafka source where they apply): subscribe (comma list) | subscribePattern
| assign (JSON {"topic": [0, 1]}); startingOffsets / endingOffsets: "earliest", "latest" or JSON
{"topic": {"0": 23, "1": -2}} (-2 earliest, -1 latest); maxOffsetsPerTrigger (streaming);
failOnDataLoss (default true); minPartitions; lab.url (or $KAFKA_LAB_URL); lab.session.

Only committed records (below each partition's high watermark) are ever read, through the lab's
HTTP read API, so the code runs unchanged on executors of a real Spark cluster. One Spark input
partition per topic partition, large ranges split. "Data loss" is a requested offset the log no
longer has: below its start (retention) or above its HW (truncated after an unclean election).
With failOnDataLoss=true the query fails saying so; with false, it skips what is gone.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
          "timestampType int, headers array<struct<key: string, value: binary>>")
EARLIEST, LATEST = -2, -1
DEFAULT_RECORDS_PER_SPLIT = 200_000
NO_HEADERS: list = []  # shared: most records have none
FETCH_BYTES = 4 * 1024 * 1024
SOURCE_OPTIONS = {"subscribe", "subscribepattern", "assign", "startingoffsets", "endingoffsets",
                  "maxoffsetspertrigger", "failondataloss", "minpartitions", "lab.url", "lab.session",
                  "includeheaders", "kafka.bootstrap.servers", "path"}


class LabSourceError(ValueError):
    """A bad option or an unreadable lab: raised at analysis time with a clear message."""


# -- options -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Options:
    url: str
    session: str
    subscribe: tuple[str, ...] | None
    pattern: str | None
    assign: dict[str, list[int]] | None
    starting: str | dict
    ending: str | dict
    max_offsets_per_trigger: int | None
    fail_on_data_loss: bool
    min_partitions: int | None

    @classmethod
    def parse(cls, raw: dict[str, str], *, streaming: bool) -> Options:
        options = {k.lower(): v for k, v in raw.items()}
        unknown = sorted(k for k in options if k not in SOURCE_OPTIONS)
        if unknown:
            raise LabSourceError(f"Unknown option(s) for format 'lab': {', '.join(unknown)}")
        url = options.get("lab.url") or os.environ.get("KAFKA_LAB_URL")
        if not url:
            raise LabSourceError("Option 'lab.url' is required (e.g. http://127.0.0.1:8000), or set KAFKA_LAB_URL")
        session = options.get("lab.session")
        if not session:
            raise LabSourceError("Option 'lab.session' is required: the id of the lab session to read")
        chosen = [k for k in ("subscribe", "subscribepattern", "assign") if options.get(k)]
        if len(chosen) != 1:
            raise LabSourceError("Exactly one of the options 'subscribe', 'subscribePattern' or 'assign' "
                                 f"must be given (got {chosen or 'none'})")
        subscribe = tuple(t.strip() for t in options["subscribe"].split(",") if t.strip()) \
            if "subscribe" in chosen else None
        if subscribe == ():
            raise LabSourceError("Option 'subscribe' names no topic")
        assign = _json_option(options, "assign") if "assign" in chosen else None
        if assign is not None and not all(isinstance(v, list) for v in assign.values()):
            raise LabSourceError('Option \'assign\' must look like {"topic": [0, 1]}')
        starting = _offsets_option(options, "startingoffsets", "latest" if streaming else "earliest")
        ending = _offsets_option(options, "endingoffsets", "latest")
        if streaming and "endingoffsets" in options:
            raise LabSourceError("Option 'endingOffsets' is for batch queries only")
        if starting == "latest" and not streaming and "startingoffsets" in options:
            raise LabSourceError("startingOffsets='latest' is not allowed in a batch query (as with Kafka)")
        if ending == "earliest":
            raise LabSourceError("endingOffsets='earliest' is not allowed (as with Kafka)")
        return cls(url.rstrip("/"), session, subscribe, options.get("subscribepattern"), assign, starting, ending,
                   _positive_int(options, "maxoffsetspertrigger"), _bool(options.get("failondataloss", "true")),
                   _positive_int(options, "minpartitions"))


def _json_option(options: dict, name: str) -> dict:
    try:
        value = json.loads(options[name])
    except json.JSONDecodeError as error:
        raise LabSourceError(f"Option '{name}' is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise LabSourceError(f"Option '{name}' must be a JSON object")
    return value


def _offsets_option(options: dict, name: str, default: str) -> str | dict:
    value = options.get(name, default).strip()
    if value in ("earliest", "latest"):
        return value
    parsed = _json_option({name: value}, name)
    for topic, offsets in parsed.items():
        if not isinstance(offsets, dict) or not all(isinstance(o, int) for o in offsets.values()):
            raise LabSourceError(f'Option \'{name}\' must be "earliest", "latest" or like {{"{topic}": {{"0": 23}}}}')
    return parsed


def _positive_int(options: dict, name: str) -> int | None:
    if name not in options:
        return None
    try:
        value = int(options[name])
    except ValueError:
        raise LabSourceError(f"Option '{name}' must be a positive integer, got {options[name]!r}") from None
    if value <= 0:
        raise LabSourceError(f"Option '{name}' must be a positive integer, got {value}")
    return value


def _bool(value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise LabSourceError(f"Option 'failOnDataLoss' must be true or false, got {value!r}")
    return value.lower() == "true"


# -- the read API --------------------------------------------------------------------------
class LabClient:
    """The lab's HTTP read API (committed data only)."""

    def __init__(self, url: str, session: str) -> None:
        self.base = f"{url}/api/v1/sessions/{urllib.parse.quote(session)}"

    def partitions(self, options: Options) -> list[dict]:
        if options.pattern is not None:
            query = {"pattern": options.pattern}
        else:
            topics = options.subscribe or tuple(options.assign)
            query = {"topics": ",".join(topics)}
        infos = self._json(f"{self.base}/partitions?{urllib.parse.urlencode(query)}")["partitions"]
        if options.assign is not None:
            wanted = {(t, p) for t, ps in options.assign.items() for p in ps}
            infos = [i for i in infos if (i["topic"], i["partition"]) in wanted]
            missing = wanted - {(i["topic"], i["partition"]) for i in infos}
            if missing:
                raise LabSourceError(f"Assigned partitions do not exist: {sorted(missing)}")
        return infos

    def records(self, topic: str, partition: int, offset: int) -> tuple[bytes, int, int, int] | None:
        """(batches, next offset, log start, high watermark), or None when the offset is out of range."""
        url = (f"{self.base}/topics/{urllib.parse.quote(topic)}/partitions/{partition}/records?"
               f"offset={offset}&max_bytes={FETCH_BYTES}")
        try:
            with urllib.request.urlopen(url, timeout=60) as answer:
                body = answer.read()
                return (body, int(answer.headers["X-Kafka-Lab-Next-Offset"]),
                        int(answer.headers["X-Kafka-Lab-Log-Start-Offset"]),
                        int(answer.headers["X-Kafka-Lab-High-Watermark"]))
        except urllib.error.HTTPError as error:
            if error.code == 416:
                return None
            raise LabSourceError(_error_text(error)) from None

    def _json(self, url: str) -> dict:
        try:
            with urllib.request.urlopen(url, timeout=60) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as error:
            raise LabSourceError(_error_text(error)) from None
        except urllib.error.URLError as error:
            raise LabSourceError(f"Cannot reach the lab at {url.split('/api/')[0]}: {error.reason}") from None


def _error_text(error: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(error.read())
        return f"{body.get('error')}: {body.get('message')}"
    except (ValueError, OSError):
        return f"HTTP {error.code} from the lab"


# -- planning ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Range:
    topic: str
    partition: int
    start: int
    end: int


class RangePartition(InputPartition):
    def __init__(self, ranges: list[Range]) -> None:
        super().__init__([(r.topic, r.partition, r.start, r.end) for r in ranges])
        self.ranges = ranges


def resolve(spec: str | dict, infos: list[dict], *, which: str, fail_on_data_loss: bool) -> dict[tuple[str, int], int]:
    """Offsets per (topic, partition) from "earliest"/"latest"/JSON, checked against the logs."""
    out = {}
    for info in infos:
        key = (info["topic"], info["partition"])
        if info["high_watermark"] < 0:
            raise LabSourceError(f"{key[0]}-{key[1]} has no leader right now; try again")
        if spec == "earliest":
            out[key] = info["log_start_offset"]
        elif spec == "latest":
            out[key] = info["high_watermark"]
        else:
            wanted = spec.get(key[0], {}).get(str(key[1]))
            if wanted is None:
                out[key] = info["log_start_offset"] if which == "starting" else info["high_watermark"]
            elif wanted == EARLIEST:
                out[key] = info["log_start_offset"]
            elif wanted == LATEST:
                out[key] = info["high_watermark"]
            else:
                out[key] = check_available(key, wanted, info, fail_on_data_loss)
    return out


def check_available(key: tuple[str, int], offset: int, info: dict, fail_on_data_loss: bool) -> int:
    start, hw = info["log_start_offset"], info["high_watermark"]
    if start <= offset <= hw:
        return offset
    if offset < start:
        reason = (f"offset {offset} of {key[0]}-{key[1]} is gone: the log now starts at {start} "
                  "(records were deleted by retention)")
        fallback = start
    else:
        reason = (f"offset {offset} of {key[0]}-{key[1]} is past the high watermark {hw}: the log was "
                  "truncated (e.g. after an unclean leader election) and those records are lost")
        fallback = hw
    if fail_on_data_loss:
        raise LabSourceError(f"Data loss: {reason}. Set failOnDataLoss=false to skip what is gone.")
    return fallback


def split(topic: str, partition: int, start: int, end: int, pieces: int) -> list[Range]:
    if end <= start:
        return []
    size = -(-(end - start) // pieces)
    return [Range(topic, partition, s, min(s + size, end)) for s in range(start, end, size)]


def plan(starts: dict, ends: dict, min_partitions: int | None) -> list[RangePartition]:
    total = sum(max(0, ends[k] - starts[k]) for k in ends)
    wanted = max(min_partitions or 0, len(ends))
    out = []
    for key in sorted(ends):
        span = max(0, ends[key] - starts[key])
        pieces = max(1, -(-span // DEFAULT_RECORDS_PER_SPLIT))
        if total and min_partitions:
            pieces = max(pieces, round(wanted * span / total))
        out += [RangePartition([r]) for r in split(key[0], key[1], starts[key], ends[key], pieces)]
    return out


# -- reading (on executors) ----------------------------------------------------------------
def read_range(client: LabClient, r: Range, fail_on_data_loss: bool) -> Iterator:
    """Arrow record batches (one per fetch) of the records in [r.start, r.end): handing Spark
    columns instead of row tuples is what makes a Python source fast."""
    from engine.broker import record_batch as rb  # imported on the executor

    offset = r.start
    while offset < r.end:
        got = client.records(r.topic, r.partition, offset)
        if got is None:  # deleted (retention) or truncated since the query was planned
            if fail_on_data_loss:
                raise LabSourceError(f"Data loss: offset {offset} of {r.topic}-{r.partition} is no longer "
                                     "readable (retention or truncation). Set failOnDataLoss=false to skip it.")
            return
        data, next_offset, log_start, hw = got
        if not data:
            if log_start > offset and not fail_on_data_loss:
                offset = log_start
                continue
            if hw < r.end and fail_on_data_loss:
                raise LabSourceError(f"Data loss: {r.topic}-{r.partition} ends at {hw}, before offset {r.end} "
                                     "that was planned (truncated after an unclean election?)")
            return
        columns = _Columns()
        position = 0
        while position < len(data):
            header, records = rb.decode_batch(data, position)
            position += header.size_in_bytes
            columns.add(records, header.timestamp_type, offset, r.end)
        if columns.offsets:
            yield columns.to_arrow(r.topic, r.partition)
        offset = max(offset, next_offset)


class _Columns:
    def __init__(self) -> None:
        self.keys, self.values, self.offsets, self.timestamps, self.types, self.headers = [], [], [], [], [], []

    def add(self, records: list, timestamp_type: int, first: int, end: int) -> None:
        if records and (records[0].offset < first or records[-1].offset >= end):
            records = [r for r in records if first <= r.offset < end]  # only the edge batches
        self.keys += [r.key for r in records]
        self.values += [r.value for r in records]
        self.offsets += [r.offset for r in records]
        self.timestamps += [r.timestamp for r in records]
        self.types += [timestamp_type] * len(records)
        self.headers += [[{"key": h.key, "value": h.value} for h in r.headers] if r.headers else NO_HEADERS
                         for r in records]

    def to_arrow(self, topic: str, partition: int):
        import pyarrow as pa
        import pyarrow.compute  # noqa: F401 (pa.compute)
        n = len(self.offsets)
        return pa.RecordBatch.from_arrays([
            pa.array(self.keys, pa.binary()), pa.array(self.values, pa.binary()),
            pa.array([topic] * n, pa.string()), pa.array([partition] * n, pa.int32()),
            pa.array(self.offsets, pa.int64()),
            pa.compute.multiply(pa.array(self.timestamps, pa.int64()), 1000).cast(pa.timestamp("us", tz="UTC")),
            pa.array(self.types, pa.int32()),
            pa.array(self.headers, pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
        ], names=["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"])


class LabBatchReader(DataSourceReader):
    def __init__(self, options: Options) -> None:
        self.options = options

    def partitions(self) -> list[RangePartition]:
        o = self.options
        infos = LabClient(o.url, o.session).partitions(o)
        starts = resolve(o.starting, infos, which="starting", fail_on_data_loss=o.fail_on_data_loss)
        ends = resolve(o.ending, infos, which="ending", fail_on_data_loss=True)
        for key in ends:
            if ends[key] < starts[key]:
                raise LabSourceError(f"endingOffsets {ends[key]} is before startingOffsets {starts[key]} "
                                     f"for {key[0]}-{key[1]}")
        return plan(starts, ends, o.min_partitions) or [RangePartition([])]

    def read(self, partition: RangePartition) -> Iterator[tuple]:
        client = LabClient(self.options.url, self.options.session)
        for r in partition.ranges:
            yield from read_range(client, r, self.options.fail_on_data_loss)


class LabStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are JSON like Spark's Kafka source: {"topic": {"0": 5, "1": 7}} (next offsets to read)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self._target: dict | None = None

    def _client(self) -> LabClient:
        return LabClient(self.options.url, self.options.session)

    def initialOffset(self) -> dict:
        o = self.options
        infos = self._client().partitions(o)
        return _to_json(resolve(o.starting, infos, which="starting", fail_on_data_loss=o.fail_on_data_loss))

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = _to_json(self._latest())

    def _latest(self) -> dict[tuple[str, int], int]:
        return {(i["topic"], i["partition"]): i["high_watermark"] for i in self._client().partitions(self.options)}

    def latestOffset(self, start: dict | None = None, limit=None) -> dict:
        latest = _from_json(self._target) if self._target is not None else self._latest()
        begin = _from_json(start or {})
        for key in latest:  # a partition seen for the first time (new topic or added partition)
            begin.setdefault(key, 0)
        cap = getattr(limit, "max_rows", None) or getattr(limit, "maxRows", None)
        if cap:
            latest = _rate_limit(begin, latest, cap)
        return _to_json({k: max(v, begin.get(k, 0)) for k, v in latest.items()})

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows
        cap = self.options.max_offsets_per_trigger
        return ReadMaxRows(cap) if cap else ReadAllAvailable()

    def partitions(self, start: dict, end: dict) -> list[RangePartition]:
        o = self.options
        begin, finish = _from_json(start), _from_json(end)
        infos = {(i["topic"], i["partition"]): i for i in self._client().partitions(o)}
        starts = {}
        for key, stop in finish.items():
            first = begin.get(key, infos.get(key, {}).get("log_start_offset", 0))
            if key in infos:
                first = check_available(key, first, infos[key], o.fail_on_data_loss)
            starts[key] = min(first, stop)
        return plan(starts, finish, o.min_partitions)

    def read(self, partition: RangePartition) -> Iterator[tuple]:
        client = self._client()
        for r in partition.ranges:
            yield from read_range(client, r, self.options.fail_on_data_loss)

    def commit(self, end: dict) -> None:
        pass


def _rate_limit(begin: dict, latest: dict, cap: int) -> dict:
    """maxOffsetsPerTrigger: split the cap over partitions in proportion to what each has waiting."""
    waiting = {k: max(0, latest[k] - begin.get(k, 0)) for k in latest}
    total = sum(waiting.values())
    if total <= cap:
        return latest
    out, given = {}, 0
    for key in sorted(latest):
        share = waiting[key] * cap // total
        out[key] = begin.get(key, 0) + share
        given += share
    for key in sorted(latest):  # hand out the rounding remainder, first partitions first
        if given >= cap:
            break
        if out[key] < latest[key]:
            out[key] += 1
            given += 1
    return out


def _to_json(offsets: dict[tuple[str, int], int]) -> dict:
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = int(offset)
    return out


def _from_json(offsets: dict) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


class LabDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "lab"

    def schema(self) -> str:
        # Called at analysis: bad options fail here, before any job runs. (Batch- or
        # stream-only rules are checked when the reader is made, also before a job runs.)
        Options.parse({k: v for k, v in dict(self.options).items() if k.lower() != "endingoffsets"},
                      streaming=True)
        return SCHEMA

    def reader(self, schema) -> LabBatchReader:
        return LabBatchReader(Options.parse(dict(self.options), streaming=False))

    def streamReader(self, schema) -> LabStreamReader:
        return LabStreamReader(Options.parse(dict(self.options), streaming=True))


def register(spark) -> None:
    """Make `format("lab")` available in this SparkSession."""
    spark.dataSource.register(LabDataSource)
