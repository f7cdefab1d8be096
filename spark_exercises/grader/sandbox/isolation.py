"""Which isolation this machine offers a notebook, found once per process (`detect()`):

- "user": the server is root. The notebook runs as a user of its own (`kafka-lab-grader`, created
  with useradd on first use; `nobody` if that fails) in new network, PID, mount, IPC and UTS
  namespaces. File modes keep it out of the server's files, the mounts of enter.py hide them too.
- "namespaces": the server is not root. The notebook runs in a user namespace (plus the same
  namespaces) as the server's own uid without any capability: it cannot see the server's
  processes or network, the database and data dir are hidden by mounts and the project is
  read-only — but files of the server's user that no mount hides are readable to it.
- "none": neither works (no unshare/setpriv, or user namespaces are off). Uploads are then refused.

A probe runs the whole sandbox once (a Python that imports ipykernel inside it): a sandbox that
cannot even start Python — a venv its user cannot read, say — counts as "none", with the reason.
KAFKA_LAB_SANDBOX=namespaces asks for the user-namespace mode even as root.
"""
from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

SANDBOX_USER = "kafka-lab-grader"
TOOLS_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
NAMESPACES = ["--net", "--pid", "--mount", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc"]
PROBE_TIMEOUT_S = 60


class SandboxUnavailable(Exception):
    """No sandbox can be built here: the message says why."""


@dataclass(frozen=True)
class Isolation:
    mode: str           # "user", "namespaces" or "none"
    uid: int
    gid: int
    user: str
    reason: str = ""    # why "none"

    @property
    def available(self) -> bool:
        return self.mode != "none"

    def describe(self) -> str:
        if self.mode == "user":
            return f"user {self.user} in its own network, PID and mount namespaces"
        if self.mode == "namespaces":
            return "a user namespace with its own network, PID and mount namespaces (same uid, no capabilities)"
        return f"none: {self.reason}"

    def unshare_argv(self) -> list[str]:
        user_ns = ["--user", "--map-root-user"] if self.mode == "namespaces" else []
        return [shutil.which("unshare", path=TOOLS_PATH) or "unshare", *user_ns, *NAMESPACES, "--"]


@functools.cache
def detect() -> Isolation:
    missing = [tool for tool in ("unshare", "setpriv") if not shutil.which(tool, path=TOOLS_PATH)]
    if missing:
        return Isolation("none", -1, -1, "", f"{' and '.join(missing)} not found (Debian: util-linux)")
    wanted = os.environ.get("KAFKA_LAB_SANDBOX", "").strip().lower()
    if os.geteuid() == 0 and wanted != "namespaces":
        uid, gid, user = _sandbox_user()
        isolation = Isolation("user", uid, gid, user)
    else:
        isolation = Isolation("namespaces", os.getuid(), os.getgid(), pwd.getpwuid(os.getuid()).pw_name)
    problem = _probe(isolation)
    return Isolation("none", -1, -1, "", problem) if problem else isolation


def _sandbox_user() -> tuple[int, int, str]:
    for attempt in range(2):
        try:
            entry = pwd.getpwnam(SANDBOX_USER)
            return entry.pw_uid, entry.pw_gid, SANDBOX_USER
        except KeyError:
            if attempt == 0:
                subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                                "--shell", "/usr/sbin/nologin", "--user-group", SANDBOX_USER],
                               capture_output=True, env={"PATH": TOOLS_PATH}, check=False)
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid, "nobody"


def _probe(isolation: Isolation) -> str:
    """"" when a sandboxed Python can import what a notebook needs, else what went wrong."""
    from spark_exercises.grader.sandbox.layout import Layout
    with tempfile.TemporaryDirectory(prefix="kafka-lab-sandbox-probe-") as parent:
        layout = Layout.create(parent, isolation)
        plan = layout.plan(isolation, [sys.executable, "-c", "import ipykernel, pyspark, engine; print('ok')"], {})
        argv = [*isolation.unshare_argv(), *layout.enter_command(plan)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                                  env=layout.launcher_env())
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"the sandbox could not start ({error})"
    if done.returncode != 0 or done.stdout.strip() != "ok":
        lines = (done.stderr.strip().splitlines() or ["no output"])
        return f"a sandboxed Python could not start ({lines[-1][:300]})"
    return ""
