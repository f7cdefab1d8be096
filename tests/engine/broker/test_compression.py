"""engine/storage/compression.py: each codec's stream as Kafka's Java producer writes it, levels, errors."""
from __future__ import annotations

import gzip
import random
import struct
import sys
import zlib

import lz4.frame
import pytest
import snappy
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.storage import compression as c
from engine.storage import record_batch as rb

CODECS = [c.GZIP, c.SNAPPY, c.LZ4, c.ZSTD]
IDS = [c.CODEC_NAMES[codec] for codec in CODECS]
TEXT = b"the same words again and again " * 4000          # 124 000 bytes: several blocks of any codec


def test_codec_ids_and_names_are_kafkas() -> None:
    assert c.CODEC_NAMES == {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
    assert c.TOPIC_COMPRESSION_TYPES == ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
    assert {r.config: (r.minimum, r.maximum, r.default) for r in c.LEVELS.values()} == {
        "compression.gzip.level": (1, 9, -1), "compression.lz4.level": (1, 17, 9),
        "compression.zstd.level": (-131072, 22, 3)}


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=5000) | st.integers(min_value=0, max_value=300_000).map(lambda n: b"ab" * n),
       codec=st.sampled_from(CODECS))
def test_any_bytes_round_trip_through_any_codec(data: bytes, codec: int) -> None:
    assert c.decompress(codec, c.compress(codec, data)) == data


@pytest.mark.parametrize("codec", CODECS, ids=IDS)
def test_each_codec_is_deterministic_and_compresses_repetitive_text(codec: int) -> None:
    out = c.compress(codec, TEXT)
    assert out == c.compress(codec, TEXT)
    assert len(out) < len(TEXT) // 10


def test_gzip_is_one_member_with_javas_header_and_level_6_by_default() -> None:
    out = c.compress(c.GZIP, TEXT)
    assert out[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"   # GZIPOutputStream: mtime 0, OS 255
    assert gzip.decompress(out) == TEXT
    assert struct.unpack("<II", out[-8:]) == (zlib.crc32(TEXT), len(TEXT))
    assert out == c.compress(c.GZIP, TEXT, 6) != c.compress(c.GZIP, TEXT, 1)
    assert out[10:-8] == zlib.compress(TEXT, 6, wbits=-15)     # raw deflate, Deflater(6, nowrap)


def test_snappy_uses_snappy_javas_framing_in_32_kib_blocks() -> None:
    out = c.compress(c.SNAPPY, TEXT)
    assert out[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, blocks = 16, []
    while pos < len(out):
        (length,) = struct.unpack_from(">i", out, pos)
        blocks.append(snappy.decompress(out[pos + 4:pos + 4 + length]))
        pos += 4 + length
    assert [len(b) for b in blocks] == [32768, 32768, 32768, len(TEXT) - 3 * 32768]
    assert b"".join(blocks) == TEXT


def test_snappy_reads_an_unframed_stream_too() -> None:
    assert c.decompress(c.SNAPPY, snappy.compress(TEXT)) == TEXT   # SnappyInputStream does


def test_lz4_is_the_frame_lz4_block_output_stream_writes() -> None:
    out = c.compress(c.LZ4, TEXT)
    reference = lz4.frame.compress(b"", block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                   content_checksum=False, store_size=False)
    assert out[:7] == reference[:7] == b"\x04\x22\x4d\x18\x60\x40\x82"   # its descriptor checksum too
    assert out[-4:] == b"\x00\x00\x00\x00"
    assert lz4.frame.decompress(out) == TEXT
    assert lz4.frame.get_frame_info(out)["block_size"] == 64 * 1024


def test_lz4_stores_a_block_that_does_not_compress() -> None:
    noise = random.Random(7).randbytes(3000)
    out = c.compress(c.LZ4, noise)
    (length,) = struct.unpack_from("<I", out, 7)
    assert length == len(noise) | c.LZ4_INCOMPRESSIBLE_MASK
    assert out[11:11 + len(noise)] == noise and c.decompress(c.LZ4, out) == noise


def test_lz4_levels_other_than_9_use_lz4hc() -> None:
    rng = random.Random(7)
    words = [rng.randbytes(rng.randint(2, 9)) for _ in range(300)]
    text = b" ".join(rng.choice(words) for _ in range(20000))
    assert c.compress(c.LZ4, text) == c.compress(c.LZ4, text, 9)
    assert len(c.compress(c.LZ4, text, 17)) < len(c.compress(c.LZ4, text, 9))
    assert c.decompress(c.LZ4, c.compress(c.LZ4, text, 17)) == text


def test_zstd_is_one_frame_without_a_content_size() -> None:
    out = c.compress(c.ZSTD, TEXT)
    params = zstandard.get_frame_parameters(out)
    assert (params.content_size, params.has_checksum) == (zstandard.CONTENTSIZE_UNKNOWN, False)
    assert zstandard.ZstdDecompressor().decompressobj().decompress(out) == TEXT
    assert c.decompress(c.ZSTD, out + c.compress(c.ZSTD, b"more")) == TEXT + b"more"   # frame after frame


def test_levels_out_of_kafkas_bounds_name_their_config() -> None:
    for codec, good, bad in [(c.GZIP, -1, 0), (c.GZIP, 9, 10), (c.LZ4, 1, 18), (c.ZSTD, -131072, 23)]:
        assert c.check_level(codec, good, ValueError) == good
        with pytest.raises(ValueError, match=f"configuration {c.LEVELS[codec].config}: must be between"):
            c.check_level(codec, bad, ValueError)
    with pytest.raises(ValueError, match="compression.gzip.level: must be between 1 and 9 or -1"):
        c.check_level(c.GZIP, "6", ValueError)


def test_an_unknown_codec_name_names_the_field() -> None:
    assert c.parse_codec("zstd", "compression.type", ValueError) == "zstd"
    with pytest.raises(KeyError, match="Invalid value 'brotli' for configuration compression.type: must be one of "
                                       "none, gzip, snappy, lz4, zstd"):
        c.parse_codec("brotli", "compression.type", KeyError)
    with pytest.raises(ValueError, match="producer"):
        c.parse_codec("producer", "compression.type", ValueError)   # a topic's value, not a producer's


@pytest.mark.parametrize("codec", CODECS, ids=IDS)
def test_garbage_is_a_format_error_naming_the_codec(codec: int) -> None:
    with pytest.raises(c.CompressionFormatError, match=f"{c.CODEC_NAMES[codec]} data does not decompress"):
        c.decompress(codec, c.compress(codec, TEXT)[:-9] + b"\x00" * 3)


def test_a_truncated_xerial_stream_is_a_format_error() -> None:
    with pytest.raises(c.CompressionFormatError, match="runs past the end"):
        c.decompress(c.SNAPPY, c.compress(c.SNAPPY, TEXT)[:100])


@pytest.mark.parametrize(("codec", "module"), [(c.SNAPPY, "snappy"), (c.LZ4, "lz4.block"), (c.ZSTD, "zstandard")])
def test_a_missing_package_is_named_when_compressing(codec: int, module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(c.CodecUnavailableError, match="is not installed"):
        c.compress(codec, TEXT)


def test_a_compressed_batch_holds_the_codec_in_its_attributes_and_a_crc_over_the_compressed_bytes() -> None:
    records = [(b"k%d" % i, TEXT[:200], 1_700_000_000_000 + i) for i in range(30)]
    for codec in CODECS:
        batch = rb.encode_batch(records, compression=codec, compression_level=c.default_level(codec))
        header = rb.read_batch_header(batch)
        assert header.compression == codec and rb.batch_crc_ok(batch)
        assert batch[rb.RECORDS_OFFSET:] == c.compress(codec, rb.encode_batch(records)[rb.RECORDS_OFFSET:])
