"""Which replica a consumer should read from: follower fetching (KIP-392).

A partition leader asked by a consumer that sent its rack (FetchRequest v11+'s rack_id, the consumer's
`client.rack`) may answer "read from broker N instead" (`preferred_read_replica`): ReplicaManager
.findPreferredReadReplica builds a view of the replicas that could serve the fetch offset — the leader,
and each follower in the ISR whose log holds the offset (log start <= fetch offset <= its log end, as
the leader learnt from its last fetch) — and asks the broker's `replica.selector.class`. Without a
selector (Kafka's default, null) every consumer reads from the leader.

The one selector Kafka ships is RackAwareReplicaSelector: a replica in the client's rack, the leader
if it is one of them, otherwise the most caught-up (ReplicaView.comparator: the highest log end
offset, then the least time since it was last caught up, then the highest broker id); the leader
when no replica shares the client's rack or the client sent no rack. The leader it picks is not
sent back: the answer then carries no preferred replica.

Pure functions: the broker hands in what it knows (replica states, racks from the brokers'
registrations) and gets a broker id back.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.storage.errors import InvalidConfigError

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
# `replica.selector.class` values the lab knows: Kafka's class names and short aliases for them.
SELECTOR_ALIASES: dict[str, str] = {
    RACK_AWARE: RACK_AWARE,
    "RackAwareReplicaSelector": RACK_AWARE,
    "rack-aware": RACK_AWARE,
}


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """One replica as a selector sees it (Kafka's ReplicaView.DefaultReplicaView)."""
    broker: int
    rack: str | None
    log_end_offset: int
    time_since_last_caught_up_ms: int     # 0 for the leader


def selector_class(value: str | None) -> str | None:
    """`replica.selector.class` checked: Kafka's class name (an alias is turned into it), or None for
    no selector. InvalidConfigError naming the setting otherwise."""
    if value is None or str(value).strip() == "":
        return None
    name = SELECTOR_ALIASES.get(str(value).strip())
    if name is None:
        raise InvalidConfigError(
            f"Invalid value {value!r} for configuration replica.selector.class: expected "
            f"{RACK_AWARE} (or {', '.join(a for a in SELECTOR_ALIASES if a != RACK_AWARE)}), or nothing")
    return name


def _most_caught_up(view: ReplicaView) -> tuple[int, int, int]:
    # ReplicaView.comparator(): log end offset, then time since caught up reversed, then broker id; max wins.
    return view.log_end_offset, -view.time_since_last_caught_up_ms, view.broker


def rack_aware_select(client_rack: str | None, replicas: list[ReplicaView], leader: ReplicaView) -> ReplicaView:
    """RackAwareReplicaSelector.select."""
    if not client_rack:
        return leader
    same_rack = [r for r in replicas if r.rack == client_rack]
    if not same_rack or leader in same_rack:
        return leader
    return max(same_rack, key=_most_caught_up)


SELECTORS: dict[str, Callable[[str | None, list[ReplicaView], ReplicaView], ReplicaView]] = {
    RACK_AWARE: rack_aware_select,
}


def preferred_read_replica(selector: str | None, client_rack: str | None, leader: ReplicaView,
                           followers: list[ReplicaView]) -> int:
    """ReplicaManager.findPreferredReadReplica once the candidates are known: the broker the consumer
    should read from, or -1 for "the leader" (the leader is never sent as a preferred replica).
    `followers` are the ISR followers that hold the fetch offset."""
    if selector is None:
        return -1
    chosen = SELECTORS[selector](client_rack, [*followers, leader], leader)
    return -1 if chosen == leader else chosen.broker
