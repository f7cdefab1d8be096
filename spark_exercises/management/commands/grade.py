"""python manage.py grade NOTEBOOK [--exercise SLUG] [--unsandboxed [--lab-url URL --lab-session ID]] [--json] [--learner NAME]

Grades a notebook (spark_exercises.grader) and records the result in the gradebook. The notebook
runs in the grader's sandbox, which plays the exercise's scenario and serves it inside itself.
--unsandboxed runs it with your own rights and environment instead (your own notebook only); only
then can it read a lab session with --lab-url (where the learner loaded the exercise's
scenario.json); the checks still compare with the scenario played locally.

Prints the report (last line `score: X/Y`) or, with --json, one JSON object: the report's
fields (see grader/report.py) plus "submission" (the gradebook row's id, or null with --no-save).
A broken notebook is a graded notebook (exit status 0); a missing file or an unknown exercise
is a usage error (exit status 1).
"""
from __future__ import annotations

import getpass
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from spark_exercises.grader import GradeError, grade_notebook
from spark_exercises.grader.grade import CELL_TIMEOUT_S, TOTAL_TIMEOUT_S
from spark_exercises.models import Submission


class Command(BaseCommand):
    help = "Grade a PySpark exercise notebook against a seeded lab and record it in the gradebook."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("notebook", help="the .ipynb file to grade")
        parser.add_argument("--exercise", help="NN-slug, NN or slug (default: the notebook's metadata)")
        parser.add_argument("--unsandboxed", action="store_true",
                            help="run the notebook with your own rights, outside the sandbox (trusted notebooks only)")
        parser.add_argument("--lab-url", help="read this lab instead of a locally served one (with --lab-session; "
                                              "needs --unsandboxed)")
        parser.add_argument("--lab-session", help="the lab session id that has the exercise's scenario loaded")
        parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
        parser.add_argument("--learner", help="who to record the grade for (default: your user name)")
        parser.add_argument("--no-save", action="store_true", help="do not record the grade in the gradebook")
        parser.add_argument("--cell-timeout", type=float, default=CELL_TIMEOUT_S, help="seconds per cell")
        parser.add_argument("--timeout", type=float, default=TOTAL_TIMEOUT_S, help="seconds for the whole notebook")
        parser.add_argument("--detail", action="store_true", help="print the failing cell's traceback too")

    def handle(self, *args: Any, **options: Any) -> None:
        if bool(options["lab_url"]) != bool(options["lab_session"]):
            raise CommandError("--lab-url and --lab-session go together")
        try:
            report = grade_notebook(options["notebook"], options["exercise"], lab_url=options["lab_url"],
                                    lab_session=options["lab_session"], cell_timeout=options["cell_timeout"],
                                    total_timeout=options["timeout"], sandboxed=not options["unsandboxed"])
        except GradeError as error:
            raise CommandError(str(error)) from None
        submission = None if options["no_save"] else self._save(report, options)
        if options["json"]:
            self.stdout.write(json.dumps({**report.to_dict(), "submission": submission}, ensure_ascii=False))
        else:
            self.stdout.write(report.to_text(with_detail=options["detail"]))

    def _save(self, report, options: dict[str, Any]) -> int | None:
        learner = (options["learner"] or getpass.getuser()).replace("/", "-")
        try:
            submission = Submission(learner=learner[:100], exercise=report.exercise,
                                    notebook_name=report.notebook[:200])
            submission.record(report)
        except DatabaseError as error:
            self.stderr.write(f"warning: the grade was not recorded in the gradebook ({error}); "
                              "run `python manage.py migrate`")
            return None
        return submission.pk
