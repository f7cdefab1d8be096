"""Every socket URL a page opens names the lab session it drives (`?session=<id>`), so that a
balancer can hash on it and put all of a session's sockets — a class watching a broadcast — on
the session's worker (docs/placement.md, "Balancing by session"; deploy/nginx.conf)."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from lab.models import LabSession
from lessons.models import LessonProgress
from tests.classroom.broadcast_helpers import account, broadcast

pytestmark = pytest.mark.django_db


def _ws_url(html: str) -> str:
    return re.search(r'data-ws-url="([^"]+)"', html).group(1).replace("&amp;", "&")


def test_the_lab_page_the_lesson_page_and_the_watch_page_name_their_session() -> None:
    client = Client()
    made = client.post("/lab/new", {"name": "mine", "brokers": 3, "seed": 1, "truncation": "leader-epoch"})
    session = LabSession.objects.get()
    assert made.status_code == 302
    assert _ws_url(client.get(f"/lab/{session.id}/").content.decode()).endswith(
        f"/ws/lab/{session.id}/?session={session.id}")

    lesson_page = client.get("/lessons/").content.decode()
    slug = re.search(r'href="/lessons/([-a-z0-9]+)/"', lesson_page).group(1)
    url = _ws_url(client.get(f"/lessons/{slug}/").content.decode())
    lesson_session = LessonProgress.objects.get(slug=slug).session_id
    assert url.endswith(f"/ws/lessons/{slug}/{lesson_session}/?session={lesson_session}")

    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    url = _ws_url(Client().get(f"/watch/{row.token}/").content.decode())
    assert url.endswith(f"/ws/watch/{row.token}/?session={row.session_id}")
