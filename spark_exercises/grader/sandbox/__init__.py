"""The grader's sandbox: a notebook runs in it with no access to the server's files, processes,
environment or network, under CPU, memory, process, file-size, output and wall-time limits.

    isolation = detect()                      # "user", "namespaces" or "none" (see isolation.py)
    kernel = SandboxedKernel.prepare(workdir, isolation, scenario, session, env, limits, wall_seconds)
    kernel.kernel_argv()                      # what the kernel spec runs: unshare ... enter ... inside ...

Three stages, each a process image of its own: `unshare` makes the namespaces; enter.py (root in
them) brings up loopback, builds the file system view, sets the limits and drops to the sandbox's
user; inside.py (PID 1, the sandbox's user) serves the exercise's scenario on the sandbox's own
loopback and runs the kernel. The grader talks to the kernel over Unix sockets in the sandbox's
directory (ZeroMQ "ipc"), which cross network namespaces.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

from spark_exercises.grader.sandbox.isolation import Isolation, SandboxUnavailable, detect
from spark_exercises.grader.sandbox.layout import READ_API_PORT, Layout
from spark_exercises.grader.sandbox.limits import Limits, for_notebook

__all__ = ["Isolation", "Limits", "SandboxUnavailable", "SandboxedKernel", "detect", "for_notebook",
           "leftover_processes", "READ_API_PORT"]
MARKER = "spark_exercises.grader.sandbox.inside"


@dataclass
class SandboxedKernel:
    isolation: Isolation
    layout: Layout
    limits: Limits

    @classmethod
    def prepare(cls, parent: str, isolation: Isolation, scenario: dict, session: str, env: dict[str, str],
                limits: Limits, wall_seconds: float) -> SandboxedKernel:
        layout = Layout.create(parent, isolation)
        with open(layout.path("scenario.json"), "w", encoding="utf-8") as f:
            json.dump(scenario, f)
        layout.give(layout.path("scenario.json"), isolation)
        command = [sys.executable, "-m", MARKER, layout.path("plan.json"), layout.path("connection.json")]
        env = {**env, "KAFKA_LAB_WORKDIR": layout.path("scratch"),
               "KAFKA_LAB_URL": f"http://127.0.0.1:{READ_API_PORT}", "KAFKA_LAB_SESSION": session}
        layout.plan(isolation, command, env, limits=limits, wall_seconds=wall_seconds, session=session)
        return cls(isolation, layout, limits)

    @property
    def scratch(self) -> str:
        return self.layout.path("scratch")

    @property
    def connection_file(self) -> str:
        return self.layout.path("connection.json")

    @property
    def socket_prefix(self) -> str:
        return self.layout.path("kernel")

    def kernel_argv(self) -> list[str]:
        return [*self.isolation.unshare_argv(), *self.layout.enter_command(None, "{connection_file}")]

    def launcher_env(self) -> dict[str, str]:
        return self.layout.launcher_env()

    def give(self, path: str) -> str:
        return self.layout.give(path, self.isolation)


def leftover_processes() -> list[int]:
    """Pids of sandboxes still running (for tests and start-up checks)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    if MARKER.encode() in f.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found
