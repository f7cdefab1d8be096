"""Claiming a session (lab.placement) on the suite's database: one owner, never taken from a live
worker, taken from a dead one — also when several workers claim at the same moment."""
from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from lab import placement
from lab.models import LabSession, LabWorker

pytestmark = pytest.mark.django_db(transaction=True)


def _session() -> uuid.UUID:
    return LabSession.objects.create(owner="visitor", name="placed").pk


def _alive(name: str) -> None:
    placement.beat(name, f"specific.{name}!x", timezone.now())


def test_the_first_claim_places_the_session_on_the_claimant() -> None:
    session_id = _session()
    _alive("a")
    assert placement.claim(session_id, "a") == "a"
    assert placement.owner_of(session_id) == "a"


def test_a_live_workers_session_is_never_taken() -> None:
    session_id = _session()
    _alive("a")
    _alive("b")
    placement.claim(session_id, "a")
    assert placement.claim(session_id, "b") == "a"


def test_a_dead_workers_session_is_taken_over() -> None:
    session_id = _session()
    _alive("a")
    placement.claim(session_id, "a")
    LabWorker.objects.filter(name="a").update(heartbeat_at=timezone.now() - timedelta(seconds=10))
    _alive("b")
    assert placement.claim(session_id, "b") == "b"
    assert placement.channel_of("a") is None and placement.channel_of("b") == "specific.b!x"


def test_a_worker_that_left_loses_its_sessions_at_once() -> None:
    session_id = _session()
    _alive("a")
    placement.claim(session_id, "a")
    placement.leave("a")
    _alive("b")
    assert placement.claim(session_id, "b") == "b"


def test_a_session_that_does_not_exist_is_not_placed() -> None:
    _alive("a")
    assert placement.claim(uuid.uuid4(), "a") is None


def test_a_released_session_goes_to_the_next_claimant() -> None:
    session_id = _session()
    _alive("a")
    _alive("b")
    placement.claim(session_id, "a")
    placement.release(session_id, "a")
    assert placement.claim(session_id, "b") == "b"


def _claim_at_once(session_id, names: list[str]) -> dict[str, str | None]:
    """Every worker of `names` claims the session at the same moment, each on its own connection."""
    start, answers = threading.Barrier(len(names)), {}

    def claim(name: str) -> None:
        try:
            start.wait()
            answers[name] = placement.claim(session_id, name)
        finally:
            connection.close()
    threads = [threading.Thread(target=claim, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.parametrize("round_", range(3))
def test_workers_claiming_at_once_agree_on_one_owner(round_: int) -> None:
    session_id = _session()
    names = [f"w{n}" for n in range(8)]
    for name in names:
        _alive(name)
    answers = _claim_at_once(session_id, names)

    owners = set(answers.values())
    assert len(answers) == len(names) and len(owners) == 1 and owners <= set(names), answers
    assert placement.owner_of(session_id) in owners


def test_workers_taking_over_a_dead_workers_session_at_once_agree_on_one_owner() -> None:
    session_id = _session()
    _alive("old")
    placement.claim(session_id, "old")
    LabWorker.objects.filter(name="old").update(heartbeat_at=timezone.now() - timedelta(seconds=10))
    names = [f"w{n}" for n in range(8)]
    for name in names:
        _alive(name)
    answers = _claim_at_once(session_id, names)

    owners = set(answers.values())
    assert len(owners) == 1 and owners <= set(names), answers
