"""The files of one sandboxed run and what the notebook may see of the machine.

    parent/                 the grader's work dir: 0711, owned by the server (the truth's cluster is
                            in a 0700 sibling)
    parent/sandbox/         the sandbox's only writable place, owned by the sandbox's user:
        home/ tmp/ scratch/   its HOME, TMPDIR (Java's too) and KAFKA_LAB_WORKDIR
        plan.json scenario.json produced.json connection.json, the kernel's sockets kernel-N

The notebook sees the interpreter, the venv and the project read-only and nothing of /tmp,
/var/tmp, /dev/shm or the homes but its own directory; `hidden_paths()` lists the server's
secrets (database, data dir, secret key file) and the exercises' solutions and checks.
"""
from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from spark_exercises.grader.sandbox.isolation import TOOLS_PATH, Isolation
from spark_exercises.grader.sandbox.limits import Limits
from spark_exercises.grader.sandbox.plan import Plan

PROJECT_ROOT = str(Path(__file__).resolve().parents[3])
MASKED_DIRS = ["/tmp", "/var/tmp", "/dev/shm", "/root", "/home"]
READ_API_PORT = 8765                  # the sandbox has a network namespace of its own: any port is free


@dataclass(frozen=True)
class Layout:
    root: str                          # parent/sandbox

    @classmethod
    def create(cls, parent: str, isolation: Isolation) -> Layout:
        os.chmod(parent, 0o711)
        root = os.path.join(parent, "sandbox")
        for sub in ("", "home", "tmp", "scratch"):
            os.makedirs(os.path.join(root, sub), mode=0o700, exist_ok=True)
            if isolation.mode == "user":
                os.chown(os.path.join(root, sub), isolation.uid, isolation.gid)
        return cls(root)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def give(self, path: str, isolation: Isolation) -> str:
        """Make a file the grader wrote readable (only) by the sandbox's user."""
        if isolation.mode == "user":
            os.chown(path, isolation.uid, isolation.gid)
        os.chmod(path, 0o600)
        return path

    def plan(self, isolation: Isolation, command: list[str], env: dict[str, str], *,
             limits: Limits | None = None, wall_seconds: float = 0.0, session: str = "") -> Plan:
        home = os.environ.get("HOME", "")
        plan = Plan(mode=isolation.mode, uid=isolation.uid, gid=isolation.gid, workdir=self.root, command=command,
                    env={**self.base_env(), **env}, masked_dirs=sorted(set(MASKED_DIRS + ([home] if home not in ("", "/") else []))),
                    revealed=_needed_paths(), read_only=_needed_paths(), hidden=hidden_paths(),
                    limits=limits or Limits(), wall_seconds=wall_seconds, scenario=self.path("scenario.json"),
                    session=session, port=READ_API_PORT)
        self.give(plan.write(self.path("plan.json")), isolation)
        return plan

    def base_env(self) -> dict[str, str]:
        """A fresh environment: nothing of the server's (its secret key, its settings, its paths)."""
        java_home = os.environ.get("JAVA_HOME", "")
        return {"PATH": os.pathsep.join([os.path.dirname(sys.executable), TOOLS_PATH]), "HOME": self.path("home"),
                "TMPDIR": self.path("tmp"), "LANG": "C.UTF-8", "PYTHONPATH": PROJECT_ROOT, "MALLOC_ARENA_MAX": "2",
                **({"JAVA_HOME": java_home} if java_home else {})}

    def enter_command(self, plan: Plan, connection_file: str = "") -> list[str]:
        return [sys.executable, "-m", "spark_exercises.grader.sandbox.enter", self.path("plan.json"),
                *([connection_file] if connection_file else [])]

    def launcher_env(self) -> dict[str, str]:
        """The environment of `unshare` and enter.py: enough to import the package, nothing else."""
        return {"PATH": TOOLS_PATH, "PYTHONPATH": PROJECT_ROOT, "LANG": "C.UTF-8"}


def _needed_paths() -> list[str]:
    """The interpreter, the venv and the project: what a sandboxed kernel must read."""
    paths = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), PROJECT_ROOT}
    return sorted(p for p in paths if p not in ("/", "/usr"))


def hidden_paths() -> list[str]:
    """The server's secrets and the exercises' answers, as far as this process knows them."""
    paths = glob.glob(os.path.join(PROJECT_ROOT, "spark_exercises", "exercises", "*", "solution.ipynb"))
    paths += glob.glob(os.path.join(PROJECT_ROOT, "spark_exercises", "exercises", "*", "checks.py"))
    paths += glob.glob(os.path.join(PROJECT_ROOT, "*.sqlite3*")) + [os.path.join(PROJECT_ROOT, "var")]
    try:
        from django.conf import settings
        if settings.configured:
            database = settings.DATABASES["default"]
            for name in (database.get("NAME"), database.get("TEST", {}).get("NAME")):
                if name and str(name) != ":memory:":
                    paths += glob.glob(f"{name}*")
            paths += [str(settings.KAFKA_LAB_DATA_DIR), str(getattr(settings, "KAFKA_LAB_SECRET_KEY_FILE", ""))]
    except ImportError:
        pass
    return sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})
