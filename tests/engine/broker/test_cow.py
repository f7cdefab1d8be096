"""Copy-on-write for log files a checkpoint shares by hard link (engine.storage.cow)."""
from __future__ import annotations

import os

from engine.storage import cow
from engine.storage.index import OffsetIndex
from engine.storage.log_config import LogConfig
from engine.storage.segment import LogSegment


def test_a_shared_file_becomes_a_private_copy_and_the_other_link_keeps_its_bytes(tmp_path):
    original, link = tmp_path / "a.log", tmp_path / "b.log"
    original.write_bytes(b"0123456789")
    os.link(original, link)
    assert cow.make_private(str(original))
    with open(original, "r+b") as f:
        f.truncate(4)
    assert link.read_bytes() == b"0123456789" and original.read_bytes() == b"0123"
    assert os.stat(original).st_nlink == 1 and os.stat(link).st_nlink == 1
    assert not cow.make_private(str(original))  # already its own
    assert not os.path.exists(str(original) + cow.SWAP_SUFFIX)


def test_emptying_a_shared_file_starts_a_new_inode(tmp_path):
    original, link = tmp_path / "a.index", tmp_path / "b.index"
    original.write_bytes(b"entries!")
    os.link(original, link)
    cow.create_empty(str(original))
    assert original.read_bytes() == b"" and link.read_bytes() == b"entries!"


def test_appends_to_a_linked_active_segment_leave_the_bytes_it_held_alone(tmp_path):
    """A checkpoint links an active segment and records its length; appends grow the shared
    inode past it, never change what was there (engine.checkpoint copies only that prefix)."""
    segment = LogSegment.create(str(tmp_path), 0, LogConfig())
    os.pwrite(segment._writable_fd(), b"abc", 0)
    os.link(segment.log_path, tmp_path / "checkpoint.log")
    os.pwrite(segment._writable_fd(), b"def", 3)
    assert (tmp_path / "checkpoint.log").read_bytes()[:3] == b"abc"
    assert open(segment.log_path, "rb").read() == b"abcdef"
    segment.close()


def test_a_truncation_of_a_linked_segment_copies_it_first(tmp_path):
    index = OffsetIndex(str(tmp_path / "0.index"), 0, 1024)
    index.append(5, 100)
    index.append(9, 200)
    index.sync()
    os.link(index.path, tmp_path / "checkpoint.index")
    index.truncate_to_position(150)
    index.sync()
    assert (tmp_path / "checkpoint.index").stat().st_size == 16
    assert os.path.getsize(index.path) == 8
    index.close()


def test_a_checkpoint_file_rewritten_by_rename_leaves_the_other_link_alone(tmp_path):
    from engine.storage.checkpoints import read_offsets, write_offsets
    path = str(tmp_path / "replication-offset-checkpoint")
    write_offsets(path, {("t", 0): 5}, fsync=False)
    os.link(path, tmp_path / "linked")
    write_offsets(path, {("t", 0): 9}, fsync=False)
    assert read_offsets(str(tmp_path / "linked")) == {("t", 0): 5} and read_offsets(path) == {("t", 0): 9}
