"""One learner's page: their lessons beat by beat, their submissions with the report links the
viewer may follow, and their lab sessions — for their instructor, and for themselves at
/me/progress/."""
from __future__ import annotations

import pytest
from django.urls import reverse

from lab.models import LabSession
from lab.owners import user_key
from tests.classroom.progress_helpers import LESSON, cohort, graded, instructor, progress, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def classroom():
    teacher = instructor()
    ann = user("ann")
    group = cohort("Kafka 101", teacher, [ann])
    progress(ann, seen=["create", "directories"], answers={
        "create": {"first": "five", "right": True}, "directories": {"first": 7, "right": False},
        "offsets": {"first": 4}})
    submission = graded(ann, 4)
    session = LabSession.objects.create(owner=user_key(ann), name="My <own> cluster")
    LabSession.objects.create(owner=user_key(teacher), name="The teacher's demo")
    return {"teacher": teacher, "ann": ann, "cohort": group, "submission": submission, "session": session}


def _beat_rows(html: str) -> dict[str, str]:
    rows = {}
    for chunk in html.split('<tr data-beat="')[1:]:
        beat = chunk.split('"', 1)[0]
        rows[beat] = chunk.split("</tr>", 1)[0]
    return rows


def test_the_instructor_sees_the_learners_lessons_beat_by_beat(client, classroom):
    client.force_login(classroom["teacher"])
    html = client.get(reverse("classroom:cohort_learner", args=[classroom["cohort"].pk, classroom["ann"].pk])).content.decode()
    beats = _beat_rows(html)
    assert list(beats)[:3] == ["create", "directories", "keyed-records"]
    assert 'data-seen="1" data-right="1"' in beats["create"]
    assert "It creates five partitions" in beats["create"]            # a choice by its text
    assert 'data-seen="1" data-right="0"' in beats["directories"] and "<td>7</td>" in beats["directories"]
    assert 'data-seen="0" data-right=""' in beats["offsets"] and "<td>4</td>" in beats["offsets"]
    assert 'data-seen="0" data-right=""' in beats["keyed-records"]
    assert f'data-lesson="{LESSON}"' in html


def test_the_instructor_gets_a_report_link_of_their_own_and_the_sessions_without_one(client, classroom):
    client.force_login(classroom["teacher"])
    group, ann, s = classroom["cohort"], classroom["ann"], classroom["submission"]
    html = client.get(reverse("classroom:cohort_learner", args=[group.pk, ann.pk])).content.decode()
    report = reverse("classroom:cohort_submission", args=[group.pk, ann.pk, s.pk])
    assert f'href="{report}"' in html
    assert reverse("submission_detail", args=[s.pk]) not in html      # the uploader's own page: 404 for others
    assert "My &lt;own&gt; cluster" in html and "The teacher&#x27;s demo" not in html
    assert reverse("session_open", args=[classroom["session"].id]) not in html
    page = client.get(report)
    assert page.status_code == 200 and b"score: 4/6" in page.content


def test_a_learner_reads_their_own_page(client, classroom):
    client.force_login(classroom["ann"])
    response = client.get(reverse("classroom:my_progress"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-beat="create"' in html
    assert f'href="{reverse("submission_detail", args=[classroom["submission"].pk])}"' in html
    assert f'href="{reverse("session_open", args=[classroom["session"].id])}"' in html
    assert client.get(reverse("submission_detail", args=[classroom["submission"].pk])).status_code == 200


def test_a_learner_with_nothing_yet_gets_an_empty_page_not_an_error(client):
    client.force_login(user("new"))
    response = client.get(reverse("classroom:my_progress"))
    assert response.status_code == 200
    assert b"data-beat=" not in response.content and b"data-submission=" not in response.content
