"""The lab's DumpLogSegments: print what a segment file holds, as Kafka's tool does.

    python -m engine.tools.dump_log --files 00000000000000000000.log --print-data-log
    python -m engine.tools.dump_log --files 00000000000000000000.index,00000000000000000000.timeindex
    python -m engine.cli kafka-run-class.sh kafka.tools.DumpLogSegments --files … --print-data-log
    python -m engine.cli kafka-dump-log.sh --files … --deep-iteration

Kafka's kafka.tools.DumpLogSegments (core/src/main/scala/kafka/tools/DumpLogSegments.scala,
`kafka-dump-log.sh` runs it), with its options and output lines, so the notes' examples read
the same:

- `.log`: "Log starting offset: N", then one `baseOffset: … isvalid: …` line per batch. Records
  (`| offset: …`) only with `--deep-iteration` or `--print-data-log` (which adds `key:`/`payload:`;
  `--skip-record-metadata` leaves only those). `--max-bytes` reads only the batches that fit in
  that many bytes. Deep iteration reports offsets that do not follow each other (stderr, at the end).
- `.index`: `offset: … position: …` per entry; each entry is checked against the log (its offset
  must be the last offset of the batch at its position), mismatches go to stderr at the end.
  `.timeindex`: `timestamp: … offset: …` per entry, checked likewise (the entry's offset is a
  batch's last offset, its timestamp that batch's largest, timestamps increase).
  `--verify-index-only` checks without printing the entries; `--index-sanity-check` runs the check
  a broker runs on start-up to decide whether to rebuild an index (engine.storage.index `load`)
  and says "… passed sanity check." or why not.
- `--cluster-metadata-decoder` (a KRaft `__cluster_metadata-0` segment): each record's payload is
  the metadata record as JSON, `{"type":"PARTITION_RECORD","version":2,"data":{…}}` (Kafka's
  ClusterMetadataLogMessageParser, engine.metadata.records.describe), or "Error at <offset>,
  skipping. …"; a control record's line ends with what it holds (" LeaderChange: {…}",
  " SnapshotHeader {…}", " endTxnMarker: COMMIT coordinatorEpoch: …", …) and has no payload, as
  DumpLogSegments.printControlRecord prints it. Like Kafka's decoders it implies --print-data-log.
- Kafka's other decoders (`--offsets-decoder`, `--transaction-log-decoder`, …, a `--key-decoder-class`
  or `--value-decoder-class` other than the string decoder) are refused with a sentence: keys and
  payloads print as UTF-8 text, as Kafka's default StringDecoder does.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import TextIO

from engine.metadata import records as metadata_records
from engine.storage import record_batch as rb
from engine.storage.index import (
    OFFSET_ENTRY,
    OFFSET_ENTRY_SIZE,
    TIME_ENTRY,
    TIME_ENTRY_SIZE,
    CorruptIndexError,
    OffsetIndex,
    TimeIndex,
)

INT32_MAX = 2**31 - 1                     # --max-bytes default (Integer.MAX_VALUE)
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RECORD_INDENT = "|"
STRING_DECODERS = ("kafka.serializer.StringDecoder", "org.apache.kafka.tools.api.StringDecoder")
UNSUPPORTED_DECODERS = ("offsets-decoder", "transaction-log-decoder",
                        "remote-log-metadata-decoder", "share-group-state-decoder")
END_TXN_MARKER = struct.Struct(">hi")     # EndTransactionMarker's value: version, coordinatorEpoch


@dataclass(frozen=True)
class DumpOptions:
    """Kafka's DumpLogSegmentsOptions, as they change what is printed."""
    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    skip_record_metadata: bool = False
    max_bytes: int = INT32_MAX
    cluster_metadata_decoder: bool = False

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.print_data_log


@dataclass
class Findings:
    """What the checks found, per file (absolute path), printed to stderr after every file."""
    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_offsets_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @staticmethod
    def note(table: dict[str, list[tuple[int, int]]], path: str, pair: tuple[int, int]) -> None:
        table.setdefault(os.path.abspath(path), []).append(pair)

    def print(self, err: TextIO) -> None:
        # Kafka keeps the index mismatches and the non-consecutive pairs in Scala Lists it
        # prepends to, so it prints them newest first; the time-index findings in order.
        for path, pairs in self.index_mismatches.items():
            print(f"Mismatches in :{path}", file=err)
            for index_offset, log_offset in reversed(pairs):
                print(f"  Index offset: {index_offset}, log offset: {log_offset}", file=err)
        for path, pairs in self.time_mismatches.items():
            print(f"Found timestamp mismatch in :{path}", file=err)
            for index_ts, log_ts in pairs:
                print(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}", file=err)
        for path, pairs in self.time_out_of_order.items():
            print(f"Found out of order timestamp in :{path}", file=err)
            for index_ts, previous in pairs:
                print(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {previous}", file=err)
        for pairs in self.time_offsets_not_found.values():
            print("The following indexed offsets are not found in the log.", file=err)
            for index_offset, log_offset in pairs:
                print(f"Indexed offset: {index_offset}, found log offset: {log_offset}", file=err)
        for path, pairs in self.non_consecutive.items():
            print(f"Non-consecutive offsets in {path}", file=err)
            for first, second in reversed(pairs):
                print(f"  {first} is followed by {second}", file=err)


def dump_file(path: str, out: TextIO, *, print_data_log: bool = False, deep_iteration: bool = False,
              options: DumpOptions | None = None, findings: Findings | None = None,
              err: TextIO | None = None) -> int:
    """Print one file; returns 1 when it is misnamed or fails --index-sanity-check, else 0 (an
    unknown kind of file is ignored, as Kafka's tool does). The checks of an index against its log
    and of a log's offsets run only when a `findings` is given to collect what they find."""
    options = options or DumpOptions(print_data_log=print_data_log, deep_iteration=deep_iteration)
    err = err or sys.stderr
    print(f"Dumping {path}", file=out)
    name = os.path.basename(path)
    suffix = name[name.rfind("."):] if "." in name else ""
    if suffix not in (".log", ".index", ".timeindex"):
        print(f"Ignoring unknown file {path}", file=err)
        return 0
    try:
        base_offset = int(name.split(".")[0])
    except ValueError:
        print(f"Error: {name} is not a segment file name (its base offset, 20 digits, then {suffix})", file=err)
        return 1
    if suffix == ".log":
        _dump_log(path, base_offset, out, options, findings)
        return 0
    if suffix == ".index":
        return _dump_offset_index(path, base_offset, out, err, options, findings)
    return _dump_time_index(path, base_offset, out, err, options, findings)


# -- .log -------------------------------------------------------------------------------------
def _dump_log(path: str, base_offset: int, out: TextIO, options: DumpOptions, findings: Findings | None) -> None:
    with open(path, "rb") as f:
        data = f.read()
    print(f"Log starting offset: {base_offset}", file=out)
    end = min(len(data), options.max_bytes)
    position, last_offset = 0, -1
    while position + rb.RECORD_BATCH_OVERHEAD <= end:
        try:
            header = rb.read_batch_header(data, position)
        except rb.CorruptRecordError:
            break
        if header.size_in_bytes > end - position:
            break
        valid = rb.batch_crc_ok(data, position, header)
        print(batch_line(header, position, valid), file=out)
        if options.is_deep_iteration and valid:
            _, records = rb.decode_batch(data, position, verify_crc=False)
            for record in records:
                if findings is not None and last_offset != -1 and record.offset != last_offset + 1:
                    findings.note(findings.non_consecutive, path, (last_offset, record.offset))
                last_offset = record.offset
                print(record_line(record, header, options.print_data_log, options.skip_record_metadata,
                                  options.cluster_metadata_decoder), file=out)
        position += header.size_in_bytes
    if position < len(data) and options.max_bytes == INT32_MAX:
        print(f"Found {len(data) - position} invalid bytes at the end of {os.path.basename(path)}", file=out)


def batch_line(header: rb.BatchHeader, position: int, valid: bool) -> str:
    last_sequence = -1 if header.base_sequence < 0 else header.base_sequence + header.last_offset_delta
    timestamp_type = "LogAppendTime" if header.timestamp_type else "CreateTime"
    codec = rb.COMPRESSION_NAMES.get(header.compression, str(header.compression))
    return (f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} count: {header.records_count} "
            f"baseSequence: {header.base_sequence} lastSequence: {last_sequence} "
            f"producerId: {header.producer_id} producerEpoch: {header.producer_epoch} "
            f"partitionLeaderEpoch: {header.partition_leader_epoch} "
            f"isTransactional: {_bool(header.is_transactional)} isControl: {_bool(header.is_control)} "
            f"deleteHorizonMs: OptionalLong.empty position: {position} "
            f"{timestamp_type}: {header.max_timestamp} size: {header.size_in_bytes} magic: {header.magic} "
            f"compresscodec: {codec} crc: {header.crc} isvalid: {_bool(valid)}")


def record_line(record: rb.Record, header: rb.BatchHeader, print_data_log: bool,
                skip_record_metadata: bool = False, cluster_metadata: bool = False) -> str:
    """One record as Kafka prints it; with --skip-record-metadata only its key and payload
    (Kafka then starts the line with the "| " indent only when the record has a key). With
    `cluster_metadata` (--cluster-metadata-decoder) the payload is the metadata record's JSON and a
    control record says what it holds instead of a payload."""
    line, separator = "", f"{RECORD_INDENT} "
    if not skip_record_metadata:
        timestamp_type = "LogAppendTime" if header.timestamp_type else "CreateTime"
        sequence = -1 if header.base_sequence < 0 else header.base_sequence + (record.offset - header.base_offset)
        key_size = -1 if record.key is None else len(record.key)
        value_size = -1 if record.value is None else len(record.value)
        line = (f"{separator}offset: {record.offset} {timestamp_type}: {record.timestamp} keySize: {key_size} "
                f"valueSize: {value_size} sequence: {sequence} "
                f"headerKeys: [{','.join(h.key for h in record.headers)}]")
        if cluster_metadata and header.is_control:
            line += control_text(record)
        separator = " "
    if cluster_metadata:
        if print_data_log and not header.is_control:
            line += f" payload: {metadata_payload(record)}"     # no keys for metadata records
        return line
    if print_data_log:
        if record.key is not None:
            line += f"{separator}key: {_text(record.key)}"
        line += f" payload: {_text(record.value) if record.value is not None else 'null'}"
    return line


def metadata_payload(record: rb.Record) -> str:
    """ClusterMetadataLogMessageParser.parse: the record value's JSON, or why it is not a metadata record."""
    try:
        if record.value is None:
            raise ValueError("the record has no value")
        return metadata_records.describe_json(metadata_records.decode(record.value))
    except ValueError as error:
        return f"Error at {record.offset}, skipping. {error}"


def control_text(record: rb.Record) -> str:
    """DumpLogSegments.printControlRecord: what a control record holds, after its metadata."""
    try:
        control_type = metadata_records.parse_control_type(record.key)
        name = metadata_records.CONTROL_TYPE_NAMES.get(control_type, "UNKNOWN")
        if name in ("ABORT", "COMMIT"):
            if record.value is None or len(record.value) < END_TXN_MARKER.size:
                raise ValueError(f"an end transaction marker needs {END_TXN_MARKER.size} bytes")
            _, coordinator_epoch = END_TXN_MARKER.unpack_from(record.value)
            return f" endTxnMarker: {name} coordinatorEpoch: {coordinator_epoch}"
        if control_type not in metadata_records.CONTROL_TYPES:
            return f" controlType: {name}({control_type})"
        control = metadata_records.decode_control(record.key, record.value)
        data = json.dumps(metadata_records.control_json(control), separators=(",", ":"), ensure_ascii=False)
        return f" {control.LABEL} {data}"
    except ValueError as error:
        return f" Error at {record.offset}, skipping. {error}"


def _log_batches(index_path: str, base_offset: int) -> list[tuple[int, rb.BatchHeader]] | None:
    """(position, header) of each whole batch of the index's .log, or None without a .log."""
    log_path = os.path.join(os.path.dirname(index_path), f"{base_offset:020d}.log")
    if not os.path.exists(log_path):
        return None
    with open(log_path, "rb") as f:
        data = f.read()
    batches, position = [], 0
    while position + rb.RECORD_BATCH_OVERHEAD <= len(data):
        try:
            header = rb.read_batch_header(data, position)
        except rb.CorruptRecordError:
            break
        if header.size_in_bytes > len(data) - position:
            break
        batches.append((position, header))
        position += header.size_in_bytes
    return batches


# -- .index and .timeindex ----------------------------------------------------------------------
def _entries(path: str, entry, entry_size: int, out: TextIO) -> list[tuple[int, int]]:
    with open(path, "rb") as f:
        data = f.read()
    whole = len(data) - len(data) % entry_size
    if whole < len(data):
        print(f"Found {len(data) - whole} trailing bytes that are not a whole index entry", file=out)
    return list(entry.iter_unpack(data[:whole]))


def _dump_offset_index(path: str, base_offset: int, out: TextIO, err: TextIO, options: DumpOptions,
                       findings: Findings | None) -> int:
    entries = _entries(path, OFFSET_ENTRY, OFFSET_ENTRY_SIZE, out)
    if not entries:
        print(f"{path} is empty.", file=out)
        return 0
    if options.index_sanity_check:
        return _sanity_check(OffsetIndex, path, base_offset, out, err)
    batches = _log_batches(path, base_offset) if findings is not None else None
    at_position = {position: header for position, header in batches or []}
    for slot, (relative, position) in enumerate(entries):
        if relative == 0 and slot > 0:
            break   # Kafka stops at the first zero entry after the first (a preallocated, crashed file)
        offset = base_offset + relative
        if findings is not None and batches is not None:
            header = at_position.get(position)
            log_offset = header.last_offset if header is not None else -1
            if log_offset != offset:
                findings.note(findings.index_mismatches, path, (offset, log_offset))
        if not options.verify_index_only:
            print(f"offset: {offset} position: {position}", file=out)
    return 0


def _dump_time_index(path: str, base_offset: int, out: TextIO, err: TextIO, options: DumpOptions,
                     findings: Findings | None) -> int:
    if options.index_sanity_check:
        return _sanity_check(TimeIndex, path, base_offset, out, err)
    batches = _log_batches(path, base_offset) if findings is not None else None
    previous = -1                       # RecordBatch.NO_TIMESTAMP
    for slot, (timestamp, relative) in enumerate(_entries(path, TIME_ENTRY, TIME_ENTRY_SIZE, out)):
        if relative == 0 and slot > 0:
            break
        offset = base_offset + relative
        if findings is not None and batches is not None:
            _check_time_entry(path, batches, timestamp, offset, previous, findings)
        if not options.verify_index_only:
            print(f"timestamp: {timestamp} offset: {offset}", file=out)
        previous = timestamp
    return 0


def _check_time_entry(path: str, batches: list[tuple[int, rb.BatchHeader]], timestamp: int, offset: int,
                      previous: int, findings: Findings) -> None:
    """The entry's offset must be the last offset of a batch whose largest timestamp it holds."""
    found = next((header for _, header in batches if header.last_offset >= offset), None)
    if found is None:
        findings.note(findings.time_offsets_not_found, path, (offset, -1))
    elif found.last_offset != offset:
        findings.note(findings.time_offsets_not_found, path, (offset, found.last_offset))
    else:
        if found.max_timestamp != timestamp:
            findings.note(findings.time_mismatches, path, (timestamp, found.max_timestamp))
        if previous >= timestamp:
            findings.note(findings.time_out_of_order, path, (timestamp, previous))


def _sanity_check(index_class: type[OffsetIndex] | type[TimeIndex], path: str, base_offset: int, out: TextIO,
                  err: TextIO) -> int:
    """What a broker checks on start-up before it trusts an index (else it rebuilds it)."""
    unbounded = os.path.getsize(path) + TIME_ENTRY_SIZE     # Kafka's tool opens it with maxIndexSize -1
    try:
        index_class(path, base_offset, unbounded).load()
    except CorruptIndexError as error:
        print(f"Error: corrupt index: {error}", file=err)
        return 1
    print(f"{path} passed sanity check.", file=out)
    return 0


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


# -- the command line -------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Kafka's DumpLogSegments options (engine.cli routes kafka-dump-log.sh and
    kafka-run-class.sh kafka.tools.DumpLogSegments here too)."""
    parser.add_argument("--files", required=True,
                        help="REQUIRED: the comma-separated list of data and index log files to be dumped")
    parser.add_argument("--print-data-log", action="store_true",
                        help="print the records' keys and payloads (implies --deep-iteration)")
    parser.add_argument("--deep-iteration", action="store_true",
                        help="print every record, not only the batch headers")
    parser.add_argument("--skip-record-metadata", action="store_true",
                        help="print only the records' keys and payloads")
    parser.add_argument("--verify-index-only", action="store_true",
                        help="check an index against its log without printing its entries")
    parser.add_argument("--index-sanity-check", action="store_true",
                        help="run the broker's start-up check of an index file, without printing its entries")
    parser.add_argument("--max-bytes", type=int, default=INT32_MAX,
                        help="read only the batches within this many bytes of a .log")
    parser.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE,
                        help="accepted; the lab reads each indexed batch whole")
    parser.add_argument("--key-decoder-class", nargs="?", const=STRING_DECODERS[0])
    parser.add_argument("--value-decoder-class", nargs="?", const=STRING_DECODERS[0])
    parser.add_argument("--cluster-metadata-decoder", action="store_true",
                        help="print the records of a __cluster_metadata segment as KRaft metadata records (JSON)")
    for decoder in UNSUPPORTED_DECODERS:
        parser.add_argument(f"--{decoder}", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--batches-only", action="store_true", help=argparse.SUPPRESS)  # the default now


def refusal(args: argparse.Namespace) -> str | None:
    """Why the lab cannot do what these options ask, or None."""
    for decoder in UNSUPPORTED_DECODERS:
        if getattr(args, decoder.replace("-", "_")):
            return (f"--{decoder} is not supported by the lab's DumpLogSegments: keys and payloads print as "
                    f"UTF-8 text (Kafka's StringDecoder)")
    for option in ("key_decoder_class", "value_decoder_class"):
        value = getattr(args, option)
        if value is not None and value not in STRING_DECODERS:
            return (f"--{option.replace('_', '-')} {value} is not supported by the lab's DumpLogSegments: "
                    f"only {STRING_DECODERS[0]}, the default (keys and payloads as UTF-8 text)")
    if args.max_bytes < 0 or args.max_message_size < 0:
        return "--max-bytes and --max-message-size take a number of bytes (0 or more)"
    return None


def run(args: argparse.Namespace, out: TextIO, err: TextIO, *, missing_hint=None) -> int:
    """Dump every file of --files; exit status 0, or 1 if a file is missing, unknown or corrupt."""
    reason = refusal(args)
    if reason:
        print(f"Error: {reason}", file=err)
        return 1
    options = DumpOptions(print_data_log=args.print_data_log or args.key_decoder_class is not None
                          or args.value_decoder_class is not None or args.cluster_metadata_decoder,
                          deep_iteration=args.deep_iteration, verify_index_only=args.verify_index_only,
                          index_sanity_check=args.index_sanity_check,
                          skip_record_metadata=args.skip_record_metadata, max_bytes=args.max_bytes,
                          cluster_metadata_decoder=args.cluster_metadata_decoder)
    findings, status = Findings(), 0
    for path in args.files.split(","):
        if not os.path.exists(path):
            hint = missing_hint(path) if missing_hint else ""
            print(f"Error: {path} does not exist{hint}", file=err)
            status = 1
            continue
        status |= dump_file(path, out, options=options, findings=findings, err=err)
    findings.print(err)
    return status


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.tools.dump_log",
        description="Print the batches and records of .log files, or the entries of .index/.timeindex files.")
    add_arguments(parser)
    return run(parser.parse_args(argv), out or sys.stdout, err or sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
