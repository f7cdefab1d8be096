"""An instructor copies a learner's lab session into their own sessions: the same shape and
command log, the clock where the learner's stood; rebuilt, it is the learner's session at that
step. Nobody else may copy it, and the learner's session is not touched."""
from __future__ import annotations

import pytest
from django.test import Client

from lab.models import LabCommand, LabSession
from lab.owners import user_key
from lab.registry import build_host, journal_writer
from tests.classroom.accounts_helpers import signed_in
from tests.classroom.broadcast_helpers import account, cohort_of
from tests.lab.test_consumer import lab_settings  # noqa: F401 (autouse: a data dir per test)

pytestmark = pytest.mark.django_db(transaction=True)


def _learners_session(learner) -> LabSession:
    """A session the learner played: a topic, a few records, the clock moved on."""
    session = LabSession.objects.create(owner=user_key(learner), name="my cluster", brokers=3, seed=7)
    host, _ = build_host(session.id, writer=journal_writer)
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "values": ["a", "b", "c"], "acks": "all"})
    host.step_until("high_watermark_advanced")
    journal_writer.flush()
    LabSession.objects.filter(pk=session.pk).update(position_step=host.steps, position_time_ms=host.now_ms)
    return LabSession.objects.get(pk=session.pk)


def _copy_url(cohort, learner, session) -> str:
    return f"/cohorts/{cohort.pk}/learners/{learner.pk}/sessions/{session.id}/copy"


def test_the_instructor_gets_an_identical_copy_and_the_learners_session_is_untouched() -> None:
    teacher, lea = account("teacher", instructor=True), account("lea")
    cohort = cohort_of(teacher, lea)
    original = _learners_session(lea)
    commands_before = list(LabCommand.objects.filter(session=original).values_list("index", "command", "at_step"))

    page = signed_in(teacher).get(f"/cohorts/{cohort.pk}/learners/{lea.pk}/").content.decode()
    assert f'action="{_copy_url(cohort, lea, original)}"' in page
    response = signed_in(teacher).post(_copy_url(cohort, lea, original))

    copy = LabSession.objects.exclude(pk=original.pk).get()
    assert response.status_code == 302 and response["Location"] == f"/lab/{copy.id}/"
    assert copy.owner == user_key(teacher) and copy.name == "lea: my cluster"
    assert (copy.brokers, copy.seed, copy.truncation) == (original.brokers, original.seed, original.truncation)
    assert copy.position_step == original.position_step
    assert list(LabCommand.objects.filter(session=original).values_list("index", "command", "at_step")) == commands_before
    theirs, _ = build_host(original.id)
    mine, _ = build_host(copy.id)
    assert mine.steps == theirs.steps and mine.snapshot() == theirs.snapshot()


def test_nobody_else_may_copy_it() -> None:
    teacher, lea, other_teacher, bo = (account("teacher", instructor=True), account("lea"),
                                       account("other", instructor=True), account("bo"))
    cohort = cohort_of(teacher, lea)
    cohort_of(other_teacher, bo)
    session = _learners_session(lea)
    url = _copy_url(cohort, lea, session)
    assert signed_in(other_teacher).post(url).status_code == 404      # not their cohort
    assert signed_in(bo).post(url).status_code == 404                 # a learner
    assert Client().post(url).status_code == 302                      # anonymous: sign in first
    assert signed_in(teacher).get(url).status_code == 405             # a change is a POST
    mine = LabSession.objects.create(owner=user_key(teacher), name="mine")
    assert signed_in(teacher).post(_copy_url(cohort, lea, mine)).status_code == 404   # not the learner's
    assert LabSession.objects.count() == 2
