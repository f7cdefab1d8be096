"""Kafka's text checkpoint files: offsets per topic-partition, and leader epochs per partition."""
from __future__ import annotations

import os

import pytest

from engine.storage.checkpoints import (
    CheckpointError,
    read_epochs,
    read_offsets,
    write_atomically,
    write_epochs,
    write_offsets,
)


def test_it_writes_offsets_in_kafkas_offset_checkpoint_format(tmp_path):
    path = tmp_path / "replication-offset-checkpoint"
    write_offsets(str(path), {("t", 1): 17, ("t", 0): 42})
    assert path.read_text(encoding="utf-8") == "0\n2\nt 0 42\nt 1 17\n"


def test_it_sorts_entries_by_topic_then_partition_number(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    write_offsets(str(path), {("b", 10): 1, ("b", 9): 2, ("a.x", 0): 3}, fsync=False)
    assert path.read_text(encoding="utf-8") == "0\n3\na.x 0 3\nb 9 2\nb 10 1\n"


def test_it_writes_an_empty_checkpoint_as_version_and_zero(tmp_path):
    path = tmp_path / "log-start-offset-checkpoint"
    write_offsets(str(path), {})
    assert path.read_text(encoding="utf-8") == "0\n0\n"
    assert read_offsets(str(path)) == {}


def test_it_reads_back_what_it_wrote(tmp_path):
    path = str(tmp_path / "replication-offset-checkpoint")
    offsets = {("orders", 0): 42, ("orders", 1): 0, ("__consumer_offsets", 49): 123456789012}
    write_offsets(path, offsets, fsync=False)
    assert read_offsets(path) == offsets


def test_it_reads_a_file_written_by_kafka(tmp_path):
    path = tmp_path / "replication-offset-checkpoint"
    path.write_text("0\n2\nt 0 42\nt  1\t17\n", encoding="utf-8")  # Kafka splits on any whitespace
    assert read_offsets(str(path)) == {("t", 0): 42, ("t", 1): 17}


def test_it_writes_and_reads_leader_epochs(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    write_epochs(str(path), [(0, 0), (1, 5)])
    assert path.read_text(encoding="utf-8") == "0\n2\n0 0\n1 5\n"
    assert read_epochs(str(path)) == [(0, 0), (1, 5)]


def test_it_reads_a_missing_file_as_empty(tmp_path):
    assert read_offsets(str(tmp_path / "nope")) == {}
    assert read_epochs(str(tmp_path / "nope")) == []


def test_it_replaces_the_file_atomically_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "replication-offset-checkpoint"
    write_offsets(str(path), {("t", 0): 1})
    write_offsets(str(path), {("t", 0): 2})
    assert read_offsets(str(path)) == {("t", 0): 2}
    assert os.listdir(tmp_path) == ["replication-offset-checkpoint"]


def test_it_leaves_the_old_file_whole_if_writing_the_new_one_fails(tmp_path, monkeypatch):
    path = tmp_path / "replication-offset-checkpoint"
    write_offsets(str(path), {("t", 0): 1})

    def crash(src, dst):
        raise OSError("power lost before the rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        write_offsets(str(path), {("t", 0): 2, ("t", 1): 3})
    assert path.read_text(encoding="utf-8") == "0\n1\nt 0 1\n"  # the rename never happened


def test_it_ends_the_file_with_a_newline(tmp_path):
    path = tmp_path / "f"
    write_atomically(str(path), ["0", "0"], fsync=False)
    assert path.read_bytes() == b"0\n0\n"


@pytest.mark.parametrize("text, complaint", [
    ("", "not a version-0 checkpoint file"),
    ("0\n", "not a version-0 checkpoint file"),
    ("1\n1\nt 0 5\n", "not a version-0 checkpoint file"),
    ("0\n2\nt 0 5\n", "says 2 entries, holds 1"),
    ("0\n1\nt 0 5\nt 1 6\n", "says 1 entries, holds 2"),
    ("0\n1\nt 0\n", "malformed entry 't 0'"),
    ("0\n1\nt 0 5 9\n", "malformed entry"),
    ("0\n1\nt 0 forty-two\n", "malformed number 'forty-two'"),
    ("0\n1\nt zero 5\n", "malformed number 'zero'"),
    ("0\ntwo\nt 0 5\n", "malformed number 'two'"),
])
def test_it_refuses_a_malformed_offset_checkpoint_and_names_the_file(tmp_path, text, complaint):
    path = tmp_path / "replication-offset-checkpoint"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CheckpointError) as error:
        read_offsets(str(path))
    assert str(path) in str(error.value) and complaint in str(error.value)


@pytest.mark.parametrize("text, complaint", [
    ("0\n1\n0 0 0\n", "malformed entry"),
    ("0\n1\n0\n", "malformed entry"),
    ("0\n1\nzero 0\n", "malformed number"),
    ("0\n3\n0 0\n", "says 3 entries, holds 1"),
])
def test_it_refuses_a_malformed_leader_epoch_checkpoint_and_names_the_file(tmp_path, text, complaint):
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CheckpointError) as error:
        read_epochs(str(path))
    assert str(path) in str(error.value) and complaint in str(error.value)


def test_it_refuses_a_file_that_is_not_text(tmp_path):
    path = tmp_path / "replication-offset-checkpoint"
    path.write_bytes(b"\x00\xff\xfe garbage")
    with pytest.raises(CheckpointError, match="replication-offset-checkpoint"):
        read_offsets(str(path))
