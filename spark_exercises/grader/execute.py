"""Runs a notebook in a fresh kernel, as "Run All" would, and pulls its answer variables out.

- The kernel is ipykernel on the grader's own Python (a kernel spec written into the work dir, so
  no installed kernel spec is needed or used), started in the work dir with the environment given.
- Code cells run in order, each with a time-out; the first failure stops the run, as in Jupyter:
  an exception (a SyntaxError included), a time-out (the kernel is then interrupted), a kernel
  that died. What failed is kept as `NotebookError`; nothing here raises for a broken notebook.
- Then, if the kernel is still alive, kernel_side.py runs in it and prints the answer variables
  as JSON; whatever was defined before the failure is graded normally.
- The kernel's own stdout/stderr (the JVM's log, for one) go to `kernel.log` in the work dir, and
  its tail is quoted when the kernel dies.
- With a `sandbox` (grader/sandbox), the kernel spec starts the sandbox, which starts the kernel;
  the grader reaches it over Unix sockets in the sandbox's directory (ZeroMQ's "ipc" transport).
- What the notebook prints is capped (`output_limit` bytes over the whole run): past it, outputs
  are dropped and the kernel interrupted; still printing OUTPUT_GRACE_S later, it is killed. Either way
  the run stops with an "output-limit" error.

nbclient is asynchronous; it runs on an event loop in a thread of its own, so this works from a
thread that already has a running loop (pytest after Playwright, Channels).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from spark_exercises.grader import kernel_side
from spark_exercises.grader.sandbox import SandboxedKernel

KERNEL_NAME = "kafka-lab-python"
EXPORT_TIMEOUT_S = 120
STARTUP_TIMEOUT_S = 120
ROW_LIMIT = 10_000
LOG_TAIL_LINES = 12
GROUP_EXIT_GRACE_S = 5
OUTPUT_LIMIT_BYTES = 2 * 1024 * 1024
OUTPUT_GRACE_S = 10
EXPORT_OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024      # the answers: up to ROW_LIMIT rows each
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PYTHON_ERROR_LINE = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception)): (.+)$")


@dataclass
class NotebookError:
    """Why the notebook did not run to the end (kind: exception, timeout, kernel-died, kernel-start,
    kernel-lost); `headline` is the one line the report shows."""
    kind: str
    message: str
    cell: int | None = None          # 1-based number among the code cells
    detail: str = ""

    def headline(self) -> str:
        where = f"code cell {self.cell}" if self.cell else "the notebook"
        if self.kind == "exception":
            return f"{where} raised {self.message}"
        if self.kind == "timeout":
            return f"{where} {self.message}"
        if self.kind == "kernel-died":
            return f"the kernel died while running {where}" + (f": {self.message}" if self.message else "")
        return self.message

    def to_dict(self) -> dict:
        return {"kind": self.kind, "cell": self.cell, "message": self.message, "headline": self.headline(),
                "detail": self.detail}


@dataclass
class Execution:
    answers: dict[str, dict] = field(default_factory=dict)   # name -> {"defined", "type", "value"|"error"}
    error: NotebookError | None = None
    export_error: str = ""
    code_cells: int = 0
    cells_run: int = 0
    cell_seconds: list[float] = field(default_factory=list)   # per code cell run, in order
    seconds: float = 0.0


def execute(nb: nbformat.NotebookNode, answer_names: list[str], *, workdir: str, env: dict[str, str],
            cell_timeout: float, total_timeout: float, sandbox: SandboxedKernel | None = None,
            output_limit: int = OUTPUT_LIMIT_BYTES) -> Execution:
    """Run `nb` in a fresh kernel in `workdir` and export `answer_names` (see the module doc).
    With `sandbox`, `env` is ignored: the sandbox's plan holds the kernel's whole environment."""
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="grader-kernel") as pool:
        run = _Run(nb, answer_names, workdir, env, cell_timeout, total_timeout, sandbox, output_limit)
        execution = pool.submit(asyncio.run, run.go()).result()
    execution.seconds = round(time.monotonic() - started, 2)
    return execution


class _Run:
    def __init__(self, nb, answer_names, workdir, env, cell_timeout, total_timeout, sandbox, output_limit) -> None:
        self.nb, self.names, self.workdir, self.env = copy.deepcopy(nb), list(answer_names), workdir, env
        self.sandbox, self.output_limit = sandbox, output_limit
        self.kernel_up = False
        self.process_group: int | None = None
        self.cell_timeout, self.deadline = cell_timeout, time.monotonic() + total_timeout
        self.result = Execution(code_cells=sum(1 for c in nb.cells if c.cell_type == "code"))
        self.log_path = os.path.join(workdir, "kernel.log")

    async def go(self) -> Execution:
        argv = self.sandbox.kernel_argv() if self.sandbox else None
        km = AsyncKernelManager(kernel_name=KERNEL_NAME,
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[_kernel_spec_dir(self.workdir, argv)]))
        env = self.env
        if self.sandbox:   # Unix sockets in the sandbox's directory: TCP would not cross its network namespace
            km.transport, km.ip = "ipc", self.sandbox.socket_prefix
            km.connection_file = self.sandbox.connection_file
            env = self.sandbox.launcher_env()
        client = _LimitedClient(self.nb, km=km, timeout=int(self.cell_timeout), startup_timeout=STARTUP_TIMEOUT_S,
                                allow_errors=False, record_timing=False, kernel_name=KERNEL_NAME)
        client.output_limit = self.output_limit
        with open(self.log_path, "ab") as log:
            try:
                async with client.async_setup_kernel(cleanup_kc=True, env=env, cwd=self.workdir,
                                                     stdout=log, stderr=log):   # cleanup_kc: shut the kernel down
                    self.kernel_up = True
                    self.process_group = getattr(km.provisioner, "pgid", None)
                    await self._cells(client)
                    await self._export(client)
            except Exception as error:  # noqa: BLE001 (reported, never raised)
                if self.result.error is None:
                    kind, what = (("kernel-lost", "the grader lost the kernel") if self.kernel_up
                                  else ("kernel-start", "the kernel could not start"))
                    reason = _one_line(error) or type(error).__name__
                    self.result.error = NotebookError(kind, f"{what}: {reason}", detail=self._log_tail())
            finally:
                _kill_group(self.process_group)
        nbformat.write(self.nb, os.path.join(self.workdir, "executed.ipynb"))   # with its outputs, for debugging
        return self.result

    async def _cells(self, client: NotebookClient) -> None:
        number = 0
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code":
                continue
            number += 1
            remaining = self.deadline - time.monotonic()
            if remaining <= 1:
                self.result.error = NotebookError("timeout", "was not run: the notebook's time budget was used up",
                                                  number)
                return
            client.timeout = int(max(1, min(self.cell_timeout, remaining)))
            began = time.monotonic()
            try:
                await client.async_execute_cell(cell, index, execution_count=number)
            except (CellExecutionError, DeadKernelError) as error:
                if not client.output_exceeded:     # an interrupt or a kill for too much output: said below
                    self.result.error = (NotebookError("exception", _exception_line(error.ename, error.evalue), number,
                                                       _clean(error.traceback))
                                         if isinstance(error, CellExecutionError)
                                         else NotebookError("kernel-died", "", number, self._log_tail()))
                    return
            except CellTimeoutError:
                if not client.output_exceeded:
                    self.result.error = NotebookError("timeout", f"did not finish within {client.timeout} s", number)
                    await _interrupt(client)
                    return
            finally:
                self.result.cell_seconds.append(round(time.monotonic() - began, 2))
            if client.output_exceeded:
                self.result.error = NotebookError("output-limit", f"printed more than {_size(self.output_limit)} "
                                                  "of output: stopped", number)
                return
            self.result.cells_run = number

    async def _export(self, client: NotebookClient) -> None:
        if not self.names:
            return
        if self.result.error is not None and self.result.error.kind == "kernel-died":
            self.result.export_error = "the kernel was dead: no answer could be read"
            return
        source = (Path(kernel_side.__file__).read_text(encoding="utf-8")
                  + f"\n_kafka_lab_export({self.names!r}, {ROW_LIMIT})\n")
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)
        client.timeout = EXPORT_TIMEOUT_S
        client.output_bytes, client.output_exceeded, client.output_limit = 0, False, EXPORT_OUTPUT_LIMIT_BYTES
        try:
            await client.async_execute_cell(cell, len(self.nb.cells) - 1, store_history=False)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
            self.result.export_error = f"the answers could not be read from the kernel ({type(error).__name__})"
            return
        text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
        for line in text.splitlines():
            if line.startswith(kernel_side.MARKER):
                raw = json.loads(line[len(kernel_side.MARKER):])
                self.result.answers = {k: _decoded(v) for k, v in raw.items()}
                return
        self.result.export_error = "the answers could not be read from the kernel (no output)"

    def _log_tail(self) -> str:
        try:
            lines = Path(self.log_path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-LOG_TAIL_LINES:])


class _LimitedClient(NotebookClient):
    """nbclient with a cap on what the notebook prints (see the module doc)."""
    output_limit = OUTPUT_LIMIT_BYTES
    output_bytes = 0
    output_exceeded = False
    interrupted_at = 0.0
    killing = False

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        self.output_bytes += len(str(content.get("text", ""))) + sum(len(str(v)) for v in content.get("data", {}).values())
        if self.output_bytes <= self.output_limit:
            return super().output(outs, msg, display_id, cell_index)
        if not self.output_exceeded:
            self.output_exceeded, self.interrupted_at = True, time.monotonic()
            asyncio.ensure_future(self.km.interrupt_kernel())
        elif time.monotonic() - self.interrupted_at > OUTPUT_GRACE_S and not self.killing:
            self.killing = True       # still printing: the interrupt was caught, or output queued up meanwhile
            asyncio.ensure_future(self.km.shutdown_kernel(now=True))
        return None


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n} bytes"


def _kernel_spec_dir(workdir: str, argv: list[str] | None = None) -> str:
    """A kernel spec for this very Python (the venv's), with ipykernel; or `argv` (the sandbox's)."""
    kernels = os.path.join(workdir, "kernels")
    spec_dir = os.path.join(kernels, KERNEL_NAME)
    os.makedirs(spec_dir, exist_ok=True)
    with open(os.path.join(spec_dir, "kernel.json"), "w", encoding="utf-8") as f:
        json.dump({"argv": argv or [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Kafka Lab (Python)", "language": "python"}, f)
    return kernels


async def _interrupt(client: NotebookClient) -> None:
    """Stop the cell that timed out (PySpark cancels its jobs on SIGINT) so the answers can be read."""
    try:
        await client.km.interrupt_kernel()
        await asyncio.sleep(1)
    except Exception:  # noqa: BLE001 (a kernel that cannot be interrupted: the export will time out)
        pass


def _kill_group(process_group: int | None, grace_s: float = GROUP_EXIT_GRACE_S) -> None:
    """End what is left of the kernel's process group (its own session): a Spark JVM or Python
    worker that outlived the kernel — one interrupted while starting, say. A JVM whose Python went
    away exits on its own (running Spark's shutdown hooks): it gets `grace_s` to do so."""
    if not process_group or process_group == os.getpgrp():
        return
    deadline = time.monotonic() + grace_s
    while _group_alive(process_group) and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        os.killpg(process_group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(process_group: int) -> bool:
    """Whether a process of the group still runs (zombies waiting for their reaper do not count)."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(process_group, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()    # after "(command name)": state ppid pgrp ...
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(process_group) and fields[0] != "Z":
            return True
    return False


def _decoded(entry: dict) -> dict[str, Any]:
    if "value" in entry:
        entry = dict(entry, value=kernel_side.decode(entry["value"]))
    return entry


def _exception_line(ename: str, evalue: str) -> str:
    """"KeyError: 'x'"; for an error that wraps a Python traceback (Spark's PythonException,
    a data source's AnalysisException) the innermost Python error, which says what went wrong."""
    text = ANSI.sub("", evalue or "")
    if "Traceback (most recent call last)" in text:
        for line in reversed(text.splitlines()):
            match = PYTHON_ERROR_LINE.match(line.strip())
            if match:
                return f"{ename} ({match.group(1)}: {_one_line(match.group(2))})"
    return f"{ename}: {_one_line(text)}"


def _clean(traceback: str) -> str:
    return ANSI.sub("", traceback or "").strip()


def _one_line(text: Any) -> str:
    lines = [line for line in ANSI.sub("", str(text)).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= 300 else line[:297] + "..."
