"""CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of a v2 record batch.

Backed by the `crc32c` package's C implementation (hardware-accelerated where the CPU allows).
The batch CRC covers the bytes from `attributes` to the end of the batch; see record_batch.py.
"""
from __future__ import annotations

from crc32c import crc32c as _crc32c

BytesLike = bytes | bytearray | memoryview

crc32c = _crc32c
"""crc32c(data, value=0): CRC-32C of `data` as an unsigned 32-bit int; pass an earlier result as
`value` to go on. The package's C function itself: a Python wrapper around it cost a call per batch."""
