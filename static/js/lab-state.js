// The browser's copy of the engine's model (docs/lab-protocol.md): brokers, the controller, links,
// topics, every partition and replica, groups and consumers — exactly what the server said, and
// nothing computed here. A `hello` or `state` brings the whole model; every `events` frame brings
// the patches of the host calls it covers, applied in order. Frames are numbered: a frame that
// does not follow the last one is a gap, and the page asks for a `state` (session.js) rather than
// draw a model it cannot trust. So after every frame the model *is* the engine's state at that step.
//
// Events do not change the model; they only animate it: flashes on a broker or replica, a message
// travelling between two nodes (placed at any virtual instant from its send/arrive times),
// truncated cells fading out (what became of them — lost or fetched back — is the model's
// `truncations`, the server's). Those effects are bounded
// whatever the event rate: one trail per route, at most MESSAGES_KEPT messages in flight.

export const RECORDS_KEPT = 32;      // per replica: the server sends the newest RECORDS_PER_REPLICA (lab/model.py)
const FLASH_MS = 1600;
const GHOST_MS = 6000;
const TRAIL_MS = 900;
const MESSAGES_KEPT = 200;

export function partitionKey(topic, partition) {
  return `${topic}\u0000${partition}`;
}

export function partitionLabel(topic, partition) {
  return `${topic}-${partition}`;
}

export function emptyView() {
  return {
    session: null,
    frame: -1,                 // the number of the last frame applied (-1: no model yet)
    step: 0,
    time_ms: 0,
    seq: 0,                    // the next event's number: every event before it is in the model
    controller: -1,
    brokers: new Map(),        // id -> {id, alive, controller, registered, paused_fetcher, slow_ms}
    links_cut: [],             // [["broker-1", "broker-2"], ...]
    topics: new Map(),         // name -> {topic, partitions, replication_factor, config, internal}
    partitions: new Map(),     // partitionKey -> {topic, partition, leader, leader_epoch, isr, replicas, high_watermark, internal, replicaStates}
    groups: [],                // lab/model.py groups: describe_groups, plus last_known while a coordinator is down
    consumers: [],             // [{name, node, group, status, polls_by_itself, stable}]
    clients: new Set(),        // client nodes on the network ("client", "consumer-c1", ...)
    produced_count: 0,
    timers: [],                // what the cluster is waiting for, with when (lab/model.py, engine/timers.py)
    truncations: [],           // recent truncations, each removed record's fate (lab/model.py, lab/truncations.py)
    metadata: null,            // the metadata layer: ZooKeeper's znodes or the KRaft quorum (lab/metadata_view.py)
    metadata_records: [],      // KRaft: the newest committed __cluster_metadata records, Kafka's JSON of each
    controller_nodes: [],      // KRaft's dedicated controllers: [{id, node, alive, active}], drawn beside the brokers
    // effects, from events only
    inflight: new Map(),       // message_id -> {message_id, api, src, dst, send_ms, arrive_ms}
    trails: new Map(),         // route "src>dst>api[!]" -> {src, dst, api, until, lost}
    flashes: new Map(),        // "replica:<b>:<pkey>" | "broker:<b>" -> {cls, until}
    ghosts: [],                // removed cells: {broker, topic, partition, offset, key, value, until}
  };
}

// -- the model ------------------------------------------------------------------------------------
function setSections(view, model) {
  if (model.controller !== undefined) view.controller = model.controller;
  if (model.brokers) {
    view.brokers = new Map(model.brokers.map((b) => [b.id, { ...b }]));
  }
  if (model.links_cut) view.links_cut = model.links_cut.map((pair) => pair.map(String));
  if (model.topics) view.topics = new Map(model.topics.map((t) => [t.topic, { ...t }]));
  if (model.groups) view.groups = model.groups;
  if (model.consumers) view.consumers = model.consumers;
  if (model.clients) view.clients = new Set(model.clients);
  if (model.produced_count !== undefined) view.produced_count = model.produced_count;
  if (model.timers) view.timers = model.timers;
  if (model.truncations) view.truncations = model.truncations;
  if (model.metadata) view.metadata = model.metadata;
  if (model.metadata_records) view.metadata_records = model.metadata_records;
  if (model.controller_nodes) view.controller_nodes = model.controller_nodes;
  for (const key of ["step", "time_ms", "seq"]) if (typeof model[key] === "number") view[key] = model[key];
}

// A replica as the model gives it, its records merged with what the page holds (patches send only
// what the page lacks: it drops its records from `records_from` on, adds the new ones, and keeps
// offsets in [log start, log end)).
function replicaFrom(rs, before) {
  const records = new Map();
  const from = rs.records_from;
  if (before && from !== undefined) {
    for (const [offset, r] of before.records) if (offset < from) records.set(offset, r);
  } else if (before && from === undefined) {
    for (const [offset, r] of before.records) records.set(offset, r);
  }
  for (const [offset, key, value] of rs.records || []) records.set(offset, { key, value });
  for (const offset of Array.from(records.keys())) {
    if (offset < rs.log_start_offset || offset >= rs.log_end_offset) records.delete(offset);
  }
  if (records.size > RECORDS_KEPT) {
    const keep = Array.from(records.keys()).sort((a, b) => a - b).slice(-RECORDS_KEPT);
    const kept = new Map(keep.map((o) => [o, records.get(o)]));
    return { ...rs, records: kept };
  }
  return { ...rs, records };
}

function setPartition(view, entry, whole) {
  const key = partitionKey(entry.topic, entry.partition);
  const old = whole ? null : view.partitions.get(key);
  const replicaStates = new Map();
  for (const [broker, rs] of Object.entries(entry.replica_states || {})) {
    const id = Number(broker);
    const rep = replicaFrom(rs, old?.replicaStates.get(id));
    delete rep.records_from;
    replicaStates.set(id, rep);
  }
  view.partitions.set(key, {
    topic: entry.topic, partition: entry.partition, leader: entry.leader, leader_epoch: entry.leader_epoch,
    isr: entry.isr || [], replicas: entry.replicas || [], high_watermark: entry.high_watermark,
    internal: !!entry.internal, replicaStates,
  });
}

// A whole model (hello, state): the view's model becomes exactly it; effects in flight that
// belong to another moment go.
export function applyModel(view, model, frame) {
  view.partitions = new Map();
  view.brokers = new Map();
  setSections(view, model);
  for (const entry of Object.values(model.partitions || {})) setPartition(view, entry, true);
  view.frame = frame;
  for (const [id, m] of view.inflight) if (m.arrive_ms <= view.time_ms || m.send_ms > view.time_ms) view.inflight.delete(id);
  return view;
}

export function applyPatch(view, patch) {
  setSections(view, patch);
  for (const [topic, partition] of patch.partitions_removed || []) view.partitions.delete(partitionKey(topic, partition));
  for (const entry of Object.values(patch.partitions || {})) setPartition(view, entry, false);
  return view;
}

// -- effects, from events ------------------------------------------------------------------------------
function flash(view, key, cls, wallNow) {
  view.flashes.set(key, { cls, until: wallNow + FLASH_MS });
}

function replicaFlashKey(broker, topic, partition) {
  return `replica:${broker}:${partitionKey(topic, partition)}`;
}

function trail(view, e, until, lost) {
  view.trails.set(`${e.src}>${e.dst}>${e.api}${lost ? "!" : ""}`, { src: e.src, dst: e.dst, api: e.api, until, lost });
}

const EFFECTS = {
  broker_started(view, e, now) { flash(view, `broker:${e.broker}`, "flash-up", now); },
  broker_crashed(view, e, now) { flash(view, `broker:${e.broker}`, "flash-down", now); },
  controller_elected(view, e, now) { flash(view, `broker:${e.broker}`, "flash-controller", now); },
  // KRaft: the active controller is a broker in combined mode (flash it), or a controller node (its pill).
  quorum_controller_activated(view, e, now) { flash(view, `broker:${e.node}`, "flash-controller", now); },
  broker_fenced(view, e, now) { flash(view, `broker:${e.broker}`, "flash-down", now); },
  broker_unfenced(view, e, now) { flash(view, `broker:${e.broker}`, "flash-up", now); },
  leader_elected(view, e, now) {
    flash(view, replicaFlashKey(e.leader, e.topic, e.partition), e.unclean ? "flash-unclean" : "flash-leader", now);
  },
  log_truncated(view, e, now) {
    for (const r of e.removed || []) {
      view.ghosts.push({ broker: e.broker, topic: e.topic, partition: e.partition, offset: r.offset, key: r.key,
                         value: r.value, until: now + GHOST_MS });
    }
    flash(view, replicaFlashKey(e.broker, e.topic, e.partition), "flash-truncated", now);
  },
  isr_shrunk(view, e, now) {
    for (const b of e.removed || []) flash(view, replicaFlashKey(b, e.topic, e.partition), "flash-osr", now);
  },
  isr_expanded(view, e, now) {
    for (const b of e.added || []) flash(view, replicaFlashKey(b, e.topic, e.partition), "flash-isr", now);
  },
  message_sent(view, e, now, arrivedBy) {
    if (e.arrive_ms >= 0 && e.arrive_ms > arrivedBy) {
      view.inflight.set(e.message_id, { message_id: e.message_id, api: e.api, src: e.src, dst: e.dst,
                                        send_ms: e.send_ms, arrive_ms: e.arrive_ms });
      if (view.inflight.size > MESSAGES_KEPT) view.inflight.delete(view.inflight.keys().next().value);
    }
    trail(view, e, now + TRAIL_MS, e.arrive_ms < 0);
  },
  message_dropped(view, e, now) {
    view.inflight.delete(e.message_id);
    trail(view, e, now + TRAIL_MS * 2, true);
  },
};

// Animate a frame's events, in order; the frame was sent at virtual time `frameTimeMs`: a message
// that has arrived by then is not put in flight (it is there already).
export function applyEffects(view, events, wallNow, frameTimeMs) {
  const arrivedBy = typeof frameTimeMs === "number" ? frameTimeMs : -Infinity;
  for (const e of events) EFFECTS[e.kind]?.(view, e, wallNow, arrivedBy);
  return view;
}

// After a rewind: what came after this moment has not happened (yet).
export function forgetEffectsAfter(view, timeMs) {
  view.inflight.clear();
  view.trails.clear();
  view.ghosts = [];
}

// Drop effects whose time has passed and messages that have arrived by virtual time `vnow`.
export function expireEffects(view, wallNow, vnow) {
  for (const [key, f] of view.flashes) if (f.until <= wallNow) view.flashes.delete(key);
  if (view.ghosts.length) view.ghosts = view.ghosts.filter((g) => g.until > wallNow);
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

// The groups to draw.
export function currentGroups(view) {
  return view.groups || [];
}

// Kafka's internal topics (__consumer_offsets…) are many partitions of bookkeeping: hidden unless asked for.
export function isInternal(topic) {
  return String(topic).startsWith("__");
}

export function sortedPartitions(view, { internal = true } = {}) {
  return Array.from(view.partitions.values()).filter((p) => internal || !isInternal(p.topic)).sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1);
}

// The model as plain data, in the server's own shape and field names (records left out): what the
// drift checks compare with a fresh model from the server (tests, lab/bench_browser.py).
export function modelSummary(view) {
  const partitions = {};
  for (const p of sortedPartitions(view)) {
    const replicas = {};
    for (const [b, r] of p.replicaStates) {
      replicas[b] = { alive: r.alive, log_start_offset: r.log_start_offset, log_end_offset: r.log_end_offset,
                      high_watermark: r.high_watermark };
    }
    partitions[partitionLabel(p.topic, p.partition)] = {
      leader: p.leader, leader_epoch: p.leader_epoch, isr: p.isr, replicas: p.replicas,
      high_watermark: p.high_watermark, replica_states: replicas,
    };
  }
  return {
    step: view.step, time_ms: view.time_ms, seq: view.seq, controller: view.controller,
    brokers: Array.from(view.brokers.values()).map((b) => ({ id: b.id, alive: b.alive, controller: b.controller }))
      .sort((a, b) => a.id - b.id),
    partitions,
    metadata: view.metadata,
    metadata_records: view.metadata_records,
    controller_nodes: view.controller_nodes,
    groups: (view.groups || []).map((g) => ({ group: g.group, state: g.state, generation: g.generation,
      members: (g.members || []).map((m) => ({ member: m.member, assignment: m.assignment })), committed: g.committed })),
  };
}
