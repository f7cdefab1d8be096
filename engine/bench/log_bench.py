"""Partition log: encode, append and read 100-byte records, beside raw write()/read() of the same bytes.

Encode: records into ~16 KiB v2 batches (the producer's job). Append: those batches into a Log
(CRC check, offset assignment, index upkeep, segment files). Read: the whole log back through
Log.read with every record decoded. Raw write/read: the same batch bytes written to and read
from one plain file with the same chunk sizes, in the same run — the ratio is the figure.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from engine.storage import record_batch as rb
from engine.storage.log import Log

BATCH_BYTES = 16 * 1024
READ_BYTES = 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=1_000_000, help="records to write (default 1,000,000)")
    parser.add_argument("--record-bytes", type=int, default=100, help="value size (default 100)")
    parser.add_argument("--read-bytes", type=int, default=READ_BYTES,
                        help="bytes per Log.read call (default 1 MiB, a consumer's max.partition.fetch.bytes)")
    parser.add_argument("--dir", default=None, help="scratch directory (default: a temp dir, removed after)")


def run(args: argparse.Namespace) -> dict:
    scratch = tempfile.mkdtemp(prefix="bench-log-", dir=args.dir)
    try:
        return _run(args.records, args.record_bytes, args.read_bytes, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(n: int, record_bytes: int, read_bytes: int, scratch: str) -> dict:
    per_batch = max(1, BATCH_BYTES // (record_bytes + 10))
    timestamp = 1_700_000_000_000
    # Distinct values (a counter at the front), built before the clock starts.
    pad = b"x" * max(0, record_bytes - 8)
    records = [(None, (b"%08d" % i)[-8:] + pad) for i in range(n)]

    started = time.perf_counter()
    batches = [rb.encode_batch(records[i:i + per_batch], base_timestamp=timestamp)
               for i in range(0, n, per_batch)]
    encode_s = time.perf_counter() - started
    del records
    total_bytes = sum(len(b) for b in batches)

    raw_path = os.path.join(scratch, "raw.bin")
    started = time.perf_counter()
    with open(raw_path, "wb", buffering=0) as f:
        for batch in batches:
            f.write(batch)
    raw_write_s = time.perf_counter() - started

    log = Log(os.path.join(scratch, "bench-0"), clock_ms=lambda: timestamp, fsync=False)
    started = time.perf_counter()
    for batch in batches:
        log.append_batches(batch, leader_epoch=0)
    append_s = time.perf_counter() - started

    started = time.perf_counter()
    with open(raw_path, "rb", buffering=0) as f:
        while f.read(read_bytes):
            pass
    raw_read_s = time.perf_counter() - started

    started = time.perf_counter()
    offset, count, end = 0, 0, log.log_end_offset
    while offset < end:
        chunk = log.read(offset, read_bytes)
        count += len(chunk)
        offset = chunk[-1].offset + 1
    read_s = time.perf_counter() - started
    log.close()
    if count != n:
        raise AssertionError(f"read back {count} records, wrote {n}")

    return {
        "records": n, "record_bytes": record_bytes, "read_bytes": read_bytes,
        "batches": len(batches), "bytes": total_bytes,
        "encode_rps": n / encode_s,
        "append_rps": n / append_s, "raw_write_rps": n / raw_write_s,
        "read_rps": n / read_s, "raw_read_rps": n / raw_read_s,
        "append_vs_raw_write": raw_write_s / append_s,
        "read_vs_raw_read": raw_read_s / read_s,
        "segments": len(log.segments),
    }


def report(r: dict) -> str:
    mb = r["bytes"] / 1e6
    lines = [
        f"log bench: {r['records']:,} records of {r['record_bytes']} B in {r['batches']:,} batches "
        f"({mb:.1f} MB on disk)",
        f"  encode (producer side)      {r['encode_rps']:>14,.0f} records/s   target >= 1,000,000",
        f"  append to Log               {r['append_rps']:>14,.0f} records/s",
        f"  raw write() of same bytes   {r['raw_write_rps']:>14,.0f} records/s   "
        f"append/raw = {r['append_vs_raw_write']:.2f} (target >= 0.50)",
        f"  read + decode from Log      {r['read_rps']:>14,.0f} records/s   target >= 3,000,000",
        f"  raw read() of same bytes    {r['raw_read_rps']:>14,.0f} records/s   "
        f"read/raw = {r['read_vs_raw_read']:.3f}",
    ]
    return "\n".join(lines)
