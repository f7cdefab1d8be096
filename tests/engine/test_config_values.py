"""Config values given as text (JSON scenario files, web forms) or as Python values."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.common.config_values import parse_config_value
from engine.config import split_config
from engine.storage.errors import InvalidConfigError


@pytest.mark.parametrize("raw, kind, expected", [("1024", "int", 1024), (7, "int", 7), ("true", "bool", True),
                                                  ("False", "bool", False), (True, "bool", True),
                                                  ("0.5", "float", 0.5), (3, "str", "3")])
def test_text_and_python_values_become_the_field_type(raw, kind, expected):
    assert parse_config_value("k", raw, kind, ValueError) == expected


@pytest.mark.parametrize("raw, kind, message", [("lots", "int", r"expected a number \(an integer\)"), (True, "int", r"expected a number \(an integer\)"),
                                                 ("yes", "bool", "expected true or false")])
def test_bad_values_name_the_key_and_the_value(raw, kind, message):
    with pytest.raises(ValueError, match=f"Invalid value {raw!r} for configuration segment.bytes: {message}"):
        parse_config_value("segment.bytes", raw, kind, ValueError)


def test_broker_settings_given_as_text_are_numbers_and_booleans():
    broker, lab, topic = split_config({"replica.lag.time.max.ms": "10000", "unclean.leader.election.enable": "true",
                                       "min.insync.replicas": "2", "network.loss.rate": "0.1", "fsync": "false"})
    assert broker.replica_lag_time_max_ms == 10000 and broker.unclean_leader_election_enable is True
    assert broker.min_insync_replicas == 2 and lab.network_loss_rate == 0.1 and lab.fsync is False


def test_a_bad_broker_setting_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidConfigError, match=r"replica.lag.time.max.ms: expected a number \(an integer\)"):
        Cluster(1, str(tmp_path), config={"replica.lag.time.max.ms": "soon"})
