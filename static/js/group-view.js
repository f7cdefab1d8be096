// Consumer groups, drawn from the model (lab/model.py): its `groups` — engine/inspect/groups.py's
// describe_groups, with `rebalance` while one runs and `last_known` while the coordinator is down
// or loading — and its `consumers` (who is active, crashed or closed, who polls by itself). For
// each group: members, generation, state, what each member is doing (rejoined, awaited, crashed
// but still a member…), committed offsets and lag, and the rebalance phases.
//
// The phases (JoinGroup → SyncGroup → Assignment) follow the group's real progress, never two at
// once: the model's state says where the group is (and, while a rebalance waits, what for); when
// one frame carries several steps of a rebalance (a whole rebalance run by one command), they
// play in order over a short animation paced by the events' virtual times, then the model's state
// shows again. Field names are read tolerantly (group_id/group, generation/generation_id, …).

import { h, patch } from "./dom.js";
import { describeEvent } from "./describe.js";
import { gettext, interpolate as say } from "./i18n.js";
import { currentGroups, partitionKey } from "./lab-state.js";

// JoinGroup and SyncGroup are Kafka's request names; "Assignment" is a word.
const PHASES = [
  { id: "join", label: () => "JoinGroup" },
  { id: "sync", label: () => "SyncGroup" },
  { id: "assign", label: () => gettext("Assignment") },
];
const PHASE_OF_STATE = { PreparingRebalance: "join", CompletingRebalance: "sync", Stable: "assign", Empty: "none" };
const GROUP_EVENT = /group|consumer|rebalanc|join|sync|heartbeat|member|offset_commit|committed|assign|poll/i;
// The animation of a frame's rebalance steps: virtual ms × PACE gives the wall ms between two
// phases, kept within [STEP_MIN_MS, STEP_MAX_MS]; the last one shows HOLD_MS before the model's
// state takes over; a backlog past BACKLOG_MS is dropped (the page keeps up with a fast clock).
const PACE = 0.5;
const STEP_MIN_MS = 450;
const STEP_MAX_MS = 1200;
const HOLD_MS = 600;
const BACKLOG_MS = 4000;

const groupKinds = new Map();   // kind -> isGroupEvent(kind): asked for every event of every frame

export function isGroupEvent(kind) {
  let known = groupKinds.get(kind);
  if (known === undefined) {
    known = GROUP_EVENT.test(kind) && !/^(records_appended|leader_and_isr_applied)$/.test(kind);
    groupKinds.set(kind, known);
  }
  return known;
}

const first = (obj, ...names) => { for (const n of names) if (obj && obj[n] !== undefined && obj[n] !== null) return obj[n]; return undefined; };
const seconds = (ms) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
const names = (xs) => xs.join(", ");

// A topic-partition list in any of the shapes seen: ["t-0"], [{topic, partition}], {t: [0, 1]}, [["t", 0]].
export function partitionsOf(assignment) {
  if (!assignment) return [];
  if (Array.isArray(assignment)) {
    return assignment.map((a) => {
      if (typeof a === "string") return a;
      if (Array.isArray(a)) return `${a[0]}-${a[1]}`;
      return `${first(a, "topic")}-${first(a, "partition")}`;
    });
  }
  if (typeof assignment === "object") {
    return Object.entries(assignment).flatMap(([topic, parts]) => Array.isArray(parts) ? parts.map((p) => `${topic}-${p}`) : [`${topic}-${parts}`]);
  }
  return [];
}

// {"t-0": offset} from a dict or a list of {topic, partition, offset}.
export function committedOf(group) {
  const raw = first(group, "offsets", "committed", "committed_offsets");
  const out = new Map();
  if (Array.isArray(raw)) {
    for (const o of raw) out.set(`${o.topic}-${o.partition}`, first(o, "offset", "committed_offset", "committed"));
  } else if (raw && typeof raw === "object") {
    for (const [tp, v] of Object.entries(raw)) {
      if (v && typeof v === "object" && !Array.isArray(v)) {
        const inner = first(v, "offset", "committed_offset");
        if (inner !== undefined) out.set(tp, inner);
        else for (const [p, o] of Object.entries(v)) out.set(`${tp}-${p}`, o);
      } else {
        out.set(tp, v);
      }
    }
  }
  return out;
}

// A group as drawn. While its coordinator is down or loading (state "Unknown") and the model has
// its `last_known` description, that is what is drawn (greyed), with `lastKnown` set.
export function normalizeGroup(raw) {
  const lastKnown = first(raw, "state") === "Unknown" && raw.last_known ? raw.last_known : null;
  const g = lastKnown ? { ...raw, ...lastKnown } : raw;
  const members = (first(g, "members") || []).map((m) => (typeof m === "string" ? { id: m, client: m, assigned: [] } : {
    id: first(m, "member_id", "id", "name", "consumer"),
    client: first(m, "member", "client_id", "consumer", "name", "member_id", "id"),
    assigned: partitionsOf(first(m, "assignment", "assigned", "partitions")),
    state: first(m, "state", "status"),
  }));
  return {
    id: first(raw, "group_id", "group", "name", "id"),
    state: first(raw, "state", "group_state") ?? "?",
    shownState: first(g, "state", "group_state") ?? "?",
    generation: first(g, "generation", "generation_id") ?? "?",
    protocol: first(g, "protocol", "assignor", "protocol_name", "assignment_strategy") ?? "",
    leader: first(g, "leader", "leader_id", "leader_member_id"),
    coordinator: first(raw, "coordinator", "coordinator_broker"),
    coordinatorPartition: first(raw, "coordinator_partition"),
    rebalance: lastKnown ? null : raw.rebalance || null,
    lastKnown: Boolean(lastKnown),
    members,
    committed: committedOf(g),
    lag: lastKnown ? null : first(g, "lag") || null,   // the server's own lag (kafka-consumer-groups' LAG), when given
  };
}

// The phase an event says the group has reached ("none": out of any rebalance), or null.
function phaseOfEvent(e) {
  if (e.kind === "group_state_changed") return PHASE_OF_STATE[e.state] ?? null;
  if (e.kind === "rebalance_started" || e.kind === "member_joined") return "join";
  if (e.kind === "rebalance_completed") return "assign";
  return null;
}

// -- what the model says each member is doing ------------------------------------------------------
// When the coordinator's session timer of a member fires, from the model's `timers`
// (engine/timers.py: kind "member_session", subject "<name> in group <group>"), or null.
function sessionDue(view, groupId, member) {
  const subject = `${member.client} in group ${groupId}`;
  const timer = (view.timers || []).find((t) => t.kind === "member_session" && t.subject === subject);
  return typeof timer?.due_ms === "number" ? timer.due_ms : null;
}

function crashedText(view, g, m) {
  const due = sessionDue(view, g.id, m);
  return due === null ? gettext("crashed, still a member until its session times out — it can no longer poll, commit or leave")
    : say(gettext("crashed, still a member until its session times out in %(time)s — it can no longer poll, commit or leave"),
      { time: seconds(Math.max(0, due - view.time_ms)) });
}

// How an awaited member will (or will not) rejoin, in a learner's words.
function awaitedHow(consumer) {
  if (!consumer) return gettext("has not rejoined yet");
  if (consumer.status === "crashed") return gettext("crashed: it will never rejoin; the coordinator drops it when its session times out");
  if (consumer.status === "closed") return gettext("closed: its LeaveGroup is on its way");
  if (consumer.polls_by_itself) return gettext("polls by itself: rejoins at its next poll() once a heartbeat has told it of the rebalance");
  return gettext("polls only when you press Poll: a consumer rejoins inside poll(), so press Poll for it " +
                 "(a heartbeat, every 3 s by default, first tells it of the rebalance)");
}

function memberStatus(view, g, m, consumer) {
  if (consumer?.status === "crashed") return { kind: "crashed", text: crashedText(view, g, m) };
  if (consumer?.status === "closed") return { kind: "closed", text: gettext("closed: leaving the group") };
  const r = g.rebalance;
  if (r?.phase === "join" && r.joined.includes(m.client)) {
    return (r.new || []).includes(m.client) ? { kind: "joined", text: gettext("joined ✓ (new member: its JoinGroup waits at the coordinator)") }
      : { kind: "rejoined", text: gettext("rejoined ✓ (its JoinGroup waits at the coordinator)") };
  }
  if (r?.phase === "join" && r.awaited.includes(m.client)) {
    return { kind: "awaited", text: say(gettext("awaited — %(how)s"), { how: awaitedHow(consumer) }) };
  }
  if (r?.phase === "sync" && r.sync_awaited.includes(m.client)) return { kind: "syncing", text: gettext("SyncGroup not sent yet") };
  if (!consumer) return { kind: "", text: "" };
  return { kind: "active", text: consumer.polls_by_itself ? gettext("polls by itself") : gettext("polls when you press Poll") };
}

// -- the explanation while a rebalance waits, or while the coordinator is away -------------------------
function until(view, r) {
  if (typeof r.deadline_ms !== "number") return "";
  return say(gettext("until t = %(at)s (in %(left)s)"), { at: seconds(r.deadline_ms), left: seconds(Math.max(0, r.deadline_ms - view.time_ms)) });
}

function joinWait(view, g, r, consumers) {
  if (r.initial) {
    return [say(gettext("A new group: the coordinator waits group.initial.rebalance.delay.ms for more members to join %(until)s " +
                        "(each new member extends the wait, up to the rebalance timeout), then forms generation %(generation)s."),
                { until: until(view, r), generation: Number(g.generation) + 1 }),
            r.joined.length ? say(gettext("Joined so far: %(names)s."), { names: names(r.joined) }) : ""];
  }
  const sent = r.joined.map((name) => `${name} (${(r.new || []).includes(name) ? gettext("new member") : gettext("rejoined")})`);
  const lines = [say(gettext("Rebalance, join phase: every member must send JoinGroup (again). Sent: %(names)s."),
                     { names: sent.length ? names(sent) : gettext("nobody yet") })];
  for (const name of r.awaited) lines.push(say(gettext("Awaited: %(name)s — %(how)s."), { name, how: awaitedHow(consumers.get(name)) }));
  if (r.pending_member_ids) {
    lines.push(say(gettext("%(count)s new member(s) were given a member id and are coming back with it."), { count: r.pending_member_ids }));
  }
  lines.push(say(gettext("The coordinator waits %(until)s: the rebalance timeout (the members' largest max.poll.interval.ms, " +
                         "%(timeout)s); whoever has not rejoined by then is removed from the group."),
                 { until: until(view, r), timeout: seconds(r.timeout_ms) }));
  return lines;
}

function syncWait(view, g, r) {
  return [say(gettext("Join phase done: generation %(generation)s is formed. Sync phase: the leader%(leader)s runs the " +
                      "assignor%(protocol)s and sends everyone's assignment in its SyncGroup; the coordinator " +
                      "writes it to __consumer_offsets, then answers every member."),
              { generation: g.generation, leader: r.leader ? ` ${r.leader}` : "", protocol: g.protocol ? ` (${g.protocol})` : "" }),
          r.sync_awaited.length ? say(gettext("SyncGroup not sent yet: %(names)s (deadline %(until)s)."),
                                      { names: names(r.sync_awaited), until: until(view, r) }) : ""];
}

function coordinatorAway(view, g) {
  const known = g.coordinatorPartition !== undefined && g.coordinatorPartition >= 0;
  const where = known ? `__consumer_offsets-${g.coordinatorPartition}` : "";
  const broker = view.brokers.get(g.coordinator);
  const expiry = (view.timers || []).find((t) => t.kind === "session_expiry" && t.subject === `broker-${g.coordinator}`);
  const when = typeof expiry?.due_ms === "number"
    ? say(gettext(" (the controller learns it is gone when its ZooKeeper session expires, in %(time)s)"),
          { time: seconds(Math.max(0, expiry.due_ms - view.time_ms)) }) : "";
  const values = { where, when, broker: g.coordinator };
  const what = g.coordinator === undefined || g.coordinator < 0
    ? say(known ? gettext("%(where)s has no leader yet, so the group has no coordinator")
      : gettext("its __consumer_offsets partition has no leader yet, so the group has no coordinator"), values)
    : broker && !broker.alive
      ? say(known ? gettext("coordinator broker %(broker)s is down: the group lives in %(where)s, and until the controller makes another replica its leader%(when)s, nobody answers for the group")
        : gettext("coordinator broker %(broker)s is down: the group lives in its __consumer_offsets partition, and until the controller makes another replica its leader%(when)s, nobody answers for the group"), values)
      : say(known ? gettext("broker %(broker)s is loading %(where)s: it replays the group's metadata and committed offsets from the log")
        : gettext("broker %(broker)s is loading its __consumer_offsets partition: it replays the group's metadata and committed offsets from the log"), values);
  return `${what[0].toUpperCase()}${what.slice(1)}. ` +
         (g.lastKnown ? gettext("Below, greyed: what the group showed last.") : gettext("Nothing is known of the group until then."));
}

// -- the view --------------------------------------------------------------------------------------------
export class GroupView {
  constructor(root) {
    this.root = root;
    this.tracks = new Map();   // group id -> {steps: [{phase, vt, at}], events: [last group events]}
    this.view = null;
    this.timer = null;
  }

  onEvents(events, wallNow) {
    for (const e of events) {
      if (!isGroupEvent(e.kind)) continue;
      const gid = first(e, "group_id", "group");
      if (gid === undefined) continue;
      const track = this.tracks.get(gid) || { steps: [], events: [] };
      const phase = phaseOfEvent(e);
      if (phase) queueStep(track, phase, e.time_ms ?? 0, wallNow);
      track.events = [...track.events, e].slice(-6);
      this.tracks.set(gid, track);
    }
  }

  cut() {
    this.tracks.clear();
  }

  // The phase on show at `wall`: an animated step, or (null) the model's state once the animation is over.
  animated(gid, wall) {
    const steps = this.tracks.get(gid)?.steps || [];
    let shown = null;
    for (const s of steps) if (s.at <= wall) shown = s;
    if (!shown || (shown === steps[steps.length - 1] && wall >= shown.at + HOLD_MS)) return null;
    return shown.phase;
  }

  render(view, wallNow) {
    this.view = view;
    const groups = currentGroups(view).map(normalizeGroup);
    if (!groups.length) {
      patch(this.root, [h("p", { key: "none", class: "muted" },
        gettext("No consumer groups yet. Join a consumer on the left (Consumers tab) and its group appears here: members, generation, assignment, committed offsets and lag."))]);
      return;
    }
    const consumers = new Map((view.consumers || []).map((c) => [c.name, c]));
    patch(this.root, groups.map((g) => this._group(view, g, consumers, wallNow)));
    this._again(wallNow);
  }

  // While a step is still to come, draw again when it is due (the page draws on model changes only).
  _again(wallNow) {
    const next = Math.min(...Array.from(this.tracks.values()).flatMap((t) => t.steps.map((s) => s.at > wallNow ? s.at : s.at + HOLD_MS))
      .filter((at) => at > wallNow));
    if (!Number.isFinite(next) || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.view && !this.root.closest("[hidden]")) this.render(this.view, performance.now());
    }, next - wallNow + 10);
  }

  _phases(g, wallNow) {
    const animated = this.animated(g.id, wallNow);
    const now = animated ?? PHASE_OF_STATE[g.shownState] ?? "none";
    const index = PHASES.findIndex((p) => p.id === now);
    const settled = !animated && g.shownState === "Stable";
    const nodes = PHASES.map((p, i) => h("li", {
      key: p.id, "data-phase": p.id,
      class: `phase${i < index || (settled && i === index) ? " done" : ""}${i === index ? " active" : ""}`,
      "aria-current": i === index ? "step" : null,
    }, `${i < index || (settled && i === index) ? "✓ " : ""}${p.label()}`));
    return h("ol", { class: "phases", "aria-label": gettext("Rebalance phases"), "data-phase-now": index < 0 ? "" : now,
                     "data-animating": animated ? "true" : null }, nodes);
  }

  _explanation(view, g, consumers) {
    let lines = [];
    if (g.state === "Unknown") lines = [coordinatorAway(view, g)];
    else if (g.rebalance?.phase === "join") lines = joinWait(view, g, g.rebalance, consumers);
    else if (g.rebalance?.phase === "sync") lines = syncWait(view, g, g.rebalance);
    else if (g.state === "Empty") lines = [gettext("Empty: no members. The committed offsets stay; the next consumer to join starts from them.")];
    lines = lines.filter(Boolean);
    if (!lines.length) return null;
    const kind = g.state === "Unknown" ? "coordinator" : g.state === "Empty" ? "empty" : "rebalance";
    return h("div", { class: `group-wait ${kind}`, role: "status", "data-group-wait": kind },
      lines.map((line, i) => h("p", { key: `l${i}` }, line)));
  }

  _members(view, g, consumers) {
    const rows = g.members.map((m) => {
      const status = g.lastKnown ? { kind: "", text: "" } : memberStatus(view, g, m, consumers.get(m.client));
      return h("tr", { key: `m:${m.id}`, "data-member": m.id, "data-member-name": m.client, "data-member-status": status.kind || null,
                       class: status.kind === "crashed" ? "crashed" : null }, [
        h("th", { scope: "row" }, `${m.client ?? m.id}${g.leader && g.leader === m.id ? " ★ leader" : ""}`),
        h("td", {}, m.assigned.length ? m.assigned.join(", ") : gettext("— (nothing assigned)")),
        h("td", {}, status.text),
      ]);
    });
    const memberNames = new Set(g.members.map((m) => m.client));
    const joining = g.lastKnown ? [] : (view.consumers || []).filter((c) => c.group === g.id && c.status === "active" && !memberNames.has(c.name));
    for (const c of joining) {
      rows.push(h("tr", { key: `j:${c.name}`, "data-joining": c.name, class: "joining" }, [
        h("th", { scope: "row" }, c.name), h("td", {}, "—"),
        h("td", {}, gettext("joining: not a member yet (finding the coordinator, or its first JoinGroup is on its way)"))]));
    }
    return h("table", { class: "data" }, [
      h("caption", {}, say(gettext("Members (%(count)s)"), { count: g.members.length })),
      h("thead", {}, [h("tr", {}, [h("th", {}, gettext("member")), h("th", {}, gettext("assigned partitions")), h("th", {}, gettext("doing"))])]),
      h("tbody", {}, rows.length ? rows : [h("tr", {}, [h("td", { colspan: 3, class: "muted" }, gettext("no members"))])]),
    ]);
  }

  _lag(view, g) {
    const tps = new Set([...g.committed.keys(), ...g.members.flatMap((m) => m.assigned)]);
    const rows = Array.from(tps).sort().map((tp) => {
      const split = tp.match(/^(.*)-(\d+)$/);
      const part = split ? view.partitions.get(partitionKey(split[1], Number(split[2]))) : null;
      const committed = g.committed.get(tp);
      const hw = part && part.high_watermark >= 0 ? part.high_watermark : null;   // -1: no leader now
      const given = g.lag ? g.lag[tp] : undefined;
      const lag = given !== undefined ? given
        : committed !== undefined && committed !== null && hw !== null ? Math.max(0, hw - committed) : null;
      const owner = g.members.find((m) => m.assigned.includes(tp));
      return h("tr", { key: `p:${tp}`, "data-group-partition": tp, "data-lag": lag ?? "", "data-committed": committed ?? "",
                       "data-hw": hw ?? "" }, [
        h("th", { scope: "row" }, tp),
        h("td", {}, owner ? String(owner.client ?? owner.id) : "—"),
        h("td", {}, committed === undefined ? gettext("none yet") : String(committed)),
        h("td", {}, hw !== null ? String(hw) : part ? gettext("? (no leader)") : "?"),
        h("td", { class: lag ? "lag" : "" }, lag === null ? "?" : String(lag)),
      ]);
    });
    return h("table", { class: "data" }, [
      h("caption", {}, gettext("Committed offsets and lag (lag = HW − committed)")),
      h("thead", {}, [h("tr", {}, [h("th", {}, gettext("partition")), h("th", {}, gettext("owner")), h("th", {}, gettext("committed")),
                                   h("th", {}, "HW"), h("th", {}, gettext("lag"))])]),
      h("tbody", {}, rows.length ? rows : [h("tr", {}, [h("td", { colspan: 5, class: "muted" }, gettext("nothing committed yet"))])]),
    ]);
  }

  _group(view, g, consumers, wallNow) {
    const track = this.tracks.get(g.id);
    const recent = (track?.events || []).slice(-4).map((e, i) => h("li", { key: `ev${e.seq}:${i}` }, [
      h("strong", {}, e.kind), h("span", {}, ` ${describeEvent(e)}`)]));
    const unknown = g.state === "Unknown" && !g.lastKnown;
    const body = h("div", { class: g.lastKnown ? "group-body last-known" : "group-body", "aria-disabled": g.lastKnown ? "true" : null }, [
      this._members(view, g, consumers), this._lag(view, g)]);
    return h("article", { key: `g:${g.id}`, class: `group-card${g.lastKnown ? " stale" : ""}`, "data-group": g.id,
                          "data-state": g.state, "data-generation": g.generation, "data-last-known": g.lastKnown ? g.shownState : null,
                          "data-coordinator": g.coordinator ?? null }, [
      h("header", {}, [
        h("h3", {}, say(gettext("Group %(group)s"), { group: g.id })),
        h("span", { class: "pill", "data-pill": "state" }, unknown ? gettext("state: unknown (no coordinator)")
          : say(g.lastKnown ? gettext("last known state: %(state)s") : gettext("state: %(state)s"), { state: g.shownState })),
        unknown ? null : h("span", { class: "pill", "data-pill": "generation" },
          say(g.lastKnown ? gettext("last known generation %(generation)s") : gettext("generation %(generation)s"), g)),
        g.protocol ? h("span", { class: "pill" }, say(gettext("assignor: %(protocol)s"), g)) : null,
        g.coordinator !== undefined && g.coordinator >= 0 ? h("span", { class: "pill" },
          say(g.state === "Unknown" ? gettext("coordinator: broker %(coordinator)s (away)") : gettext("coordinator: broker %(coordinator)s"), g)) : null,
      ]),
      this._phases(g, wallNow),
      this._explanation(view, g, consumers),
      body,
      recent.length ? h("ul", { class: "group-events" }, recent) : null,
    ]);
  }
}

// Add a phase step to a group's track: at once if nothing is on show, else after the step on show,
// as far after it as the virtual time between them says (within bounds).
function queueStep(track, phase, vt, wallNow) {
  const steps = track.steps;
  const last = steps[steps.length - 1];
  if (last && last.phase === phase) return;
  if (last && last.at > wallNow + BACKLOG_MS) steps.length = 0;   // far behind: start from here
  const previous = steps[steps.length - 1];
  const gap = previous ? Math.min(STEP_MAX_MS, Math.max(STEP_MIN_MS, (vt - previous.vt) * PACE)) : 0;
  steps.push({ phase, vt, at: previous ? Math.max(wallNow, previous.at + gap) : wallNow });
  // Keep the step on show and those to come.
  while (steps.length > 1 && steps[1].at <= wallNow) steps.shift();
}

// Lag per partition for the charts: [{group, tp, lag}] (nothing while a coordinator is away).
export function lagSamples(view) {
  const out = [];
  for (const raw of currentGroups(view)) {
    const g = normalizeGroup(raw);
    if (g.lastKnown) continue;
    for (const [tp, committed] of g.committed) {
      const split = tp.match(/^(.*)-(\d+)$/);
      const part = split ? view.partitions.get(partitionKey(split[1], Number(split[2]))) : null;
      const given = g.lag ? g.lag[tp] : undefined;
      if (typeof given === "number") out.push({ group: g.id, tp, lag: given });
      else if (part && part.high_watermark >= 0 && typeof committed === "number") out.push({ group: g.id, tp, lag: Math.max(0, part.high_watermark - committed) });
    }
  }
  return out;
}
