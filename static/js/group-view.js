// Consumer groups: members, generation, state, each member's assignment, committed offset and lag
// per partition, and the rebalance phases (join → sync → assignment) lit up as the group's events
// arrive. It reads the state snapshot's `groups` (the scenario JSON's shape) and any event whose
// kind belongs to groups; field names are read tolerantly (group_id/group, generation/
// generation_id, …) and an event kind it does not know is shown as it came, never dropped.

import { h, patch } from "./dom.js";
import { describeEvent } from "./describe.js";
import { currentGroups, partitionKey } from "./lab-state.js";

const PHASE_OF_STATE = { PreparingRebalance: "join", CompletingRebalance: "sync", Stable: "assign" };
const PHASE_OF_KIND = { rebalance_started: "join", member_joined: "join", rebalance_completed: "assign", assignment_received: "assign" };
const PHASES = [
  { id: "join", label: "JoinGroup", zh: "加入", test: /join|preparing|rebalanc/i },
  { id: "sync", label: "SyncGroup", zh: "同步", test: /sync|completing/i },
  { id: "assign", label: "Assignment", zh: "分配", test: /assign|stable/i },
];
const GROUP_EVENT = /group|consumer|rebalanc|join|sync|heartbeat|member|offset_commit|committed|assign|poll/i;
const PHASE_FLASH_MS = 2500;

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

export function normalizeGroup(g) {
  const members = (first(g, "members") || []).map((m) => (typeof m === "string" ? { id: m, client: m, assigned: [] } : {
    id: first(m, "member_id", "id", "name", "consumer"),
    client: first(m, "member", "client_id", "consumer", "name", "member_id", "id"),
    assigned: partitionsOf(first(m, "assignment", "assigned", "partitions")),
    state: first(m, "state", "status"),
  }));
  return {
    id: first(g, "group_id", "group", "name", "id"),
    state: first(g, "state", "group_state") ?? "?",
    generation: first(g, "generation", "generation_id") ?? "?",
    protocol: first(g, "protocol", "assignor", "protocol_name", "assignment_strategy") ?? "",
    leader: first(g, "leader", "leader_id", "leader_member_id"),
    coordinator: first(g, "coordinator", "coordinator_broker"),
    members,
    committed: committedOf(g),
    lag: first(g, "lag") || null,          // the server's own lag (kafka-consumer-groups' LAG), when given
  };
}

export class GroupView {
  constructor(root) {
    this.root = root;
    this.phases = new Map();   // group id -> {phase, until, events: [..]}
    this.recent = [];          // the last group events, any group
  }

  onEvents(events, wallNow) {
    for (const e of events) {
      if (!isGroupEvent(e.kind)) continue;
      const gid = first(e, "group_id", "group") ?? "(group)";
      const known = e.kind === "group_state_changed" ? PHASE_OF_STATE[e.state] : PHASE_OF_KIND[e.kind];
      const phase = known ? PHASES.find((p) => p.id === known)
        : PHASES.find((p) => p.test.test(e.kind) || p.test.test(String(first(e, "state", "phase") ?? "")));
      const entry = this.phases.get(gid) || { events: [] };
      if (phase) Object.assign(entry, { phase: phase.id, until: wallNow + PHASE_FLASH_MS });
      entry.events = [...entry.events, e].slice(-6);
      this.phases.set(gid, entry);
      this.recent = [...this.recent, e].slice(-12);
    }
  }

  cut() {
    this.phases.clear();
    this.recent = [];
  }

  render(view, wallNow) {
    const groups = currentGroups(view).map(normalizeGroup);
    const ids = new Set(groups.map((g) => String(g.id)));
    for (const gid of this.phases.keys()) if (!ids.has(String(gid))) groups.push({ id: gid, state: "?", generation: "?", protocol: "", members: [], committed: new Map(), fromEvents: true });
    if (!groups.length) {
      patch(this.root, [h("p", { key: "none", class: "muted" },
        "No consumer groups yet. Join a consumer on the left (Consumers tab) and its group appears here: members, generation, assignment, committed offsets and lag. 消费者组"),
        h("p", { key: "note", class: "hint" }, "Groups are drawn from the coordinator's events; after a rewind a group shows again with its next event.")]);
      return;
    }
    patch(this.root, groups.map((g) => this._group(view, g, wallNow)));
  }

  _group(view, g, wallNow) {
    const track = this.phases.get(g.id) || this.phases.get(String(g.id));
    const active = track && track.until > wallNow ? track.phase : null;
    const phaseNodes = PHASES.map((p) => h("li", { key: p.id, class: `phase${active === p.id ? " active" : ""}${track?.phase === p.id ? " last" : ""}`,
                                                     "data-phase": p.id }, `${p.label} ${p.zh}`));
    const memberRows = g.members.map((m) => h("tr", { key: `m:${m.id}`, "data-member": m.id }, [
      h("th", { scope: "row" }, `${m.client ?? m.id}${g.leader && g.leader === m.id ? " ★ leader" : ""}`),
      h("td", {}, m.assigned.length ? m.assigned.join(", ") : "— (nothing assigned)"),
      h("td", {}, m.state ?? ""),
    ]));
    const tps = new Set([...g.committed.keys(), ...g.members.flatMap((m) => m.assigned)]);
    const lagRows = Array.from(tps).sort().map((tp) => {
      const split = tp.match(/^(.*)-(\d+)$/);
      const part = split ? view.partitions.get(partitionKey(split[1], Number(split[2]))) : null;
      const committed = g.committed.get(tp);
      const hw = part ? part.high_watermark : null;
      const given = g.lag ? g.lag[tp] : undefined;
      const lag = given !== undefined ? given
        : committed !== undefined && committed !== null && hw !== null ? Math.max(0, hw - committed) : null;
      const owner = g.members.find((m) => m.assigned.includes(tp));
      return h("tr", { key: `p:${tp}`, "data-group-partition": tp, "data-lag": lag ?? "", "data-committed": committed ?? "",
                       "data-hw": hw ?? "" }, [
        h("th", { scope: "row" }, tp),
        h("td", {}, owner ? String(owner.client ?? owner.id) : "—"),
        h("td", {}, committed === undefined ? "none yet" : String(committed)),
        h("td", {}, hw === null ? "?" : String(hw)),
        h("td", { class: lag ? "lag" : "" }, lag === null ? "?" : String(lag)),
      ]);
    });
    const recent = (track?.events || []).slice(-4).map((e, i) => h("li", { key: `ev${e.seq}:${i}` }, [
      h("strong", {}, e.kind), h("span", {}, ` ${describeEvent(e)}`)]));
    return h("article", { key: `g:${g.id}`, class: "group-card", "data-group": g.id, "data-state": g.state, "data-generation": g.generation }, [
      h("header", {}, [
        h("h3", {}, `Group ${g.id}`),
        h("span", { class: "pill" }, `state: ${g.state}`),
        h("span", { class: "pill" }, `generation ${g.generation}`),
        g.protocol ? h("span", { class: "pill" }, `assignor: ${g.protocol}`) : null,
        g.coordinator !== undefined ? h("span", { class: "pill" }, `coordinator: broker ${g.coordinator}`) : null,
      ]),
      h("ol", { class: "phases", "aria-label": "Rebalance phases" }, phaseNodes),
      h("table", { class: "data" }, [
        h("caption", {}, `Members (${g.members.length}) 成员`),
        h("thead", {}, [h("tr", {}, [h("th", {}, "member"), h("th", {}, "assigned partitions"), h("th", {}, "")])]),
        h("tbody", {}, memberRows.length ? memberRows : [h("tr", {}, [h("td", { colspan: 3, class: "muted" }, "no members")])]),
      ]),
      h("table", { class: "data" }, [
        h("caption", {}, "Committed offsets and lag 位移与积压 (lag = HW − committed)"),
        h("thead", {}, [h("tr", {}, [h("th", {}, "partition"), h("th", {}, "owner"), h("th", {}, "committed"), h("th", {}, "HW"), h("th", {}, "lag")])]),
        h("tbody", {}, lagRows.length ? lagRows : [h("tr", {}, [h("td", { colspan: 5, class: "muted" }, "nothing committed yet")])]),
      ]),
      recent.length ? h("ul", { class: "group-events" }, recent) : null,
    ]);
  }
}

// Lag per partition for the charts: [{group, tp, lag}].
export function lagSamples(view) {
  const out = [];
  for (const raw of currentGroups(view)) {
    const g = normalizeGroup(raw);
    for (const [tp, committed] of g.committed) {
      const split = tp.match(/^(.*)-(\d+)$/);
      const part = split ? view.partitions.get(partitionKey(split[1], Number(split[2]))) : null;
      const given = g.lag ? g.lag[tp] : undefined;
      if (typeof given === "number") out.push({ group: g.id, tp, lag: given });
      else if (part && typeof committed === "number") out.push({ group: g.id, tp, lag: Math.max(0, part.high_watermark - committed) });
    }
  }
  return out;
}
