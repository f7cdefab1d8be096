"""Stage one of the sandbox, run by `unshare` in fresh network, PID, mount, IPC and UTS namespaces
(plus a user namespace in "namespaces" mode), still with root's rights there:

    python -m spark_exercises.grader.sandbox.enter PLAN.json [CONNECTION_FILE]

1. brings up the loopback device (a new network namespace has nothing else: no way out);
2. builds the file system the notebook sees: an empty tmpfs over /tmp, /var/tmp, /dev/shm and the
   homes, with the Python, the venv and the project put back read-only; /dev/null over the
   database files and an empty directory over the lab's data dir, the secret key file, the
   exercises' solutions and checks (`Plan.hidden`); /proc is this PID namespace's own, so no
   process of the server is visible;
3. sets the resource limits, then execs `setpriv` to drop to the sandbox's user with no
   capabilities, no way to gain any (no_new_privs) and the plan's environment only.
Any failure exits non-zero before the notebook runs: a half-built sandbox never runs code.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import socket
import struct
import sys

from spark_exercises.grader.sandbox.plan import Plan

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 32, 4096, 16384
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                   data.encode() if data else None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {source} on {target}: {os.strerror(error)}")


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _bind_read_only(source: str, target: str) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    _mount("none", target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def build_file_system(plan: Plan) -> None:
    for masked in sorted(d for d in plan.masked_dirs if os.path.isdir(d)):
        keep = [p for p in plan.revealed + [plan.workdir] if _under(p, masked) and os.path.exists(p)]
        handles = {p: os.open(p, os.O_PATH) for p in keep}      # reachable after the tmpfs hides them
        _mount("tmpfs", masked, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1g")
        for path, handle in handles.items():
            os.makedirs(path, exist_ok=True) if os.path.isdir(f"/proc/self/fd/{handle}") else _touch(path)
            _mount(f"/proc/self/fd/{handle}", path, None, MS_BIND | MS_REC)
            if path != plan.workdir:
                _mount("none", path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
            os.close(handle)
    for path in plan.read_only:
        if os.path.exists(path):
            _bind_read_only(path, path)
    for path in plan.hidden:
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0000,size=4k")
        elif os.path.exists(path):
            _mount("/dev/null", path, None, MS_BIND)


def _touch(path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "a").close()


def drop_rights_and_run(plan: Plan) -> None:
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
    who = ([f"--reuid={plan.uid}", f"--regid={plan.gid}", "--clear-groups"] if plan.mode == "user" else [])
    os.chdir(plan.workdir)
    plan.limits.apply()
    os.execve(setpriv, [setpriv, *who, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
                        *plan.command], plan.env)


def main(argv: list[str]) -> None:
    plan = Plan.read(argv[0])
    if len(argv) > 1 and plan.mode == "user":           # the kernel's connection file, written by the grader
        os.chown(argv[1], plan.uid, plan.gid)
    loopback_up()
    build_file_system(plan)
    drop_rights_and_run(plan)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception as error:  # noqa: BLE001 (say why, and never run the notebook half-sandboxed)
        print(f"kafka-lab sandbox: cannot build the sandbox: {error}", file=sys.stderr)
        sys.exit(70)
