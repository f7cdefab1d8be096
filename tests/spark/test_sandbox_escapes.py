"""An uploaded notebook tries every way out of the grader's sandbox; each must fail or be cut off,
and the grade report says which.

One toy exercise (no Spark: the kernel starts in about a second) whose checks read the notebook's
own account of each attempt: the server's database (its file, or its PostgreSQL server's port), /proc/<server pid>/environ, the server's
environment (a canary secret), a socket to a port the server listens on and one to the internet
(the read API of its own scenario must still answer), a fork bomb, a memory hog, then endless
output (the last cell: it ends the run). An endless loop is a second, one-cell notebook.
Real processes, real files, the real sandbox: the tests of the real exercises
(test_exercises.py) run real PySpark in the same sandbox.
"""
from __future__ import annotations

import json
import os
import socket
import time

import nbformat
import pytest
from django.conf import settings

from spark_exercises.grader import grade_notebook
from spark_exercises.grader.exercises import Exercise

CANARY = "canary-secret-7f3e"
SCENARIO = {"name": "toy", "cluster": {"brokers": 1, "seed": 1}, "steps": [
    {"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 1}},
    {"produce": {"topic": "t", "values": ["a", "b", "c"], "acks": 1}},
    {"run_until_idle": {}}]}

CHECKS = '''
from spark_exercises.grader.checks import Question

def _blocked(name):
    def check(answers, lab):
        got = answers[name]
        return got.startswith("blocked"), f"{name}: {got}"
    return check

def _no_secret(answers, lab):
    return answers["secrets"] == [], f"secrets seen: {answers['secrets']}"

def _read_api(answers, lab):
    return answers["read_api"] == "ok:1", f"read API: {answers['read_api']}"

def _forks(answers, lab):
    made, stopped = answers["forks"]
    return made < 600 and stopped != "", f"fork bomb: {made} processes, then {stopped or 'nothing stopped it'}"

QUESTIONS = [Question(n, n, 1, (n,), _blocked(n)) for n in
             ("database", "data_dir", "server_environ", "outside_port", "internet", "memory")]
QUESTIONS += [Question("secrets", "secrets", 1, ("secrets",), _no_secret),
              Question("read_api", "read_api", 1, ("read_api",), _read_api),
              Question("forks", "forks", 1, ("forks",), _forks)]
'''

# How the notebook tries to reach the server's database: its file (SQLite) or its server's port
# (PostgreSQL; the sandbox's own network has no route to it).
READ_SQLITE = '''
def read_database():
    # The sandbox may hide the file (gone) or lay /dev/null over it (it opens, and is empty):
    # either way the database's bytes must not come back.
    head = open({path!r}, "rb").read(16)
    if not head.startswith(b"SQLite format 3"):
        raise PermissionError(f"not the database's bytes: {{head!r}}")
    return head
'''
READ_POSTGRES = '''
def read_database():
    return socket.create_connection(({host!r}, {port}), timeout=3)
'''

ESCAPES = '''
import json, mmap, os, signal, socket, time, urllib.request

def attempt(action):
    try:
        return "ok:" + str(action())[:200]
    except BaseException as error:
        return "blocked:" + type(error).__name__

{read_database}
database = attempt(read_database)
data_dir = attempt(lambda: open(os.path.join({data_dir!r}, "canary.txt")).read())
server_environ = attempt(lambda: open("/proc/{server_pid}/environ", "rb").read())
secrets = sorted(name for name, value in os.environ.items()
                 if "SECRET" in name or {canary!r} in value or name.startswith("DJANGO"))
outside_port = attempt(lambda: socket.create_connection(("127.0.0.1", {outside_port}), timeout=3))
internet = attempt(lambda: socket.create_connection(("1.1.1.1", 80), timeout=3))
base = os.environ["KAFKA_LAB_URL"] + "/api/v1/sessions/" + os.environ["KAFKA_LAB_SESSION"]
read_api = attempt(lambda: len(json.load(urllib.request.urlopen(base + "/partitions?topics=t", timeout=10))["partitions"]))
memory = attempt(lambda: mmap.mmap(-1, 12 << 30))
'''

FORK_BOMB = '''
children, stopped = [], ""
for _ in range(600):          # bounded: a real fork bomb would take the machine down if it got out
    try:
        pid = os.fork()
    except OSError as error:
        stopped = type(error).__name__
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
forks = [len(children), stopped]
'''

ENDLESS_OUTPUT = 'while True:\n    print("x" * 10000)'


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Exercise:
    path = tmp_path_factory.mktemp("exercises") / "00-escapes"
    path.mkdir()
    (path / "README.md").write_text("# 00 · Escapes\n")
    (path / "scenario.json").write_text(json.dumps(SCENARIO))
    (path / "checks.py").write_text(CHECKS)
    return Exercise("00-escapes", path)


def notebook(*cells: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


@pytest.mark.django_db
def test_a_notebook_cannot_get_out_of_the_sandbox_and_the_report_says_so(toy: Exercise, monkeypatch) -> None:
    monkeypatch.setenv("KAFKA_LAB_SECRET_KEY", CANARY)
    monkeypatch.setenv("KAFKA_LAB_SOMETHING", CANARY)
    data_dir = settings.KAFKA_LAB_DATA_DIR
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "canary.txt").write_text(CANARY)
    (data_dir / "canary.txt").chmod(0o644)               # readable by anyone: only the sandbox protects it
    with socket.create_server(("127.0.0.1", 0)) as listener:
        escapes = ESCAPES.format(read_database=_read_database(), data_dir=str(data_dir), server_pid=os.getpid(),
                                 canary=CANARY, outside_port=listener.getsockname()[1])
        started = time.monotonic()
        report = grade_notebook(notebook(escapes, FORK_BOMB, ENDLESS_OUTPUT), toy, cell_timeout=60,
                                total_timeout=120)
        seconds = time.monotonic() - started

    text = report.to_text()
    assert [q.id for q in report.questions if not q.ok] == [], text
    assert report.error and report.error["kind"] == "output-limit", text
    assert "output" in report.error["headline"], text
    assert "sandbox" in report.lab and report.lab["sandbox"] != "none", report.to_dict()
    assert seconds < 60, f"the endless output was cut off after {seconds:.0f} s"


def _read_database() -> str:
    """The notebook's attempt at the server's database; out here, the same attempt must succeed
    (so that its failure in the sandbox means something)."""
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        with open(database["NAME"], "rb") as outside:
            assert outside.read(16).startswith(b"SQLite format 3")
        return READ_SQLITE.format(path=str(database["NAME"]))
    host, port = database["HOST"] or "127.0.0.1", int(database["PORT"] or 5432)
    socket.create_connection((host, port), timeout=3).close()
    return READ_POSTGRES.format(host=host, port=port)


def test_an_endless_loop_is_cut_off_and_leaves_no_process_behind(toy: Exercise) -> None:
    report = grade_notebook(notebook("x = 0\nwhile True:\n    x += 1"), toy, cell_timeout=5, total_timeout=30)

    assert report.error and report.error["kind"] == "timeout", report.to_text()
    assert "did not finish within 5 s" in report.error["headline"]
    from spark_exercises.grader import sandbox
    assert not sandbox.leftover_processes(), "a sandboxed process outlived its notebook"
