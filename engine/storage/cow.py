"""Copy-on-write for log files a checkpoint may share by hard link.

An engine checkpoint (engine.checkpoint) hard-links a broker's sealed segment files (`.log`,
`.index`, `.timeindex` below the active segment) instead of copying them, and a restore links
them again into the new data dir. One inode may then be the original cluster's file, the
checkpoint's and any number of restored clusters' at once. The invariant this module keeps:

    no file is modified in place while its link count is above one.

Every write that changes an existing file's bytes where they are (truncating it, writing at a
position, appending, emptying it) goes through here first: `make_private(path)` replaces a shared
file with a private copy (copied next to it, renamed over it), and `create_empty(path)` starts a
new inode instead of emptying the old one. Callers close their own descriptors on the old inode
first, so nothing writes through them afterwards. Files written whole to a temp file and renamed
over (the offset and leader-epoch checkpoints) and deleting a file (unlink) are safe as they are.
"""
from __future__ import annotations

import os
import shutil

# Kafka's suffix for a file being swapped in; a log load removes leftovers (log.STRAY_SUFFIXES).
SWAP_SUFFIX = ".swap"


def is_shared(path: str) -> bool:
    """True if `path` has other hard links (a checkpoint or another cluster holds the inode)."""
    try:
        return os.stat(path).st_nlink > 1
    except FileNotFoundError:
        return False


def fd_is_shared(fd: int) -> bool:
    return os.fstat(fd).st_nlink > 1


def make_private(path: str) -> bool:
    """Make `path` a file of its own before it is modified in place; True if it had to be copied.

    The caller must hold no descriptor on the file it will write through later (it reopens by
    path afterwards), or its writes would still reach the shared inode."""
    if not is_shared(path):
        return False
    tmp = path + SWAP_SUFFIX
    shutil.copyfile(path, tmp)
    os.replace(tmp, path)
    return True


def create_empty(path: str) -> None:
    """An empty file at `path` on a new inode (opening a shared file "wb" would empty every link)."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    with open(path, "wb"):
        pass
