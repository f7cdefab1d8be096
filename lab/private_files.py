"""Files only the server's user may read: the SQLite database (SQLite gives its -wal and -shm files
the database file's mode), the lab's data dir and the generated secret key. Called from settings,
before anything opens them; the grader's sandbox hides them as well (defence in depth)."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

FILE_MODE, DIR_MODE = 0o600, 0o700


def private_dir(path: Path) -> Path:
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty with mode 0600 if it is missing; make an existing one 0600."""
    if path.parent.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
        os.chmod(path, FILE_MODE)
    return path


def generated_key(path: Path) -> str:
    """The key in `path`, made (0600, random) the first time; two processes racing agree on one."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_urlsafe(50))
    return path.read_text(encoding="ascii").strip()
