"""An owner-side tab sends what waits for its relay in batches: oldest first, at most BATCH_BYTES
of text a layer message, and always at least one event (a frame over the cap goes alone)."""
from __future__ import annotations

from types import SimpleNamespace

from lab.tunnel import BATCH_BYTES, OwnerTab, _LayerTransport


def _waiting(*sizes: int) -> SimpleNamespace:
    transport = _LayerTransport()
    for n, size in enumerate(sizes):
        transport.push({"type": "websocket.send", "text": str(n % 10) * size})
    return SimpleNamespace(transport=transport)


def test_what_fits_goes_in_one_message_oldest_first() -> None:
    tab = _waiting(100, 200, 300)
    batch = OwnerTab._batch(tab)
    assert [len(e["text"]) for e in batch] == [100, 200, 300]
    assert [e["text"][0] for e in batch] == ["0", "1", "2"]


def test_a_batch_stops_before_the_cap() -> None:
    half = BATCH_BYTES // 2
    tab = _waiting(half, half, 10)
    assert [len(e["text"]) for e in OwnerTab._batch(tab)] == [half, half]     # exactly the cap
    tab = _waiting(half, half + 1, 10)
    assert [len(e["text"]) for e in OwnerTab._batch(tab)] == [half]


def test_a_frame_over_the_cap_goes_alone() -> None:
    tab = _waiting(BATCH_BYTES * 2, 10)
    assert [len(e["text"]) for e in OwnerTab._batch(tab)] == [BATCH_BYTES * 2]
