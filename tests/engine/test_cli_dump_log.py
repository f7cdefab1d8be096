"""The notes' `kafka-run-class.sh kafka.tools.DumpLogSegments --files … --print-data-log` (and
`kafka-dump-log.sh`) through engine.cli, with Kafka's options."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from engine import cli
from engine.storage.index import OFFSET_ENTRY, TIME_ENTRY
from engine.storage.log import Log


def dump(*argv: str, data_dir: str = "lab-cluster-not-there") -> tuple[int, list[str], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--data-dir", data_dir], out=out, err=err)
    return code, out.getvalue().splitlines(), err.getvalue().splitlines()


@pytest.fixture
def segment(tmp_path, clock):
    """A partition dir with one segment of four batches, every batch indexed."""
    log = Log(str(tmp_path / "broker-1" / "test-0"), {"index.interval.bytes": 0}, clock_ms=clock)
    for key, values in ((b"k1", [b"hello", b"world"]), (None, [b"m2"]), (b"k3", [b"again"]), (None, [b"last"])):
        clock.advance(10)
        log.append([(key, v) for v in values], leader_epoch=1)
    log.close()
    return log.segments[0]


def test_the_notes_spelling_prints_every_record_with_its_key_and_payload(segment):
    code, lines, err = dump("bin/kafka-run-class.sh", "kafka.tools.DumpLogSegments", "--files", segment.log_path,
                            "--print-data-log")
    assert code == 0 and err == []
    assert lines[:2] == [f"Dumping {segment.log_path}", "Log starting offset: 0"]
    assert [line.split(" lastOffset")[0] for line in lines if line.startswith("baseOffset")] == \
        ["baseOffset: 0", "baseOffset: 2", "baseOffset: 3", "baseOffset: 4"]
    records = [line for line in lines if line.startswith("| offset: ")]
    assert [r.split(" CreateTime")[0] for r in records] == [f"| offset: {o}" for o in range(5)]
    assert records[0].endswith("key: k1 payload: hello") and records[2].endswith("headerKeys: [] payload: m2")


def test_it_runs_as_a_process_too(segment):
    done = subprocess.run([sys.executable, "-m", "engine.cli", "kafka-run-class.sh", "kafka.tools.DumpLogSegments",
                           "--files", segment.log_path, "--print-data-log"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.splitlines()[-1].endswith("payload: last")


def test_without_deep_iteration_only_batches_print_as_in_kafka(segment):
    code, lines, _ = dump("kafka-dump-log.sh", "--files", segment.log_path)
    assert code == 0 and len(lines) == 2 + 4 and not any(line.startswith("|") for line in lines)
    code, lines, _ = dump("kafka-dump-log.sh", "--files", segment.log_path, "--deep-iteration")
    records = [line for line in lines if line.startswith("| offset: ")]
    assert len(records) == 5 and not any("payload:" in r for r in records)
    code, lines, _ = dump("kafka-dump-log.sh", "--files", segment.log_path, "--print-data-log",
                          "--skip-record-metadata")
    assert lines[3:5] == ["| key: k1 payload: hello", "| key: k1 payload: world"]
    assert lines[6] == " payload: m2"      # Kafka starts the line with "| " only before a key


def test_files_take_a_comma_separated_list_dumped_in_order(segment):
    files = ",".join([segment.log_path, segment.index_path, segment.time_index_path])
    code, lines, err = dump("kafka.tools.DumpLogSegments", "--files", files)
    assert code == 0 and err == []
    assert [line for line in lines if line.startswith("Dumping ")] == \
        [f"Dumping {path}" for path in files.split(",")]
    entries = segment.offset_index.all_entries()
    assert [f"offset: {o} position: {p}" for o, p in entries] == [line for line in lines if line.startswith("offset:")]
    assert any(line.startswith("timestamp: ") for line in lines)


def test_max_bytes_reads_only_the_batches_that_fit(segment):
    first_two = sum(size for _, size in _batch_sizes(segment)[:2])
    code, lines, _ = dump("kafka-dump-log.sh", "--files", segment.log_path, "--max-bytes", str(first_two + 5))
    assert code == 0 and len([line for line in lines if line.startswith("baseOffset")]) == 2
    assert not any(line.startswith("Found ") for line in lines)   # Kafka reports no trailing bytes under --max-bytes


def _batch_sizes(segment) -> list[tuple[int, int]]:
    code, lines, _ = dump("kafka-dump-log.sh", "--files", segment.log_path)
    return [(int(line.split("baseOffset: ")[1].split()[0]), int(line.split(" size: ")[1].split()[0]))
            for line in lines if line.startswith("baseOffset")]


def test_verify_index_only_prints_no_entry_and_reports_an_entry_that_points_at_the_wrong_batch(segment):
    code, lines, err = dump("kafka-dump-log.sh", "--files", segment.index_path, "--verify-index-only")
    assert code == 0 and lines == [f"Dumping {segment.index_path}"] and err == []

    entries = segment.offset_index.all_entries()
    (offset, position), (next_offset, _) = entries[1], entries[2]
    with open(segment.index_path, "r+b") as f:      # entry 1 now names offset 3 at offset 2's batch
        f.seek(OFFSET_ENTRY.size)
        f.write(OFFSET_ENTRY.pack(next_offset, position))
    code, lines, err = dump("kafka-dump-log.sh", "--files", segment.index_path, "--verify-index-only")
    assert code == 0 and lines == [f"Dumping {segment.index_path}"]
    assert err == [f"Mismatches in :{os.path.abspath(segment.index_path)}",
                   f"  Index offset: {next_offset}, log offset: {offset}"]


def test_a_time_index_entry_with_a_timestamp_the_batch_does_not_hold_is_reported(segment):
    entries = segment.time_index.all_entries()
    timestamp, offset = entries[0]
    with open(segment.time_index_path, "r+b") as f:
        f.write(TIME_ENTRY.pack(timestamp - 1, offset))
    code, lines, err = dump("kafka-dump-log.sh", "--files", segment.time_index_path)
    assert code == 0 and lines[1] == f"timestamp: {timestamp - 1} offset: {offset}"
    assert err == [f"Found timestamp mismatch in :{os.path.abspath(segment.time_index_path)}",
                   f"  Index timestamp: {timestamp - 1}, log timestamp: {timestamp}"]


def test_index_sanity_check_runs_the_brokers_start_up_check(segment):
    for path in (segment.index_path, segment.time_index_path):
        code, lines, _ = dump("kafka-dump-log.sh", "--files", path, "--index-sanity-check")
        assert code == 0 and lines == [f"Dumping {path}", f"{path} passed sanity check."]
    with open(segment.index_path, "ab") as f:
        f.write(b"\x00\x00\x00")                     # not a whole 8-byte entry
    code, lines, err = dump("kafka-dump-log.sh", "--files", segment.index_path, "--index-sanity-check")
    assert code == 1 and not any("passed sanity check" in line for line in lines)
    assert err[0].startswith("Error: corrupt index: ") and "is not a multiple of 8" in err[0]


@pytest.mark.parametrize("option", [["--offsets-decoder"], ["--transaction-log-decoder"],
                                    ["--value-decoder-class", "com.example.AvroDecoder"]])
def test_decoders_the_lab_does_not_have_are_refused_in_a_sentence(segment, option):
    code, lines, err = dump("kafka-dump-log.sh", "--files", segment.log_path, *option)
    assert code == 1 and lines == []
    assert err[0].startswith(f"Error: {option[0]}") and "not supported by the lab's DumpLogSegments" in err[0]


def test_the_string_decoder_is_kafkas_default_and_prints_the_payloads(segment):
    code, lines, _ = dump("kafka-dump-log.sh", "--files", segment.log_path,
                          "--value-decoder-class", "kafka.serializer.StringDecoder")
    assert code == 0 and lines[-1].endswith("payload: last")


def test_a_path_from_the_notes_says_where_the_lab_keeps_that_file(segment, tmp_path):
    notes_path = "/tmp/kafka-logs/test-0/00000000000000000000.log"
    code, lines, err = dump("kafka-run-class.sh", "kafka.tools.DumpLogSegments", "--files", notes_path,
                            "--print-data-log", data_dir=str(tmp_path))
    assert code == 1 and lines == []
    assert err == [f"Error: {notes_path} does not exist (in the lab: {segment.log_path})"]


def test_files_is_required(segment):
    with pytest.raises(SystemExit):
        dump("kafka-dump-log.sh", "--print-data-log")
