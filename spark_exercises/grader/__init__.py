"""The autograder: runs a learner's notebook against a seeded lab and grades it question by question.

    from spark_exercises.grader import grade_notebook
    report = grade_notebook("mine.ipynb", "01")    # -> Report: .score, .max_score, .to_text(), .to_dict()

Django-free (the gradebook and `manage.py grade` sit on top of it). Modules: exercises.py (the
exercise folders), lab.py (the scenario played and served), execute.py (the notebook in a fresh
kernel), kernel_side.py (runs in that kernel: answers out as JSON), checks.py (what an exercise's
checks.py provides), report.py (the report), grade.py (all of it in order).
"""
from __future__ import annotations

from spark_exercises.grader.exercises import Exercise, ExerciseError, find_exercise, list_exercises
from spark_exercises.grader.grade import GradeError, grade_notebook
from spark_exercises.grader.report import QuestionResult, Report

__all__ = ["Exercise", "ExerciseError", "GradeError", "QuestionResult", "Report", "find_exercise",
           "grade_notebook", "list_exercises"]
