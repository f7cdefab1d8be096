"""StickyAssignor ("sticky"): balanced assignments that keep partitions where they already are.

This follows Kafka's AbstractStickyAssignor step by step (rack-less), so it gives the Java
client's answer, tie-breaks included:

1. Claims. Members are visited in the order the leader's HashMap of subscriptions yields them
   (see `subscription_iteration_order`). A member's owned partitions count if their topic still
   exists. When two members claim one partition, the higher generation keeps it; with equal
   generations the partition is taken from both ("multiple previous owners").
2. If every member has the same subscription, the constrained path (ConstrainedAssignmentBuilder):
   minQuota = floor(P / C), maxQuota = ceil(P / C), and exactly P % C members may reach maxQuota.
   Visiting members in the same HashMap order, each keeps its owned partitions, sorted by
   (partition, topic), up to maxQuota while maxQuota slots remain, else up to minQuota; the rest
   are "maybe revoked". The free partitions, sorted by (topic, partition), are then dealt round
   robin to members below minQuota (sorted by member id), then to members at minQuota while
   maxQuota slots remain. A dealt partition that another member still owns is "transferring
   ownership" (the cooperative assignor withholds those).
3. Otherwise the general path (GeneralAssignmentBuilder): keep every owned partition still
   subscribed, give each free partition (topics with fewest subscribers first) to the least
   loaded eligible member (fewest partitions, then member id), then move partitions from
   members with 2+ more than an eligible peer until balanced, preferring to hand a partition
   back to its owner of an older generation, and undo the moves if they did not improve the
   balance score. Kafka's PartitionMovements bookkeeping, which prefers undoing an earlier move
   between the same two members over making a new one, is reproduced, including the HashSet
   order it picks that partition in.

Members sort by plain member id here (Kafka's sticky code ignores group.instance.id).

Kafka's quirks on odd input are kept too: a member with an empty subscription seen first does
not stop the constrained path; owned partitions that no longer exist confuse its bookkeeping, and
where Java then throws IllegalStateException this raises RuntimeError with the same message.
(Differential tests against Kafka's own classes agreed on thousands of random groups, odd ones
included.)

Divergences from the Java client that remain:
- Rack-aware assignment is not modelled (members carry no rack id).
- Java's general path throws NullPointerException when a partition's owner of an older
  generation has become a "fixed" member, one left out of balancing (say it now subscribes only
  to topics nobody else reads, or to nothing). Here the hand-back rule is skipped for such an
  owner and balancing goes on, so the group still gets an assignment.
- Java's HashMap iteration order is modelled exactly only while no bucket holds more than 8
  keys (see engine.common.hashing); with member ids that is astronomically rare.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.common.hashing import JavaHashSetOrder, java_string_sort_key
from engine.groups.assignors.types import (
    Assignment,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    finished_assignment,
    subscribed_partition_counts,
    subscription_iteration_order,
)

DEFAULT_GENERATION = -1

# partition -> the member that will own it once its current owner has revoked it
TransferringOwnership = dict[TopicPartition, str]


def _generation(subscription: Subscription) -> int:
    """Kafka treats any negative generation as "none", i.e. DEFAULT_GENERATION."""
    return subscription.generation if subscription.generation >= 0 else DEFAULT_GENERATION


def _member_key(member_id: str) -> bytes:
    return java_string_sort_key(member_id)


def _remove_first(partitions: list[TopicPartition], partition: TopicPartition) -> None:
    """Java's List.remove(Object): drop the first occurrence, if any."""
    if partition in partitions:
        partitions.remove(partition)


def _sorted_difference(all_partitions: list[TopicPartition],
                       assigned: list[TopicPartition]) -> list[TopicPartition]:
    """Kafka's two-pointer walk: partitions of `all_partitions` not matched, in order, by `assigned`.

    Both lists must be sorted the same way; this is exactly Java's walk, quirks included.
    """
    if not assigned:
        return list(all_partitions)
    remaining = iter(assigned)
    next_assigned = next(remaining)
    add_directly = False
    unassigned: list[TopicPartition] = []
    for partition in all_partitions:
        if add_directly or partition != next_assigned:
            unassigned.append(partition)
            continue
        following = next(remaining, None)
        if following is None:
            add_directly = True
        else:
            next_assigned = following
    return unassigned


@dataclass
class OwnershipClaims:
    """What the members claim to own, after settling conflicting claims (allSubscriptionsEqual)."""

    all_subscriptions_equal: bool
    owned: dict[str, list[TopicPartition]]          # consumerToOwnedPartitions, in HashMap order
    multiply_claimed: set[TopicPartition]           # partitionsWithMultiplePreviousOwners
    max_generation: int


def _settle_claim(claims: OwnershipClaims, owner_of: dict[TopicPartition, str], member_id: str,
                  partition: TopicPartition, subscriptions: dict[str, Subscription]) -> None:
    """One claim as Kafka settles it: the newer generation wins; a tie voids everyone's claim."""
    generation = _generation(subscriptions[member_id])
    other = owner_of.get(partition)
    if other is None:
        claims.owned[member_id].append(partition)
        owner_of[partition] = member_id
        return
    other_generation = _generation(subscriptions[other])
    if generation == other_generation:
        claims.multiply_claimed.add(partition)
        _remove_first(claims.owned[other], partition)
        owner_of[partition] = member_id
    elif generation > other_generation:
        claims.owned[member_id].append(partition)
        _remove_first(claims.owned[other], partition)
        owner_of[partition] = member_id


def collect_claims(partition_counts: dict[str, int], subscriptions: dict[str, Subscription]) -> OwnershipClaims:
    """Kafka's allSubscriptionsEqual: compare subscriptions and settle who owns what."""
    claims = OwnershipClaims(True, {}, set(), DEFAULT_GENERATION)
    subscribed_topics: set[str] = set()
    owner_of: dict[TopicPartition, str] = {}
    for member_id in subscription_iteration_order(subscriptions):
        subscription = subscriptions[member_id]
        if not subscribed_topics:       # Java re-initialises while the set is still empty
            subscribed_topics.update(subscription.topics)
        elif claims.all_subscriptions_equal and not (len(subscription.topics) == len(subscribed_topics)
                                                     and subscribed_topics.issuperset(subscription.topics)):
            claims.all_subscriptions_equal = False
        claims.max_generation = max(claims.max_generation, _generation(subscription))
        claims.owned[member_id] = []
        for partition in subscription.owned_partitions:
            if partition.topic in partition_counts:
                _settle_claim(claims, owner_of, member_id, partition, subscriptions)
    return claims


class _ConstrainedAssignment:
    """ConstrainedAssignmentBuilder: the fast path when all members share one subscription."""

    def __init__(self, partition_counts: dict[str, int], claims: OwnershipClaims) -> None:
        self.partition_counts = partition_counts
        self.claims = claims
        num_members = len(claims.owned)
        total_partitions = sum(partition_counts.values())
        self.min_quota = total_partitions // num_members
        self.max_quota = -(-total_partitions // num_members)
        self.expected_over_min_quota = total_partitions % num_members
        self.current_over_min_quota = 0
        self.assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in claims.owned}
        self.assigned_partitions: list[TopicPartition] = []
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.unfilled_under_min_quota: list[str] = []
        self.unfilled_exactly_min_quota: list[str] = []
        self.transferring: TransferringOwnership = {}

    def build(self) -> tuple[dict[str, list[TopicPartition]], TransferringOwnership]:
        for member_id, owned in self.claims.owned.items():
            self._keep_owned_partitions(member_id, owned)
        unassigned = self._unassigned_partitions()
        self.unfilled_under_min_quota.sort(key=_member_key)
        self.unfilled_exactly_min_quota.sort(key=_member_key)
        self._assign_round_robin(unassigned)
        self._verify_unfilled_members()
        return self.assignment, self.transferring

    def _keep(self, member_id: str, kept: list[TopicPartition], revoked: list[TopicPartition]) -> None:
        self.assignment[member_id].extend(kept)
        self.assigned_partitions.extend(kept)
        for partition in revoked:
            self.maybe_revoked[partition] = member_id

    def _keep_owned_partitions(self, member_id: str, owned: list[TopicPartition]) -> None:
        """Step 1: keep owned partitions up to the quota this member can still get."""
        owned = sorted(owned, key=lambda tp: (tp.partition, tp.topic))
        owned = [tp for tp in owned if tp not in self.claims.multiply_claimed]
        if len(owned) < self.min_quota:
            self._keep(member_id, owned, [])
            self.unfilled_under_min_quota.append(member_id)
        elif len(owned) >= self.max_quota and self.current_over_min_quota < self.expected_over_min_quota:
            self.current_over_min_quota += 1
            if self.current_over_min_quota == self.expected_over_min_quota:
                self.unfilled_exactly_min_quota.clear()
            self._keep(member_id, owned[:self.max_quota], owned[self.max_quota:])
        else:
            self._keep(member_id, owned[:self.min_quota], owned[self.min_quota:])
            if self.current_over_min_quota < self.expected_over_min_quota:
                self.unfilled_exactly_min_quota.append(member_id)

    def _unassigned_partitions(self) -> list[TopicPartition]:
        all_partitions = [TopicPartition(topic, p) for topic in sorted(self.partition_counts)
                          for p in range(self.partition_counts[topic])]
        return _sorted_difference(all_partitions, sorted(self.assigned_partitions))

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        """Step 3: deal free partitions to members under minQuota, then up to maxQuota."""
        under = self.unfilled_under_min_quota
        cursor = 0                      # Java's iterator over `under`: the next index it returns
        for partition in unassigned:
            if cursor < len(under):
                member_id = under[cursor]
                cursor += 1
            elif not under and not self.unfilled_exactly_min_quota:
                raise RuntimeError("No more unfilled consumers to be assigned.")
            elif not under:
                member_id = self.unfilled_exactly_min_quota.pop(0)
            else:
                member_id = under[0]
                cursor = 1
            assigned_count = self._assign_new_partition(partition, member_id)
            if assigned_count == self.min_quota:
                cursor -= 1
                del under[cursor]
                self.unfilled_exactly_min_quota.append(member_id)
            elif assigned_count == self.max_quota:
                self.current_over_min_quota += 1

    def _assign_new_partition(self, partition: TopicPartition, member_id: str) -> int:
        self.assignment[member_id].append(partition)
        previous_owner = self.maybe_revoked.get(partition)
        if (previous_owner is not None and previous_owner != member_id) or partition in self.claims.multiply_claimed:
            self.transferring[partition] = member_id
        return len(self.assignment[member_id])

    def _verify_unfilled_members(self) -> None:
        if not self.unfilled_under_min_quota:
            return
        if self.current_over_min_quota != self.expected_over_min_quota:
            raise RuntimeError("We haven't reached the expected number of members with more than the "
                               "minQuota partitions, but no more partitions to be assigned")
        for member_id in self.unfilled_under_min_quota:
            if len(self.assignment[member_id]) != self.min_quota:
                raise RuntimeError(f"Consumer: [{member_id}] doesn't reach minQuota partitions, "
                                   "and no more partitions to be assigned")


class _PartitionMovements:
    """Kafka's PartitionMovements: which partitions moved between which two members, per topic."""

    def __init__(self) -> None:
        self._by_topic: dict[str, dict[tuple[str, str], JavaHashSetOrder[TopicPartition]]] = {}
        self._movements: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, partition: TopicPartition) -> tuple[str, str]:
        pair = self._movements.pop(partition)
        topic_movements = self._by_topic[partition.topic]
        topic_movements[pair].remove(partition)
        if not topic_movements[pair]:
            del topic_movements[pair]
        if not topic_movements:
            del self._by_topic[partition.topic]
        return pair

    def _add_record(self, partition: TopicPartition, pair: tuple[str, str]) -> None:
        self._movements[partition] = pair
        topic_movements = self._by_topic.setdefault(partition.topic, {})
        topic_movements.setdefault(pair, JavaHashSetOrder(TopicPartition.java_hashcode)).add(partition)

    def move(self, partition: TopicPartition, old_member: str, new_member: str) -> None:
        if partition not in self._movements:
            self._add_record(partition, (old_member, new_member))
            return
        source, _ = self._remove_record(partition)
        if source != new_member:        # not simply moving back to where it came from
            self._add_record(partition, (source, new_member))

    def partition_to_be_moved(self, partition: TopicPartition, old_member: str, new_member: str) -> TopicPartition:
        """Prefer undoing an earlier move of a same-topic partition from new_member to old_member."""
        topic_movements = self._by_topic.get(partition.topic)
        if topic_movements is None:
            return partition
        if partition in self._movements:
            old_member = self._movements[partition][0]
        reverse = topic_movements.get((new_member, old_member))
        return partition if reverse is None else reverse.first()


class _GeneralAssignment:
    """GeneralAssignmentBuilder: members subscribe to different topics."""

    def __init__(self, partition_counts: dict[str, int], subscriptions: dict[str, Subscription],
                 claims: OwnershipClaims) -> None:
        self.partition_counts = partition_counts
        self.subscriptions = subscriptions
        self.max_generation = claims.max_generation
        self.total_partitions = sum(partition_counts.values())
        self.current: dict[str, list[TopicPartition]] = {m: list(tps) for m, tps in claims.owned.items()}
        self.topic_members: dict[str, list[str]] = {topic: [] for topic in partition_counts}
        self.member_topics: dict[str, list[str]] = {}
        for member_id in subscription_iteration_order(subscriptions):
            topics = [t for t in subscriptions[member_id].topics if t in partition_counts]
            self.member_topics[member_id] = topics
            for topic in topics:
                self.topic_members[topic].append(member_id)
        self.partition_owner = {tp: m for m, tps in self.current.items() for tp in tps}
        topics_in_order = sorted(partition_counts, key=lambda t: (len(self.topic_members[t]), t))
        self.sorted_all_partitions = [TopicPartition(t, p) for t in topics_in_order
                                      for p in range(partition_counts[t])]
        self.revocation_required = False
        self.movements = _PartitionMovements()

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._previous_assignment()
        assigned = self._keep_owned_partitions()
        assigned.sort(key=lambda tp: (len(self.topic_members[tp.topic]), tp.topic, tp.partition))
        unassigned = _sorted_difference(self.sorted_all_partitions, assigned)
        self._balance(previous, unassigned)
        return self.current

    def _previous_assignment(self) -> dict[TopicPartition, tuple[str, int]]:
        """prepopulateCurrentAssignments: who owned each partition in an older generation."""
        previous: dict[TopicPartition, tuple[str, int]] = {}
        for member_id in subscription_iteration_order(self.subscriptions):
            subscription = self.subscriptions[member_id]
            generation = _generation(subscription)
            if generation >= self.max_generation:
                continue
            for partition in subscription.owned_partitions:
                if partition not in previous or generation > previous[partition][1]:
                    previous[partition] = (member_id, generation)
        return previous

    def _keep_owned_partitions(self) -> list[TopicPartition]:
        """Keep owned partitions of still-subscribed topics; drop (revoke) the others."""
        assigned: list[TopicPartition] = []
        for member_id, partitions in self.current.items():
            topics = self.subscriptions[member_id].topics
            for partition in list(partitions):
                if partition.topic not in topics:
                    partitions.remove(partition)
                    self.revocation_required = True
                else:
                    assigned.append(partition)
        return assigned

    # -- the TreeSet of members ordered by (number of partitions, member id) -------------------

    def _sorted_members(self) -> list[str]:
        return sorted(self.current, key=lambda m: (len(self.current[m]), _member_key(m)))

    def _max_assignment_size(self, member_id: str) -> int:
        topics = self.member_topics[member_id]
        if len(topics) == len(self.partition_counts):
            return self.total_partitions
        return sum(self.partition_counts[t] for t in topics)

    def _topic_can_move(self, topic: str) -> bool:
        return len(self.topic_members[topic]) >= 2

    def _member_can_change(self, member_id: str) -> bool:
        partitions = self.current[member_id]
        if len(partitions) < self._max_assignment_size(member_id):
            return True
        return any(self._topic_can_move(tp.topic) for tp in partitions)

    def _assign_to_least_loaded(self, partition: TopicPartition) -> None:
        for member_id in self._sorted_members():
            if partition.topic in self.member_topics[member_id]:
                self.current[member_id].append(partition)
                self.partition_owner[partition] = member_id
                return

    def _balance(self, previous: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self._sorted_members()[-1]]
        for partition in unassigned:
            if self.topic_members[partition.topic]:
                self._assign_to_least_loaded(partition)
        fixed_partitions = {TopicPartition(t, p) for t in self.topic_members if not self._topic_can_move(t)
                            for p in range(self.partition_counts[t])}
        reassignable = [tp for tp in self.sorted_all_partitions if tp not in fixed_partitions]
        unassigned = [tp for tp in unassigned if tp not in fixed_partitions]
        fixed_members = {m: self.current.pop(m) for m in list(self.member_topics) if not self._member_can_change(m)}
        before = {m: list(tps) for m, tps in self.current.items()}
        owner_before = dict(self.partition_owner)
        if not self.revocation_required:
            self._perform_reassignments(unassigned, previous)
        performed = self._perform_reassignments(reassignable, previous)
        if not initializing and performed and _balance_score(self.current) >= _balance_score(before):
            self.current = before
            self.partition_owner = owner_before
        self.current.update(fixed_members)

    def _is_balanced(self) -> bool:
        members = self._sorted_members()
        if not members or len(self.current[members[0]]) >= len(self.current[members[-1]]) - 1:
            return True
        owner = {tp: m for m, tps in self.current.items() for tp in tps}
        for member_id in members:
            count = len(self.current[member_id])
            if count == self._max_assignment_size(member_id):
                continue
            for topic in self.member_topics[member_id]:
                for p in range(self.partition_counts[topic]):
                    other = owner.get(TopicPartition(topic, p))
                    if other is not None and other != member_id and count + 1 < len(self.current[other]):
                        return False
        return True

    def _perform_reassignments(self, partitions: list[TopicPartition],
                               previous: dict[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for partition in partitions:
                if self._is_balanced():
                    break
                if self._reassign_if_unbalanced(partition, previous):
                    performed = modified = True
        return performed

    def _reassign_if_unbalanced(self, partition: TopicPartition,
                                previous: dict[TopicPartition, tuple[str, int]]) -> bool:
        owner = self.partition_owner[partition]
        owner_count = len(self.current[owner])
        previous_owner = previous[partition][0] if partition in previous else None
        if previous_owner in self.current and owner_count > len(self.current[previous_owner]) + 1:
            self._reassign(partition, previous_owner)
            return True
        if any(owner_count > len(self.current[other]) + 1 for other in self.topic_members[partition.topic]
               if other in self.current):
            self._reassign(partition, self._least_loaded_subscriber(partition.topic))
            return True
        return False

    def _least_loaded_subscriber(self, topic: str) -> str:
        return next(m for m in self._sorted_members() if topic in self.member_topics[m])

    def _reassign(self, partition: TopicPartition, new_member: str) -> None:
        owner = self.partition_owner[partition]
        to_move = self.movements.partition_to_be_moved(partition, owner, new_member)
        old_member = self.partition_owner[to_move]
        self.movements.move(to_move, old_member, new_member)
        self.current[old_member].remove(to_move)
        self.current[new_member].append(to_move)
        self.partition_owner[to_move] = new_member


def _balance_score(assignment: dict[str, list[TopicPartition]]) -> int:
    """Sum over member pairs of the difference in partition counts (0 = perfectly even)."""
    sizes = [len(partitions) for partitions in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])


def sticky_assignment(partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
                      ) -> tuple[dict[str, list[TopicPartition]], TransferringOwnership | None]:
    """The target assignment, plus the partitions it moves between live owners.

    The second value is None on the general path, where Kafka leaves it to the cooperative
    assignor to compute (see cooperative_sticky.py).
    """
    if not subscriptions:
        return {}, {}
    partition_counts = subscribed_partition_counts(partitions_per_topic, subscriptions)
    claims = collect_claims(partition_counts, subscriptions)
    if claims.all_subscriptions_equal:
        return _ConstrainedAssignment(partition_counts, claims).build()
    return _GeneralAssignment(partition_counts, subscriptions, claims).build(), None


class StickyAssignor(PartitionAssignor):
    """Kafka's StickyAssignor (eager protocol) without rack awareness."""

    name = "sticky"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]) -> Assignment:
        assignment, _ = sticky_assignment(partitions_per_topic, subscriptions)
        return finished_assignment(assignment, subscriptions)
