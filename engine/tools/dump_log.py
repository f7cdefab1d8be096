"""The lab's DumpLogSegments: print what a segment file holds, as Kafka's tool does.

    python -m engine.tools.dump_log --files 00000000000000000000.log --print-data-log
    python -m engine.tools.dump_log --files 00000000000000000000.index
    python -m engine.tools.dump_log --files 00000000000000000000.timeindex

Output lines follow `kafka-dump-log.sh` (kafka.tools.DumpLogSegments) so the seed's examples
read the same: one `baseOffset: … isvalid: …` line per batch, one `| offset: …` line per record
(with `key:`/`payload:` under --print-data-log), `offset: … position: …` per index entry.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from engine.broker import record_batch as rb
from engine.broker.index import OFFSET_ENTRY, OFFSET_ENTRY_SIZE, TIME_ENTRY, TIME_ENTRY_SIZE


def dump_file(path: str, out: TextIO, *, print_data_log: bool = False, deep_iteration: bool = True) -> int:
    """Print one file; returns 0, or 1 when the file is unknown or unreadable."""
    name = os.path.basename(path)
    try:
        base_offset = int(name.split(".")[0])
    except ValueError:
        print(f"Ignoring unknown file {path}", file=out)
        return 1
    print(f"Dumping {path}", file=out)
    if name.endswith(".log"):
        _dump_log(path, base_offset, out, print_data_log, deep_iteration)
    elif name.endswith(".timeindex"):
        _dump_entries(path, TIME_ENTRY, TIME_ENTRY_SIZE, out,
                      lambda ts, rel: f"timestamp: {ts} offset: {base_offset + rel}")
    elif name.endswith(".index"):
        _dump_entries(path, OFFSET_ENTRY, OFFSET_ENTRY_SIZE, out,
                      lambda rel, pos: f"offset: {base_offset + rel} position: {pos}")
    else:
        print(f"Ignoring unknown file {path}", file=out)
        return 1
    return 0


def _dump_log(path: str, base_offset: int, out: TextIO, print_data_log: bool, deep_iteration: bool) -> None:
    with open(path, "rb") as f:
        data = f.read()
    print(f"Log starting offset: {base_offset}", file=out)
    position = 0
    while position + rb.RECORD_BATCH_OVERHEAD <= len(data):
        try:
            header = rb.read_batch_header(data, position)
        except rb.CorruptRecordError:
            break
        if header.size_in_bytes > len(data) - position:
            break
        valid = rb.batch_crc_ok(data, position, header)
        print(batch_line(header, position, valid), file=out)
        if deep_iteration and valid:
            _, records = rb.decode_batch(data, position, verify_crc=False)
            for record in records:
                print(record_line(record, header, print_data_log), file=out)
        position += header.size_in_bytes
    if position < len(data):
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


def record_line(record: rb.Record, header: rb.BatchHeader, print_data_log: bool) -> str:
    timestamp_type = "LogAppendTime" if header.timestamp_type else "CreateTime"
    sequence = -1 if header.base_sequence < 0 else header.base_sequence + (record.offset - header.base_offset)
    key_size = -1 if record.key is None else len(record.key)
    value_size = -1 if record.value is None else len(record.value)
    line = (f"| offset: {record.offset} {timestamp_type}: {record.timestamp} keySize: {key_size} "
            f"valueSize: {value_size} sequence: {sequence} "
            f"headerKeys: [{','.join(h.key for h in record.headers)}]")
    if print_data_log:
        if record.key is not None:
            line += f" key: {_text(record.key)}"
        line += f" payload: {_text(record.value) if record.value is not None else 'null'}"
    return line


def _dump_entries(path: str, entry, entry_size: int, out: TextIO, fmt) -> None:
    with open(path, "rb") as f:
        data = f.read()
    whole = len(data) - len(data) % entry_size
    for fields in entry.iter_unpack(data[:whole]):
        print(fmt(*fields), file=out)
    if whole < len(data):
        print(f"Found {len(data) - whole} trailing bytes that are not a whole index entry", file=out)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.tools.dump_log",
        description="Print the batches and records of .log files, or the entries of .index/.timeindex files.")
    parser.add_argument("--files", required=True,
                        help="comma-separated segment files (.log, .index, .timeindex)")
    parser.add_argument("--print-data-log", action="store_true", help="print keys and payloads")
    parser.add_argument("--deep-iteration", action="store_true", default=True,
                        help="print every record, not only batch headers (the default here)")
    parser.add_argument("--batches-only", action="store_true", help="print batch headers only")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    status = 0
    for path in args.files.split(","):
        if not os.path.exists(path):
            print(f"Error: {path} does not exist", file=sys.stderr)
            status = 1
            continue
        status |= dump_file(path, out, print_data_log=args.print_data_log,
                            deep_iteration=not args.batches_only)
    return status


if __name__ == "__main__":
    sys.exit(main())
