"""A cluster's settings: the brokers' (Kafka's names and defaults), the lab's own, and the topic defaults.

    broker, lab, topic_defaults = split_config({"replica.lag.time.max.ms": 10000, "truncation": "hw",
                                                "retention.ms": 60000})

A lab cluster is configured by one flat dict under Kafka's dotted names (a scenario's `config`, the
lab's form). `split_config` sorts it: broker settings (server.properties: `BrokerConfig`), how the lab
runs the cluster (`ClusterConfig`: not Kafka settings) and topic-level defaults (the `log.*` keys a
broker gives topics that do not set them, under their topic-level names). Text values are parsed
to the field's type, since JSON files and forms give text.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from engine.broker.replica_selector import selector_class
from engine.common.config_values import field_kind, parse_config_value
from engine.metadata.zk import NOT_LOG_CONFIGS
from engine.raft.config import KEYS as QUORUM_KEYS
from engine.raft.config import QuorumConfig
from engine.storage.errors import InvalidConfigError
from engine.storage.log_config import LogConfig

TOPIC_LEVEL_KEYS = set(LogConfig().to_dict()) | set(NOT_LOG_CONFIGS)


@dataclass(frozen=True)
class BrokerConfig:
    """Broker settings, under Kafka's names with dots turned into underscores; Kafka's defaults."""
    replica_lag_time_max_ms: int = 30000
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_min_bytes: int = 1
    replica_fetch_max_bytes: int = 1048576
    replica_fetch_response_max_bytes: int = 10485760
    replica_fetch_backoff_ms: int = 1000
    replica_socket_timeout_ms: int = 30000
    replica_high_watermark_checkpoint_interval_ms: int = 5000
    log_flush_offset_checkpoint_interval_ms: int = 60000
    log_retention_check_interval_ms: int = 300000
    # The log cleaner (CleanerConfig): on by default, as in Kafka; engine/storage/cleaner.py.
    log_cleaner_enable: bool = True
    log_cleaner_backoff_ms: int = 15000
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    request_timeout_ms: int = 30000
    zookeeper_session_timeout_ms: int = 18000
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    offsets_commit_timeout_ms: int = 5000
    group_initial_rebalance_delay_ms: int = 3000
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    # KRaft mode (KRaftConfigs): a broker heartbeats its controller; missing them for the session
    # time-out fences it.
    broker_heartbeat_interval_ms: int = 2000
    broker_session_timeout_ms: int = 9000
    # Follower fetching (KIP-392): None, Kafka's default, lets consumers read from leaders only
    # (engine/broker/replica_selector.py; an alias such as "rack-aware" is turned into the class name).
    replica_selector_class: str | None = None
    # Topic deletion and leadership balance (KafkaConfig; the controller reads them).
    delete_topic_enable: bool = True
    # How long a deleted replica's `-delete` dir stays (LogManager.asyncDelete; file.delete.delay.ms per topic).
    log_segment_delete_delay_ms: int = 60000
    # Kafka's default is true; the lab's is false so that clusters built before the check existed
    # (every recorded scenario, saved sessions) replay as they were: a scenario turns it on in its
    # cluster config (README, "The cluster": topic deletion, reassignment, leader balance).
    auto_leader_rebalance_enable: bool = False
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_per_broker_percentage: int = 10


@dataclass(frozen=True)
class ClusterConfig:
    """How the lab runs the cluster (not Kafka settings)."""
    truncation: str = "leader-epoch"
    fsync: bool = False            # real fsync on flush; crashes are simulated, so off by default
    network_min_delay_ms: int = 1
    network_max_delay_ms: int = 3
    network_loss_rate: float = 0.0
    # Where the cluster's metadata lives: "zookeeper" (the notes' Kafka; the engine's default, so
    # every scenario written before KRaft keeps its mode) or "kraft" (Kafka 4's only mode; the lab's
    # default for new sessions). In KRaft mode the controllers are the first `controller.count`
    # brokers (`controller.mode` "combined": process.roles=broker,controller) or as many nodes of
    # their own ("dedicated", ids 101, 102, 103: process.roles=controller).
    metadata: str = "zookeeper"
    controller_mode: str = "combined"
    controller_count: int = 0          # 0: 3 voters when the cluster has 3 brokers or more, else 1
    quorum: QuorumConfig = field(default_factory=QuorumConfig)
    voters: dict = field(default_factory=dict)     # KRaft: voter id -> node name (set by the facade)
    # Each broker's `broker.rack` (a per-broker setting in Kafka; one cluster config here): (broker id,
    # rack) pairs, sorted; brokers not named have no rack. Empty: no racks, placement rack-unaware.
    broker_racks: tuple[tuple[int, str], ...] = ()

    def rack_of(self, broker_id: int) -> str | None:
        return dict(self.broker_racks).get(broker_id)


def split_config(config: dict | None, *, brokers: int | None = None) -> tuple[BrokerConfig, ClusterConfig, dict]:
    """Sort a flat config dict into broker settings, lab settings and topic defaults. `brokers`, when
    given, is the cluster's broker count: `broker.rack` may only name brokers 1 to `brokers`."""
    broker_fields = {f.name for f in fields(BrokerConfig)}
    broker, lab, topic, quorum = {}, {}, {}, {}
    racks: tuple[tuple[int, str], ...] = ()
    for key, value in (config or {}).items():
        name = key.replace(".", "_")
        if key == "broker.rack":
            racks = parse_broker_racks(value, brokers)
        elif key.startswith("network.") or key in LAB_KEYS:
            lab[name] = value
        elif key in QUORUM_KEYS:
            quorum[key] = value
        elif name in broker_fields and key not in NOT_LOG_CONFIGS:
            broker[name] = value
        elif key in TOPIC_LEVEL_KEYS:
            topic[key] = value
        else:
            raise InvalidConfigError(f"Unknown cluster config '{key}'")
    if "min.insync.replicas" in topic:
        broker["min_insync_replicas"] = topic["min.insync.replicas"]
    if "unclean.leader.election.enable" in topic:
        broker["unclean_leader_election_enable"] = topic["unclean.leader.election.enable"]
    LogConfig.from_dict(topic)   # topic defaults within LogConfig's bounds now, not at the first create_topic
    broker_config = BrokerConfig(**_typed(BrokerConfig, broker))
    if broker_config.replica_selector_class is not None:
        broker_config = replace(broker_config,
                                replica_selector_class=selector_class(broker_config.replica_selector_class))
    cluster = ClusterConfig(**_typed(ClusterConfig, lab), broker_racks=racks, quorum=QuorumConfig.from_dict(quorum))
    check_metadata_mode(cluster)
    return broker_config, cluster, topic


METADATA_MODES = ("zookeeper", "kraft")
CONTROLLER_MODES = ("combined", "dedicated")
LAB_KEYS = ("truncation", "fsync", "metadata", "controller.mode", "controller.count")
DEDICATED_CONTROLLER_BASE = 100       # dedicated controllers are nodes 101, 102, 103


def check_metadata_mode(cluster: ClusterConfig) -> None:
    """`metadata`, `controller.mode` and `controller.count`, each checked by name."""
    if cluster.metadata not in METADATA_MODES:
        raise InvalidConfigError(f"metadata must be one of {', '.join(METADATA_MODES)}, not {cluster.metadata!r}")
    if cluster.controller_mode not in CONTROLLER_MODES:
        raise InvalidConfigError(f"controller.mode must be one of {', '.join(CONTROLLER_MODES)}, "
                                 f"not {cluster.controller_mode!r}")
    if cluster.controller_count not in (0, 1, 3):
        raise InvalidConfigError(f"controller.count must be 1 or 3 (0: the lab picks), "
                                 f"not {cluster.controller_count!r}")


def quorum_voters(cluster: ClusterConfig, brokers: int) -> dict[int, str]:
    """KRaft's voters (controller.quorum.voters): id -> node name. Combined mode: the first brokers."""
    count = cluster.controller_count or (3 if brokers >= 3 else 1)
    if cluster.controller_mode == "combined":
        if count > brokers:
            raise InvalidConfigError(f"controller.count {count} needs as many brokers in combined mode, not {brokers}")
        return {b: f"broker-{b}" for b in range(1, count + 1)}
    return {DEDICATED_CONTROLLER_BASE + i: f"controller-{DEDICATED_CONTROLLER_BASE + i}" for i in range(1, count + 1)}


def parse_broker_racks(value: Any, brokers: int | None = None) -> tuple[tuple[int, str], ...]:
    """`broker.rack` for the whole cluster: an object of broker id -> rack ({"1": "us-east-1a", ...}) or
    the same as text ("1:us-east-1a,2:us-east-1b"). Each rack a non-empty text; each broker id one of
    the cluster's (1 to `brokers`, when known). InvalidConfigError naming broker.rack otherwise."""
    def bad(why: str) -> InvalidConfigError:
        return InvalidConfigError(f"Invalid value {value!r} for configuration broker.rack: {why}")
    if isinstance(value, str):
        pairs: list[tuple[Any, Any]] = []
        for item in (part.strip() for part in value.split(",")):
            if not item:
                continue
            id_text, sep, rack_text = item.partition(":")
            if not sep:
                raise bad(f"{item!r} is not broker:rack (as in \"1:us-east-1a,2:us-east-1b\")")
            pairs.append((id_text.strip(), rack_text.strip()))
    elif isinstance(value, dict):
        pairs = list(value.items())
    elif value is None:
        return ()
    else:
        raise bad("expected an object of broker id to rack, or text like \"1:us-east-1a,2:us-east-1b\"")
    out: dict[int, str] = {}
    for raw_id, rack in pairs:
        text = str(raw_id).strip()
        if isinstance(raw_id, bool) or not text.isdigit():
            raise bad(f"{raw_id!r} is not a broker id")
        broker_id = int(text)
        if brokers is not None and not 1 <= broker_id <= brokers:
            raise bad(f"broker {broker_id} is not in this cluster (brokers 1 to {brokers})")
        if not isinstance(rack, str) or not rack.strip() or len(rack) > 255:
            raise bad(f"the rack of broker {broker_id} must be a non-empty text (at most 255 characters), "
                      f"not {rack!r}")
        if broker_id in out:
            raise bad(f"broker {broker_id} is given twice")
        out[broker_id] = rack.strip()
    return tuple(sorted(out.items()))


def check_topic_config(config: dict) -> None:
    """A topic's config (its defaults merged with what create_topic was given): every key a topic-level
    config, every value within its bounds. InvalidConfigError otherwise."""
    LogConfig.from_dict(config)
    for key in config:
        if key not in TOPIC_LEVEL_KEYS:
            raise InvalidConfigError(f"Unknown topic config '{key}'")
    if "min.insync.replicas" in config and int(config["min.insync.replicas"]) < 1:
        raise InvalidConfigError("min.insync.replicas must be at least 1")


def _typed(config_class: type, values: dict) -> dict:
    """Values as the config class's field types (JSON files and forms give text)."""
    kinds = {f.name: field_kind(f.type) for f in fields(config_class)}
    return {name: parse_config_value(name.replace("_", "."), raw, kinds[name], InvalidConfigError)
            for name, raw in values.items()}
