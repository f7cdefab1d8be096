"""Kafka's checkpoint files, in their text formats.

Offset checkpoints (`replication-offset-checkpoint`, `recovery-point-offset-checkpoint`,
`log-start-offset-checkpoint`), one per broker data dir:
    0                 <- version
    2                 <- number of entries
    t 0 42            <- topic partition offset
    t 1 17
Leader epoch checkpoint, one per partition dir (`leader-epoch-checkpoint`):
    0                 <- version
    2                 <- number of entries
    0 0               <- epoch start_offset
    1 5

Files are written the way Kafka writes them: to a temp file, fsynced, then renamed over the old
one, so a crash leaves either the old or the new file, never half of one.
"""
from __future__ import annotations

import os

VERSION = 0


class CheckpointError(Exception):
    pass


def write_atomically(path: str, lines: list[str], *, fsync: bool = True) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        if fsync:
            os.fsync(f.fileno())
    os.replace(tmp, path)


def write_offsets(path: str, offsets: dict[tuple[str, int], int], *, fsync: bool = True) -> None:
    entries = sorted(offsets.items())
    lines = [str(VERSION), str(len(entries))] + [f"{t} {p} {o}" for (t, p), o in entries]
    write_atomically(path, lines, fsync=fsync)


def read_offsets(path: str) -> dict[tuple[str, int], int]:
    if not os.path.exists(path):
        return {}
    rows = _read_rows(path)
    out = {}
    for row in rows:
        if len(row) != 3:
            raise CheckpointError(f"{path}: malformed entry {' '.join(row)!r}")
        out[(row[0], _int(path, row[1]))] = _int(path, row[2])
    return out


def write_epochs(path: str, entries: list[tuple[int, int]], *, fsync: bool = True) -> None:
    lines = [str(VERSION), str(len(entries))] + [f"{e} {o}" for e, o in entries]
    write_atomically(path, lines, fsync=fsync)


def read_epochs(path: str) -> list[tuple[int, int]]:
    if not os.path.exists(path):
        return []
    out = []
    for row in _read_rows(path):
        if len(row) != 2:
            raise CheckpointError(f"{path}: malformed entry {' '.join(row)!r}")
        out.append((_int(path, row[0]), _int(path, row[1])))
    return out


def _read_rows(path: str) -> list[list[str]]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise CheckpointError(f"{path}: not a text checkpoint file") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or lines[0] != str(VERSION):
        raise CheckpointError(f"{path}: not a version-{VERSION} checkpoint file")
    count = _int(path, lines[1])
    rows = [line.split() for line in lines[2:]]
    if len(rows) != count:
        raise CheckpointError(f"{path}: says {count} entries, holds {len(rows)}")
    return rows


def _int(path: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CheckpointError(f"{path}: malformed number {text!r}") from None
