"""The graded notebooks on a real Spark standalone cluster, not only `local[*]`.

A master and two workers (one core, 1 GB each) are started from pyspark's own launcher script
(`bin/spark-class`, the one sbin/start-master.sh and start-worker.sh run) on loopback, on free
ports, with their work and log files in a temp dir. Every exercise's reference solution is graded
once with SPARK_MASTER=spark://127.0.0.1:<port> — unsandboxed, since the sandbox reaches no network
but its own loopback — and must get full marks. The master's JSON page must then list each
notebook's application as finished, and the workers' pages the executors they ran for it: the
work really ran on the cluster.

The master gives an application one core unless it asks for more (spark.deploy.defaultCores=1),
so two notebooks graded at once run side by side, one on each worker.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest

from lab.serve import free_port
from spark_exercises.grader import grade_notebook
from spark_exercises.grader.exercises import list_exercises

pytestmark = pytest.mark.spark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
WORKERS = 2
WORKER_CORES, WORKER_MEMORY = "1", "1g"
DAEMON_MEMORY = "256m"            # the master's and workers' own JVMs (Spark's default is 1 GB each)
PARALLEL_NOTEBOOKS = WORKERS      # one application per worker at a time
START_TIMEOUT_S = 120.0
EXECUTOR_DEFAULTS = "spark.executor.extraJavaOptions -XX:TieredStopAtLevel=1\n"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


@dataclass
class StandaloneCluster:
    master_url: str                  # spark://127.0.0.1:<port>, what SPARK_MASTER names
    master_ui: str                   # http://127.0.0.1:<port>; its /json is the master's state
    worker_uis: list[str]
    logs: list[Path]

    def master_state(self) -> dict:
        return _json(f"{self.master_ui}/json")

    def worker_states(self) -> list[dict]:
        return [_json(f"{ui}/json") for ui in self.worker_uis]

    def log_tails(self) -> str:
        return "\n".join(f"--- {p.name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-20:])
                         for p in self.logs if p.exists())


def _json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def _env(directory: Path) -> dict[str, str]:
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_DAEMON_MEMORY=DAEMON_MEMORY, SPARK_LOG_DIR=str(directory / "logs"),
               SPARK_CONF_DIR=str(directory / "conf"),          # ours alone: no site configuration leaks in
               SPARK_WORKER_DIR=str(directory / "work"), SPARK_WORKER_CORES=WORKER_CORES,
               SPARK_WORKER_MEMORY=WORKER_MEMORY,
               SPARK_MASTER_OPTS="-Dspark.deploy.defaultCores=1 -Dspark.master.rest.enabled=false")
    for name in ("conf", "logs", "work"):
        (directory / name).mkdir(exist_ok=True)
    # Read by the daemons and, through SPARK_CONF_DIR, by each notebook's driver: executors, like
    # the grader's drivers, run short jobs, for which the JVM's quick JIT alone is the cheaper one.
    (directory / "conf" / "spark-defaults.conf").write_text(EXECUTOR_DEFAULTS)
    return env


@contextmanager
def _daemon(env: dict[str, str], log: Path, *args: str) -> Iterator[subprocess.Popen]:
    with log.open("ab") as out:
        process = subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def standalone_cluster(directory: Path) -> Iterator[StandaloneCluster]:
    env = _env(directory)
    port, ui_port = free_port(), free_port()
    worker_ui_ports = [free_port() for _ in range(WORKERS)]
    cluster = StandaloneCluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}",
                                [f"http://127.0.0.1:{p}" for p in worker_ui_ports],
                                [directory / "logs" / "master.log"] +
                                [directory / "logs" / f"worker-{n}.log" for n in range(WORKERS)])
    with ExitStack() as stack:
        processes = [stack.enter_context(_daemon(env, cluster.logs[0], MASTER_CLASS, "--host", "127.0.0.1",
                                                 "--port", str(port), "--webui-port", str(ui_port)))]
        for n, worker_ui in enumerate(worker_ui_ports):
            processes.append(stack.enter_context(_daemon(
                env, cluster.logs[n + 1], WORKER_CLASS, "--host", "127.0.0.1", "--webui-port", str(worker_ui),
                "--cores", WORKER_CORES, "--memory", WORKER_MEMORY, "--work-dir", str(directory / "work" / str(n)),
                cluster.master_url)))
        _until_workers_alive(cluster, processes)
        yield cluster


def _until_workers_alive(cluster: StandaloneCluster, processes: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in processes):
            pytest.fail(f"a Spark daemon exited while starting:\n{cluster.log_tails()}")
        try:
            state = cluster.master_state()
        except OSError:
            state = {}
        alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
        if state.get("status") == "ALIVE" and len(alive) == WORKERS:
            return
        time.sleep(0.5)
    pytest.fail(f"the master did not see {WORKERS} live workers within {START_TIMEOUT_S:.0f} s:\n{cluster.log_tails()}")


def test_every_solution_gets_full_marks_on_a_standalone_cluster(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    exercises = list_exercises()
    with standalone_cluster(tmp_path) as cluster:
        monkeypatch.setenv("SPARK_MASTER", cluster.master_url)
        monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))
        with ThreadPoolExecutor(PARALLEL_NOTEBOOKS, thread_name_prefix="grade-cluster") as pool:
            reports = list(pool.map(lambda e: grade_notebook(e.path / "solution.ipynb", e, sandboxed=False),
                                    exercises))
        master, workers = cluster.master_state(), cluster.worker_states()
        logs = cluster.log_tails()

    for exercise, report in zip(exercises, reports):
        assert report.error is None, f"{exercise.slug}:\n{report.to_text(with_detail=True)}\n{logs}"
        assert report.score == report.max_score > 0, f"{exercise.slug}:\n{report.to_text()}"
    finished = {app["name"]: app for app in master["completedapps"]}
    assert set(finished) == {f"kafka-lab-{e.slug}" for e in exercises}, master["completedapps"]
    assert all(app["state"] == "FINISHED" for app in finished.values()), master["completedapps"]
    ran_executors = {executor["appid"] for worker in workers for executor in worker["finishedexecutors"]}
    assert ran_executors >= {app["id"] for app in finished.values()}, (ran_executors, workers)
