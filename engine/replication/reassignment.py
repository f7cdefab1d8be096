"""What a controller decides when replicas move or leadership goes back to the preferred replica.

Pure functions, no metadata store and no network: the ZooKeeper-mode controller
(engine/replication/controller.py) calls them and writes the outcome to its znodes; a KRaft
controller can call the same ones and write PartitionChangeRecords instead.

- A reassignment plan as `kafka-reassign-partitions --execute` reads it
  (`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}`), checked field by
  field: `parse_reassignment_plan` raises ReassignmentPlanError naming the field
  (`partitions[0].replicas`), as ReassignPartitionsCommand.parsePartitionReassignmentData and the
  controller's validateReplicas (KafkaController) refuse a plan.
- KIP-455's replica sets (`reassignment_state`): RS = TRS + (ORS - TRS) with target replicas first,
  AR = TRS - ORS (adding), RR = ORS - TRS (removing) (KafkaController.onPartitionReassignment,
  ReplicaAssignment.fromOldAndNewReplicas); complete once TRS is inside the ISR
  (`is_reassignment_complete`).
- Leader elections (PartitionLeaderElectionAlgorithms): `preferred_replica_leader` (the first
  assigned replica, if alive and in the ISR), `reassignment_leader` (the first target replica alive
  and in the ISR), and the outcome an ElectLeaders request reports per partition
  (`preferred_election_error`).
- auto.leader.rebalance.enable's check (KafkaController.checkAndTriggerAutoLeaderRebalance):
  `leader_imbalance` per preferred broker and `auto_rebalance_candidates`.
- `verify_reassignment`: what `--verify` prints for each partition of a plan.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from engine.common.errors import Errors, KafkaError

PLAN_VERSION = 1
PLAN_KEYS = ("version", "partitions")
PARTITION_KEYS = ("topic", "partition", "replicas", "log_dirs")
ANY_LOG_DIR = "any"


class ReassignmentPlanError(KafkaError, ValueError):
    """A reassignment plan Kafka would refuse; `field` names where ("partitions[0].replicas")."""
    error = Errors.INVALID_REPLICA_ASSIGNMENT

    def __init__(self, message: str, field: str = "", error: Errors | None = None) -> None:
        super().__init__(message, error=error)
        self.field = field


@dataclass(frozen=True)
class PartitionReassignment:
    """One entry of a plan: move `topic`-`partition` to `replicas` (the first is the preferred leader)."""
    topic: str
    partition: int
    replicas: list[int]


@dataclass(frozen=True)
class ReassignmentState:
    """A partition's replica sets while it moves (KIP-455; Kafka's ReplicaAssignment)."""
    replicas: list[int]          # RS: target replicas first, then the original ones being removed
    adding: list[int]            # AR = TRS - ORS
    removing: list[int]          # RR = ORS - TRS

    @property
    def target(self) -> list[int]:
        """TRS: the replica set once the move completes."""
        return [r for r in self.replicas if r not in self.removing]


# -- the plan --------------------------------------------------------------------------------------
def parse_reassignment_plan(plan: str | Mapping[str, Any], partition_counts: Mapping[str, int],
                            brokers: Iterable[int], live: Iterable[int]) -> list[PartitionReassignment]:
    """The plan's partitions, checked: JSON text or the decoded object; `partition_counts` the
    topics that exist (not being deleted), `brokers` every broker id, `live` the registered ones."""
    if isinstance(plan, str):
        try:
            plan = json.loads(plan)
        except ValueError as error:
            raise ReassignmentPlanError(f"The reassignment plan is not valid JSON: {error}", "plan",
                                        Errors.INVALID_REQUEST) from None
    if not isinstance(plan, Mapping):
        raise ReassignmentPlanError("The reassignment plan must be a JSON object like "
                                    '{"version":1,"partitions":[...]}', "plan", Errors.INVALID_REQUEST)
    _no_unknown_keys(plan, PLAN_KEYS, "plan")
    version = plan.get("version", PLAN_VERSION)
    if version != PLAN_VERSION or isinstance(version, bool):
        raise ReassignmentPlanError(f"version must be {PLAN_VERSION}, not {json.dumps(version)} "
                                    f"(Not supported version field value)", "version", Errors.INVALID_REQUEST)
    entries = plan.get("partitions")
    if not isinstance(entries, list) or not entries:
        raise ReassignmentPlanError("partitions must be a non-empty list (Partition reassignment list cannot "
                                    "be empty)", "partitions", Errors.INVALID_REQUEST)
    all_brokers, live_brokers = set(brokers), set(live)
    out: list[PartitionReassignment] = []
    seen: set[tuple[str, int]] = set()
    for index, entry in enumerate(entries):
        item = _parse_entry(entry, f"partitions[{index}]", partition_counts, all_brokers, live_brokers)
        if (item.topic, item.partition) in seen:
            raise ReassignmentPlanError(f"partitions[{index}] names {item.topic}-{item.partition} again (Partition "
                                        f"reassignment list cannot contain duplicate topic partitions)",
                                        f"partitions[{index}]", Errors.INVALID_REQUEST)
        seen.add((item.topic, item.partition))
        out.append(item)
    return out


def _parse_entry(entry: Any, where: str, partition_counts: Mapping[str, int], brokers: set[int],
                 live: set[int]) -> PartitionReassignment:
    if not isinstance(entry, Mapping):
        raise ReassignmentPlanError(f"{where} must be an object with topic, partition and replicas", where,
                                    Errors.INVALID_REQUEST)
    _no_unknown_keys(entry, PARTITION_KEYS, where)
    topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
    if not isinstance(topic, str) or not topic:
        raise ReassignmentPlanError(f"{where}.topic must be a topic name, not {json.dumps(topic)}",
                                    f"{where}.topic", Errors.INVALID_REQUEST)
    if not _is_whole(partition) or partition < 0:
        raise ReassignmentPlanError(f"{where}.partition must be a partition number from 0, not "
                                    f"{json.dumps(partition)}", f"{where}.partition", Errors.INVALID_REQUEST)
    if topic not in partition_counts:
        raise ReassignmentPlanError(f"{where}.topic: topic '{topic}' does not exist (The proposed assignment "
                                    f"contains non-existent partitions)", f"{where}.topic",
                                    Errors.UNKNOWN_TOPIC_OR_PARTITION)
    if partition >= partition_counts[topic]:
        raise ReassignmentPlanError(f"{where}.partition: {topic}-{partition} does not exist ('{topic}' has "
                                    f"{partition_counts[topic]} partition(s))", f"{where}.partition",
                                    Errors.UNKNOWN_TOPIC_OR_PARTITION)
    field = f"{where}.replicas"
    if not isinstance(replicas, list) or not replicas:
        raise ReassignmentPlanError(f"{field} must be a non-empty list of broker ids (Partition replica list "
                                    f"cannot be empty)", field)
    if not all(_is_whole(r) for r in replicas):
        raise ReassignmentPlanError(f"{field} must hold broker ids (whole numbers), not {json.dumps(replicas)}",
                                    field)
    duplicates = sorted({r for r in replicas if replicas.count(r) > 1})
    if duplicates:
        raise ReassignmentPlanError(f"{field} names broker(s) {duplicates} twice (Partition replica lists may not "
                                    f"contain duplicate entries)", field)
    unknown = [r for r in replicas if r not in brokers]
    if unknown:
        raise ReassignmentPlanError(f"{field} names broker(s) {unknown} that do not exist "
                                    f"(brokers: {sorted(brokers)})", field)
    down = [r for r in replicas if r not in live]
    if down:
        raise ReassignmentPlanError(f"{field} names broker(s) {down} that are not alive (Replica assignment has "
                                    f"brokers that are not alive)", field)
    log_dirs = entry.get("log_dirs")
    if log_dirs is not None and (not isinstance(log_dirs, list) or len(log_dirs) != len(replicas)
                                 or any(d != ANY_LOG_DIR for d in log_dirs)):
        raise ReassignmentPlanError(f"{where}.log_dirs must list \"any\" once per replica: a lab broker has one "
                                    f"log dir", f"{where}.log_dirs", Errors.INVALID_REQUEST)
    return PartitionReassignment(topic, int(partition), [int(r) for r in replicas])


def _no_unknown_keys(obj: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in obj if k not in known)
    if unknown:
        raise ReassignmentPlanError(f"{where} has no field {unknown[0]!r} (its fields: {', '.join(known)})",
                                    f"{where}.{unknown[0]}" if where != "plan" else unknown[0],
                                    Errors.INVALID_REQUEST)


def _is_whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# -- the replica sets --------------------------------------------------------------------------------
def reassignment_state(original: list[int], target: list[int]) -> ReassignmentState:
    """RS, AR and RR for moving `original` (ORS) to `target` (TRS): target replicas are listed first,
    as ReplicaAssignment.fromOldAndNewReplicas does, so the preferred leader is TRS's head."""
    replicas = list(dict.fromkeys([*target, *original]))
    return ReassignmentState(replicas, [r for r in target if r not in original],
                             [r for r in original if r not in target])


def is_reassignment_complete(target: list[int], isr: list[int]) -> bool:
    """Phase B may run: every target replica is in the ISR (KafkaController.isReassignmentComplete)."""
    return set(target) <= set(isr)


# -- leader elections ----------------------------------------------------------------------------------
def preferred_replica_leader(replicas: list[int], isr: list[int], live: set[int]) -> int | None:
    """PreferredReplicaPartitionLeaderElection: the first assigned replica, if it is alive and in the ISR."""
    if replicas and replicas[0] in live and replicas[0] in isr:
        return replicas[0]
    return None


def reassignment_leader(target: list[int], isr: list[int], live: set[int]) -> int | None:
    """ReassignPartitionLeaderElection: the first target replica alive and in the ISR."""
    return next((r for r in target if r in live and r in isr), None)


def preferred_election_error(replicas: list[int], leader: int, isr: list[int], live: set[int]) -> Errors:
    """What an ElectLeaders (PREFERRED) request answers for one partition: NONE (it will move),
    ELECTION_NOT_NEEDED (the preferred replica leads already) or PREFERRED_LEADER_NOT_AVAILABLE."""
    if replicas and leader == replicas[0]:
        return Errors.ELECTION_NOT_NEEDED
    if preferred_replica_leader(replicas, isr, live) is None:
        return Errors.PREFERRED_LEADER_NOT_AVAILABLE
    return Errors.NONE


# -- auto.leader.rebalance.enable ------------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionLeadership:
    """What the imbalance check reads of one partition."""
    topic: str
    partition: int
    replicas: list[int]
    leader: int
    isr: list[int]


def leader_imbalance(partitions: Iterable[PartitionLeadership]) -> dict[int, tuple[list[tuple[str, int]], int]]:
    """Per preferred broker (each partition's first replica): the partitions it should lead but does
    not, and how many it should lead. Its imbalance ratio is the first's length over the second."""
    out: dict[int, tuple[list[tuple[str, int]], int]] = {}
    for p in partitions:
        if not p.replicas:
            continue
        not_led, total = out.get(p.replicas[0], ([], 0))
        if p.leader != p.replicas[0]:
            not_led = [*not_led, (p.topic, p.partition)]
        out[p.replicas[0]] = (not_led, total + 1)
    return out


def auto_rebalance_candidates(partitions: Iterable[PartitionLeadership], live: set[int],
                              imbalance_percentage: int) -> list[tuple[str, int]]:
    """The partitions whose leadership goes back to the preferred replica: those of every broker
    whose imbalance ratio is above leader.imbalance.per.broker.percentage, where the preferred
    replica can lead (alive, in the ISR). In broker order, then in the partitions' order."""
    by_key = {(p.topic, p.partition): p for p in partitions}
    out: list[tuple[str, int]] = []
    for _broker, (not_led, total) in sorted(leader_imbalance(by_key.values()).items()):
        if not_led and len(not_led) / total > imbalance_percentage / 100:
            out += [tp for tp in not_led
                    if preferred_replica_leader(by_key[tp].replicas, by_key[tp].isr, live) is not None]
    return out


# -- --verify ------------------------------------------------------------------------------------------
def verify_reassignment(plan: list[PartitionReassignment], current: Mapping[tuple[str, int], list[int]],
                        ongoing: set[tuple[str, int]]) -> list[tuple[str, int, str, str]]:
    """Per partition of the plan: (topic, partition, state, line) with state "completed",
    "in progress" or "different", and the line ReassignPartitionsCommand --verify prints."""
    out = []
    for item in plan:
        key, name = (item.topic, item.partition), f"{item.topic}-{item.partition}"
        replicas = list(current.get(key, []))
        if key in ongoing:
            out.append((item.topic, item.partition, "in progress",
                        f"Reassignment of partition {name} is still in progress."))
        elif replicas == item.replicas:
            out.append((item.topic, item.partition, "completed", f"Reassignment of partition {name} is completed."))
        else:
            out.append((item.topic, item.partition, "different",
                        f"There is no active reassignment of partition {name}, but replica set is "
                        f"{','.join(map(str, replicas))} rather than {','.join(map(str, item.replicas))}."))
    return out
