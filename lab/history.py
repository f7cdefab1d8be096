"""A session's event history, on disk: what the page's event log and charts show after a reload.

The live stream sends each event once; a page opened later (a reload, a second tab, the next day)
asks here for the events before its first frame, a page at a time, newest first. The history
follows the session's line of time: a rewind cuts it at the rewind's event number (what came
after has not happened yet, and will be written again if the clock moves forward through it).

Storage: JSON lines (the events exactly as the stream sent them) in chunk files of about
CHUNK_BYTES under `history/`, named by their first event number. At most MAX_BYTES are kept: the
oldest chunks go first, and `page()` says from which event on history is available.

Reading folds Kafka's bookkeeping away unless asked for: events about internal topics
(`__consumer_offsets`) and network messages are left out, and a `checkpoint_written` line keeps its
user-topic entries with a count of the internal ones (`internal_entries`).
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

CHUNK_BYTES = 1 << 20
MAX_BYTES = 32 << 20
PAGE_MAX = 1000
NETWORK_KINDS = frozenset({"message_sent", "message_dropped"})


@dataclass
class _Chunk:
    first_seq: int
    path: str
    size: int = 0
    next_seq: int = 0     # one past the last event written to it


class History:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._chunks: list[_Chunk] = []
        self._buffer: list[str] = []
        self._buffered = 0
        self._next_seq = 0
        os.makedirs(directory, exist_ok=True)
        self._load()

    # -- writing ------------------------------------------------------------------------------
    def append(self, first_seq: int, texts: list[str]) -> None:
        """Events numbered `first_seq` on, as JSON, in order."""
        if not texts:
            return
        if first_seq != self._next_seq or not self._chunks:
            self._flush()       # a gap (events that were never shown, e.g. a muted replay): a new chunk
            self._new_chunk(first_seq)
        self._buffer.extend(texts)
        self._buffered += sum(len(t) for t in texts)
        self._next_seq = first_seq + len(texts)
        if self._buffered > CHUNK_BYTES // 4:
            self._flush()

    def flush(self) -> None:
        self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        chunk = self._chunks[-1]
        data = ("\n".join(self._buffer) + "\n").encode("utf-8")
        with open(chunk.path, "ab") as f:
            f.write(data)
        chunk.size += len(data)
        chunk.next_seq = self._next_seq
        self._buffer.clear()
        self._buffered = 0
        if chunk.size >= CHUNK_BYTES:
            self._new_chunk(self._next_seq)
        self._trim()

    def _new_chunk(self, first_seq: int) -> None:
        if self._chunks and self._chunks[-1].size == 0:
            os.remove(self._chunks[-1].path) if os.path.exists(self._chunks[-1].path) else None
            self._chunks.pop()
        path = os.path.join(self.directory, f"{first_seq:020d}.jsonl")
        self._chunks.append(_Chunk(first_seq, path, 0, first_seq))
        open(path, "wb").close()

    def _trim(self) -> None:
        while sum(c.size for c in self._chunks) > MAX_BYTES and len(self._chunks) > 1:
            os.remove(self._chunks.pop(0).path)

    def cut_from(self, seq: int) -> None:
        """Forget every event numbered `seq` or later (a rewind, a rebuilt host, a reset)."""
        self._flush()
        while self._chunks and self._chunks[-1].first_seq >= seq:
            os.remove(self._chunks.pop().path)
        if self._chunks and self._chunks[-1].next_seq > seq:
            chunk = self._chunks[-1]
            keep = [line for line in _lines(chunk.path) if _seq_of(line) < seq]
            data = "".join(line + "\n" for line in keep).encode("utf-8")
            with open(chunk.path, "wb") as f:
                f.write(data)
            chunk.size, chunk.next_seq = len(data), seq
        self._next_seq = seq

    def close(self) -> None:
        self._flush()

    def bounds(self) -> dict[str, int]:
        """The events history holds: numbers `first_seq` up to (not including) `next_seq`."""
        first = self._chunks[0].first_seq if self._chunks else self._next_seq
        return {"first_seq": first, "next_seq": self._next_seq}

    def delete(self) -> None:
        self._buffer.clear()
        self._chunks.clear()
        shutil.rmtree(self.directory, ignore_errors=True)

    # -- reading ------------------------------------------------------------------------------
    def page(self, before_seq: int | None = None, limit: int = 200, *, internal: bool = False,
             network: bool = False, kinds: Iterable[str] | None = None) -> dict[str, Any]:
        """The newest `limit` events before `before_seq` (all, if None) that pass the filters,
        oldest first; `more` when older ones (passing or not) exist; `first_seq`: history starts
        there (older events were trimmed)."""
        self._flush()
        limit = max(1, min(int(limit), PAGE_MAX))
        wanted = set(kinds) if kinds else None
        found: list[dict] = []
        more = False
        for chunk in reversed(self._chunks):
            if before_seq is not None and chunk.first_seq >= before_seq:
                continue
            for line in reversed(_lines(chunk.path)):
                event = json.loads(line)
                if before_seq is not None and event["seq"] >= before_seq:
                    continue
                shown = _fold(event, internal=internal, network=network, kinds=wanted)
                if shown is None:
                    continue
                if len(found) == limit:
                    more = True
                    break
                found.append(shown)
            if more:
                break
        found.reverse()
        first = self._chunks[0].first_seq if self._chunks else self._next_seq
        return {"events": found, "more": more, "first_seq": first, "next_seq": self._next_seq}

    def since(self, first_seq: int, limit: int = 100_000) -> list[dict]:
        """Every event numbered `first_seq` or later, oldest first, unfolded (a lesson's question
        reads the beat's events, internal topics and network messages included); at most `limit`."""
        self._flush()
        found: list[dict] = []
        for index, chunk in enumerate(self._chunks):
            following = self._chunks[index + 1].first_seq if index + 1 < len(self._chunks) else None
            if following is not None and following <= first_seq:
                continue
            for line in _lines(chunk.path):
                if _seq_of(line) >= first_seq:
                    found.append(json.loads(line))
                    if len(found) >= limit:
                        return found
        return found

    def _load(self) -> None:
        for name in sorted(os.listdir(self.directory)):
            if not name.endswith(".jsonl") or not name[:-6].isdigit():
                continue
            path = os.path.join(self.directory, name)
            lines = _lines(path)
            chunk = _Chunk(int(name[:-6]), path, os.path.getsize(path),
                           _seq_of(lines[-1]) + 1 if lines else int(name[:-6]))
            self._chunks.append(chunk)
        if self._chunks:
            self._next_seq = self._chunks[-1].next_seq


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except FileNotFoundError:
        return []


def _seq_of(line: str) -> int:
    # Events are written by event_json with "seq" as their first field; read it without parsing all.
    start = line.find('"seq": ') + 7
    end = line.find(",", start)
    try:
        return int(line[start:end])
    except ValueError:
        return json.loads(line)["seq"]


def is_internal_event(event: dict) -> bool:
    topic = event.get("topic")
    return isinstance(topic, str) and topic.startswith("__")


def _fold(event: dict, *, internal: bool, network: bool, kinds: set[str] | None) -> dict | None:
    kind = event.get("kind")
    if kinds is not None and kind not in kinds:
        return None
    if not network and kind in NETWORK_KINDS and (kinds is None or kind not in kinds):
        return None
    if not internal and is_internal_event(event):
        return None
    if not internal and kind == "checkpoint_written":
        entries = event.get("entries") or {}
        user = {k: v for k, v in entries.items() if not k.startswith("__")}
        if len(user) != len(entries):
            event = {**event, "entries": user, "internal_entries": len(entries) - len(user)}
    return event
