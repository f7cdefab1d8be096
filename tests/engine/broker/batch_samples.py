"""Record batches both decoders' tests feed them (test_columnar.py: Arrow columns; test_batch_records.py:
objects): a batch of every record form, a fresh CRC over damaged bytes, and fetches drawn by hypothesis."""
from __future__ import annotations

import struct

from hypothesis import strategies as st

from engine.storage import record_batch as rb
from engine.storage.crc import crc32c
from engine.storage.record_batch import encode_batch

T0 = 1_700_000_000_000  # a fixed "now" in milliseconds

MIXED = [(None, b"no key"), (b"k1", None), (b"", b""),
         (b"k2", b"v" * 300, T0 + 7, [("trace", b"\x01"), ("émoji-🦀", None), ("empty", b"")]),
         (b"big", b"w" * 20_000, T0 - 5)]   # a three-byte value length, a negative timestamp delta


def with_fresh_crc(batch: bytes | bytearray) -> bytes:
    """`batch` with its CRC computed again, so damage behind it reaches the record parsers."""
    out = bytearray(batch)
    struct.pack_into(">I", out, rb.CRC_OFFSET, crc32c(bytes(out[rb.ATTRIBUTES_OFFSET:])))
    return bytes(out)


header_lists = st.lists(st.tuples(st.text(max_size=4), st.none() | st.binary(max_size=4)), max_size=3)
records = st.tuples(st.none() | st.binary(max_size=12), st.none() | st.binary(max_size=300),
                    st.integers(-10**6, 10**6), header_lists)


@st.composite
def fetches(draw) -> tuple[bytes, int, int]:
    """Whole batches back to back (plain or gzip, some control, some LogAppendTime, any leader epoch),
    and a range of offsets over (or around) them."""
    parts, base = [], draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(1, 4))):
        batch_records = [(k, v, T0 + dt, h) for k, v, dt, h in draw(st.lists(records, min_size=1, max_size=8))]
        control = draw(st.booleans()) and draw(st.booleans())
        batch = bytearray(encode_batch(
            batch_records, base_offset=base, base_timestamp=T0, compression=draw(st.sampled_from([rb.NONE, rb.GZIP])),
            producer_id=1 if control else -1, is_transactional=control, is_control=control,
            partition_leader_epoch=draw(st.integers(-1, 3))))
        if draw(st.booleans()):
            rb.set_log_append_time_in_place(batch, 0, len(batch), T0 + draw(st.integers(0, 10**6)))
        parts.append(bytes(batch))
        base += len(batch_records) + draw(st.integers(0, 3))
    first = draw(st.integers(-1, base + 1))
    return b"".join(parts), first, draw(st.integers(first, base + 2))
