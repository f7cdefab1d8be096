// One sentence per event, in Kafka's words, for the event log and the toasts. Kinds this file
// does not know (new engine events) are still shown: their fields, as they came.
// Every sentence is the page's language (i18n.js); Kafka's own names (event fields, error codes,
// API and config names) stay as they are.

import { gettext, interpolate, ngettext } from "./i18n.js";

const list = (xs) => `[${(xs || []).join(", ")}]`;
const tp = (e) => `${e.topic}-${e.partition}`;
// A member id is its client id and a UUID (KIP-394): "c1-2a53fb67-…" → "c1".
const clientOf = (memberId) => String(memberId).replace(/-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "");
const say = interpolate;
const acksOf = (acks) => (acks === -1 ? "all" : acks);
const warningsOf = (e) => ((e.warnings || []).length ? ` · ${e.warnings.join(" ")}` : "");

const DESCRIBE = {
  broker_started: (e) => say(e.restarted ? gettext("broker %(broker)s restarted") : gettext("broker %(broker)s started"), e) +
    ((e.recovered_partitions || []).length
      ? say(gettext(" · recovered %(count)s log(s)"), { count: e.recovered_partitions.length }) : ""),
  broker_crashed: (e) => say(e.mode === "power" ? gettext("broker %(broker)s crashed (power loss: unflushed data is gone)")
    : gettext("broker %(broker)s crashed (process: written data survives)"), e),
  broker_session_expired: (e) => say(gettext("broker %(broker)s's session expired: the controller now treats it as dead"), e),
  controller_elected: (e) => say(gettext("broker %(broker)s is the controller (epoch %(controller_epoch)s)"), e),
  topic_created: (e) => say(gettext("topic %(topic)s created: %(partitions)s partition(s), RF %(replication_factor)s, replicas %(assignment)s"),
    { ...e, assignment: JSON.stringify(e.assignment) }) + warningsOf(e),
  partitions_added: (e) => say(gettext("topic %(topic)s now has %(partitions)s partitions (added %(added)s)"),
    { ...e, added: JSON.stringify(e.added) }),
  leader_elected: (e) => say(gettext("%(tp)s: broker %(leader)s is the leader (epoch %(leader_epoch)s) · ISR %(isr)s · %(reason)s"),
    { ...e, tp: tp(e), isr: list(e.isr) }) +
    (e.previous_leader >= 0 ? say(gettext(" · was broker %(previous_leader)s"), e) : "") +
    (e.unclean ? gettext(" · UNCLEAN: committed data may be lost") : ""),
  partition_offline: (e) => say(gettext("%(tp)s is offline: no leader (%(reason)s) · ISR %(isr)s"), { ...e, tp: tp(e), isr: list(e.isr) }),
  topic_deletion_started: (e) => say(gettext("topic %(topic)s is being deleted: StopReplica (delete) to brokers %(replicas)s"),
    { ...e, replicas: list(e.replicas) }) +
    (e.ineligible.length ? say(gettext(" · waits for broker(s) %(ineligible)s to come back"), { ineligible: list(e.ineligible) }) : ""),
  topic_deleted: (e) => say(gettext("topic %(topic)s deleted: every replica gone, its znodes removed"), e),
  replica_deleted: (e) => say(gettext("broker %(broker)s deleted its replica of %(tp)s: directory renamed %(directory)s, removed in %(removed_after_ms)s ms"),
    { ...e, tp: tp(e) }),
  deleted_log_removed: (e) => say(gettext("broker %(broker)s removed %(directory)s from its disk"), e),
  reassignment_started: (e) => say(gettext("%(tp)s moves from %(original)s to %(target)s: replicas %(replicas)s, adding %(adding)s, removing %(removing)s"),
    { ...e, tp: tp(e), original: list(e.original), target: list(e.target), replicas: list(e.replicas),
      adding: list(e.adding), removing: list(e.removing) }),
  reassignment_step: (e) => say(gettext("%(tp)s reassignment %(phase)s: %(description)s"), { ...e, tp: tp(e) }),
  reassignment_completed: (e) => say(gettext("%(tp)s reassignment completed: replicas %(replicas)s, leader %(leader)s, ISR %(isr)s"),
    { ...e, tp: tp(e), replicas: list(e.replicas), isr: list(e.isr) }),
  leader_and_isr_applied: (e) => say(gettext("broker %(broker)s is %(role)s of %(tp)s (leader %(leader)s, epoch %(leader_epoch)s, ISR %(isr)s)"),
    { ...e, tp: tp(e), isr: list(e.isr) }),
  records_appended: (e) => say(ngettext(
    "broker %(broker)s appended %(tp)s offsets %(base_offset)s..%(last_offset)s (%(records_count)s record) as %(role)s · LEO %(log_end_offset)s",
    "broker %(broker)s appended %(tp)s offsets %(base_offset)s..%(last_offset)s (%(records_count)s records) as %(role)s · LEO %(log_end_offset)s",
    e.records_count), { ...e, tp: tp(e) }),
  high_watermark_advanced: (e) => say(gettext("broker %(broker)s (%(role)s) %(tp)s: HW %(old)s → %(new)s"), { ...e, tp: tp(e) }),
  log_truncated: (e) => say(gettext("broker %(broker)s truncated %(tp)s from %(from_offset)s to %(to_offset)s: %(records_removed)s record(s) removed (%(reason)s)"),
    { ...e, tp: tp(e) }),
  segment_rolled: (e) => say(gettext("broker %(broker)s %(tp)s: new segment %(name)s.log (%(reason)s)"),
    { ...e, tp: tp(e), name: String(e.base_offset).padStart(20, "0") }),
  segment_deleted: (e) => say(gettext("broker %(broker)s %(tp)s: deleted segment %(name)s (%(size_in_bytes)s bytes, %(reason)s)"),
    { ...e, tp: tp(e), name: String(e.base_offset).padStart(20, "0") }),
  log_cleaned: (e) => say(gettext("broker %(broker)s %(tp)s: log cleaned below offset %(end_offset)s: %(records_before)s → %(records_after)s records, %(tombstones_removed)s tombstone(s) removed (dirty ratio %(dirty_ratio)s)"),
    { ...e, tp: tp(e) }),
  log_start_offset_moved: (e) => say(gettext("broker %(broker)s %(tp)s: log start offset → %(log_start_offset)s (%(reason)s)"), { ...e, tp: tp(e) }),
  checkpoint_written: (e) => say(gettext("broker %(broker)s wrote %(file)s %(entries)s"), { ...e, entries: JSON.stringify(e.entries) }) +
    (e.internal_entries ? say(gettext(" (+ %(internal_entries)s partitions of internal topics)"), e) : ""),
  isr_shrunk: (e) => say(gettext("%(tp)s: ISR shrank to %(isr)s (removed %(removed)s) · %(reason)s"),
    { ...e, tp: tp(e), isr: list(e.isr), removed: list(e.removed) }),
  isr_expanded: (e) => say(gettext("%(tp)s: ISR grew to %(isr)s (added %(added)s)"), { ...e, tp: tp(e), isr: list(e.isr), added: list(e.added) }),
  message_sent: (e) => `${e.api} ${e.src} → ${e.dst}` +
    (e.arrive_ms < 0 ? gettext(" · will be lost") : say(gettext(" · arrives at %(arrive_ms)s ms"), e)) + summarize(e.summary),
  message_dropped: (e) => say(gettext("%(api)s %(src)s → %(dst)s dropped (%(reason)s)"), e),
  produce_acknowledged: (e) => (e.acks === 0
    ? say(gettext("produce #%(request_id)s to %(tp)s sent with acks=0 (no answer comes back)"), { ...e, tp: tp(e) })
    : say(gettext("produce #%(request_id)s to %(tp)s acknowledged at offset %(offset)s (acks=%(acks)s)"), { ...e, tp: tp(e), acks: acksOf(e.acks) })),
  produce_failed: (e) => say(gettext("produce #%(request_id)s to %(tp)s FAILED: %(error)s (acks=%(acks)s)"), { ...e, tp: tp(e), acks: acksOf(e.acks) }),
  producer_created: (e) => say(gettext("producer %(producer)s created"), e) + warningsOf(e),
  producer_batch_sent: (e) => (e.producer_id >= 0
    ? say(gettext("%(producer)s sent a batch of %(records_count)s to %(tp)s (broker %(broker)s, attempt %(attempt)s, pid %(producer_id)s epoch %(producer_epoch)s seq %(base_sequence)s)"),
      { ...e, tp: tp(e) })
    : say(gettext("%(producer)s sent a batch of %(records_count)s to %(tp)s (broker %(broker)s, attempt %(attempt)s)"), { ...e, tp: tp(e) })),
  producer_batch_retried: (e) => say(gettext("%(producer)s retries %(tp)s after %(error)s (attempt %(attempt)s, backoff %(backoff_ms)s ms)"),
    { ...e, tp: tp(e) }),
  producer_batch_acknowledged: (e) => say(gettext("%(producer)s: %(records_count)s record(s) to %(tp)s acknowledged at offset %(base_offset)s after %(attempts)s attempt(s)"),
    { ...e, tp: tp(e) }),
  producer_batch_failed: (e) => say(gettext("%(producer)s: batch to %(tp)s FAILED: %(error)s — %(message)s"), { ...e, tp: tp(e) }),
  producer_epoch_bumped: (e) => say(gettext("%(producer)s: producer epoch bumped to %(producer_epoch)s (%(reason)s)"), e),
  producer_id_allocated: (e) => say(gettext("broker %(broker)s gave %(client)s producer id %(producer_id)s (epoch %(producer_epoch)s)"), e),
  duplicate_batch_ignored: (e) => say(gettext("broker %(broker)s %(tp)s: duplicate batch (seq %(first_sequence)s..%(last_sequence)s) ignored, already at %(base_offset)s..%(last_offset)s"),
    { ...e, tp: tp(e) }),
  produce_sequence_rejected: (e) => say(gettext("broker %(broker)s %(tp)s: sequence %(base_sequence)s rejected (%(error)s, expected %(expected_sequence)s)"),
    { ...e, tp: tp(e) }),
  group_state_changed: (e) => say(gettext("group %(group)s: %(previous_state)s → %(state)s (generation %(generation)s, %(members)s member(s))"),
    { ...e, members: (e.members || []).length }) + (e.reason ? ` · ${e.reason}` : ""),
  member_joined: (e) => (e.rejoined
    ? say(gettext("group %(group)s: %(client_id)s rejoined (its JoinGroup waits until every member has rejoined)"), e)
    : say(gettext("group %(group)s: %(client_id)s joined as %(member_id)s"), e)),
  member_removed: (e) => say(gettext("group %(group)s: %(client_id)s removed (%(reason)s)"), e),
  rebalance_started: (e) => say(gettext("group %(group)s: rebalance started (was generation %(generation)s) · %(reason)s"), e),
  rebalance_completed: (e) => say(gettext("group %(group)s: generation %(generation)s assigned by %(protocol)s: %(assignment)s"), {
    ...e, assignment: Object.entries(e.assignment || {}).map(([m, ps]) => `${clientOf(m)} → [${ps.join(", ")}]`).join("; "),
  }),
  offsets_committed: (e) => say(gettext("group %(group)s: committed %(offsets)s"),
    { ...e, offsets: Object.entries(e.offsets || {}).map(([k, v]) => `${k}@${v}`).join(", ") }),
  coordinator_loaded: (e) => say(gettext("broker %(broker)s coordinates __consumer_offsets-%(partition)s: %(groups)s group(s), %(offsets)s offset(s) loaded"),
    { ...e, groups: (e.groups || []).length }),
  coordinator_unloaded: (e) => say(gettext("broker %(broker)s no longer coordinates __consumer_offsets-%(partition)s"), e),
  coordinator_discovered: (e) => say(gettext("%(consumer)s: coordinator of %(group)s is broker %(coordinator)s"), e),
  assignment_received: (e) => assignmentReceived(e),
  partitions_revoked: (e) => say(e.lost ? gettext("%(consumer)s lost %(partitions)s") : gettext("%(consumer)s gave up %(partitions)s"),
    { ...e, partitions: list(e.partitions) }) + (e.reason ? ` (${e.reason})` : ""),
  records_consumed: (e) => say(gettext("%(consumer)s polled %(count)s record(s)"), { ...e, count: (e.records || []).length }) + recordsSpan(e.records),
  records_processed: (e) => say(gettext("%(consumer)s processed %(count)s record(s)"), { ...e, count: (e.records || []).length }) +
    ((e.duplicates || []).length ? say(gettext(" · %(count)s DUPLICATE(S)"), { count: e.duplicates.length }) : ""),
  offset_commit_failed: (e) => say(gettext("%(consumer)s: commit to %(group)s FAILED: %(error)s"), e),
  offsets_reset: (e) => say(gettext("%(consumer)s: %(tp)s reset to %(offset)s (%(strategy)s)"), { ...e, tp: tp(e) }),
  consumer_left_group: (e) => say(gettext("%(consumer)s left %(group)s (%(reason)s)"), e),
  preferred_read_replica_changed: (e) => (e.replica >= 0
    ? say(gettext("%(consumer)s: %(tp)s now fetched from follower broker %(replica)s (leader %(leader)s): %(reason)s"), { ...e, tp: tp(e) })
    : say(gettext("%(consumer)s: %(tp)s fetched from the leader again, broker %(leader)s: %(reason)s"), { ...e, tp: tp(e) })),
  consumer_crashed: (e) => (e.group
    ? say(gettext("%(consumer)s crashed (group %(group)s): no LeaveGroup is sent, so the coordinator keeps it as a member until its session times out"), e)
    : say(gettext("%(consumer)s crashed"), e)),
  fault_injected: (e) => say(gettext("fault: %(fault)s %(brokers)s"), { ...e, brokers: list(e.brokers) }) + (e.detail ? " " + e.detail : ""),
  // KRaft (KIP-500, KIP-595, KIP-631): the controller quorum, its Raft log and the brokers' side.
  quorum_controller_activated: (e) => say(gettext("node %(node)s is the active controller (Raft epoch %(epoch)s): it has replayed the whole metadata log"), e),
  quorum_controller_renounced: (e) => say(gettext("node %(node)s is no longer the active controller: %(reason)s"), e),
  metadata_committed: (e) => say(ngettext(
    "__cluster_metadata offset %(base_offset)s committed (epoch %(epoch)s): %(types)s",
    "__cluster_metadata offsets %(base_offset)s..%(last_offset)s committed (epoch %(epoch)s): %(types)s",
    e.last_offset - e.base_offset + 1), { ...e, types: (e.records || []).map((r) => r.type).join(", ") }),
  broker_registered: (e) => say(gettext("broker %(broker)s registered with the controller: broker epoch %(broker_epoch)s"), e),
  broker_fenced: (e) => say(gettext("broker %(broker)s is fenced: no new leaderships, out of every ISR (%(reason)s)"), e),
  broker_unfenced: (e) => say(gettext("broker %(broker)s is unfenced: it has caught up with the metadata and may lead again"), e),
  broker_metadata_applied: (e) => say(gettext("broker %(broker)s applied metadata up to offset %(offset)s (%(partitions_changed)s partition(s) changed)"), e),
  raft_election_started: (e) => say(gettext("node %(node)s stands for election in Raft epoch %(epoch)s (attempt %(retries)s)"), e),
  raft_vote_cast: (e) => say(e.granted ? gettext("node %(voter)s votes for node %(candidate)s in epoch %(epoch)s")
    : gettext("node %(voter)s refuses node %(candidate)s in epoch %(epoch)s: %(reason)s"), e),
  raft_leader_elected: (e) => say(gettext("node %(node)s leads the metadata quorum in epoch %(epoch)s (votes from %(voters)s; the epoch starts at offset %(epoch_start_offset)s)"),
    { ...e, voters: list(e.granting_voters) }),
  raft_leader_resigned: (e) => say(gettext("node %(node)s resigned as Raft leader of epoch %(epoch)s: %(reason)s"), e),
  raft_log_truncated: (e) => say(gettext("node %(node)s truncated its metadata log from %(from_offset)s to %(to_offset)s (it diverged after epoch %(diverging_epoch)s)"), e),
  metadata_high_watermark_advanced: (e) => say(gettext("the metadata high watermark is %(high_watermark)s (leader node %(node)s, epoch %(epoch)s)"), e),
  controller_node_started: (e) => say(e.restarted ? gettext("controller node %(node)s restarted") : gettext("controller node %(node)s started"), e),
  controller_node_crashed: (e) => say(gettext("controller node %(node)s crashed (its metadata log survives on its disk)"), e),
};

// What a member gave up and what it got in a rebalance. With the eager protocols a member revokes
// everything before it rejoins (so the engine's `added` is all it owns); `previous` says what it
// had before, which is what a learner compares with.
function assignmentReceived(e) {
  const now = e.assignment || [];
  const head = say(gettext("%(consumer)s (group %(group)s, generation %(generation)s)"), e);
  if (!Array.isArray(e.previous)) {
    return say(gettext("%(head)s owns %(partitions)s"), { head, partitions: list(now) }) +
      ((e.added || []).length ? say(gettext(" · added %(partitions)s"), { partitions: list(e.added) }) : "") +
      ((e.revoked || []).length ? say(gettext(" · revoked %(partitions)s"), { partitions: list(e.revoked) }) : "") +
      (e.idle ? gettext(" · idle") : "");
  }
  const before = e.previous;
  const kept = now.filter((tp) => before.includes(tp));
  const gaveUp = before.filter((tp) => !now.includes(tp));
  const got = now.filter((tp) => !before.includes(tp));
  const parts = [now.length ? say(gettext("%(head)s now owns %(partitions)s"), { head, partitions: list(now) })
    : say(gettext("%(head)s owns nothing: more consumers than partitions, so it idles"), { head })];
  if (!before.length && now.length) parts.push(gettext("all new to it"));
  if (kept.length) parts.push(say(gettext("kept %(partitions)s"), { partitions: kept.join(", ") }));
  if (gaveUp.length) parts.push(say(gettext("gave up (revoked) %(partitions)s: no longer its to read"), { partitions: gaveUp.join(", ") }));
  if (got.length && before.length) parts.push(say(gettext("got %(partitions)s (new to it)"), { partitions: got.join(", ") }));
  const cooperative = (e.revoked || []).length > 0 || /cooperative/.test(e.protocol || "");
  if (before.length && !cooperative) {
    parts.push(say(gettext("eager rebalance (%(protocol)s): it had revoked all it owned before rejoining, so it stopped reading until now"),
      { protocol: e.protocol || "eager" }));
  } else if ((e.revoked || []).length) {
    parts.push(gettext("cooperative rebalance: it kept reading the rest; a second rebalance hands the revoked partitions over"));
  }
  return parts.join(" · ");
}

function recordsSpan(records) {
  if (!records || !records.length) return "";
  const by = new Map();
  for (const r of records) {
    const key = `${r.topic}-${r.partition}`;
    const span = by.get(key) || [r.offset, r.offset];
    by.set(key, [Math.min(span[0], r.offset), Math.max(span[1], r.offset)]);
  }
  return ": " + Array.from(by.entries()).map(([k, [a, b]]) => `${k} ${a}..${b}`).join(", ");
}

function summarize(summary) {
  if (!summary || typeof summary !== "object") return "";
  const parts = summary.partitions;
  if (Array.isArray(parts) && parts.length) {
    const first = parts.slice(0, 3).map((p) => {
      const extra = ["fetch_offset", "high_watermark", "bytes", "leader_epoch", "error"]
        .filter((k) => p[k] !== undefined && !(k === "error" && p[k] === "NONE")).map((k) => `${k.replace("_", " ")} ${p[k]}`);
      return `${p.topic}-${p.partition}${extra.length ? " " + extra.join(", ") : ""}`;
    });
    return ` · ${first.join("; ")}${parts.length > 3 ? "; …" : ""}`;
  }
  if (summary.topic !== undefined) return ` · ${summary.topic}-${summary.partition ?? "?"}` + (summary.value !== undefined ? ` ${summary.key ?? "null"}=${summary.value}` : "");
  return "";
}

function generic(e) {
  const { seq, time_ms, kind, ...rest } = e;
  return Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" ");
}

export function describeEvent(e) {
  const describe = DESCRIBE[e.kind];
  try {
    return describe ? describe(e) : generic(e);
  } catch {
    return generic(e);
  }
}

export function isKnownKind(kind) {
  return kind in DESCRIBE;
}
