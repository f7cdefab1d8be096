"""What one sandboxed run is: written as JSON by the grader, read by enter.py (as root in the new
namespaces) and inside.py (as the sandbox's user). Plain data, no behaviour."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from spark_exercises.grader.sandbox.limits import Limits


@dataclass
class Plan:
    mode: str                       # "user" (a user of its own + namespaces) or "namespaces" (user namespace)
    uid: int                        # who the notebook runs as (in "namespaces" mode: the server's own uid)
    gid: int
    workdir: str                    # the sandbox's only writable directory (its HOME and TMPDIR live there)
    command: list[str]              # what runs once the rights are dropped
    env: dict[str, str]             # the whole environment of `command`: nothing of the server's
    masked_dirs: list[str] = field(default_factory=list)     # an empty tmpfs over each
    revealed: list[str] = field(default_factory=list)        # put back, read-only, under a masked dir
    read_only: list[str] = field(default_factory=list)       # bound read-only onto themselves
    hidden: list[str] = field(default_factory=list)          # secrets: /dev/null over files, empty dirs over dirs
    limits: Limits = field(default_factory=Limits)
    wall_seconds: float = 0.0       # inside.py kills the kernel after this long (0: no kernel)
    scenario: str = ""              # inside.py plays it and serves it on 127.0.0.1:port
    session: str = ""
    port: int = 0

    def write(self, path: str) -> str:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(asdict(self), f)
        return path

    @classmethod
    def read(cls, path: str) -> Plan:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
        raw["limits"] = Limits(**raw["limits"])
        return cls(**raw)
