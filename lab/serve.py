"""Starting a Daphne of the lab as a separate process: a free loopback port, waiting until it
listens. Shared by the benchmark (`python -m lab.bench`) and the tests' server fixture."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(proc: subprocess.Popen, port: int, log_path: Path, timeout_s: float = 30) -> None:
    """Return once something listens on 127.0.0.1:`port`; raise with the server's log if `proc`
    exits first or nothing listens within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daphne exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"daphne did not listen on {port} within {timeout_s}s:\n{log_path.read_text()}")
