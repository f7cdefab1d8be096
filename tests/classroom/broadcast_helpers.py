"""Helpers of the broadcast tests: accounts signed in by a session cookie, a broadcast, and its
sockets driven through the real ASGI application (origin check, session and auth middleware,
routing), in a worker thread with its own event loop as tests/lab/test_consumer.py does."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from classroom.models import Broadcast, Cohort, Membership
from lab.asgi import application
from lab.models import LabSession
from lab.owners import user_key
from tests.lab.test_consumer import lab_settings, run_async  # noqa: F401 (the socket tests' own: a thread's loop, a data dir)

WAIT_S = 20


def account(username: str, *, instructor: bool = False) -> Any:
    user = get_user_model().objects.create_user(username, password="pw-for-tests-only")
    if instructor:
        user.user_permissions.add(*Permission.objects.filter(
            content_type__app_label="classroom", codename__in=["broadcast_session", "teach_cohort"]))
    return get_user_model().objects.get(pk=user.pk)   # fresh: no cached permissions


def cookie_of(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def broadcast(instructor: Any, *, link_open: bool = True, cohort: Cohort | None = None, **shape: Any) -> Broadcast:
    session = LabSession.objects.create(owner=user_key(instructor), name="demo", **{"brokers": 3, "seed": 3, **shape})
    return Broadcast.objects.create(session=session, instructor=instructor, cohort=cohort, link_open=link_open)


def cohort_of(instructor: Any, *members: Any) -> Cohort:
    cohort = Cohort.objects.create(name="class", created_by=instructor)
    cohort.instructors.add(instructor)
    for member in members:
        Membership.objects.create(cohort=cohort, user=member)
    return cohort


def socket(path: str, cookie: str | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1")]
    if cookie:
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    return WebsocketCommunicator(application, path, headers=headers)


class Tab:
    """One socket and every message it was sent, as text and as JSON."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.texts: list[str] = []
        self.closed_with: int | None = None

    async def receive(self) -> dict[str, Any]:
        output = await self.communicator.receive_output(timeout=WAIT_S)
        if output["type"] == "websocket.close":
            self.closed_with = output.get("code")
            return {"type": "<closed>", "code": self.closed_with}
        self.texts.append(output["text"])
        return json.loads(output["text"])

    async def until(self, kind: str, *, limit: int = 1000, where: Callable[[dict], bool] = lambda m: True) -> dict:
        for _ in range(limit):
            received = await self.receive()
            if received["type"] == kind and where(received):
                return received
            if received["type"] == "<closed>":
                raise AssertionError(f"closed ({received['code']}) before a {kind} message")
        raise AssertionError(f"no {kind} message within {limit} messages")

    async def send(self, **fields: Any) -> None:
        await self.communicator.send_json_to({"v": 2, **fields})

    async def drain(self, quiet_s: float = 0.4) -> list[dict]:
        out = []
        while not await self.communicator.receive_nothing(timeout=quiet_s):
            received = await self.receive()
            out.append(received)
            if received["type"] == "<closed>":
                break
        return out

    async def close(self) -> None:
        await self.communicator.disconnect()


async def open_tab(path: str, cookie: str | None, *, hello: bool = True) -> Tab:
    communicator = socket(path, cookie)
    connected, _ = await communicator.connect(timeout=WAIT_S)
    assert connected
    tab = Tab(communicator)
    if hello:
        first = await tab.receive()
        assert first["type"] == "hello", first
    return tab


def watch_path(row: Broadcast) -> str:
    return f"/ws/watch/{row.token}/"


def lab_path(row: Broadcast) -> str:
    return f"/ws/lab/{row.session_id}/"
