"""python manage.py lessons check [--json] [SLUG ...] | lessons list [--json]

`check` plays every lesson (or the named ones) headless from a fresh cluster, computes each
question's answer from the engine and compares it with the answer the lesson's explanation
assumes; it also refuses a malformed lesson file, a hint that names the right answer and a `do`
beat whose stand-in steps do not satisfy its check. Exit status 1 names lesson, beat and question.
`list` prints each lesson: slug, titles (en, zh), the note sections it follows, its scenarios,
its question count.
"""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lessons import catalog, text
from lessons.schema import LessonError, lesson_folders, load


class Command(BaseCommand):
    help = "Check the lessons against the engine (check) or list them (list)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=("check", "list"))
        parser.add_argument("slugs", nargs="*", help="check only these lessons (slug or NN-slug)")
        parser.add_argument("--json", action="store_true", help="one JSON document on stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        folders = _folders(options["slugs"])
        if options["action"] == "list":
            self._list(folders, options["json"])
        else:
            self._check(folders, options["json"])

    def _list(self, folders: list[str], as_json: bool) -> None:
        rows = []
        for folder in folders:
            try:
                lesson = load(folder)
            except LessonError as error:
                raise CommandError(str(error)) from None
            rows.append({"slug": lesson.slug, "order": lesson.order,
                         "title": {"en": lesson.title("en"), "zh": lesson.title("zh")},
                         "follows": list(lesson.follows), "rows": list(lesson.rows),
                         "scenarios": lesson.scenario_names, "beats": len(lesson.beats),
                         "questions": len(lesson.questions),
                         "callouts": [c.id for c in lesson.callouts.values()]})
        if as_json:
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=1))
            return
        for row in rows:
            follows = "; ".join(f"{f['note']} {', '.join(f['sections'])}" for f in row["follows"])
            self.stdout.write(f"{row['order']:02d} {row['slug']}: {row['title']['en']} / {row['title']['zh']} "
                              f"— {row['questions']} questions, scenarios {', '.join(row['scenarios'])}; "
                              f"follows {follows}")

    def _check(self, folders: list[str], as_json: bool) -> None:
        verdicts = [catalog.check_folder(folder) for folder in folders]
        if as_json:
            self.stdout.write(json.dumps([v.to_dict() for v in verdicts], ensure_ascii=False, indent=1))
        else:
            for verdict in verdicts:
                status = "ok" if not verdict.problems else "FAILED"
                self.stdout.write(f"{verdict.lesson}: {verdict.questions} questions: {status}")
                for problem in verdict.problems:
                    self.stdout.write(f"  {text.plain(str(problem))}")
        failed = [v for v in verdicts if v.problems]
        if failed:
            raise CommandError(f"{len(failed)} of {len(verdicts)} lessons disagree with the engine or are broken: "
                               + "; ".join(str(v.problems[0]) for v in failed))


def _folders(slugs: list[str]) -> list[str]:
    folders = lesson_folders()
    if not slugs:
        return folders
    chosen = []
    for slug in slugs:
        match = [f for f in folders if f.rstrip("/").rsplit("/", 1)[-1] in (slug,) or
                 f.rstrip("/").rsplit("/", 1)[-1][3:] == slug]
        if not match:
            raise CommandError(f"no lesson {slug!r}")
        chosen += match
    return chosen
