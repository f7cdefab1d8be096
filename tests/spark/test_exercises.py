"""The exercises keep their contract, every solution gets full marks, every starter gets none.

Running the notebooks is what takes time (a kernel and a SparkSession each, 15-45 s): the
`graded` fixture grades the notebooks the selected tests need, two at a time (the machine has two
cores; most of a run is JVM and Python start-up), once per test session. The other tests read
the exercise files or call the checks directly, without Spark.
"""
from __future__ import annotations

import json
import re
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor

import nbformat
import pytest

from spark_exercises.grader import grade_notebook
from spark_exercises.grader.checks import AnswerError
from spark_exercises.grader.exercises import FILES, exercise_of, list_exercises
from spark_exercises.grader.lab import played

EXERCISES = list_exercises()
SLUGS = [e.slug for e in EXERCISES]
CJK = re.compile(r"[\u4e00-\u9fff]")
PARALLEL_NOTEBOOKS = 2


def cells(exercise, which: str) -> list:
    return nbformat.read(str(exercise.path / f"{which}.ipynb"), as_version=4).cells


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


@pytest.fixture(scope="module")
def labs():
    """Each exercise's scenario played once (the checks' truth), for the tests that call checks."""
    out, contexts = {}, []
    for exercise in EXERCISES:
        context = played(exercise.scenario(), tempfile.mkdtemp(prefix=f"lab-{exercise.number}-"))
        out[exercise.slug] = context.__enter__()
        contexts.append(context)
    yield out
    for context in contexts:
        context.__exit__(None, None, None)


# -- the contract -------------------------------------------------------------------------------
def test_there_are_at_least_six_exercises_each_with_the_same_files() -> None:
    assert len(EXERCISES) >= 6
    for exercise in EXERCISES:
        present = sorted(p.name for p in exercise.path.iterdir() if not p.name.startswith((".", "__")))
        assert present == sorted(FILES), exercise.slug


@pytest.mark.parametrize("slug", SLUGS)
def test_starter_and_solution_differ_only_in_their_answer_cells(slug: str) -> None:
    exercise = EXERCISES[SLUGS.index(slug)]
    starter, solution = cells(exercise, "starter"), cells(exercise, "solution")

    assert len(starter) == len(solution)
    for mine, theirs in zip(starter, solution):
        assert (mine.cell_type, tags(mine)) == (theirs.cell_type, tags(theirs))
        if "answer" not in tags(mine):
            assert mine.source == theirs.source
    answers = [c for c in starter if "answer" in tags(c)]
    assert answers and all("# YOUR CODE HERE" in c.source for c in answers)
    assert all(not c.get("outputs") for c in starter + solution if c.cell_type == "code")


@pytest.mark.parametrize("slug", SLUGS)
def test_the_notebooks_name_their_exercise_and_never_assume_local_mode(slug: str) -> None:
    exercise = EXERCISES[SLUGS.index(slug)]
    for which in ("starter", "solution"):
        nb = nbformat.read(str(exercise.path / f"{which}.ipynb"), as_version=4)
        nbformat.validate(nb)
        assert exercise_of(nb) == slug
        setup = next(c.source for c in nb.cells if "setup" in tags(c))
        assert '.master(SPARK_MASTER)' in setup and 'os.environ.get("SPARK_MASTER", "local[*]")' in setup
        assert 'os.environ.get("KAFKA_LAB_URL"' in setup and 'os.environ.get("KAFKA_LAB_SESSION"' in setup
        assert "local[" not in "".join(c.source for c in nb.cells if "setup" not in tags(c))


@pytest.mark.parametrize("slug", SLUGS)
def test_the_readme_names_the_lesson_and_has_a_chinese_summary(slug: str) -> None:
    readme = EXERCISES[SLUGS.index(slug)].readme()

    assert readme.startswith(f"# {slug[:2]} · ")
    assert "**Lesson.**" in readme
    summary = readme.split("## 中文摘要", 1)
    assert len(summary) == 2 and len(CJK.findall(summary[1])) > 40


@pytest.mark.parametrize("slug", SLUGS)
def test_every_answer_of_the_checks_is_set_in_the_starter(slug: str) -> None:
    exercise = EXERCISES[SLUGS.index(slug)]
    starter = "\n".join(c.source for c in cells(exercise, "starter") if "answer" in tags(c))
    for name in exercise.answer_names:
        assert re.search(rf"^{name} = None$", starter, re.M), f"{slug}: the starter does not set {name} = None"


@pytest.mark.parametrize("slug", SLUGS)
def test_wrong_answers_get_feedback_not_a_crash(slug: str, labs) -> None:
    exercise = EXERCISES[SLUGS.index(slug)]
    for question in exercise.questions:
        for wrong in ([], {}, [{"nothing": 1}], "text", 7):
            try:
                ok, feedback = question.check({name: wrong for name in question.answers}, labs[slug])
            except AnswerError as error:
                ok, feedback = False, str(error)
            assert ok is False and feedback, (question.id, wrong)


def test_the_checks_hint_at_the_lesson_without_giving_the_answer(labs) -> None:
    by_slug = {e.slug: {q.id: q for q in e.questions} for e in EXERCISES}
    lost = by_slug["04-unclean-election-loss"]["lost"]
    ok, feedback = lost.check({"lost": ["payment-026"]}, labs["04-unclean-election-loss"])
    assert not ok and "never acknowledged" in feedback and "payment-0" not in feedback

    latest = by_slug["05-compacted-view"]["latest"]
    ok, feedback = latest.check({"latest": {"user-3": None}}, labs["05-compacted-view"])
    assert not ok and "tombstone" in feedback

    no_dup = by_slug["06-checkpoint-restart"]["no-duplicate"]
    rows = [{"partition": r["partition"], "offset": r["offset"]}
            for r in labs["06-checkpoint-restart"].records("transfers")]
    ok, feedback = no_dup.check({"sink_rows": rows + rows[:20], "restarted_batch": 2}, labs["06-checkpoint-restart"])
    assert not ok and feedback.startswith("20 records are in the sink more than once")
    ok, _ = no_dup.check({"sink_rows": rows, "restarted_batch": 2}, labs["06-checkpoint-restart"])
    assert ok

    counts = by_slug["01-partition-routing"]["partition-counts"]
    ok, feedback = counts.check({"partition_counts": {0: 1, 1: 1, 2: 1, 3: 1}}, labs["01-partition-routing"])
    assert not ok and feedback == "4 partition(s) with a wrong count"


# -- the notebooks, graded ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def graded(request: pytest.FixtureRequest):
    """{(slug, "solution" | "starter"): Future of its Report}, for the notebooks selected tests need."""
    wanted = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if item.module is request.module and spec and "notebook" in spec.params:
            wanted.append((spec.params["slug"], spec.params["notebook"]))
    pool = ThreadPoolExecutor(PARALLEL_NOTEBOOKS, thread_name_prefix="grade-test")
    futures: dict[tuple[str, str], Future] = {}
    for slug, which in sorted(set(wanted), key=lambda k: (k[1] != "solution", k[0])):
        path = EXERCISES[SLUGS.index(slug)].path / f"{which}.ipynb"
        futures[(slug, which)] = pool.submit(grade_notebook, path)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.spark
@pytest.mark.parametrize("notebook", ["solution"])
@pytest.mark.parametrize("slug", SLUGS)
def test_every_solution_gets_full_marks(slug: str, notebook: str, graded) -> None:
    report = graded[(slug, notebook)].result()

    assert report.error is None, report.to_text(with_detail=True)
    assert report.score == report.max_score > 0, report.to_text()
    assert report.to_text().splitlines()[-1] == f"score: {report.max_score}/{report.max_score}"


@pytest.mark.spark
@pytest.mark.parametrize("notebook", ["starter"])
@pytest.mark.parametrize("slug", SLUGS)
def test_every_starter_gets_no_marks_without_crashing_the_grader(slug: str, notebook: str, graded) -> None:
    report = graded[(slug, notebook)].result()

    assert report.error is None, report.to_text(with_detail=True)   # the starter runs to the end...
    assert report.score == 0                                          # ...and answers nothing
    assert all("is still None" in q.feedback for q in report.questions), report.to_text()
    assert json.loads(json.dumps(report.to_dict()))["score"] == 0
