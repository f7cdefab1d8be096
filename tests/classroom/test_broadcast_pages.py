"""The broadcast pages: an instructor starts and stops a broadcast; the watch page is read-only for
watchers and carries the panel (and the playlist's notes) for the instructor alone."""
from __future__ import annotations

import pytest
from django.test import Client

from classroom.models import Broadcast, Playlist
from lab.models import LabSession
from lab.owners import user_key
from tests.classroom.accounts_helpers import signed_in
from tests.classroom.broadcast_helpers import account, broadcast, cohort_of

pytestmark = pytest.mark.django_db


def test_an_instructor_starts_a_broadcast_of_their_session_and_stops_it() -> None:
    teacher, ann = account("teacher", instructor=True), account("ann")
    cohort = cohort_of(teacher, ann)
    session = LabSession.objects.create(owner=user_key(teacher), name="demo")
    client = signed_in(teacher)

    started = client.post("/broadcasts/", {"session": str(session.id), "cohort": str(cohort.pk), "link": "on"})

    row = Broadcast.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/watch/{row.token}/"
    assert row.live and row.cohort == cohort and row.link_open and len(row.token) >= 32
    page = client.get(started["Location"]).content.decode()
    assert "data-broadcast-panel" in page and f"/ws/watch/{row.token}/" in page
    assert "Live now: teacher" in signed_in(ann).get("/watch/").content.decode()
    assert client.post(f"/broadcasts/{row.pk}/stop").status_code == 302
    assert not Broadcast.objects.get().live
    assert Client().get(f"/watch/{row.token}/").status_code == 404


@pytest.mark.parametrize("form, error", [
    ({"session": "not-a-uuid", "link": "on"}, "Choose one of your lab sessions"),
    ({"session": "{other}", "link": "on"}, "Choose one of your lab sessions"),
    ({"session": "{mine}", "cohort": "999"}, "Choose a cohort you teach"),
    ({"session": "{mine}"}, "Share it with a cohort, by its watch link, or both"),
    ({"session": "{mine}", "link": "on", "playlist": "x"}, "Choose one of your playlists"),
])
def test_the_start_form_names_what_is_wrong(form: dict, error: str) -> None:
    teacher = account("teacher", instructor=True)
    mine = LabSession.objects.create(owner=user_key(teacher), name="mine")
    other = LabSession.objects.create(owner="someone-else", name="theirs")
    data = {k: v.format(mine=mine.id, other=other.id) for k, v in form.items()}

    answer = signed_in(teacher).post("/broadcasts/", data)

    assert answer.status_code == 400 and error in answer.content.decode()
    assert not Broadcast.objects.exists()


def test_broadcasting_is_for_instructors() -> None:
    learner = account("ann")
    assert signed_in(learner).get("/broadcasts/").status_code == 403
    assert signed_in(learner).get("/playlists/").status_code == 403
    assert Client().get("/broadcasts/").status_code == 302


def test_the_watch_page_is_read_only_and_never_holds_the_notes() -> None:
    teacher, ann, bob = account("teacher", instructor=True), account("ann"), account("bob")
    row = broadcast(teacher, link_open=False, cohort=cohort_of(teacher, ann))
    row.playlist = Playlist.objects.create(owner=teacher, name="demo", items=[
        {"title": "First", "scenario": "kip101-data-loss", "inline": None, "notes": "SECRET-NOTE-1"}])
    row.save()

    watcher_page = signed_in(ann).get(f"/watch/{row.token}/").content.decode()
    teacher_page = signed_in(teacher).get(f"/watch/{row.token}/").content.decode()

    assert 'data-role="watcher"' in watcher_page and "data-broadcast-panel" not in watcher_page
    assert "SECRET-NOTE-1" not in watcher_page and "SECRET-NOTE-1" in teacher_page
    assert "Watching teacher" in watcher_page
    assert signed_in(bob).get(f"/watch/{row.token}/").status_code == 403
    assert Client().get(f"/watch/{row.token}/").status_code == 302   # sign in first
    assert Client().get("/watch/no-such-token/").status_code == 404


def test_live_now_lists_a_members_cohort_broadcasts_only() -> None:
    from django.template import Context, Template
    from django.test import RequestFactory

    teacher, ann, bob = account("teacher", instructor=True), account("ann"), account("bob")
    row = broadcast(teacher, link_open=False, cohort=cohort_of(teacher, ann))
    ended = broadcast(teacher, cohort=row.cohort)
    Broadcast.objects.filter(pk=ended.pk).update(ended="2026-01-01T00:00:00Z")
    page = Template("{% load broadcast_tags %}{% live_broadcasts %}")

    def shown(user) -> str:
        request = RequestFactory().get("/")
        request.user = user
        return page.render(Context({"request": request}))

    assert f"/watch/{row.token}/" in shown(ann) and "Live now: teacher" in shown(ann)
    assert f"/watch/{ended.token}/" not in shown(ann)
    assert "Live now" not in shown(bob)
