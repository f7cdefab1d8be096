"""Grade one notebook: play the exercise's scenario, run the notebook against it, run the checks.

    report = grade_notebook("mine.ipynb")                       # the exercise from its metadata
    report = grade_notebook(nb, "01", lab_url=..., lab_session=...)
    print(report.to_text())

1. The scenario is played into a fresh cluster in a temp dir (the truth the checks use). Unless
   `lab_url` is given, that cluster is served by ReadApiServer on a free loopback port and the
   notebook reads it; with `lab_url`, the notebook reads that lab session instead (the learner
   loaded the same scenario there; the engine is deterministic, so the data is the same).
2. The notebook runs in a fresh kernel (execute.py) with KAFKA_LAB_URL, KAFKA_LAB_SESSION,
   KAFKA_LAB_PRODUCED (the producer's log as a JSON file), KAFKA_LAB_WORKDIR (a scratch dir for
   sinks and checkpoints), PYSPARK_PYTHON, SPARK_LOCAL_IP=127.0.0.1 and SPARK_MASTER if set.
   By default in the sandbox (grader/sandbox): a fresh environment with only those, its own
   user, network, processes and file system view; it plays the scenario itself and serves it on
   its own loopback. `sandboxed=False` (the operator's own notebook, `manage.py grade
   --unsandboxed`, needed for `lab_url`) runs it with the caller's rights and environment.
3. Each question's check runs here, outside the notebook, on the exported answer values.

A broken notebook never raises: its error is in the report and the questions it left without
answers get 0. `GradeError` is raised only for the caller's mistakes (no such exercise, none named).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import nbformat

from spark_exercises.grader import execute, sandbox
from spark_exercises.grader.checks import AnswerError, Question
from spark_exercises.grader.exercises import Exercise, ExerciseError, exercise_of, find_exercise
from spark_exercises.grader.lab import Lab, played, served, write_producer_log
from spark_exercises.grader.report import QuestionResult, Report

CELL_TIMEOUT_S = 300
TOTAL_TIMEOUT_S = 1200
STARTUP_WALL_MARGIN_S = 180         # the sandbox's own wall clock: the kernel's start and the export too
PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
# Spark settings for graded runs that a notebook need not know about (unless PYSPARK_SUBMIT_ARGS is
# set already): no UI, no progress bars, and the JVM's quick JIT only — a graded run is short.
SUBMIT_ARGS = ("--conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false "
               '--driver-java-options "-XX:TieredStopAtLevel=1 -Djava.io.tmpdir={tmp}" pyspark-shell')
# In the sandbox the JVM must fit the address-space limit (sandbox/limits.py): a 1 GB heap, a
# small class space and code cache.
SANDBOX_SUBMIT_ARGS = ("--driver-memory 1g --conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false "
                       '--driver-java-options "-XX:TieredStopAtLevel=1 -XX:CompressedClassSpaceSize=256m '
                       '-XX:ReservedCodeCacheSize=128m -Djava.io.tmpdir={tmp}" pyspark-shell')


class GradeError(Exception):
    """The grader was asked something it cannot do (the message says what to change)."""


def grade_notebook(notebook: str | Path | nbformat.NotebookNode, exercise: Exercise | str | None = None, *,
                   lab_url: str | None = None, lab_session: str | None = None,
                   cell_timeout: float = CELL_TIMEOUT_S, total_timeout: float = TOTAL_TIMEOUT_S,
                   keep_workdir: bool = False, sandboxed: bool = True) -> Report:
    name = Path(notebook).name if isinstance(notebook, (str, Path)) else "notebook"
    nb, read_error = _read(notebook)
    exercise = _exercise(exercise, nb)
    if bool(lab_url) != bool(lab_session):
        raise GradeError("Give both the lab URL and the lab session id, or neither")
    if sandboxed and lab_url:
        raise GradeError("The sandbox reaches no lab but its own: grade against a lab URL only unsandboxed")
    isolation = sandbox.detect() if sandboxed else None
    if isolation is not None and not isolation.available:
        raise GradeError(f"This machine cannot sandbox a notebook, so it will not run one: {isolation.reason}")
    report = Report(exercise.slug, name)
    workdir = tempfile.mkdtemp(prefix=f"kafka-lab-grade-{exercise.number}-")
    try:
        with played(exercise.scenario(), os.path.join(workdir, "cluster")) as lab:
            if nb is None:
                report.error = {"kind": "invalid-notebook", "cell": None, "message": read_error,
                                "headline": f"not a notebook: {read_error}", "detail": ""}
                report.questions = [_zero(q, "the notebook could not be read") for q in exercise.questions]
                return report
            if isolation is not None:
                execution = _run_sandboxed(nb, exercise, lab, workdir, isolation, cell_timeout, total_timeout, report)
            else:
                execution = _run(nb, exercise, lab, workdir, lab_url, lab_session, cell_timeout, total_timeout, report)
            report.error = execution.error.to_dict() if execution.error else None
            report.seconds, report.cell_seconds = execution.seconds, execution.cell_seconds
            if keep_workdir:
                report.lab["workdir"] = workdir
            report.questions = [_grade(q, execution, lab) for q in exercise.questions]
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return report


def _run(nb, exercise: Exercise, lab: Lab, workdir: str, lab_url: str | None, lab_session: str | None,
         cell_timeout: float, total_timeout: float, report: Report) -> execute.Execution:
    scratch = os.path.join(workdir, "scratch")
    os.makedirs(scratch)
    env = _environment(lab, workdir, scratch)
    with contextlib.ExitStack() as stack:
        if lab_url:
            url, session, served_by = lab_url, lab_session, "the given lab session"
        else:
            session = f"grader-{uuid.uuid4().hex[:12]}"
            url, served_by = stack.enter_context(served(lab, session)).url, "the grader (scenario played locally)"
        report.lab = {"url": url, "session": session, "served_by": served_by}
        env.update(KAFKA_LAB_URL=url, KAFKA_LAB_SESSION=session)
        return execute.execute(nb, exercise.answer_names, workdir=scratch, env=env,
                               cell_timeout=cell_timeout, total_timeout=total_timeout)


def _run_sandboxed(nb, exercise: Exercise, lab: Lab, workdir: str, isolation: sandbox.Isolation,
                   cell_timeout: float, total_timeout: float, report: Report) -> execute.Execution:
    session = f"grader-{uuid.uuid4().hex[:12]}"
    limits = sandbox.for_notebook(total_timeout)
    kernel = sandbox.SandboxedKernel.prepare(workdir, isolation, exercise.scenario(), session,
                                             _sandbox_environment(lab, workdir), limits,
                                             wall_seconds=total_timeout + STARTUP_WALL_MARGIN_S)
    kernel.give(kernel.layout.path("produced.json"))
    os.makedirs(os.path.join(workdir, "run"), mode=0o700)
    report.lab = {"url": f"http://127.0.0.1:{sandbox.READ_API_PORT}", "session": session,
                  "served_by": "the sandbox (scenario played inside it)", "sandbox": isolation.describe()}
    return execute.execute(nb, exercise.answer_names, workdir=os.path.join(workdir, "run"), env={},
                           cell_timeout=cell_timeout, total_timeout=total_timeout, sandbox=kernel,
                           output_limit=limits.output_bytes)


def _sandbox_environment(lab: Lab, workdir: str) -> dict[str, str]:
    """What the notebook is told, and nothing else (the sandbox adds HOME, TMPDIR, PATH, the URL)."""
    root = os.path.join(workdir, "sandbox")
    temp = os.path.join(root, "tmp")
    os.makedirs(root, mode=0o700, exist_ok=True)
    produced = write_producer_log(lab, os.path.join(root, "produced.json"))
    env = {"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOCAL_DIRS": temp,
           "KAFKA_LAB_PRODUCED": produced, "PYSPARK_SUBMIT_ARGS": SANDBOX_SUBMIT_ARGS.format(tmp=temp)}
    master = os.environ.get("SPARK_MASTER", "")
    if master.startswith("local"):          # a cluster elsewhere is out of the sandbox's reach
        env["SPARK_MASTER"] = master
    return env


def _environment(lab: Lab, workdir: str, scratch: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON") or sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, env.get("PYTHONPATH", "")) if p)
    env["KAFKA_LAB_PRODUCED"] = write_producer_log(lab, os.path.join(workdir, "produced.json"))
    env["KAFKA_LAB_WORKDIR"] = scratch
    temp = os.path.join(workdir, "tmp")                       # Spark's and Python's temp files: removed with it
    os.makedirs(temp)
    env["TMPDIR"] = env["SPARK_LOCAL_DIRS"] = temp
    env.setdefault("PYSPARK_SUBMIT_ARGS", SUBMIT_ARGS.format(tmp=temp))
    for name in ("JPY_PARENT_PID", "KAFKA_LAB_SECRET_KEY"):   # the server's secret is none of the notebook's business
        env.pop(name, None)
    return env


def _grade(question: Question, execution: execute.Execution, lab: Lab) -> QuestionResult:
    answers: dict[str, Any] = {}
    for name in question.answers:
        problem = _missing(name, execution)
        if problem:
            return _zero(question, problem)
        answers[name] = execution.answers[name]["value"]
    try:
        ok, feedback = question.check(answers, lab)
    except AnswerError as error:
        ok, feedback = False, str(error)
    except Exception as error:  # noqa: BLE001 (a checker bug must not cost the others their grades)
        ok, feedback = False, (f"the checker could not read your answer ({type(error).__name__}); "
                               "see the README for its shape")
    return QuestionResult(question.id, question.title, question.points if ok else 0, question.points,
                          bool(ok), feedback)


def _missing(name: str, execution: execute.Execution) -> str:
    """Why the answer `name` cannot be graded ("" when it can)."""
    entry = execution.answers.get(name)
    stopped = f" (the notebook stopped: {execution.error.headline()})" if execution.error else ""
    if entry is None:
        return execution.export_error or f"`{name}` could not be read{stopped}"
    if not entry["defined"]:
        return f"`{name}` is not defined{stopped}"
    if "error" in entry:
        return f"`{name}` {entry['error']}"
    if entry["value"] is None:
        return f"`{name}` is still None: fill in its `# YOUR CODE HERE` cell{stopped}"
    return ""


def _zero(question: Question, feedback: str) -> QuestionResult:
    return QuestionResult(question.id, question.title, 0, question.points, False, feedback)


def _read(notebook: str | Path | nbformat.NotebookNode) -> tuple[nbformat.NotebookNode | None, str]:
    if isinstance(notebook, nbformat.NotebookNode):
        return notebook, ""
    try:
        nb = nbformat.read(str(notebook), as_version=4)
    except FileNotFoundError:
        raise GradeError(f"No such notebook: {notebook}") from None
    except Exception as error:  # noqa: BLE001 (bad JSON, not a notebook: reported in the grade)
        return None, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return nb, ""


def _exercise(exercise: Exercise | str | None, nb: nbformat.NotebookNode | None) -> Exercise:
    if isinstance(exercise, Exercise):
        return exercise
    name = exercise or (exercise_of(nb) if nb is not None else None)
    if not name:
        raise GradeError("Which exercise is this? The notebook does not say (metadata kafka_lab.exercise): "
                         "name it with --exercise")
    try:
        return find_exercise(name)
    except ExerciseError as error:
        raise GradeError(str(error)) from None
