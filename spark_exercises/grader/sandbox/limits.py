"""Resource limits of a sandboxed notebook: set with setrlimit before the sandbox drops its rights,
inherited by every process the notebook starts (its kernel, Spark's JVM, Python workers).

Per process, as setrlimit works: address space (a JVM with a 1 GB heap reserves about 3 GB; the
kernel with pyarrow about 1.5 GB), CPU seconds, open files, file size (a runaway writer gets
SIGXFSZ); per user: processes and threads (a JVM counts its threads). Total memory over all the
sandbox's processes would need a cgroup, which this machine's own supervisor owns: not used.
"""
from __future__ import annotations

import resource
from dataclasses import asdict, dataclass

GiB = 1 << 30
MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    address_space_bytes: int = 8 * GiB
    cpu_seconds: int = 1800
    processes: int = 512            # tasks of the sandbox's user, threads included
    file_size_bytes: int = 512 * MiB
    open_files: int = 4096
    output_bytes: int = 2 * MiB     # what the notebook prints (execute.py enforces it, not setrlimit)

    def to_dict(self) -> dict:
        return asdict(self)

    def apply(self) -> None:
        """setrlimit every limit (soft = hard: the notebook cannot raise them again)."""
        for which, value in ((resource.RLIMIT_AS, self.address_space_bytes), (resource.RLIMIT_CPU, self.cpu_seconds),
                             (resource.RLIMIT_NPROC, self.processes), (resource.RLIMIT_FSIZE, self.file_size_bytes),
                             (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))


def for_notebook(total_timeout_s: float) -> Limits:
    """Limits for one notebook: CPU for two busy cores over its whole time budget, plus start-up."""
    return Limits(cpu_seconds=int(2 * total_timeout_s) + 120)
