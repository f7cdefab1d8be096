"""The grader runs a notebook in a fresh kernel against a seeded lab and grades it, whatever the
notebook does: broken notebooks get a clear error and zeros, never a crash of the grader.

These tests use a toy exercise (no Spark: a kernel starts in about a second); the real exercises'
notebooks run in test_exercises.py. `manage.py grade --json` runs against a real exercise with a
notebook that fails in its first cell, so no Spark starts there either.
"""
from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from django.core.management import CommandError, call_command

from spark_exercises.grader import GradeError, execute, grade_notebook
from spark_exercises.grader.exercises import Exercise
from spark_exercises.models import Submission

SCENARIO = {"name": "toy", "cluster": {"brokers": 1, "seed": 1}, "steps": [
    {"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 1}},
    {"produce": {"topic": "t", "values": ["a", "b", "c"], "acks": 1}},
    {"run_until_idle": {}}]}

CHECKS = '''
from spark_exercises.grader.checks import CORRECT, AnswerError, Question

def _count(answers, lab):
    return answers["count"] == len(lab.records("t")), "the topic has another number of records"

def _types(answers, lab):
    expected = {0: "zero", (1, 2): [b"x".decode(), 3], "s": [1, 2]}
    return answers["typed"] == expected, repr(answers["typed"])

def _strict(answers, lab):
    raise AnswerError("`strict` should be a list of offsets")

def _buggy(answers, lab):
    return 1 / 0

def _lab(answers, lab):
    ok = answers["seen"] == {"partitions": 1, "produced": 3, "url": True}
    return ok, repr(answers["seen"])

QUESTIONS = [
    Question("count", "Records in t", 2, ("count",), _count),
    Question("typed", "Values keep their types", 1, ("typed",), _types),
    Question("strict", "A shape error", 1, ("strict",), _strict),
    Question("buggy", "A checker bug", 1, ("buggy",), _buggy),
    Question("lab", "The notebook sees the lab", 1, ("seen",), _lab),
]
'''

GOOD_CELLS = [
    "count = 3",
    "import datetime\ntyped = {0: 'zero', (1, 2): (b'x', 3), 's': {2, 1}}\nstrict = [1]\nbuggy = 1",
    textwrap.dedent('''
        import json, os, urllib.request
        base = f"{os.environ['KAFKA_LAB_URL']}/api/v1/sessions/{os.environ['KAFKA_LAB_SESSION']}"
        with urllib.request.urlopen(base + "/partitions?topics=t") as answer:
            partitions = json.loads(answer.read())["partitions"]
        with open(os.environ["KAFKA_LAB_PRODUCED"]) as f:
            produced = json.load(f)
        seen = {"partitions": len(partitions), "produced": len(produced),
                "url": os.environ["KAFKA_LAB_URL"].startswith("http://127.0.0.1:")}
    '''),
]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Exercise:
    path = tmp_path_factory.mktemp("exercises") / "00-toy"
    path.mkdir()
    (path / "README.md").write_text("# 00 · A toy exercise\n")
    (path / "scenario.json").write_text(json.dumps(SCENARIO))
    (path / "checks.py").write_text(CHECKS)
    return Exercise("00-toy", path)


def notebook(*cells: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


def by_id(report) -> dict:
    return {q.id: q for q in report.questions}


def test_a_correct_notebook_gets_its_points_and_the_report_ends_with_the_score(toy: Exercise) -> None:
    report = grade_notebook(notebook(*GOOD_CELLS), toy)

    questions = by_id(report)
    assert report.error is None
    assert [questions[q].ok for q in ("count", "typed", "lab")] == [True, True, True], report.to_text()
    assert (report.score, report.max_score) == (4, 6)
    lines = report.to_text().splitlines()
    assert lines[-1] == "score: 4/6"
    assert len(lines) == 1 + len(report.questions) + 1          # header, one line per question, score
    assert lines[1].startswith("[2/2] count")


def test_answers_keep_their_types_across_the_kernel_boundary(toy: Exercise) -> None:
    report = grade_notebook(notebook(*GOOD_CELLS), toy)

    assert by_id(report)["typed"].ok, by_id(report)["typed"].feedback


def test_a_shape_error_in_an_answer_is_the_feedback(toy: Exercise) -> None:
    report = grade_notebook(notebook(*GOOD_CELLS), toy)

    assert by_id(report)["strict"].feedback == "`strict` should be a list of offsets"
    assert by_id(report)["strict"].points == 0


def test_a_checker_bug_costs_only_its_own_question_and_shows_no_code(toy: Exercise) -> None:
    report = grade_notebook(notebook(*GOOD_CELLS), toy)

    buggy = by_id(report)["buggy"]
    assert buggy.points == 0 and "ZeroDivisionError" in buggy.feedback and "1 / 0" not in buggy.feedback
    assert by_id(report)["count"].ok


def test_a_syntax_error_is_reported_and_later_answers_get_zero(toy: Exercise) -> None:
    report = grade_notebook(notebook("count = 3", "typed = (", "seen = 1"), toy)

    assert report.error["kind"] == "exception" and report.error["cell"] == 2
    assert report.error["headline"].startswith("code cell 2 raised SyntaxError")
    assert "error: code cell 2 raised SyntaxError" in report.to_text()
    assert by_id(report)["count"].ok                             # defined before the failure: graded
    assert "`typed` is not defined" in by_id(report)["typed"].feedback
    assert "code cell 2 raised SyntaxError" in by_id(report)["typed"].feedback


def test_an_exception_stops_the_run_as_run_all_does(toy: Exercise) -> None:
    report = grade_notebook(notebook("count = 3", "raise KeyError('partition')", "typed = 1"), toy)

    assert report.error["headline"] == "code cell 2 raised KeyError: 'partition'"
    assert "KeyError" in report.error["detail"]
    assert by_id(report)["count"].ok and not by_id(report)["typed"].ok


def test_an_error_wrapping_a_python_traceback_is_reported_by_its_cause(toy: Exercise) -> None:
    """As Spark reports a failing UDF or data source: the innermost Python error says what went wrong."""
    cell = ("raise RuntimeError('[PYTHON_DATA_SOURCE_ERROR] Failed: Traceback (most recent call last):\\n'\n"
            "                   '  File \"x.py\", line 1\\nmy.mod.LabSourceError: UNKNOWN_SESSION: no such session')")
    report = grade_notebook(notebook(cell), toy)

    assert report.error["headline"] == "code cell 1 raised RuntimeError (LabSourceError: UNKNOWN_SESSION: no such session)"


def test_a_kernel_that_dies_is_reported_and_nothing_is_graded(toy: Exercise) -> None:
    report = grade_notebook(notebook("count = 3", "import os\nos._exit(3)"), toy)

    assert report.error["kind"] == "kernel-died" and report.error["cell"] == 2
    assert report.error["headline"] == "the kernel died while running code cell 2"
    assert report.score == 0
    assert all("kernel was dead" in q.feedback for q in report.questions)


def test_a_kernel_that_cannot_start_is_reported(toy: Exercise, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_spec(workdir: str, argv=None) -> str:
        kernels = os.path.join(workdir, "kernels")
        os.makedirs(os.path.join(kernels, execute.KERNEL_NAME))
        with open(os.path.join(kernels, execute.KERNEL_NAME, "kernel.json"), "w") as f:
            json.dump({"argv": ["/nonexistent/python", "-f", "{connection_file}"], "display_name": "x",
                       "language": "python"}, f)
        return kernels
    monkeypatch.setattr(execute, "_kernel_spec_dir", broken_spec)

    report = grade_notebook(notebook("count = 3"), toy)

    assert report.error["kind"] == "kernel-start"
    assert report.error["headline"].startswith("the kernel could not start")
    assert report.score == 0


def test_a_cell_that_runs_too_long_is_stopped_and_reported(toy: Exercise) -> None:
    started = time.monotonic()
    report = grade_notebook(notebook("count = 3", "import time\ntime.sleep(60)", "typed = 1"), toy, cell_timeout=2)

    assert time.monotonic() - started < 30
    assert report.error["kind"] == "timeout"
    assert report.error["headline"] == "code cell 2 did not finish within 2 s"
    assert by_id(report)["count"].ok                             # the kernel was interrupted, then read


def test_an_answer_left_none_scores_zero_and_says_which_cell_to_fill(toy: Exercise) -> None:
    report = grade_notebook(notebook("count = None\ntyped = None\nstrict = None\nbuggy = None\nseen = None"), toy)

    assert report.error is None and report.score == 0
    assert by_id(report)["count"].feedback == "`count` is still None: fill in its `# YOUR CODE HERE` cell"


def test_an_answer_the_grader_cannot_read_scores_zero_with_a_reason(toy: Exercise) -> None:
    report = grade_notebook(notebook("count = object()"), toy)

    assert "cannot be read by the grader" in by_id(report)["count"].feedback


def test_an_answer_that_fails_to_export_says_why_in_one_line(toy: Exercise) -> None:
    cell = "class Odd:\n    def isoformat(self):\n        raise RuntimeError('boom\\nand more')\ncount = Odd()"
    report = grade_notebook(notebook(cell), toy)

    assert by_id(report)["count"].feedback == "`count` could not be read (RuntimeError: boom)"


def test_a_file_that_is_not_a_notebook_is_reported(toy: Exercise, tmp_path: Path) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_text("{ not json")

    report = grade_notebook(path, toy)

    assert report.error["kind"] == "invalid-notebook" and report.error["headline"].startswith("not a notebook")
    assert report.score == 0 and report.to_text().endswith(f"score: 0/{report.max_score}")


def test_no_process_started_by_the_notebook_outlives_the_grading(toy: Exercise) -> None:
    cell = "import subprocess\nchild = subprocess.Popen(['sleep', '317'])\ncount = 3"   # in the sandbox's PID namespace

    grade_notebook(notebook(cell), toy)

    time.sleep(0.5)
    assert not _processes_running(b"sleep\x00317\x00"), "the notebook's child process is still running"


def _processes_running(cmdline: bytes) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and Path(f"/proc/{entry.name}/cmdline").read_bytes() == cmdline:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_the_grader_refuses_what_it_cannot_do(toy: Exercise, tmp_path: Path) -> None:
    with pytest.raises(GradeError, match="Which exercise"):
        grade_notebook(notebook("count = 3"))
    with pytest.raises(GradeError, match="No exercise"):
        grade_notebook(notebook("count = 3"), "99-nothing")
    with pytest.raises(GradeError, match="both the lab URL and the lab session"):
        grade_notebook(notebook("count = 3"), toy, lab_url="http://127.0.0.1:1")
    with pytest.raises(GradeError, match="only unsandboxed"):
        grade_notebook(notebook("count = 3"), toy, lab_url="http://127.0.0.1:1", lab_session="s")
    with pytest.raises(GradeError, match="No such notebook"):
        grade_notebook(tmp_path / "missing.ipynb", toy)


# -- manage.py grade ------------------------------------------------------------------------
@pytest.fixture
def broken_notebook(tmp_path: Path) -> Path:
    """A notebook of exercise 05 that fails in its first cell (no Spark starts)."""
    nb = notebook("latest = (")
    nb.metadata["kafka_lab"] = {"exercise": "05-compacted-view"}
    path = tmp_path / "mine.ipynb"
    nbformat.write(nb, str(path))
    return path


@pytest.mark.django_db
def test_manage_py_grade_json_prints_the_report_and_records_it(broken_notebook: Path, capsys) -> None:
    call_command("grade", str(broken_notebook), "--json", "--learner", "ana")

    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"exercise", "notebook", "score", "max_score", "questions", "error", "lab", "seconds",
                        "cell_seconds", "submission"}
    assert (out["exercise"], out["notebook"], out["score"], out["max_score"]) == (
        "05-compacted-view", "mine.ipynb", 0, 6)
    assert out["error"]["kind"] == "exception" and out["error"]["headline"].startswith("code cell 1 raised SyntaxError")
    assert [set(q) for q in out["questions"]] == [{"id", "title", "points", "max_points", "ok", "feedback"}] * 3
    assert out["lab"]["url"].startswith("http://127.0.0.1:") and out["lab"]["session"].startswith("grader-")
    submission = Submission.objects.get(pk=out["submission"])
    assert (submission.learner, submission.exercise, submission.score, submission.max_score) == (
        "ana", "05-compacted-view", 0, 6)
    assert len(submission.questions) == 3 and submission.report.endswith("score: 0/6")


@pytest.mark.django_db
def test_manage_py_grade_prints_text_ending_with_the_score(broken_notebook: Path, capsys) -> None:
    call_command("grade", str(broken_notebook), "--exercise", "05", "--no-save")

    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == "score: 0/6" and out[1].startswith("error: code cell 1 raised SyntaxError")
    assert Submission.objects.count() == 0


def test_manage_py_grade_stops_on_usage_errors(broken_notebook: Path, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--lab-url and --lab-session go together"):
        call_command("grade", str(broken_notebook), "--lab-url", "http://127.0.0.1:1", "--no-save")
    with pytest.raises(CommandError, match="No exercise"):
        call_command("grade", str(broken_notebook), "--exercise", "nope", "--no-save")
    with pytest.raises(CommandError, match="No such notebook"):
        call_command("grade", str(tmp_path / "missing.ipynb"), "--no-save")

