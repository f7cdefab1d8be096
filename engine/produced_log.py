"""What a producer remembers of what it sent: the cluster's one-request producer (Cluster.produce,
produce_batch) and every named producer (engine.clients.producer.Producer).

A real producer keeps nothing once a send is answered: its callback fires and the record is gone.
The lab keeps its sends for the stories told about them (the scenario runner's "produced" list,
the Jepsen checker's acknowledged records, the timers' produce requests still waiting), and a
session producing at its legal rate for an hour would otherwise keep millions of them (every
record's key and value: ~40 MB a minute). So the log keeps:

- the newest `keep` sends (PRODUCED_KEPT), whatever their fate;
- every older send still unanswered (acks 1 or all, no answer yet): a time-out or an answer is
  still to come, and the timers' view pairs each pending request with its record. Their number is
  bounded by what can be in flight (request.timeout.ms × the produce rate);
- a count of every send (`sent`).

`len(log)` is the number of records sent — what Kafka's record-send-total metric counts, and what
the lab's `produced_count` shows — while iterating gives only the records kept (`left_out()` says
how many were forgotten). Iteration is in send order: the older unanswered ones, then the newest.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

PRODUCED_KEPT = 10_000   # ~3.5 MB of sends at most; a scenario or a Jepsen schedule sends far fewer


class ProducedLog:
    def __init__(self, keep: int = PRODUCED_KEPT) -> None:
        self.keep = keep
        self.sent = 0
        self.acked_left_out = 0   # forgotten sends that were acknowledged (for records-acknowledged-total)
        self._newest: deque[Any] = deque()
        self._older_unanswered: deque[Any] = deque()

    def append(self, record: Any) -> None:
        # Every send() comes through here: _waiting(r) is written out inline.
        self.sent += 1
        newest, older = self._newest, self._older_unanswered
        newest.append(record)
        if len(newest) > self.keep:
            old = newest.popleft()
            if old.acked is None and old.acks != 0:
                older.append(old)
            elif old.acked:
                self.acked_left_out += 1
        while older and not ((head := older[0]).acked is None and head.acks != 0):
            if older.popleft().acked:
                self.acked_left_out += 1

    def forget_answered(self) -> None:
        """Let go of the older sends answered since (append does it as sends go on; a producer that
        stops sending after a flush would otherwise hold every send that was in flight). Nothing
        the log shows changes: they were left out already, and their acknowledgements counted."""
        older = self._older_unanswered   # after a flush, every send it held: _waiting(r) is written out inline
        while older and not ((head := older[0]).acked is None and head.acks != 0):
            older.popleft()
            if head.acked:
                self.acked_left_out += 1

    def __len__(self) -> int:
        """Records sent (all of them, kept or not)."""
        return self.sent

    def __iter__(self) -> Iterator[Any]:
        yield from (r for r in self._older_unanswered if _waiting(r))
        yield from self._newest

    def __reversed__(self) -> Iterator[Any]:
        yield from reversed(self._newest)
        yield from (r for r in reversed(self._older_unanswered) if _waiting(r))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, ProducedLog)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, so unhashable (the data model's idiom; typeshed has no None)

    def left_out(self) -> int:
        """Sends no longer kept: answered, and older than the newest `keep`."""
        return self.sent - len(self._newest) - sum(1 for r in self._older_unanswered if _waiting(r))


def _waiting(record: Any) -> bool:
    return record.acked is None and record.acks != 0
