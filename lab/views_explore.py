"""The explorer's panels of a lab session, as htmx partials read straight from the engine.

- segments: a replica's partition directory as on disk (20-digit segment names, sizes, the active
  segment), its broker's offset checkpoint files (read from disk, the replica's line picked out),
  one file opened the way `kafka-dump-log.sh` prints it (`engine.tools.dump_log`), and the lookup
  path of an offset (`Log.locate`: segment binary search → index → forward scan);
  the replica's last log cleaning, before and after, is lab/views_cleaning.py;
- messages: a topic's committed records (below the high watermark) by partition, from an offset
  or a timestamp, filtered by key/value/header text, each with the codec of the batch the leader
  stored it in (the producer's compression.type, or the topic's when the leader recompressed);
- small lists the session page fills itself with: built-in scenarios, event kinds;
- plotly.min.js from the installed `plotly` package, so the charts need no CDN.

Every session view reads the visitor's own session only (`_session_panel`); another visitor's
id is a 404, as if it did not exist. The views only read: nothing here moves the cluster.
"""
from __future__ import annotations

import bisect
import io
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any
from uuid import UUID

import plotly
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from engine.broker.broker import HW_CHECKPOINT, LOG_START_CHECKPOINT, RECOVERY_CHECKPOINT
from engine.cluster import EPOCH_MS, Cluster, ClusterError
from engine.events import EVENT_TYPES
from engine.scenarios.runner import BUILTIN_DIR, ScenarioError, builtin_names, load_scenario
from engine.storage import checkpoints
from engine.storage import record_batch as rb
from engine.storage.errors import OffsetOutOfRangeError
from engine.storage.index import OFFSET_ENTRY, TIME_ENTRY
from engine.storage.segment import filename_prefix
from engine.tools import dump_log
from lab import registry
from lab.language import in_page_language
from lab.models import LabSession
from lab.owners import owner_key

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
PLOTLY_VERSION = plotly.__version__
ONE_YEAR_S = 365 * 24 * 3600
MESSAGES_LIMIT_MAX = 500
SEARCH_SCAN_MAX = 20_000          # records read per partition when searching
SMALL_FILE_BYTES = 4096           # checkpoint files are shown inline up to this size


class PanelError(Exception):
    """Bad input for a panel: shown in the panel (HTTP 400), never a crash."""


# -- access --------------------------------------------------------------------------------------
def _owned_host(request: HttpRequest, session_id: UUID) -> Any:
    """The SessionHost of the visitor's own lab session, or 404 (someone else's looks like none)."""
    owner = owner_key(request) or "-"
    if not LabSession.objects.filter(pk=session_id, owner=owner).exists():
        raise Http404("No such lab session")
    host = _host_of(session_id)
    if host is None or getattr(host, "cluster", None) is None:
        raise Http404("This lab session is not running: open its page to start it")
    return host


def _host_of(session_id: UUID) -> Any:
    """The session's SessionHost in this process (None if it is not loaded)."""
    get_host = getattr(registry, "get_host", None)
    if get_host is not None:
        return get_host(session_id)
    live = registry.registry.get(session_id)  # until lab.registry offers get_host()
    return live.host if live is not None else None


@contextmanager
def _reading(host: Any) -> Iterator[Cluster]:
    """The host's cluster, under the host's thread lock: the clock cannot move while a panel reads."""
    with host.lock:
        yield host.cluster


def _session_panel(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET only; the visitor's own session; the cluster read under the host's lock; bad input
    (PanelError, ClusterError, ValueError) rendered as the panel's error with status 400."""
    @require_GET
    @wraps(view)
    def wrapper(request: HttpRequest, session_id: UUID) -> HttpResponse:
        host = _owned_host(request, session_id)
        try:
            with _reading(host) as cluster:
                return view(request, cluster, session_id)
        except (PanelError, ClusterError, ValueError) as error:
            kafka = getattr(error, "kafka_name", None)
            return render(request, "lab/partials/panel_error.html", {"message": str(error), "kafka_error": kafka},
                          status=400)
    return wrapper


# -- parameters ------------------------------------------------------------------------------------
def _int_param(request: HttpRequest, name: str, default: int | None = None, *, minimum: int | None = None,
               maximum: int | None = None) -> int | None:
    raw = request.GET.get(name, "").strip()
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise PanelError(f"{name} must be a whole number, not {raw!r}") from None
    if minimum is not None and maximum is not None and not minimum <= value <= maximum:
        raise PanelError(f"{name} must be from {minimum} to {maximum}, not {value}")
    if minimum is not None and value < minimum:
        raise PanelError(f"{name} must be at least {minimum}, not {value}")
    return value


def _replica_param(request: HttpRequest, cluster: Cluster) -> tuple[int, str, int] | None:
    """(broker, topic, partition) from `replica=b:topic:p` or broker/topic/partition; None if absent."""
    replica = request.GET.get("replica", "").strip()
    if replica:
        broker, _, rest = replica.partition(":")
        topic, _, partition = rest.rpartition(":")
        if not (broker.isdigit() and topic and partition.isdigit()):
            raise PanelError(f"replica must look like 1:topic:0, not {replica!r}")
        chosen = int(broker), topic, int(partition)
    elif request.GET.get("topic"):
        broker = _int_param(request, "broker")
        partition = _int_param(request, "partition", 0, minimum=0)
        if broker is None:
            raise PanelError("Choose a broker")
        chosen = broker, request.GET["topic"], partition
    else:
        return None
    broker, topic, partition = chosen
    if broker not in cluster.brokers:
        raise PanelError(f"There is no broker {broker}")
    if topic not in cluster.topics or not 0 <= partition < cluster.topics[topic].partitions:
        raise ClusterError(f"Topic-partition {topic}-{partition} does not exist", "UNKNOWN_TOPIC_OR_PARTITION")
    return chosen


def _replicas(cluster: Cluster) -> list[dict]:
    """Every replica in the cluster: broker, topic, partition, leader or not, broker alive or not."""
    out = []
    for topic, partition in cluster.all_partitions():
        state = cluster.partition_state(topic, partition)
        for broker in state["replicas"]:
            out.append({"broker": broker, "topic": topic, "partition": partition,
                        "leader": broker == state["leader"], "alive": cluster.brokers[broker].alive,
                        "value": f"{broker}:{topic}:{partition}"})
    return sorted(out, key=lambda r: (_internal(r["topic"]), r["topic"], r["partition"], r["broker"]))


def _internal(topic: str) -> bool:
    """Kafka's own topics (__consumer_offsets): listed after the learner's."""
    return topic.startswith("__")


# -- segments --------------------------------------------------------------------------------------
def _live_log(cluster: Cluster, broker: int, topic: str, partition: int):
    """The replica's open Log, or None when its broker is down (then its files are read as they lie)."""
    b = cluster.brokers[broker]
    part = b.partitions.get((topic, partition)) if b.alive else None
    return part.log if part is not None else None


def _last_cleaning(cluster: Cluster, broker: int, topic: str, partition: int) -> Any:
    """The replica's last cleaning since its broker started (LogCleanerManager.last_cleaning, a
    CleaningResult), or None: none yet, or the broker is down (its cleaner went with it)."""
    b = cluster.brokers[broker]
    cleaner = b.cleaner if b.alive else None
    return cleaner.last_cleaning.get((topic, partition)) if cleaner is not None else None


def _partition_dir(cluster: Cluster, broker: int, topic: str, partition: int) -> str:
    return os.path.join(cluster.brokers[broker].data_dir, f"{topic}-{partition}")


def _segment_files(directory: str, log) -> tuple[list[dict], list[dict]]:
    """The directory's segments (grouped by base offset) and its other files (checkpoints…)."""
    segments: dict[int, dict] = {}
    others = []
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    for name in names:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        stem, _, suffix = name.partition(".")
        size = os.path.getsize(path)
        if stem.isdigit() and len(stem) == 20 and suffix in ("log", "index", "timeindex"):
            seg = segments.setdefault(int(stem), {"base_offset": int(stem), "prefix": stem})
            seg[suffix] = {"name": name, "size": size}
        else:
            text = None
            if size <= SMALL_FILE_BYTES:
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", errors="replace")
            others.append({"name": name, "size": size, "text": text})
    live = {s.base_offset: s for s in log.segments} if log is not None else {}
    active = log.active_segment.base_offset if log is not None else (max(segments) if segments else None)
    rows = []
    for base in sorted(segments):
        seg = segments[base]
        seg["active"] = base == active
        mem = live.get(base)
        if mem is not None:
            # The index files get their entries on the next sync (Kafka writes them through mmap);
            # the broker's own view is in memory: show both.
            seg["next_offset"] = mem.next_offset
            seg["index_entries"] = mem.offset_index.entries
            seg["timeindex_entries"] = mem.time_index.entries
        rows.append(seg)
    return rows, others


# Kafka's offset checkpoints of a log dir (LogManager, ReplicaManager), each with the broker
# setting that spaces its writes. The engine writes log-start-offset-checkpoint together with the
# recovery points; Kafka has log.flush.start.offset.checkpoint.interval.ms for it, also 60 s.
BROKER_CHECKPOINTS = (
    (HW_CHECKPOINT, "replica_high_watermark_checkpoint_interval_ms"),
    (RECOVERY_CHECKPOINT, "log_flush_offset_checkpoint_interval_ms"),
    (LOG_START_CHECKPOINT, "log_flush_offset_checkpoint_interval_ms"),
)


def _broker_checkpoint_files(cluster: Cluster, broker_id: int, topic: str, partition: int) -> list[dict]:
    """The broker's offset checkpoint files as its disk holds them: each line of Kafka's text
    format (version, entry count, `topic partition offset`…), the chosen replica's line marked,
    and when the broker last wrote the file (virtual time; None: not since the cluster opened)."""
    broker = cluster.brokers[broker_id]
    files = []
    for name, interval_field in BROKER_CHECKPOINTS:
        path = os.path.join(broker.data_dir, name)
        written_ms = broker.checkpoint_written_ms.get(name)
        entry = {"name": name, "exists": os.path.isfile(path), "interval_key": interval_field.replace("_", "."),
                 "interval_s": f"{getattr(cluster.broker_config, interval_field) / 1000:g}",
                 "written_ms": written_ms, "written_s": None if written_ms is None else _seconds(written_ms),
                 "ago_s": None if written_ms is None else _seconds(cluster.now_ms - written_ms)}
        if entry["exists"]:
            with open(path, "rb") as f:
                data = f.read()
            entry.update(size=len(data), **_checkpoint_lines(path, data, topic, partition))
        files.append(entry)
    return files


def _checkpoint_lines(path: str, data: bytes, topic: str, partition: int) -> dict:
    """Each line of an offset checkpoint file with its role; the entry of (topic, partition)."""
    lines, selected = [], None
    for number, text in enumerate(data.decode("utf-8", errors="replace").splitlines()):
        kind = "version" if number == 0 else "count" if number == 1 else "entry"
        fields = text.split()
        is_selected = kind == "entry" and len(fields) == 3 and fields[0] == topic and fields[1] == str(partition)
        lines.append({"number": number + 1, "kind": kind, "text": text, "selected": is_selected})
        if is_selected:
            selected = text
    try:
        error = None
        offsets = checkpoints.read_offsets(path)
    except checkpoints.CheckpointError as problem:
        error, offsets = str(problem), {}
    return {"lines": lines, "selected_line": selected, "selected_offset": offsets.get((topic, partition)),
            "entries": len(offsets), "error": error}


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def _segment_context(cluster: Cluster, chosen: tuple[int, str, int] | None) -> dict:
    context: dict[str, Any] = {"replicas": _replicas(cluster), "chosen": None}
    if chosen is None:
        return context
    broker, topic, partition = chosen
    log = _live_log(cluster, broker, topic, partition)
    directory = _partition_dir(cluster, broker, topic, partition)
    segments, others = _segment_files(directory, log)
    context.update(
        chosen={"broker": broker, "topic": topic, "partition": partition, "value": f"{broker}:{topic}:{partition}"},
        alive=log is not None, segments=segments, other_files=others,
        directory=os.path.relpath(directory, cluster.data_dir),
        broker_directory=os.path.relpath(cluster.brokers[broker].data_dir, cluster.data_dir),
        broker_files=_broker_checkpoint_files(cluster, broker, topic, partition),
        log_start_offset=log.log_start_offset if log else None,
        log_end_offset=log.log_end_offset if log else None,
        high_watermark=log.high_watermark if log else None,
        last_cleaning=_last_cleaning(cluster, broker, topic, partition),
    )
    return context


@_session_panel
def segments(request: HttpRequest, cluster: Cluster, session_id: UUID) -> HttpResponse:
    """A replica picker and the chosen replica's files."""
    context = _segment_context(cluster, _replica_param(request, cluster))
    context["session_id"] = session_id
    return render(request, "lab/partials/segments.html", context)


def _dump_lines(path: str, display_path: str) -> list[dict]:
    out = io.StringIO()
    dump_log.dump_file(path, out, print_data_log=True)
    lines = []
    for text in out.getvalue().splitlines():
        if text.startswith("Dumping "):
            text = f"Dumping {display_path}"
            kind = "head"
        elif text.startswith("baseOffset:"):
            kind = "batch"
        elif text.startswith("| offset:"):
            kind = "record"
        elif text.startswith("offset:") or text.startswith("timestamp:"):
            kind = "entry"
        elif text.startswith("Found ") or text.startswith("Ignoring "):
            kind = "warning"
        else:
            kind = "head"
        lines.append({"kind": kind, "text": text})
    return lines


def _dump_index_from_memory(segment, suffix: str, display_path: str) -> list[dict]:
    """Dump the entries the broker holds for this index (what its lookups use) with the same
    `dump_log` code: they are packed as on disk into a scratch file, which is then dumped."""
    if suffix == "index":
        data = b"".join(OFFSET_ENTRY.pack(offset - segment.base_offset, position)
                        for offset, position in segment.offset_index.all_entries())
    else:
        data = b"".join(TIME_ENTRY.pack(timestamp, offset - segment.base_offset)
                        for timestamp, offset in segment.time_index.all_entries())
    with tempfile.TemporaryDirectory(prefix="kafka-lab-dump-") as scratch:
        path = os.path.join(scratch, f"{filename_prefix(segment.base_offset)}.{suffix}")
        with open(path, "wb") as f:
            f.write(data)
        return _dump_lines(path, display_path)


@_session_panel
def segment_dump(request: HttpRequest, cluster: Cluster, session_id: UUID) -> HttpResponse:
    """One segment file as DumpLogSegments prints it (batches, records, index entries)."""
    chosen = _replica_param(request, cluster)
    if chosen is None:
        raise PanelError("Choose a replica first")
    base = _int_param(request, "base", minimum=0)
    suffix = request.GET.get("file", "log")
    if base is None:
        raise PanelError("Choose a segment (its base offset)")
    if suffix not in ("log", "index", "timeindex"):
        raise PanelError("file must be log, index or timeindex")
    broker, topic, partition = chosen
    directory = _partition_dir(cluster, broker, topic, partition)
    name = f"{filename_prefix(base)}.{suffix}"
    path = os.path.join(directory, name)
    display = os.path.join(os.path.relpath(directory, cluster.data_dir), name)
    log = _live_log(cluster, broker, topic, partition)
    segment = next((s for s in log.segments if s.base_offset == base), None) if log is not None else None
    if not os.path.isfile(path):
        raise PanelError(f"{display} is not on disk (the segment may have been deleted or truncated away)")
    from_memory = segment is not None and suffix != "log"
    lines = _dump_index_from_memory(segment, suffix, display) if from_memory else _dump_lines(path, display)
    counts = {kind: sum(1 for line in lines if line["kind"] == kind) for kind in ("batch", "record", "entry")}
    return render(request, "lab/partials/segment_dump.html", {
        "session_id": session_id, "broker": broker, "topic": topic, "partition": partition, "base": base,
        "suffix": suffix, "name": name, "display": display, "lines": lines, "counts": counts,
        "codecs": _codecs_in(lines),
        "from_memory": from_memory, "size_on_disk": os.path.getsize(path),
        "alive": log is not None, "prefix": filename_prefix(base),
    })


def _codecs_in(lines: list[dict]) -> list[str]:
    """The codecs the dump's batch lines name (`compresscodec: …`), in first-seen order."""
    found: dict[str, None] = {}
    for line in lines:
        if line["kind"] == "batch" and " compresscodec: " in line["text"]:
            found[line["text"].split(" compresscodec: ", 1)[1].split(" ", 1)[0]] = None
    return list(found)


def _lookup_steps(lookup, segments: list[int]) -> dict:
    """The three stages of `Log.locate`, as plain data for the template and the animation."""
    index = lookup.index
    relative = lookup.offset - lookup.segment_base_offset
    return {
        "offset": lookup.offset,
        "segments": [{"slot": i, "base_offset": base, "name": filename_prefix(base),
                      "probe_order": [n for n, (slot, _) in enumerate(lookup.segment_probes) if slot == i],
                      "found": base == lookup.segment_base_offset} for i, base in enumerate(segments)],
        "segment_probes": [{"slot": slot, "base_offset": base} for slot, base in lookup.segment_probes],
        "segment_base_offset": lookup.segment_base_offset,
        "segment_name": filename_prefix(lookup.segment_base_offset),
        "relative": relative,
        "index_slot": index.slot if index else -1,
        "index_offset": index.offset if index else lookup.segment_base_offset,
        "index_position": index.position if index else 0,
        "index_probes": list(index.probes) if index else [],
        "scan": [{"position": s.position, "base_offset": s.base_offset, "last_offset": s.last_offset, "size": s.size,
                  "hit": s.base_offset <= lookup.offset <= s.last_offset} for s in lookup.scan],
        "position": lookup.position,
        "batch_base_offset": lookup.batch_base_offset,
        "batch_last_offset": lookup.batch_last_offset,
        "record": None if lookup.record is None else _record_row(-1, lookup.record),
    }


@_session_panel
def segment_lookup(request: HttpRequest, cluster: Cluster, session_id: UUID) -> HttpResponse:
    """How a read finds `offset` in this replica: segment binary search, index lookup, scan."""
    chosen = _replica_param(request, cluster)
    if chosen is None:
        raise PanelError("Choose a replica first")
    offset = _int_param(request, "offset", minimum=0)
    if offset is None:
        raise PanelError("Type an offset to look up")
    broker, topic, partition = chosen
    log = _live_log(cluster, broker, topic, partition)
    if log is None:
        raise PanelError(f"Broker {broker} is down: its log is closed. Restart it to look offsets up.")
    try:
        lookup = log.locate(offset)
    except OffsetOutOfRangeError:
        raise ClusterError(f"Offset {offset} is not in this replica's log: it holds offsets "
                           f"{log.log_start_offset} to {log.log_end_offset - 1}"
                           if log.log_end_offset > log.log_start_offset else
                           f"Offset {offset} is not in this replica's log: the log is empty",
                           "OFFSET_OUT_OF_RANGE") from None
    segment = next(s for s in log.segments if s.base_offset == lookup.segment_base_offset)
    entries = [{"slot": i, "offset": o, "relative": o - segment.base_offset, "position": p}
               for i, (o, p) in enumerate(segment.offset_index.all_entries())]
    steps = _lookup_steps(lookup, [s.base_offset for s in log.segments])
    for entry in entries:
        entry["probe_order"] = [n for n, slot in enumerate(steps["index_probes"]) if slot == entry["slot"]]
    return render(request, "lab/partials/segment_lookup.html", {
        "session_id": session_id, "broker": broker, "topic": topic, "partition": partition,
        "steps": steps, "entries": entries, "steps_json": _lookup_animation(steps),
        "index_interval_bytes": log.config.index_interval_bytes,
    })


def _lookup_animation(steps: dict) -> str:
    """The order in which the page lights things up, as JSON for segment-view.js."""
    order: list[dict] = [{"stage": "segment", "slot": p["slot"]} for p in steps["segment_probes"]]
    order.append({"stage": "segment-found", "slot": next((s["slot"] for s in steps["segments"] if s["found"]), 0)})
    order += [{"stage": "index", "slot": slot} for slot in steps["index_probes"]]
    order.append({"stage": "index-found", "slot": steps["index_slot"]})
    order += [{"stage": "scan", "position": s["position"]} for s in steps["scan"]]
    order.append({"stage": "record"})
    return json.dumps(order)


# -- messages --------------------------------------------------------------------------------------
def _parse_timestamp(raw: str) -> int:
    """Epoch milliseconds, or an ISO date-time (UTC unless it says otherwise)."""
    raw = raw.strip()
    if raw.lstrip("-").isdigit():
        return int(raw)
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise PanelError(f"timestamp must be epoch milliseconds or a date-time like 2023-11-14T22:13:20, not {raw!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def _record_row(partition: int, record: rb.Record) -> dict:
    return {
        "partition": partition, "offset": record.offset, "timestamp": record.timestamp,
        "time": datetime.fromtimestamp(record.timestamp / 1000, tz=UTC).isoformat(timespec="milliseconds"),
        "virtual_ms": record.timestamp - EPOCH_MS,
        "key": _text(record.key), "value": _text(record.value),
        "headers": [{"key": h.key, "value": _text(h.value)} for h in record.headers],
    }


def _batch_codecs(log: Any, first: int, last: int, limit: int) -> Callable[[int], str]:
    """offset -> the codec of the stored batch holding it (the leader's bytes: what a topic's
    compression.type made of the producer's batch), for offsets first..last."""
    ends: list[int] = []      # each batch's last offset, ascending
    names: list[str] = []
    offset = first
    while offset <= last:
        fetched = log.read_batches(offset, max_offset=limit)
        if not fetched.records or fetched.next_offset <= offset:
            break
        for _, header in rb.iter_batches(fetched.records):
            ends.append(header.last_offset)
            names.append(rb.COMPRESSION_NAMES.get(header.compression, str(header.compression)))
        offset = fetched.next_offset

    def codec_of(record_offset: int) -> str:
        slot = bisect.bisect_left(ends, record_offset)
        return names[slot] if slot < len(names) else "?"
    return codec_of


def _matches(row: dict, needle: str) -> bool:
    haystack = [row["key"] or "", row["value"] or ""]
    haystack += [f"{h['key']}={h['value'] or ''}" for h in row["headers"]]
    return any(needle in text.lower() for text in haystack)


def _browse_partition(cluster: Cluster, topic: str, partition: int, start: dict, needle: str, limit: int) -> dict:
    """Committed records of one partition from `start` (offset or timestamp), filtered by `needle`."""
    leader = cluster.leader_of(topic, partition)
    part = cluster.brokers[leader].partitions.get((topic, partition)) if leader >= 0 else None
    info = {"partition": partition, "leader": leader, "rows": [], "note": ""}
    if part is None or part.role != "leader":
        info["note"] = "offline: no leader, nothing can be read"
        return info
    info.update(log_start_offset=part.log.log_start_offset, high_watermark=part.high_watermark,
                log_end_offset=part.log_end_offset)
    offset = start.get("offset")
    if start.get("timestamp") is not None:
        found = part.log.offset_for_timestamp(start["timestamp"])
        offset = part.high_watermark if found is None else found
        info["from_timestamp_offset"] = offset
    offset = max(offset or 0, part.log.log_start_offset)
    budget = SEARCH_SCAN_MAX if needle else limit
    while len(info["rows"]) < limit and budget > 0 and offset < part.high_watermark:
        chunk = cluster.read(topic, partition, offset, max_records=min(budget, 500))
        if not chunk:
            break
        codec_of = _batch_codecs(part.log, chunk[0].offset, chunk[-1].offset, part.high_watermark)
        for record in chunk:
            row = _record_row(partition, record)
            row["codec"] = codec_of(record.offset)
            if not needle or _matches(row, needle):
                info["rows"].append(row)
                if len(info["rows"]) >= limit:
                    break
        budget -= len(chunk)
        offset = chunk[-1].offset + 1
    return info


@_session_panel
def messages(request: HttpRequest, cluster: Cluster, session_id: UUID) -> HttpResponse:
    """The message browser: committed records only, as a consumer would see them. A bad field
    (topic, partition, offset, time, max) is said next to that field: the answer is the form
    alone, and htmx swaps it in place of the old form, so the previous results stay."""
    topics = sorted(cluster.list_topics(), key=lambda t: (_internal(t), t))
    topic = request.GET.get("topic") or (topics[0] if topics else "")
    context: dict[str, Any] = {"session_id": session_id, "topics": topics, "topic": topic, "results": [],
                               "params": request.GET, "errors": {}}
    if not topic:
        return render(request, "lab/partials/messages.html", context)
    count = cluster.topics[topic].partitions if topic in cluster.topics else 0
    query, errors = _messages_query(request, cluster, topic)
    context.update(partitions=list(range(count)), partition=query.get("partition"), limit=query.get("limit"),
                   errors=errors)
    if errors:
        response = render(request, "lab/partials/messages_form.html", context, status=400)
        response["HX-Retarget"] = "#messages-form-wrap"
        response["HX-Reswap"] = "innerHTML"
        return response
    partition, start, needle, limit = query["partition"], query["start"], query["needle"], query["limit"]
    chosen = [partition] if partition is not None else list(range(count))
    context.update(needle=needle, start=start,
                   results=[_browse_partition(cluster, topic, p, start, needle, limit) for p in chosen])
    context["total"] = sum(len(r["rows"]) for r in context["results"])
    return render(request, "lab/partials/messages.html", context)


def _messages_query(request: HttpRequest, cluster: Cluster, topic: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The message browser's fields, read one by one: (values, {field: what is wrong with it})."""
    errors: dict[str, str] = {}

    def read(name: str, parse: Callable[[], Any]) -> Any:
        try:
            return parse()
        except (PanelError, ClusterError) as error:
            errors[name] = str(error)
            return None

    def partition() -> int | None:
        value = _int_param(request, "partition", minimum=0)
        count = cluster.topics[topic].partitions
        if value is not None and value >= count:
            raise PanelError(f"{topic} has partitions 0 to {count - 1}, not {value}")
        return value

    if topic not in cluster.topics:
        errors["topic"] = f"Topic '{topic}' does not exist"
        return {}, errors
    query = {"partition": read("partition", partition),
             "limit": read("limit", lambda: _int_param(request, "limit", 50, minimum=1, maximum=MESSAGES_LIMIT_MAX)),
             "start": {"offset": read("offset", lambda: _int_param(request, "offset", minimum=0))},
             "needle": request.GET.get("q", "").strip().lower()}
    if request.GET.get("timestamp", "").strip():
        query["start"] = {"timestamp": read("timestamp", lambda: _parse_timestamp(request.GET["timestamp"]))}
    return query, errors


# -- lists and files the page needs ------------------------------------------------------------------
@require_GET
def scenario_options(request: HttpRequest) -> HttpResponse:
    """<option>s for the built-in scenario picker, each with its description."""
    scenarios = []
    for name in builtin_names():
        try:
            scenario = load_scenario(name)
        except ScenarioError as error:
            scenarios.append({"name": name, "description": f"(cannot be loaded: {error})", "broken": True})
            continue
        scenarios.append({"name": name, "description": in_page_language(scenario.get("description", ""),
                                                                      scenario.get("description_zh", "")),
                          "brokers": scenario.get("cluster", {}).get("brokers", 3), "steps": len(scenario["steps"])})
    return render(request, "lab/partials/scenario_options.html", {"scenarios": scenarios})


@require_GET
def scenario_json(request: HttpRequest, name: str) -> JsonResponse:
    """A built-in scenario file, for the page to send as `load_scenario`."""
    if name not in builtin_names():
        raise Http404(f"No built-in scenario {name!r}")
    with open(os.path.join(BUILTIN_DIR, f"{name}.json"), encoding="utf-8") as f:
        return JsonResponse(json.load(f))


@require_GET
def event_kinds(request: HttpRequest) -> HttpResponse:
    """<option>s naming every engine event kind (for "step to next…" and the log filter)."""
    return render(request, "lab/partials/event_kinds.html", {"kinds": sorted(EVENT_TYPES)})


@require_GET
def plotly_js(request: HttpRequest) -> FileResponse:
    """plotly.min.js from the installed plotly package; its URL carries the version, so it can be
    cached for a year."""
    if not PLOTLY_JS.is_file():
        raise Http404("plotly.min.js is not in the installed plotly package")
    response = FileResponse(PLOTLY_JS.open("rb"), content_type="text/javascript; charset=utf-8")
    patch_cache_control(response, public=True, max_age=ONE_YEAR_S, immutable=True)
    return response

