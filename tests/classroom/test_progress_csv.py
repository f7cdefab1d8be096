"""An instructor downloads the cohort's table as CSV: the same numbers, one row per learner, and
no text cell a spreadsheet would run as a formula."""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from tests.classroom.progress_helpers import BEATS, EXERCISE, LESSON, cohort, graded, instructor, progress, user

pytestmark = pytest.mark.django_db

FORMULAS = ['=HYPERLINK("http://evil.example","click")', "+cmd", "@x", "-2+3"]


def _csv(client, group) -> list[dict[str, str]]:
    response = client.get(reverse("classroom:cohort_progress_csv", args=[group.pk]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8"))))


def test_the_csv_holds_the_tables_numbers(client):
    teacher = instructor()
    ann, bob = user("ann", first_name="Ann"), user("bob")
    group = cohort("Kafka 101", teacher, [ann, bob])
    progress(ann, seen=BEATS, finished=True, answers={"create": {"first": "five", "right": True},
                                                      "offsets": {"first": 1, "right": False}})
    graded(ann, 2, minutes_ago=3)
    graded(ann, 5, minutes_ago=2)
    client.force_login(teacher)
    rows = _csv(client, group)
    assert [r["learner"] for r in rows] == ["ann", "bob"]
    ann_row, bob_row = rows
    assert ann_row["name"] == "Ann" and bob_row["name"] == "bob"
    assert [ann_row[f"{LESSON}: {k}"] for k in ("seen", "beats", "right first try", "answered", "questions", "finished")] \
        == ["6", "6", "1", "2", "4", "1"]
    assert [bob_row[f"{LESSON}: {k}"] for k in ("seen", "answered", "finished")] == ["0", "0", "0"]
    assert [ann_row[f"{EXERCISE}: {k}"] for k in ("best", "max", "attempts")] == ["5", "6", "2"]
    assert [bob_row[f"{EXERCISE}: {k}"] for k in ("best", "attempts")] == ["", "0"]
    assert (ann_row["lessons finished"], ann_row["right first try"], ann_row["score"]) == ("1", "1", "5")


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_learner_named_like_a_formula_comes_out_as_text(client, formula):
    teacher = instructor()
    learner = user(formula, first_name=formula)
    group = cohort("Kafka 101", teacher, [learner])
    client.force_login(teacher)
    (row,) = _csv(client, group)
    assert row["learner"] == "'" + formula
    assert row["name"].startswith("'" + formula)
    for value in row.values():
        assert not value.startswith(("=", "+", "@", "\t", "\r")), value
        assert not (value.startswith("-") and not value.lstrip("-").isdigit()), value


def test_the_csv_is_for_the_cohorts_instructor_only(client):
    teacher = instructor()
    ann = user("ann")
    group = cohort("Kafka 101", teacher, [ann])
    client.force_login(ann)
    assert client.get(reverse("classroom:cohort_progress_csv", args=[group.pk])).status_code == 403
    client.force_login(user("stranger"))
    assert client.get(reverse("classroom:cohort_progress_csv", args=[group.pk])).status_code == 404
