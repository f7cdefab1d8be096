"""The journal writer: command rows and clock positions reach the database in order, in batches,
written with plain SQL (lab.registry._insert_commands / _update_positions)."""
from __future__ import annotations

import pytest

from lab.host import CommandRecord
from lab.models import LabCommand, LabSession
from lab.registry import DatabaseJournal, JournalWriter

pytestmark = pytest.mark.django_db(transaction=True)  # the writer's thread has its own connection


def test_rows_and_positions_of_several_sessions_are_written_in_one_batch() -> None:
    first = LabSession.objects.create(owner="v", name="a")
    second = LabSession.objects.create(owner="v", name="b")
    before = LabSession.objects.get(pk=first.pk).updated
    writer = JournalWriter()
    journals = {first.pk: DatabaseJournal(first.pk, 1, writer), second.pk: DatabaseJournal(second.pk, 1, writer)}
    args = {"topic": "t", "values": ["é", "ü", None], "headers": {"h": "v"}, "acks": "all"}
    for index in range(3):
        for session_id, journal in journals.items():
            record = CommandRecord(index, 10 * index, 100 * index, "produce", args, index,
                                   "boom" if index == 2 else None, "NOT_LEADER_OR_FOLLOWER" if index == 2 else None)
            journal.appended(record, step=10 * index + 1, time_ms=100 * index + 5)
    journals[second.pk].positioned(99, 9999)
    writer.flush()

    for session_id in journals:
        rows = list(LabCommand.objects.filter(session_id=session_id).order_by("index"))
        assert [(r.index, r.at_step, r.at_time_ms, r.tag) for r in rows] == [(0, 0, 0, 0), (1, 10, 100, 1),
                                                                             (2, 20, 200, 2)]
        assert all(r.args == args and r.command == "produce" and r.generation == 1 for r in rows)
        assert [(r.error, r.kafka_error) for r in rows][2] == ("boom", "NOT_LEADER_OR_FOLLOWER")
        assert rows[0].error == "" and rows[0].kafka_error == ""
    a, b = LabSession.objects.get(pk=first.pk), LabSession.objects.get(pk=second.pk)
    assert (a.position_step, a.position_time_ms) == (21, 205)   # the last position of each session
    assert (b.position_step, b.position_time_ms) == (99, 9999)
    assert a.updated > before


def test_a_failed_batch_does_not_stop_the_writer() -> None:
    session = LabSession.objects.create(owner="v", name="a")
    writer = JournalWriter()
    journal = DatabaseJournal(session.pk, 1, writer)
    record = CommandRecord(0, 0, 0, "create_topic", {"topic": "t"}, 0)
    journal.appended(record, step=1, time_ms=1)
    writer.flush()
    journal.appended(record, step=2, time_ms=2)  # the same index again: the unique constraint refuses it
    writer.flush()
    journal.appended(CommandRecord(1, 1, 1, "produce", {"topic": "t"}, 1), step=3, time_ms=3)
    writer.flush()

    assert list(LabCommand.objects.values_list("index", flat=True).order_by("index")) == [0, 1]
    assert LabSession.objects.get(pk=session.pk).position_step == 3
