// The browser's copy of what the server said: the last state snapshot, with each event since
// folded in as the event describes it (an append moves that replica's LEO, a HW event moves its
// HW…). No Kafka rule is computed here — the engine decided everything; this only records it.
// A `state` message replaces the lot, so any drift lasts one snapshot at most.
//
// Besides the cluster, the view keeps short-lived visual effects (flashes, removed cells, message
// trails) with a wall-clock expiry, and the messages in flight with their virtual send/arrive
// times so the renderer can place them at any virtual instant.
//
// A busy session sends tens of thousands of events a second (docs/lab-protocol.md: up to 2,000 a
// frame, ~20 frames a second), far more than can be animated one by one. So the effects are
// bounded, whatever the rate: one trail per route (sender → receiver, API), not one per message,
// and a message that has already arrived by the end of its frame never enters `inflight`. The
// cluster itself is still folded in event by event: the view stays exact.

export const RECORDS_KEPT = 400;     // per replica, newest offsets (trimmed once RECORDS_TRIM_AT are held)
const RECORDS_TRIM_AT = 600;         // trimming sorts the offsets: once per ~200 appended records, not per append
const FLASH_MS = 1600;
const GHOST_MS = 6000;
const TRAIL_MS = 900;

export function partitionKey(topic, partition) {
  return `${topic}\u0000${partition}`;
}

export function partitionLabel(topic, partition) {
  return `${topic}-${partition}`;
}

export function emptyView() {
  return {
    session: null,
    time_ms: 0,
    step: 0,
    controller: -1,
    brokers: new Map(),        // id -> {id, alive, controller, paused_fetcher, slow_ms}
    links_cut: [],             // [["broker-1", "broker-2"], ...]
    topics: new Map(),         // name -> {topic, partitions, replication_factor, config}
    partitions: new Map(),     // partitionKey -> partition (see makePartition)
    groups: [],                // from the snapshot (scenario JSON shape)
    eventGroups: new Map(),    // group -> what the group events said (used while the snapshot has none)
    produced_count: 0,
    inflight: new Map(),       // message_id -> {message_id, api, src, dst, send_ms, arrive_ms}
    trails: new Map(),         // route "src>dst>api[!]" -> {src, dst, api, until, lost}: the newest message on it
    flashes: new Map(),        // "replica:<b>:<pkey>" | "broker:<b>" -> {cls, until}
    ghosts: [],                // removed cells: {broker, topic, partition, offset, key, value, until}
    truncations: [],           // every log_truncated event, for the "what was lost" list
    clients: new Set(),        // client nodes seen on the wire ("client", "consumer-c1", ...)
  };
}

function makePartition(topic, partition) {
  return { topic, partition, leader: -1, leader_epoch: 0, isr: [], replicas: [], high_watermark: 0,
           log_start_offset: 0, replicaStates: new Map() };
}

function makeReplica() {
  return { alive: true, log_end_offset: 0, high_watermark: 0, log_start_offset: 0, records: new Map(), role: null };
}

function replica(part, broker) {
  const id = Number(broker);
  if (!part.replicaStates.has(id)) part.replicaStates.set(id, makeReplica());
  return part.replicaStates.get(id);
}

function partitionOf(view, topic, partition) {
  const key = partitionKey(topic, partition);
  if (!view.partitions.has(key)) view.partitions.set(key, makePartition(topic, partition));
  return view.partitions.get(key);
}

function trimRecords(rep, keep = RECORDS_TRIM_AT) {
  if (rep.records.size <= keep) return;
  const offsets = Array.from(rep.records.keys()).sort((a, b) => a - b);
  for (const offset of offsets.slice(0, offsets.length - RECORDS_KEPT)) rep.records.delete(offset);
}

// -- snapshots ---------------------------------------------------------------------------------
export function applySnapshot(view, state) {
  if (!state) return view;
  view.time_ms = state.time_ms ?? view.time_ms;
  if (state.step !== undefined) view.step = state.step;
  const brokers = new Map();
  let controller = state.controller ?? -1;
  for (const b of state.brokers || []) {
    const old = view.brokers.get(b.id) || {};
    brokers.set(b.id, { id: b.id, alive: !!b.alive, controller: !!b.controller,
                        paused_fetcher: !!b.paused_fetcher, slow_ms: b.slow_ms ?? old.slow_ms ?? 0 });
    if (b.controller) controller = b.id;
  }
  view.brokers = brokers;
  view.controller = controller;
  view.links_cut = (state.links_cut || []).map((pair) => pair.map(String));
  const topics = new Map();
  for (const t of state.topics || []) topics.set(t.topic, { ...t });
  const partitions = new Map();
  for (const p of state.partitions || []) {
    const key = partitionKey(p.topic, p.partition);
    const old = view.partitions.get(key);
    const part = makePartition(p.topic, p.partition);
    Object.assign(part, { leader: p.leader, leader_epoch: p.leader_epoch, isr: p.isr || [], replicas: p.replicas || [],
                          high_watermark: p.high_watermark ?? 0, log_start_offset: p.log_start_offset ?? 0 });
    for (const [broker, rs] of Object.entries(p.replica_states || {})) {
      const rep = makeReplica();
      const before = old?.replicaStates.get(Number(broker));
      if (rs.alive === false || rs.log_end_offset === undefined) {
        // A down broker reports nothing: keep what we last knew of its log, greyed out.
        if (before) Object.assign(rep, before, { records: new Map(before.records) });
        rep.alive = false;
      } else {
        Object.assign(rep, { alive: true, log_end_offset: rs.log_end_offset, high_watermark: rs.high_watermark,
                             log_start_offset: rs.log_start_offset ?? 0 });
        for (const r of rs.records || []) rep.records.set(r.offset, { key: r.key, value: r.value });
        // The snapshot carries the newest records only; older ones we already had stay.
        if (before) for (const [offset, r] of before.records) {
          if (offset < rep.log_end_offset && offset >= rep.log_start_offset && !rep.records.has(offset)) rep.records.set(offset, r);
        }
        trimRecords(rep, RECORDS_KEPT);
      }
      rep.role = Number(broker) === p.leader ? "leader" : "follower";
      part.replicaStates.set(Number(broker), rep);
    }
    partitions.set(key, part);
    if (!topics.has(p.topic)) topics.set(p.topic, { topic: p.topic, partitions: 0, replication_factor: part.replicas.length, config: {} });
    const info = topics.get(p.topic);
    info.partitions = Math.max(info.partitions || 0, p.partition + 1);
  }
  view.topics = topics;
  view.partitions = partitions;
  view.groups = state.groups || [];
  if (view.groups.length) view.eventGroups.clear();
  view.produced_count = state.produced_count ?? (state.produced ? state.produced.length : view.produced_count);
  // In-flight messages that should have arrived by now are gone.
  for (const [id, m] of view.inflight) if (m.arrive_ms < 0 || m.arrive_ms <= view.time_ms) view.inflight.delete(id);
  return view;
}

// -- events ------------------------------------------------------------------------------------
function flash(view, key, cls, wallNow) {
  view.flashes.set(key, { cls, until: wallNow + FLASH_MS });
}

function replicaFlashKey(broker, topic, partition) {
  return `replica:${broker}:${partitionKey(topic, partition)}`;
}

function trail(view, e, until, lost) {
  view.trails.set(`${e.src}>${e.dst}>${e.api}${lost ? "!" : ""}`, { src: e.src, dst: e.dst, api: e.api, until, lost });
}

const HANDLERS = {
  broker_started(view, e, now) {
    const b = view.brokers.get(e.broker) || { id: e.broker, controller: false, paused_fetcher: false, slow_ms: 0 };
    b.alive = true;
    view.brokers.set(e.broker, b);
    for (const part of view.partitions.values()) {
      const rep = part.replicaStates.get(e.broker);
      if (rep) rep.alive = true;
    }
    for (const r of e.recovered_partitions || []) {
      if (r.topic === undefined || r.partition === undefined) continue;
      const rep = replica(partitionOf(view, r.topic, r.partition), e.broker);
      if (r.log_end_offset !== undefined) rep.log_end_offset = r.log_end_offset;
    }
    flash(view, `broker:${e.broker}`, "flash-up", now);
  },
  broker_crashed(view, e, now) {
    const b = view.brokers.get(e.broker);
    // It stays controller (in the store) until its session expires: the next controller_elected says so.
    if (b) b.alive = false;
    for (const part of view.partitions.values()) {
      const rep = part.replicaStates.get(e.broker);
      if (rep) rep.alive = false;
    }
    flash(view, `broker:${e.broker}`, "flash-down", now);
  },
  controller_elected(view, e, now) {
    view.controller = e.broker;
    for (const b of view.brokers.values()) b.controller = b.id === e.broker;
    flash(view, `broker:${e.broker}`, "flash-controller", now);
  },
  topic_created(view, e) {
    view.topics.set(e.topic, { topic: e.topic, partitions: e.partitions, replication_factor: e.replication_factor, config: e.config || {} });
    (e.assignment || []).forEach((replicas, p) => {
      const part = partitionOf(view, e.topic, p);
      part.replicas = replicas;
      for (const b of replicas) replica(part, b);
    });
  },
  partitions_added(view, e) {
    const info = view.topics.get(e.topic);
    const first = e.partitions - (e.added || []).length;
    if (info) info.partitions = e.partitions;
    (e.added || []).forEach((replicas, i) => {
      const part = partitionOf(view, e.topic, first + i);
      part.replicas = replicas;
      for (const b of replicas) replica(part, b);
    });
  },
  leader_elected(view, e, now) {
    const part = partitionOf(view, e.topic, e.partition);
    Object.assign(part, { leader: e.leader, leader_epoch: e.leader_epoch, isr: e.isr });
    for (const [b, rep] of part.replicaStates) rep.role = b === e.leader ? "leader" : "follower";
    flash(view, replicaFlashKey(e.leader, e.topic, e.partition), e.unclean ? "flash-unclean" : "flash-leader", now);
  },
  partition_offline(view, e) {
    const part = partitionOf(view, e.topic, e.partition);
    Object.assign(part, { leader: -1, leader_epoch: e.leader_epoch, isr: e.isr });
  },
  leader_and_isr_applied(view, e) {
    const part = partitionOf(view, e.topic, e.partition);
    replica(part, e.broker).role = e.role;
  },
  records_appended(view, e, now) {
    const part = partitionOf(view, e.topic, e.partition);
    const rep = replica(part, e.broker);
    rep.log_end_offset = e.log_end_offset;
    for (const r of e.records || []) rep.records.set(r.offset, { key: r.key, value: r.value });
    trimRecords(rep);
    if (e.role === "leader") view.produced_count += e.records_count || 0;
  },
  high_watermark_advanced(view, e) {
    const part = partitionOf(view, e.topic, e.partition);
    replica(part, e.broker).high_watermark = e.new;
    if (e.role === "leader" || e.broker === part.leader) part.high_watermark = e.new;
  },
  log_truncated(view, e, now) {
    const part = partitionOf(view, e.topic, e.partition);
    const rep = replica(part, e.broker);
    rep.log_end_offset = e.to_offset;
    rep.high_watermark = Math.min(rep.high_watermark, e.to_offset);
    for (const offset of Array.from(rep.records.keys())) if (offset >= e.to_offset) rep.records.delete(offset);
    for (const r of e.removed || []) {
      view.ghosts.push({ broker: e.broker, topic: e.topic, partition: e.partition, offset: r.offset, key: r.key, value: r.value, until: now + GHOST_MS });
    }
    view.truncations.push(e);
    flash(view, replicaFlashKey(e.broker, e.topic, e.partition), "flash-truncated", now);
  },
  log_start_offset_moved(view, e) {
    const rep = replica(partitionOf(view, e.topic, e.partition), e.broker);
    rep.log_start_offset = e.log_start_offset;
    for (const offset of Array.from(rep.records.keys())) if (offset < e.log_start_offset) rep.records.delete(offset);
  },
  isr_shrunk(view, e, now) {
    const part = partitionOf(view, e.topic, e.partition);
    part.isr = e.isr;
    for (const b of e.removed || []) flash(view, replicaFlashKey(b, e.topic, e.partition), "flash-osr", now);
  },
  isr_expanded(view, e, now) {
    const part = partitionOf(view, e.topic, e.partition);
    part.isr = e.isr;
    for (const b of e.added || []) flash(view, replicaFlashKey(b, e.topic, e.partition), "flash-isr", now);
  },
  message_sent(view, e, now, arrivedBy) {
    if (!String(e.src).startsWith("broker-")) view.clients.add(String(e.src));
    if (!String(e.dst).startsWith("broker-")) view.clients.add(String(e.dst));
    if (e.arrive_ms >= 0 && e.arrive_ms > arrivedBy) {
      view.inflight.set(e.message_id, { message_id: e.message_id, api: e.api, src: e.src, dst: e.dst,
                                        send_ms: e.send_ms, arrive_ms: e.arrive_ms });
    }
    trail(view, e, now + TRAIL_MS, e.arrive_ms < 0);
  },
  message_dropped(view, e, now) {
    view.inflight.delete(e.message_id);
    trail(view, e, now + TRAIL_MS * 2, true);
  },
  fault_injected(view, e) {
    const brokers = e.brokers || [];
    if (e.fault === "pause_fetcher" || e.fault === "resume_fetcher") {
      for (const id of brokers) { const b = view.brokers.get(id); if (b) b.paused_fetcher = e.fault === "pause_fetcher"; }
    } else if (e.fault === "slow_broker") {
      const ms = parseInt(String(e.detail || "").replace(/[^0-9]/g, ""), 10) || 0;
      for (const id of brokers) { const b = view.brokers.get(id); if (b) b.slow_ms = ms; }
    } else if (e.fault === "partition_network" || e.fault === "heal_network") {
      const nodes = String(e.detail || "").split(/\s+[x-]\s+/).map((s) => s.trim()).filter(Boolean);
      if (nodes.length === 2) {
        const same = (pair) => (pair[0] === nodes[0] && pair[1] === nodes[1]) || (pair[0] === nodes[1] && pair[1] === nodes[0]);
        view.links_cut = view.links_cut.filter((pair) => !same(pair));
        if (e.fault === "partition_network") view.links_cut.push(nodes);
      }
    }
  },
};

// -- consumer groups, as their events tell it -------------------------------------------------------
function groupOf(view, e) {
  const id = e.group;
  if (!view.eventGroups.has(id)) {
    view.eventGroups.set(id, { group_id: id, state: "Empty", generation: 0, protocol: null, leader: null,
                               coordinator: e.coordinator, members: new Map(), offsets: {} });
  }
  const g = view.eventGroups.get(id);
  if (e.coordinator !== undefined) g.coordinator = e.coordinator;
  return g;
}

function member(g, id, clientId) {
  if (!g.members.has(id)) g.members.set(id, { member_id: id, client_id: clientId ?? id, assignment: [] });
  const m = g.members.get(id);
  if (clientId) m.client_id = clientId;
  return m;
}

Object.assign(HANDLERS, {
  group_state_changed(view, e) {
    const g = groupOf(view, e);
    Object.assign(g, { state: e.state, generation: e.generation, protocol: e.protocol, leader: e.leader });
    const ids = new Set(e.members || []);
    for (const id of ids) member(g, id);
    for (const id of Array.from(g.members.keys())) if (!ids.has(id)) g.members.delete(id);
  },
  member_joined(view, e) { member(groupOf(view, e), e.member_id, e.client_id); },
  member_removed(view, e) { groupOf(view, e).members.delete(e.member_id); },
  rebalance_completed(view, e) {
    const g = groupOf(view, e);
    Object.assign(g, { generation: e.generation, leader: e.leader, protocol: e.protocol });
    for (const [id, parts] of Object.entries(e.assignment || {})) member(g, id).assignment = parts;
  },
  assignment_received(view, e) {
    if (!e.group) return;
    const g = groupOf(view, e);
    member(g, e.member_id, e.consumer).assignment = e.assignment || [];
  },
  offsets_committed(view, e) { Object.assign(groupOf(view, e).offsets, e.offsets || {}); },
});

// The groups to draw: the snapshot's when it has any, else the ones the events built.
export function currentGroups(view) {
  if (view.groups && view.groups.length) return view.groups;
  return Array.from(view.eventGroups.values()).map((g) => ({ ...g, members: Array.from(g.members.values()) }));
}

// Fold one event into the view; unknown kinds are fine (the event log still shows them).
// A message arriving at or before virtual time `arrivedBy` is not put in flight: it is there already.
export function applyEvent(view, e, wallNow, arrivedBy = -Infinity) {
  if (typeof e.time_ms === "number" && e.time_ms > view.time_ms) view.time_ms = e.time_ms;
  const handler = HANDLERS[e.kind];
  if (handler) handler(view, e, wallNow, arrivedBy);
  return view;
}

// Fold a frame's events, in order; the frame was sent at virtual time `frameTimeMs` (when known).
export function applyEvents(view, events, wallNow, frameTimeMs) {
  const arrivedBy = typeof frameTimeMs === "number" ? frameTimeMs : -Infinity;
  for (const e of events) applyEvent(view, e, wallNow, arrivedBy);
  return view;
}

// Drop effects whose time has passed and messages that have arrived by virtual time `vnow`.
export function expireEffects(view, wallNow, vnow) {
  for (const [key, f] of view.flashes) if (f.until <= wallNow) view.flashes.delete(key);
  view.ghosts = view.ghosts.filter((g) => g.until > wallNow);
  for (const [route, t] of view.trails) if (t.until <= wallNow) view.trails.delete(route);
  for (const [id, m] of view.inflight) if (m.arrive_ms <= vnow) view.inflight.delete(id);
}

export function hasEffects(view) {
  return view.flashes.size > 0 || view.ghosts.length > 0 || view.trails.size > 0 || view.inflight.size > 0;
}

// Where a message is at virtual time `vnow`: 0 at its sender, 1 at its receiver.
export function messageProgress(message, vnow) {
  const span = message.arrive_ms - message.send_ms;
  if (span <= 0) return 1;
  return Math.min(1, Math.max(0, (vnow - message.send_ms) / span));
}

// Kafka's internal topics (__consumer_offsets…) are many partitions of bookkeeping: hidden unless asked for.
export function isInternal(topic) {
  return String(topic).startsWith("__");
}

export function sortedPartitions(view, { internal = true } = {}) {
  return Array.from(view.partitions.values()).filter((p) => internal || !isInternal(p.topic)).sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1);
}
