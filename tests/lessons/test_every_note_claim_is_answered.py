"""Every claim of the five notes that the coverage map marks wrong, outdated or simplified is
answered by a lesson (in its `rows` or a callout's `rows`), or listed under "Rows left out" in
lessons/README.md with the reason — and nothing is listed there that a lesson answers."""
from __future__ import annotations

import json
import re

from lessons.schema import LESSONS_DIR, lesson_folders, load

FLAGGED = ("wrong", "outdated", "simplified")


def answered_rows() -> set[str]:
    rows: set[str] = set()
    for folder in lesson_folders():
        lesson = load(folder)
        rows |= set(lesson.rows)
        for callout in lesson.callouts.values():
            rows |= set(callout.rows)
    return rows


def left_out_rows() -> set[str]:
    text = open(f"{LESSONS_DIR}/README.md", encoding="utf-8").read()
    section = text.split("## Rows left out", 1)[1]
    return set(re.findall(r"^\| ([A-E]\d{1,2}) \|", section, flags=re.MULTILINE))


def test_the_coverage_map_copy_holds_all_two_hundred_rows() -> None:
    rows = json.load(open(f"{LESSONS_DIR}/coverage.json", encoding="utf-8"))
    assert len(rows) == 200 and len({r["row"] for r in rows}) == 200
    assert {r["verdict"] for r in rows} <= {*FLAGGED, "correct", "off-topic"}


def test_every_flagged_claim_is_answered_by_a_lesson_or_left_out_with_a_reason() -> None:
    rows = json.load(open(f"{LESSONS_DIR}/coverage.json", encoding="utf-8"))
    flagged = {r["row"] for r in rows if r["verdict"] in FLAGGED}
    answered, left_out = answered_rows(), left_out_rows()
    assert flagged - answered == left_out
    assert not (left_out & answered)
    assert len(left_out) <= 10                         # the lessons answer nearly all of the notes' errors
