"""Who may read a cohort's progress: its instructors and admins; a learner of the cohort gets 403
(their page is /me/progress/), anyone else 404; an anonymous visitor is sent to sign in."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.classroom.progress_helpers import admin, cohort, graded, instructor, progress, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def classroom():
    teacher, other_teacher = instructor("teacher"), instructor("other")
    ann, bob = user("ann"), user("bob")
    mine = cohort("Mine", teacher, [ann])
    theirs = cohort("Theirs", other_teacher, [bob])
    progress(ann, finished=True)
    submission = graded(ann, 4)
    return {"teacher": teacher, "other": other_teacher, "ann": ann, "bob": bob, "mine": mine, "theirs": theirs,
            "submission": submission}


def _urls(c) -> list[str]:
    group, ann = c["mine"], c["ann"]
    return [reverse("classroom:cohort_progress", args=[group.pk]),
            reverse("classroom:cohort_progress_csv", args=[group.pk]),
            reverse("classroom:cohort_learner", args=[group.pk, ann.pk]),
            reverse("classroom:cohort_submission", args=[group.pk, ann.pk, c["submission"].pk])]


def test_the_cohorts_instructor_reads_every_page_of_it(client, classroom):
    client.force_login(classroom["teacher"])
    for url in _urls(classroom):
        assert client.get(url).status_code == 200, url


def test_an_admin_reads_every_cohort(client, classroom):
    client.force_login(admin())
    for url in _urls(classroom):
        assert client.get(url).status_code == 200, url


def test_a_learner_of_the_cohort_gets_403_and_a_link_to_their_own_page(client, classroom):
    client.force_login(classroom["ann"])
    for url in _urls(classroom):
        response = client.get(url)
        assert response.status_code == 403, url
        assert reverse("classroom:my_progress").encode() in response.content


def test_someone_outside_the_cohort_gets_404(client, classroom):
    for who in ("bob", "other"):
        client.force_login(classroom[who])
        for url in _urls(classroom):
            assert client.get(url).status_code == 404, (who, url)


def test_a_learner_of_another_cohort_is_not_in_this_ones_pages(client, classroom):
    client.force_login(classroom["teacher"])
    group, bob = classroom["mine"], classroom["bob"]
    assert client.get(reverse("classroom:cohort_learner", args=[group.pk, bob.pk])).status_code == 404
    theirs = graded(bob, 2)
    url = reverse("classroom:cohort_submission", args=[group.pk, classroom["ann"].pk, theirs.pk])
    assert client.get(url).status_code == 404             # not ann's submission


def test_no_such_cohort_is_a_404(client, classroom):
    client.force_login(classroom["teacher"])
    assert client.get(reverse("classroom:cohort_progress", args=[999999])).status_code == 404


def test_an_anonymous_visitor_is_sent_to_sign_in(client, classroom, settings):
    settings.LOGIN_URL = "/sign-in-here/"
    for url in _urls(classroom) + [reverse("classroom:my_progress")]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/sign-in-here/?next="), url


def test_the_sign_in_page_is_the_accounts_own(client, classroom):
    response = client.get(reverse("classroom:cohort_progress", args=[classroom["mine"].pk]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("classroom:login") + "?next=")


def test_the_pages_answer_only_get(client, classroom):
    client.force_login(classroom["teacher"])
    for url in _urls(classroom) + [reverse("classroom:my_progress")]:
        assert client.post(url).status_code == 405, url


def test_ids_beyond_any_row_are_a_404_not_an_error(client, classroom):
    client.force_login(classroom["teacher"])
    huge = 10**30
    group, ann = classroom["mine"].pk, classroom["ann"].pk
    for url in (f"/cohorts/{huge}/progress/", f"/cohorts/{huge}/progress.csv", f"/cohorts/{group}/learners/{huge}/",
                f"/cohorts/{group}/learners/{ann}/submissions/{huge}/"):
        assert client.get(url).status_code == 404, url
