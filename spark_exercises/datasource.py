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
binary>> (Spark adds headers only with includeHeaders=true; here they are always there, and null
for a record without headers, as in Spark's).
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

import http.client
import json
import os
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
          "timestampType int, headers array<struct<key: string, value: binary>>")
EARLIEST, LATEST = -2, -1
# Ranges above this are split. Not smaller: every Spark task costs a Python worker a fixed ~30 ms
# (pyspark's daemon runs a full gc.collect() after each task), ~10% of a 200,000-record task.
DEFAULT_RECORDS_PER_SPLIT = 500_000
FETCH_BYTES = 4 * 1024 * 1024
FETCH_SLACK = 1.1  # a range's last fetch asks 10% more than the estimate: batches are not all alike
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
    """The lab's HTTP read API (committed data only), over one kept-alive connection: a task
    fetches many times in a row, and a new connection (and server thread) per fetch costs more
    than the fetch's own Python work."""

    def __init__(self, url: str, session: str) -> None:
        self.url = url
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LabSourceError(f"Option 'lab.url' must be an http:// or https:// URL, got {url!r}")
        self._connection_class = (http.client.HTTPSConnection if parts.scheme == "https"
                                  else http.client.HTTPConnection)
        self._netloc = parts.netloc
        self.base = f"{parts.path.rstrip('/')}/api/v1/sessions/{urllib.parse.quote(session)}"
        self._connection: http.client.HTTPConnection | None = None

    def partitions(self, options: Options) -> list[dict]:
        if options.pattern is not None:
            query = {"pattern": options.pattern}
        else:
            topics = options.subscribe or tuple(options.assign)
            query = {"topics": ",".join(topics)}
        status, _, body = self._get(f"{self.base}/partitions?{urllib.parse.urlencode(query)}")
        if status != 200:
            raise LabSourceError(_error_text(status, body))
        infos = json.loads(body)["partitions"]
        if options.assign is not None:
            wanted = {(t, p) for t, ps in options.assign.items() for p in ps}
            infos = [i for i in infos if (i["topic"], i["partition"]) in wanted]
            missing = wanted - {(i["topic"], i["partition"]) for i in infos}
            if missing:
                raise LabSourceError(f"Assigned partitions do not exist: {sorted(missing)}")
        return infos

    def records(self, topic: str, partition: int, offset: int,
                max_bytes: int = FETCH_BYTES) -> tuple[bytes, int, int, int] | None:
        """(batches, next offset, log start, high watermark), or None when the offset is out of range."""
        status, headers, body = self._get(
            f"{self.base}/topics/{urllib.parse.quote(topic)}/partitions/{partition}/records?"
            f"offset={offset}&max_bytes={max_bytes}")
        if status == 416:
            return None
        if status != 200:
            raise LabSourceError(_error_text(status, body))
        return (body, int(headers["X-Kafka-Lab-Next-Offset"]), int(headers["X-Kafka-Lab-Log-Start-Offset"]),
                int(headers["X-Kafka-Lab-High-Watermark"]))

    def __enter__(self) -> LabClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _get(self, path: str) -> tuple[int, http.client.HTTPMessage, bytes]:
        """One GET; retried once on a fresh connection, as the server may have closed an idle one."""
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = self._connection_class(self._netloc, timeout=60)
            try:
                self._connection.request("GET", path)
                answer = self._connection.getresponse()
                return answer.status, answer.headers, answer.read()
            except (http.client.HTTPException, OSError) as error:
                self.close()
                if attempt == 2:
                    raise LabSourceError(f"Cannot reach the lab at {self.url}: {error}") from None
        raise AssertionError("unreachable")


def _error_text(status: int, body: bytes) -> str:
    try:
        answer = json.loads(body)
        return f"{answer.get('error')}: {answer.get('message')}"
    except (ValueError, AttributeError):
        return f"HTTP {status} from the lab"


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
    columns instead of row tuples is what makes a Python source fast, and decoding the fetched
    bytes straight to Arrow buffers (engine.storage.columnar) keeps Python out of the per-record
    loop."""
    from engine.storage.columnar import decode_columns  # imported on the executor

    offset, bytes_per_record = r.start, None
    while offset < r.end:
        got = client.records(r.topic, r.partition, offset, _fetch_bytes(bytes_per_record, r.end - offset))
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
        records = decode_columns(data, offset, r.end)
        if records.num_rows:
            yield to_spark_columns(records, r.topic, r.partition)
        if next_offset > offset:
            bytes_per_record = len(data) / (next_offset - offset)
        offset = max(offset, next_offset)


def _fetch_bytes(bytes_per_record: float | None, remaining: int) -> int:
    """max_bytes of the next fetch: FETCH_BYTES, or less near the end of a range, estimated from
    the last fetch, so that the last fetch of a range does not read megabytes past its end (the
    server returns at least one whole batch whatever the limit)."""
    if bytes_per_record is None:
        return FETCH_BYTES
    return min(FETCH_BYTES, int(remaining * bytes_per_record * FETCH_SLACK) + 1)


def to_spark_columns(records, topic: str, partition: int):
    """Spark's Kafka source schema from decode_columns' columns: add topic and partition, and
    make the millisecond timestamps Spark's timestamp (microseconds, UTC)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    n = records.num_rows
    timestamps = pc.multiply(records.column("timestamp"), 1000).cast(pa.timestamp("us", tz="UTC"))
    return pa.RecordBatch.from_arrays([
        records.column("key"), records.column("value"),
        pa.repeat(pa.scalar(topic, pa.string()), n), pa.repeat(pa.scalar(partition, pa.int32()), n),
        records.column("offset"), timestamps, records.column("timestampType"), records.column("headers"),
    ], names=["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"])


def _partition_infos(options: Options) -> list[dict]:
    with LabClient(options.url, options.session) as client:
        return client.partitions(options)


def _read(options: Options, partition: RangePartition) -> Iterator:
    with LabClient(options.url, options.session) as client:
        for r in partition.ranges:
            yield from read_range(client, r, options.fail_on_data_loss)


class LabBatchReader(DataSourceReader):
    def __init__(self, options: Options) -> None:
        self.options = options

    def partitions(self) -> list[RangePartition]:
        o = self.options
        infos = _partition_infos(o)
        starts = resolve(o.starting, infos, which="starting", fail_on_data_loss=o.fail_on_data_loss)
        ends = resolve(o.ending, infos, which="ending", fail_on_data_loss=True)
        for key in ends:
            if ends[key] < starts[key]:
                raise LabSourceError(f"endingOffsets {ends[key]} is before startingOffsets {starts[key]} "
                                     f"for {key[0]}-{key[1]}")
        return plan(starts, ends, o.min_partitions) or [RangePartition([])]

    def read(self, partition: RangePartition) -> Iterator:
        return _read(self.options, partition)


class LabStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are JSON like Spark's Kafka source: {"topic": {"0": 5, "1": 7}} (next offsets to read)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self._target: dict | None = None

    def initialOffset(self) -> dict:
        o = self.options
        infos = _partition_infos(o)
        return _to_json(resolve(o.starting, infos, which="starting", fail_on_data_loss=o.fail_on_data_loss))

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = _to_json(self._latest())

    def _latest(self) -> dict[tuple[str, int], int]:
        return {(i["topic"], i["partition"]): i["high_watermark"] for i in _partition_infos(self.options)}

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
        infos = {(i["topic"], i["partition"]): i for i in _partition_infos(o)}
        starts = {}
        for key, stop in finish.items():
            first = begin.get(key, infos.get(key, {}).get("log_start_offset", 0))
            if key in infos:
                first = check_available(key, first, infos[key], o.fail_on_data_loss)
            starts[key] = min(first, stop)
        return plan(starts, finish, o.min_partitions)

    def read(self, partition: RangePartition) -> Iterator:
        return _read(self.options, partition)

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
