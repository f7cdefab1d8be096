"""The ways in: a cohort's live broadcast is listed on the landing page and on /cohorts/ for its
members (and nobody else), the cohort pages link the progress tables, the header the learner's own."""
from __future__ import annotations

import pytest
from django.test import Client

from tests.classroom.accounts_helpers import signed_in
from tests.classroom.broadcast_helpers import account, broadcast, cohort_of

pytestmark = pytest.mark.django_db


def test_a_cohorts_live_broadcast_is_shown_to_its_members_only() -> None:
    teacher, lea, other = account("teacher", instructor=True), account("lea"), account("other")
    live = broadcast(teacher, cohort=cohort_of(teacher, lea), link_open=False)
    watch = f'href="/watch/{live.token}/"'
    for page in ("/", "/cohorts/"):
        assert watch in signed_in(lea).get(page).content.decode(), page
        assert watch not in signed_in(other).get(page).content.decode(), page
    assert "data-live-now-list" not in Client().get("/").content.decode()   # an anonymous visitor: none
    live.ended = live.started
    live.save()
    assert watch not in signed_in(lea).get("/").content.decode()      # ended: gone


def test_cohort_pages_link_the_progress_tables_and_the_header_the_learners_own() -> None:
    teacher, lea = account("teacher", instructor=True), account("lea")
    cohort = cohort_of(teacher, lea)
    mine = signed_in(teacher)
    assert f'href="/cohorts/{cohort.pk}/progress/"' in mine.get("/cohorts/").content.decode()
    page = mine.get(f"/cohorts/{cohort.pk}/").content.decode()
    assert f'href="/cohorts/{cohort.pk}/progress/"' in page
    assert f'href="/cohorts/{cohort.pk}/learners/{lea.pk}/"' in page
    assert mine.get(f"/cohorts/{cohort.pk}/learners/{lea.pk}/").status_code == 200
    assert 'href="/me/progress/" data-account-name' in signed_in(lea).get("/").content.decode()


def test_ids_too_big_for_the_database_are_a_404() -> None:
    teacher = account("teacher", instructor=True)
    client = signed_in(teacher)
    for url in (f"/cohorts/{10**25}/", f"/broadcasts/{10**25}/stop", f"/playlists/{10**25}/"):
        assert client.get(url).status_code in (404, 405), url


def test_an_instructor_reaches_the_broadcast_form_from_their_session_and_their_cohorts() -> None:
    teacher, lea = account("teacher", instructor=True), account("lea")
    from lab.models import LabSession
    from lab.owners import user_key
    mine = LabSession.objects.create(owner=user_key(teacher), name="demo")
    theirs = LabSession.objects.create(owner=user_key(lea), name="lea's")
    page = signed_in(teacher).get(f"/lab/{mine.id}/").content.decode()
    assert f'href="/broadcasts/?session={mine.id}" data-link="broadcast"' in page
    assert 'data-link="broadcast"' not in signed_in(lea).get(f"/lab/{theirs.id}/").content.decode()
    form = signed_in(teacher).get(f"/broadcasts/?session={mine.id}").content.decode()
    assert f'<option value="{mine.id}" selected>' in form
    cohorts = signed_in(teacher).get("/cohorts/").content.decode()
    assert 'data-link="broadcasts"' in cohorts and 'data-link="playlists"' in cohorts
    assert 'data-link="broadcasts"' not in signed_in(lea).get("/cohorts/").content.decode()
