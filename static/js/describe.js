// One sentence per event, in Kafka's words, for the event log and the toasts. Kinds this file
// does not know (new engine events) are still shown: their fields, as they came.

const list = (xs) => `[${(xs || []).join(", ")}]`;
const tp = (e) => `${e.topic}-${e.partition}`;
// A member id is its client id and a UUID (KIP-394): "c1-2a53fb67-…" → "c1".
const clientOf = (memberId) => String(memberId).replace(/-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "");

const DESCRIBE = {
  broker_started: (e) => `broker ${e.broker} ${e.restarted ? "restarted" : "started"}` +
    ((e.recovered_partitions || []).length ? ` · recovered ${e.recovered_partitions.length} log(s)` : ""),
  broker_crashed: (e) => `broker ${e.broker} crashed (${e.mode === "power" ? "power loss: unflushed data is gone" : "process: written data survives"})`,
  broker_session_expired: (e) => `broker ${e.broker}'s session expired: the controller now treats it as dead`,
  controller_elected: (e) => `broker ${e.broker} is the controller (epoch ${e.controller_epoch})`,
  topic_created: (e) => `topic ${e.topic} created: ${e.partitions} partition(s), RF ${e.replication_factor}, replicas ${JSON.stringify(e.assignment)}` +
    ((e.warnings || []).length ? ` · ${e.warnings.join(" ")}` : ""),
  partitions_added: (e) => `topic ${e.topic} now has ${e.partitions} partitions (added ${JSON.stringify(e.added)})`,
  leader_elected: (e) => `${tp(e)}: broker ${e.leader} is the leader (epoch ${e.leader_epoch}) · ISR ${list(e.isr)} · ${e.reason}` +
    (e.previous_leader >= 0 ? ` · was broker ${e.previous_leader}` : "") + (e.unclean ? " · UNCLEAN: committed data may be lost" : ""),
  partition_offline: (e) => `${tp(e)} is offline: no leader (${e.reason}) · ISR ${list(e.isr)}`,
  leader_and_isr_applied: (e) => `broker ${e.broker} is ${e.role} of ${tp(e)} (leader ${e.leader}, epoch ${e.leader_epoch}, ISR ${list(e.isr)})`,
  records_appended: (e) => `broker ${e.broker} appended ${tp(e)} offsets ${e.base_offset}..${e.last_offset} (${e.records_count} record${e.records_count === 1 ? "" : "s"}) as ${e.role} · LEO ${e.log_end_offset}`,
  high_watermark_advanced: (e) => `broker ${e.broker} (${e.role}) ${tp(e)}: HW ${e.old} → ${e.new}`,
  log_truncated: (e) => `broker ${e.broker} truncated ${tp(e)} from ${e.from_offset} to ${e.to_offset}: ${e.records_removed} record(s) removed (${e.reason})`,
  segment_rolled: (e) => `broker ${e.broker} ${tp(e)}: new segment ${String(e.base_offset).padStart(20, "0")}.log (${e.reason})`,
  segment_deleted: (e) => `broker ${e.broker} ${tp(e)}: deleted segment ${String(e.base_offset).padStart(20, "0")} (${e.size_in_bytes} bytes, ${e.reason})`,
  log_start_offset_moved: (e) => `broker ${e.broker} ${tp(e)}: log start offset → ${e.log_start_offset} (${e.reason})`,
  checkpoint_written: (e) => `broker ${e.broker} wrote ${e.file} ${JSON.stringify(e.entries)}` +
    (e.internal_entries ? ` (+ ${e.internal_entries} partitions of internal topics)` : ""),
  isr_shrunk: (e) => `${tp(e)}: ISR shrank to ${list(e.isr)} (removed ${list(e.removed)}) · ${e.reason}`,
  isr_expanded: (e) => `${tp(e)}: ISR grew to ${list(e.isr)} (added ${list(e.added)})`,
  message_sent: (e) => `${e.api} ${e.src} → ${e.dst}` + (e.arrive_ms < 0 ? " · will be lost" : ` · arrives at ${e.arrive_ms} ms`) + summarize(e.summary),
  message_dropped: (e) => `${e.api} ${e.src} → ${e.dst} dropped (${e.reason})`,
  produce_acknowledged: (e) => e.acks === 0 ? `produce #${e.request_id} to ${tp(e)} sent with acks=0 (no answer comes back)`
    : `produce #${e.request_id} to ${tp(e)} acknowledged at offset ${e.offset} (acks=${e.acks === -1 ? "all" : e.acks})`,
  produce_failed: (e) => `produce #${e.request_id} to ${tp(e)} FAILED: ${e.error} (acks=${e.acks === -1 ? "all" : e.acks})`,
  producer_created: (e) => `producer ${e.producer} created` + ((e.warnings || []).length ? ` · ${e.warnings.join(" ")}` : ""),
  producer_batch_sent: (e) => `${e.producer} sent a batch of ${e.records_count} to ${tp(e)} (broker ${e.broker}, attempt ${e.attempt}` +
    (e.producer_id >= 0 ? `, pid ${e.producer_id} epoch ${e.producer_epoch} seq ${e.base_sequence}` : "") + ")",
  producer_batch_retried: (e) => `${e.producer} retries ${tp(e)} after ${e.error} (attempt ${e.attempt}, backoff ${e.backoff_ms} ms)`,
  producer_batch_acknowledged: (e) => `${e.producer}: ${e.records_count} record(s) to ${tp(e)} acknowledged at offset ${e.base_offset} after ${e.attempts} attempt(s)`,
  producer_batch_failed: (e) => `${e.producer}: batch to ${tp(e)} FAILED: ${e.error} — ${e.message}`,
  producer_epoch_bumped: (e) => `${e.producer}: producer epoch bumped to ${e.producer_epoch} (${e.reason})`,
  producer_id_allocated: (e) => `broker ${e.broker} gave ${e.client} producer id ${e.producer_id} (epoch ${e.producer_epoch})`,
  duplicate_batch_ignored: (e) => `broker ${e.broker} ${tp(e)}: duplicate batch (seq ${e.first_sequence}..${e.last_sequence}) ignored, already at ${e.base_offset}..${e.last_offset}`,
  produce_sequence_rejected: (e) => `broker ${e.broker} ${tp(e)}: sequence ${e.base_sequence} rejected (${e.error}, expected ${e.expected_sequence})`,
  group_state_changed: (e) => `group ${e.group}: ${e.previous_state} → ${e.state} (generation ${e.generation}, ${(e.members || []).length} member(s))` + (e.reason ? ` · ${e.reason}` : ""),
  member_joined: (e) => e.rejoined ? `group ${e.group}: ${e.client_id} rejoined (its JoinGroup waits until every member has rejoined)`
    : `group ${e.group}: ${e.client_id} joined as ${e.member_id}`,
  member_removed: (e) => `group ${e.group}: ${e.client_id} removed (${e.reason})`,
  rebalance_started: (e) => `group ${e.group}: rebalance started (was generation ${e.generation}) · ${e.reason}`,
  rebalance_completed: (e) => `group ${e.group}: generation ${e.generation} assigned by ${e.protocol}: ` +
    Object.entries(e.assignment || {}).map(([m, ps]) => `${clientOf(m)} → [${ps.join(", ")}]`).join("; "),
  offsets_committed: (e) => `group ${e.group}: committed ${Object.entries(e.offsets || {}).map(([k, v]) => `${k}@${v}`).join(", ")}`,
  coordinator_loaded: (e) => `broker ${e.broker} coordinates __consumer_offsets-${e.partition}: ${(e.groups || []).length} group(s), ${e.offsets} offset(s) loaded`,
  coordinator_unloaded: (e) => `broker ${e.broker} no longer coordinates __consumer_offsets-${e.partition}`,
  coordinator_discovered: (e) => `${e.consumer}: coordinator of ${e.group} is broker ${e.coordinator}`,
  assignment_received: (e) => assignmentReceived(e),
  partitions_revoked: (e) => `${e.consumer} ${e.lost ? "lost" : "gave up"} ${list(e.partitions)}${e.reason ? ` (${e.reason})` : ""}`,
  records_consumed: (e) => `${e.consumer} polled ${(e.records || []).length} record(s)` + recordsSpan(e.records),
  records_processed: (e) => `${e.consumer} processed ${(e.records || []).length} record(s)` + ((e.duplicates || []).length ? ` · ${e.duplicates.length} DUPLICATE(S)` : ""),
  offset_commit_failed: (e) => `${e.consumer}: commit to ${e.group} FAILED: ${e.error}`,
  offsets_reset: (e) => `${e.consumer}: ${tp(e)} reset to ${e.offset} (${e.strategy})`,
  consumer_left_group: (e) => `${e.consumer} left ${e.group} (${e.reason})`,
  consumer_crashed: (e) => `${e.consumer} crashed${e.group ? ` (group ${e.group}): no LeaveGroup is sent, so the coordinator keeps it as a member until its session times out` : ""}`,
  fault_injected: (e) => `fault: ${e.fault} ${list(e.brokers)}${e.detail ? " " + e.detail : ""}`,
};

// What a member gave up and what it got in a rebalance. With the eager protocols a member revokes
// everything before it rejoins (so the engine's `added` is all it owns); `previous` says what it
// had before, which is what a learner compares with.
function assignmentReceived(e) {
  const now = e.assignment || [];
  const head = `${e.consumer} (group ${e.group}, generation ${e.generation})`;
  if (!Array.isArray(e.previous)) {
    return `${head} owns ${list(now)}` + ((e.added || []).length ? ` · added ${list(e.added)}` : "") +
      ((e.revoked || []).length ? ` · revoked ${list(e.revoked)}` : "") + (e.idle ? " · idle" : "");
  }
  const before = e.previous;
  const kept = now.filter((tp) => before.includes(tp));
  const gaveUp = before.filter((tp) => !now.includes(tp));
  const got = now.filter((tp) => !before.includes(tp));
  const parts = [now.length ? `${head} now owns ${list(now)}` : `${head} owns nothing: more consumers than partitions, so it idles`];
  if (!before.length && now.length) parts.push("all new to it");
  if (kept.length) parts.push(`kept ${kept.join(", ")}`);
  if (gaveUp.length) parts.push(`gave up (revoked) ${gaveUp.join(", ")}: no longer its to read`);
  if (got.length && before.length) parts.push(`got ${got.join(", ")} (new to it)`);
  const cooperative = (e.revoked || []).length > 0 || /cooperative/.test(e.protocol || "");
  if (before.length && !cooperative) {
    parts.push(`eager rebalance (${e.protocol || "eager"}): it had revoked all it owned before rejoining, so it stopped reading until now`);
  } else if ((e.revoked || []).length) {
    parts.push("cooperative rebalance: it kept reading the rest; a second rebalance hands the revoked partitions over");
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
