"""An application around a consumer, running inside the simulation: the poll loop of a real service.

    while running:
        records = consumer.poll()              # every poll_interval_ms
        commit "before": commit, then process  -> a crash mid-batch loses records (at most once)
        process each record (processing_ms each, into the sink)
        commit "after": commit what was processed -> a crash before the commit repeats them
                                                     (at least once)
    commit "auto": enable.auto.commit does it inside poll (positions of the previous poll)

Processing takes virtual time, so a slow application really does miss max.poll.interval.ms,
and a crash really does stop it half way. Records handed to the application are the consumer's
"consumed"; records fully processed are the application's "processed" (and the sink's rows).
"""
from __future__ import annotations

from engine import events as ev
from engine.clients.consumer_state import ConsumedRecord, KafkaClientError
from engine.clients.sinks import ListSink

COMMIT_MODES = ("auto", "before", "after", "none")


class PollLoop:
    def __init__(self, consumer, *, poll_interval_ms: int = 100, processing_ms: int = 0, commit: str = "auto",
                 sink: ListSink | None = None, max_records: int | None = None) -> None:
        if commit not in COMMIT_MODES:
            raise ValueError(f"commit must be one of {', '.join(COMMIT_MODES)}, not {commit!r}")
        self.consumer = consumer
        self.poll_interval_ms = int(poll_interval_ms)
        self.processing_ms = int(processing_ms)
        self.commit = commit
        self.sink = sink
        self.max_records = max_records
        self.running = False
        self.processed: list[dict] = []
        self.errors: list[str] = []
        consumer.app = self
        if consumer.apps is not None:   # the facade's applications by name (Cluster.apps)
            consumer.apps[consumer.name] = self

    def start(self) -> PollLoop:
        if not self.running:
            self.running = True
            self._next(0)
        return self

    def stop(self) -> None:
        """The application stops calling poll (it hangs, or its process is gone)."""
        self.running = False

    def _next(self, delay_ms: int) -> None:
        if self.running:
            self.consumer.schedule(delay_ms, self._tick, "application poll loop")

    def _tick(self) -> None:
        if not self.running or self.consumer.closed:
            return
        try:
            records = self.consumer.poll_once(self.max_records)
        except KafkaClientError as error:
            self.errors.append(error.kafka_name)
            self._next(self.poll_interval_ms)
            return
        if not records:
            self._next(self.poll_interval_ms)
        elif self.commit == "before":
            self._commit(records, lambda: self._process(records, 0))
        else:
            self._process(records, 0)

    def _process(self, records: list[ConsumedRecord], index: int) -> None:
        if not self.running:
            return
        if index == len(records):
            if self.commit == "after":
                self._commit(records, lambda: self._next(self.poll_interval_ms))
            else:
                self._next(self.poll_interval_ms)
            return
        if self.processing_ms > 0:
            self.consumer.schedule(self.processing_ms, lambda: self._handle(records, index), "processing a record")
        else:
            self._handle(records, index)

    def _handle(self, records: list[ConsumedRecord], index: int) -> None:
        if not self.running:
            return
        record = records[index]
        row = record.to_dict()
        fresh = True
        if self.sink is not None:
            fresh = self.sink.write(record, by=self.consumer.name)
        self.processed.append(row)
        self.consumer.publish(ev.RecordsProcessed(consumer=self.consumer.name, group=self.consumer.group_id,
                                                  records=[row], duplicates=[] if fresh else [row]))
        self._process(records, index + 1)

    def _commit(self, records: list[ConsumedRecord], then) -> None:
        """Commit the offsets after `records` (the next offset to read, per partition), then go on."""
        offsets = {}
        for record in records:
            offsets[record.topic_partition] = (record.offset + 1, record.leader_epoch)

        def done(error: str | None, _offsets: dict) -> None:
            if error is not None:
                self.errors.append(error)
            if self.running:
                then()
        try:
            self.consumer.commit_async(offsets, done)
        except KafkaClientError as error:
            self.errors.append(error.kafka_name)
            then()
