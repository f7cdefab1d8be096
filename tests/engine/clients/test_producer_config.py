"""Creating a producer: Kafka's defaults, and how idempotence and the timeouts are settled."""
from __future__ import annotations

import pytest

from engine.clients.producer import ProducerConfigError, resolve_config


def test_the_defaults_are_kafkas():
    config, warnings = resolve_config({})
    assert config.to_dict() == {
        "acks": "all", "enable.idempotence": True, "batch.size": 16384, "linger.ms": 5,
        "buffer.memory": 33554432, "max.block.ms": 60000, "max.request.size": 1048576, "compression.type": "none",
        "max.in.flight.requests.per.connection": 5, "retries": 2147483647, "retry.backoff.ms": 100,
        "retry.backoff.max.ms": 1000, "delivery.timeout.ms": 120000, "request.timeout.ms": 30000,
        "metadata.max.age.ms": 300000, "partitioner.class": "sticky", "partitioner.ignore.keys": False,
        "partitioner.adaptive.partitioning.enable": True}
    assert warnings == []


@pytest.mark.parametrize("conflict, reason", [
    ({"acks": 1}, "acks is 1"),
    ({"acks": "0"}, "acks is 0"),
    ({"retries": 0}, "retries is 0"),
    ({"max.in.flight.requests.per.connection": 6}, "more than 5"),
])
def test_idempotence_left_at_its_default_is_silently_turned_off_by_a_conflict(conflict, reason):
    config, warnings = resolve_config(conflict)
    assert config.enable_idempotence is False
    assert len(warnings) == 1 and reason in warnings[0] and "disabled" in warnings[0]


@pytest.mark.parametrize("conflict", [{"acks": 1}, {"retries": 0}, {"max.in.flight.requests.per.connection": 6}])
def test_idempotence_asked_for_explicitly_with_a_conflict_is_a_config_error(conflict):
    with pytest.raises(ProducerConfigError, match="enable.idempotence=true cannot work"):
        resolve_config({"enable.idempotence": "true", **conflict})


def test_idempotence_turned_off_explicitly_allows_anything():
    config, warnings = resolve_config({"enable.idempotence": False, "acks": 1,
                                       "max.in.flight.requests.per.connection": 10})
    assert (config.enable_idempotence, config.acks, warnings) == (False, 1, [])


def test_values_may_be_strings_as_in_a_properties_file():
    config, _ = resolve_config({"linger.ms": "20", "acks": "-1", "enable.idempotence": "false",
                                "compression.type": "gzip", "partitioner.class": "round-robin"})
    assert (config.linger_ms, config.acks, config.enable_idempotence) == (20, -1, False)
    assert (config.compression_type, config.partitioner_class) == ("gzip", "round-robin")


def test_delivery_timeout_must_cover_linger_and_request_timeout():
    with pytest.raises(ProducerConfigError, match="delivery.timeout.ms"):
        resolve_config({"delivery.timeout.ms": 1000, "request.timeout.ms": 2000})
    config, warnings = resolve_config({"request.timeout.ms": 200000})   # not set by the user: raised
    assert config.delivery_timeout_ms == 200005 and "raised" in warnings[0]


@pytest.mark.parametrize("bad, message", [
    ({"acks": "2"}, "acks"),
    ({"compression.type": "brotli"}, "Invalid value 'brotli' for configuration compression.type: must be one of "
                                     "none, gzip, snappy, lz4, zstd"),
    ({"compression.type": "producer"}, "configuration compression.type"),   # a topic's value only
    ({"compression.type": "gzip", "compression.gzip.level": 10},
     "Invalid value 10 for configuration compression.gzip.level: must be between 1 and 9 or -1"),
    ({"compression.lz4.level": 0}, "configuration compression.lz4.level: must be between 1 and 17"),
    ({"compression.zstd.level": 23}, "configuration compression.zstd.level: must be between -131072 and 22"),
    ({"partitioner.class": "UniformStickyPartitioner"}, "partitioner.class"),
    ({"linger.ms": -1}, "at least 0"),
    ({"max.in.flight.requests.per.connection": 0}, "at least 1"),
    ({"lingerms": 5}, "Unknown producer config 'lingerms'"),
    ({"batch.size": "big"}, "expected a number"),
])
def test_it_refuses_settings_it_cannot_use(bad, message):
    with pytest.raises(ProducerConfigError, match=message):
        resolve_config(bad)


@pytest.mark.parametrize("codec, level_key, level", [("none", None, None), ("gzip", "compression.gzip.level", -1),
                                                     ("snappy", None, None), ("lz4", "compression.lz4.level", 9),
                                                     ("zstd", "compression.zstd.level", 3)])
def test_each_codec_is_accepted_and_only_its_own_level_is_listed(codec, level_key, level):
    config, _ = resolve_config({"compression.type": codec})
    listed = {k: v for k, v in config.to_dict().items() if k.startswith("compression.")}
    assert listed == {"compression.type": codec, **({level_key: level} if level_key else {})}
    assert (config.compression_codec, config.compression_level) == (
        ["none", "gzip", "snappy", "lz4", "zstd"].index(codec), level)


def test_a_level_is_kept_when_given():
    config, _ = resolve_config({"compression.type": "zstd", "compression.zstd.level": "-7"})
    assert (config.compression_codec, config.compression_level) == (4, -7)


def test_java_client_settings_are_accepted_with_a_warning():
    config, warnings = resolve_config({"bootstrap.servers": "localhost:9092", "key.serializer": "x"})
    assert config.enable_idempotence and len(warnings) == 2 and "not modelled" in warnings[0]
