"""Kafka's compression codecs for record batch v2: ids, names, levels and the bytes each one writes.

A v2 batch compresses its whole record array as one stream (the header stays plain); attributes
bits 0-2 name the codec (CompressionType.java):

    id  name     stream format (what a Java producer writes; the clients' compress/ package)
    0   none     the records as they are
    1   gzip     RFC 1952, one member: GZIPOutputStream's 10-byte header (mtime 0, XFL 0, OS 255),
                 raw deflate at `compression.gzip.level`, CRC-32 and ISIZE little-endian
    2   snappy   snappy-java's SnappyOutputStream framing ("xerial"): the 16-byte header
                 `\\x82SNAPPY\\x00`, version 1, compatible version 1 (int32 big-endian), then per
                 32 KiB of input an int32 big-endian length and one raw snappy block
    3   lz4      the LZ4 frame format as Lz4BlockOutputStream writes it (KafkaLZ4BlockOutputStream
                 before 3.8): magic 0x184D2204, FLG 0x60 (version 1, independent blocks, no
                 checksums, no content size), BD 0x40 (64 KiB blocks), the descriptor checksum
                 byte; each block is an int32 little-endian length (bit 31 set: stored as is,
                 when compressing did not make it smaller) and its bytes; an int32 0 ends the frame
    4   zstd     one standard Zstandard frame at `compression.zstd.level`, streamed as zstd-jni's
                 ZstdOutputStream does (no content size, no checksum)

Levels (KIP-390, Kafka 3.8): gzip 1..9 or -1 (Deflater's default, which is 6); lz4 1..17, default
9, which Kafka compresses with lz4-java's fast compressor and every other level with LZ4HC at that
level; zstd -131072..22, default 3. Snappy has none.

Decoding accepts what any Kafka client writes: gzip's concatenated members, snappy framed or raw
(SnappyInputStream reads both), any valid LZ4 frame, one or more zstd frames.

The codec packages (python-snappy, lz4, zstandard) are runtime dependencies, imported when first
used, as Kafka loads its codec libraries: without one, `CodecUnavailableError` names the package.
`compress`/`decompress` are pure functions of their input; a codec library's own error is wrapped
in `CompressionFormatError`.
"""
from __future__ import annotations

import gzip
import importlib
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Codec ids (attributes bits 0-2) and their names (CompressionType.java).
NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
CODEC_IDS = {name: codec for codec, name in CODEC_NAMES.items()}

# A producer's compression.type takes the codec names; a topic's also takes `uncompressed` (none)
# and `producer` (keep whatever the producer sent): BrokerCompressionType.java.
PRODUCER_COMPRESSION_TYPES = tuple(CODEC_NAMES.values())
TOPIC_PRODUCER = "producer"
TOPIC_UNCOMPRESSED = "uncompressed"
TOPIC_COMPRESSION_TYPES = (TOPIC_UNCOMPRESSED, "zstd", "lz4", "snappy", "gzip", TOPIC_PRODUCER)


@dataclass(frozen=True, slots=True)
class LevelRange:
    """A codec's `compression.<codec>.level` bounds (CompressionType.levelValidator)."""
    config: str
    minimum: int
    maximum: int
    default: int

    def allows(self, level: int) -> bool:
        # gzip's default, -1, sits below its minimum (Deflater.DEFAULT_COMPRESSION)
        return self.minimum <= level <= self.maximum or level == self.default


LEVELS = {
    GZIP: LevelRange("compression.gzip.level", 1, 9, -1),
    LZ4: LevelRange("compression.lz4.level", 1, 17, 9),
    ZSTD: LevelRange("compression.zstd.level", -131072, 22, 3),
}
LEVEL_CONFIGS = tuple(r.config for r in LEVELS.values())


class CompressionFormatError(ValueError):
    """Bytes that do not decompress with the codec their batch names."""


class CodecUnavailableError(ImportError):
    """The Python package a codec needs is not installed."""


def parse_codec(name: object, field: str, error: type[Exception],
                allowed: tuple[str, ...] = PRODUCER_COMPRESSION_TYPES) -> str:
    """`name` checked against `allowed`; `error(...)` naming `field` otherwise (nothing changed)."""
    if not isinstance(name, str) or name not in allowed:
        raise error(f"Invalid value {name!r} for configuration {field}: "
                    f"must be one of {', '.join(allowed)}")
    return name


def check_level(codec: int, level: object, error: type[Exception]) -> int:
    """A codec's level within Kafka's bounds; `error(...)` naming the level's config otherwise."""
    bounds = LEVELS[codec]
    if type(level) is not int or not bounds.allows(level):
        extra = f" or {bounds.default}" if bounds.default < bounds.minimum else ""
        raise error(f"Invalid value {level!r} for configuration {bounds.config}: "
                    f"must be between {bounds.minimum} and {bounds.maximum}{extra}")
    return level


def default_level(codec: int) -> int | None:
    bounds = LEVELS.get(codec)
    return None if bounds is None else bounds.default


# --- compress ----------------------------------------------------------------------------------

def compress(codec: int, data: bytes, level: int | None = None) -> bytes:
    """`data` compressed as a Java producer's stream for `codec` (None level: the codec's default)."""
    if codec == NONE:
        return data
    writer = _WRITERS.get(codec)
    if writer is None:
        raise ValueError(f"unknown compression codec id {codec}")
    if level is None:
        level = default_level(codec)
    return writer(data, level)


# GZIPOutputStream's header: magic, CM deflate, FLG 0, MTIME 0, XFL 0, OS 255 (unknown, JDK 16+).
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
GZIP_TRAILER = struct.Struct("<II")   # CRC-32 of the input, its size mod 2**32
DEFLATE_RAW_WBITS = -15               # Deflater(level, nowrap=true): no zlib wrapper, 32 KiB window
DEFLATE_MEM_LEVEL = 8                 # zlib's DEF_MEM_LEVEL, as the JDK's Deflater uses


def _gzip(data: bytes, level: int | None) -> bytes:
    deflater = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, DEFLATE_RAW_WBITS,
                                DEFLATE_MEM_LEVEL)
    body = deflater.compress(data) + deflater.flush()
    return b"".join((GZIP_HEADER, body, GZIP_TRAILER.pack(zlib.crc32(data), len(data) & 0xFFFFFFFF)))


XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")   # magic, version, compatible version (SnappyCodec)
XERIAL_VERSION = 1
XERIAL_BLOCK_LENGTH = struct.Struct(">i")
XERIAL_BLOCK_SIZE = 32 * 1024            # SnappyOutputStream.DEFAULT_BLOCK_SIZE


def _snappy(data: bytes, level: int | None) -> bytes:
    snappy = _codec_module("snappy", "python-snappy")
    parts = [XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_VERSION)]
    for start in range(0, len(data), XERIAL_BLOCK_SIZE):
        block = snappy.compress(data[start:start + XERIAL_BLOCK_SIZE])
        parts += (XERIAL_BLOCK_LENGTH.pack(len(block)), block)
    return b"".join(parts)


# Lz4BlockOutputStream's frame: magic (little-endian), FLG, BD, then the descriptor checksum
# (second byte of xxHash32 of FLG and BD, seed 0) — fixed, as FLG and BD are.
LZ4_FRAME_HEADER = b"\x04\x22\x4d\x18" + b"\x60\x40" + b"\x82"
LZ4_BLOCK_SIZE = 64 * 1024              # BD 0x40: BLOCKSIZE_64KB
LZ4_BLOCK_LENGTH = struct.Struct("<I")
LZ4_INCOMPRESSIBLE_MASK = 0x80000000    # LZ4_FRAME_INCOMPRESSIBLE_MASK: the block is stored as is
LZ4_END_MARK = LZ4_BLOCK_LENGTH.pack(0)
LZ4_FAST_LEVEL = 9                      # the default: lz4-java's fast compressor, not LZ4HC


def _lz4(data: bytes, level: int | None) -> bytes:
    block_api = _codec_module("lz4.block", "lz4")
    if level is None or level == LZ4_FAST_LEVEL:
        def squeeze(chunk: bytes) -> bytes:
            return block_api.compress(chunk, mode="default", store_size=False)
    else:
        def squeeze(chunk: bytes) -> bytes:
            return block_api.compress(chunk, mode="high_compression", compression=level,
                                      store_size=False)
    parts = [LZ4_FRAME_HEADER]
    for start in range(0, len(data), LZ4_BLOCK_SIZE):
        chunk = data[start:start + LZ4_BLOCK_SIZE]
        block = squeeze(chunk)
        if len(block) >= len(chunk):   # Lz4BlockOutputStream.writeBlock: store an incompressible block
            parts += (LZ4_BLOCK_LENGTH.pack(len(chunk) | LZ4_INCOMPRESSIBLE_MASK), chunk)
        else:
            parts += (LZ4_BLOCK_LENGTH.pack(len(block)), block)
    parts.append(LZ4_END_MARK)
    return b"".join(parts)


def _zstd(data: bytes, level: int | None) -> bytes:
    zstandard = _codec_module("zstandard", "zstandard")
    # A stream (compressobj) rather than one call: the frame then carries no content size, as
    # zstd-jni's ZstdOutputStream writes it.
    stream = zstandard.ZstdCompressor(level=level, write_content_size=False).compressobj()
    return stream.compress(data) + stream.flush()


_WRITERS: dict[int, Callable[[bytes, int | None], bytes]] = {
    GZIP: _gzip, SNAPPY: _snappy, LZ4: _lz4, ZSTD: _zstd}


# --- decompress --------------------------------------------------------------------------------

def decompress(codec: int, data: bytes) -> bytes:
    """The stream `compress` (or any Kafka client) wrote, decompressed.

    CompressionFormatError for bytes the codec rejects; CodecUnavailableError without its package;
    ValueError for an unknown codec id."""
    if codec == NONE:
        return data
    reader = _READERS.get(codec)
    if reader is None:
        raise ValueError(f"unknown compression codec id {codec}")
    try:
        return reader(data)
    except CodecUnavailableError:
        raise
    except Exception as error:  # each codec library raises its own error types
        raise CompressionFormatError(f"{CODEC_NAMES[codec]} data does not decompress ({error!r})") from None


def _gunzip(data: bytes) -> bytes:
    return gzip.decompress(data)   # concatenated members too, as GZIPInputStream reads them


def _unsnappy(data: bytes) -> bytes:
    snappy = _codec_module("snappy", "python-snappy")
    if not data.startswith(XERIAL_MAGIC):   # SnappyInputStream reads an unframed stream as one block
        return snappy.decompress(data)
    blocks = []
    pos = XERIAL_HEADER.size
    while pos < len(data):
        (length,) = XERIAL_BLOCK_LENGTH.unpack_from(data, pos)
        pos += XERIAL_BLOCK_LENGTH.size
        if length < 0 or pos + length > len(data):
            raise ValueError(f"xerial block of {length} bytes at byte {pos} runs past the end")
        blocks.append(snappy.decompress(data[pos:pos + length]))
        pos += length
    return b"".join(blocks)


def _unlz4(data: bytes) -> bytes:
    return _codec_module("lz4.frame", "lz4").decompress(data)


def _unzstd(data: bytes) -> bytes:
    zstandard = _codec_module("zstandard", "zstandard")
    parts, rest = [], data
    while rest:   # ZstdInputStream reads frame after frame
        stream = zstandard.ZstdDecompressor().decompressobj()
        parts.append(stream.decompress(rest))
        if not stream.eof:
            raise ValueError("the zstd frame is truncated")
        rest = stream.unused_data
    return b"".join(parts)


_READERS: dict[int, Callable[[bytes], bytes]] = {
    GZIP: _gunzip, SNAPPY: _unsnappy, LZ4: _unlz4, ZSTD: _unzstd}


def _codec_module(module: str, package: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise CodecUnavailableError(
            f"the Python package {package!r} (module {module!r}) is not installed") from None


__all__ = [
    "NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD", "CODEC_NAMES", "CODEC_IDS", "PRODUCER_COMPRESSION_TYPES",
    "TOPIC_PRODUCER", "TOPIC_UNCOMPRESSED", "TOPIC_COMPRESSION_TYPES", "LevelRange", "LEVELS",
    "LEVEL_CONFIGS", "CompressionFormatError", "CodecUnavailableError", "parse_codec", "check_level",
    "default_level", "compress", "decompress",
]
