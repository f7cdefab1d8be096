// What the page says in words, beside the picture, so that the lab explains itself:
// - the timers the cluster is waiting for (the model's `timers`, engine/timers.py), counting down
//   in virtual time — after a broker dies nothing happens for zookeeper.session.timeout.ms, and
//   the learner should know why and for how long;
// - what the last step did, as a sentence ("broker 2 got broker 1's answer to its Fetch: 3 records
//   copied to t-0"), from the frame's last action and that action's events;
// - where a loaded scenario stands and what its steps' notes say.
// Pure functions of their inputs (and `renderTimers`, which draws one of them).

import { h, patch } from "./dom.js";
import { gettext, interpolate as say, ngettext, pageLanguage } from "./i18n.js";

const TIMERS_SHOWN = 3;

// "12.3 s", "4 min 05 s", "now": a countdown of virtual milliseconds.
export function countdown(ms) {
  if (ms <= 0) return gettext("now");
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
}

// "12 s", "30 s", "5 min": a setting's value.
export function duration(ms) {
  if (ms < 60_000 || ms % 60_000) return `${(ms / 1000).toLocaleString("en")} s`;
  return `${ms / 60_000} min`;
}

function nodeName(node) {
  const s = String(node ?? "");
  if (s === "client") return gettext("the producer");
  let match = /^broker-(\d+)$/.exec(s);
  if (match) return say(gettext("broker %(id)s"), { id: match[1] });
  match = /^consumer-(.+)$/.exec(s);
  if (match) return say(gettext("consumer %(name)s"), { name: match[1] });
  match = /^producer-(.+)$/.exec(s);
  return match ? say(gettext("producer %(name)s"), { name: match[1] }) : s;
}

// A timer's few words, for the "waiting for" line (the whole sentence is its `text`).
// (The subjects are the engine's, engine/timers.py: "broker-1", "t-0: broker 3", "c1 in group g".)
const TIMER_WORDS = {
  session_expiry: (t) => say(gettext("%(node)s's ZooKeeper session expires"), { node: nodeName(t.subject) }),
  broker_fencing: (t) => say(gettext("%(node)s is fenced: the controller gets no heartbeats from it"),
    { node: nodeName(t.subject) }),
  controller_election: () => gettext("a new controller is elected"),
  leader_election: (t) => say(gettext("%(partition)s gets a new leader"), { partition: t.subject }),
  isr_shrink: (t) => {
    const [partitions, broker] = t.subject.split(": ");
    const id = /^broker (\d+)$/.exec(broker || "");
    if (id) return say(gettext("broker %(id)s leaves the ISR of %(partitions)s"), { id: id[1], partitions });
    return broker ? say(gettext("%(broker)s leaves the ISR of %(partitions)s"), { broker, partitions })
      : say(gettext("the ISR of %(partitions)s shrinks"), { partitions: t.subject });
  },
  produce_timeout: (t) => say(gettext("produce to %(subject)s times out"), t),
  initial_rebalance_delay: (t) => say(gettext("%(subject)s forms its first generation"), t),
  rebalance_timeout: (t) => say(gettext("%(subject)s ends its join phase"), t),
  sync_timeout: (t) => say(gettext("%(subject)s ends its sync phase"), t),
  member_session: (t) => {
    const [member, group] = t.subject.split(" in ");
    const name = /^group (.+)$/.exec(group || "");
    if (name) return say(gettext("%(member)s is removed from group %(group)s"), { member, group: name[1] });
    return group ? say(gettext("%(member)s is removed from %(group)s"), { member, group })
      : say(gettext("%(member)s is removed from its group"), { member });
  },
  poll_timeout: (t) => say(gettext("%(subject)s leaves its group (poll timeout)"), t),
};

export function timerWords(timer) {
  return (TIMER_WORDS[timer.kind] || ((t) => `${t.kind} (${t.subject})`))(timer);
}

// The "Waiting for" line: the soonest timers with their countdowns, the first one's reason below.
export function renderTimers(el, timers, vnow) {
  const list = timers || [];
  el.hidden = list.length === 0;
  if (!list.length) { patch(el, []); return; }
  const shown = list.slice(0, TIMERS_SHOWN);
  const items = shown.map((t) => h("li", {
    key: `${t.kind}|${t.subject}`, "data-timer": t.kind, "data-subject": t.subject, "data-due-ms": t.due_ms,
    title: `${t.text} (${t.setting} = ${duration(t.value_ms)})`,
  }, [
    h("span", { class: "timer-what" }, timerWords(t)),
    h("span", { class: "timer-in", "data-countdown": "" }, t.due_ms - vnow > 0 ? say(gettext("in %(time)s"), { time: countdown(t.due_ms - vnow) }) : gettext("now")),
    h("code", { class: "timer-setting" }, `${t.setting} = ${duration(t.value_ms)}`),
  ]));
  if (list.length > shown.length) items.push(h("li", { key: "more", class: "timer-more" }, say(gettext("+%(count)s more"), { count: list.length - shown.length })));
  patch(el, [
    h("span", { key: "label", class: "timers-label" }, gettext("Waiting for")),
    h("ul", { key: "list", class: "timers-list" }, items),
    h("p", { key: "why", class: "timers-why" }, shown[0].text),
  ]);
}

// A dead controller's badge: it stays the controller until ZooKeeper expires its session. The
// words that fit `room` (measured by `width(text)`), longest first: "ZooKeeper notices in 12.3 s".
export function controllerNotice(view, brokerId, vnow, room = Infinity, width = (t) => t.length * 8) {
  const timer = (view.timers || []).find((t) => t.kind === "session_expiry" && t.subject === `broker-${brokerId}`);
  if (!timer) return null;
  const left = timer.due_ms - (vnow ?? view.time_ms);
  const when = left > 0 ? say(gettext("in %(time)s"), { time: countdown(left) }) : gettext("now");
  const words = [say(gettext("ZooKeeper notices %(when)s"), { when }), say(gettext("ZK notices %(when)s"), { when }), when];
  return words.find((w) => width(w) <= room) || words[words.length - 1];
}

// -- what a step did, in words --------------------------------------------------------------------
const REQUEST_WORDS = {
  Fetch: () => gettext("a Fetch"), Produce: () => gettext("a Produce request"),
  LeaderAndIsr: () => gettext("LeaderAndIsr (the controller's orders)"),
  OffsetsForLeaderEpoch: () => gettext("an OffsetsForLeaderEpoch request"), UpdateMetadata: () => "UpdateMetadata",
  Metadata: () => gettext("a Metadata request"), JoinGroup: () => gettext("a JoinGroup"), SyncGroup: () => gettext("a SyncGroup"),
  Heartbeat: () => gettext("a heartbeat"), LeaveGroup: () => gettext("a LeaveGroup"), OffsetCommit: () => gettext("an offset commit"),
  OffsetFetch: () => gettext("an OffsetFetch"), FindCoordinator: () => gettext("a FindCoordinator request"),
  ListOffsets: () => gettext("a ListOffsets request"),
};

function requestWords(api) {
  return REQUEST_WORDS[api]?.() || say(gettext("a %(api)s request"), { api });
}

// What a node's own scheduler action did (the part of its label after "<node>: ").
const OWN_ACTION_WORDS = {
  "HW checkpoint": () => gettext("wrote its high watermarks to replication-offset-checkpoint"),
  "recovery-point checkpoint": () => gettext("wrote its recovery points to recovery-point-offset-checkpoint"),
  "isr-expiration": () => gettext("checked its followers' lag (the isr-expiration task)"),
  "log retention": () => gettext("ran its log retention check"),
  "controller election": () => gettext("tried to create /controller"),
  "request time-out": () => gettext("gave up waiting for an answer (request time-out)"),
  "heartbeat thread": () => gettext("ran its heartbeat thread"),
  "application poll loop": () => gettext("called poll()"),
  "processing a record": () => gettext("finished processing a record"),
  "produce purgatory timeout": () => gettext("timed out an acks=all request waiting in its purgatory"),
};

// The scheduler action's label ("deliver Fetch broker-2->broker-1", "broker-2: HW checkpoint") as a clause.
function actionHead(label) {
  const deliver = /^deliver (\S+) (\S+)->(\S+)$/.exec(label || "");
  if (deliver) {
    const [, api, src, dst] = deliver;
    if (api.endsWith("Response")) {
      return say(gettext("%(dst)s got %(src)s's answer to its %(api)s"), { dst: nodeName(dst), src: nodeName(src), api: api.slice(0, -8) });
    }
    return say(gettext("%(dst)s got %(request)s from %(src)s"), { dst: nodeName(dst), request: requestWords(api), src: nodeName(src) });
  }
  const session = /^session of broker (\d+) expires$/.exec(label || "");
  if (session) return say(gettext("ZooKeeper's session timeout for broker %(id)s ran out"), { id: session[1] });
  if (/^watch /.test(label || "")) return say(gettext("ZooKeeper told its watchers that %(path)s changed"), { path: label.slice(6) });
  const own = /^([\w.-]+): (.+)$/.exec(label || "");
  if (own) {
    const [, node, what] = own;
    const words = OWN_ACTION_WORDS[what]?.() || (what.startsWith("group coordinator ")
      ? say(gettext("fired its group coordinator timer %(timer)s"), { timer: what.slice(18) }) : what);
    return `${nodeName(node)} ${words}`;
  }
  return label || gettext("an action");
}

function records(n) {
  return say(ngettext("%(count)s record", "%(count)s records", n), { count: n });
}

function offsets(a, b) {
  return a === b ? say(gettext("offset %(offset)s"), { offset: a }) : say(gettext("offsets %(first)s–%(last)s"), { first: a, last: b });
}

// What an event changed, as a clause (null: nothing worth saying).
const tpOf = (e) => `${e.topic}-${e.partition}`;
const EVENT_CLAUSES = {
  records_appended: (e) => say(e.role === "follower"
    ? gettext("%(records)s copied to %(tp)s on broker %(broker)s (%(offsets)s)")
    : gettext("%(records)s appended to %(tp)s by its leader, broker %(broker)s (%(offsets)s)"),
  { records: records(e.records_count), tp: tpOf(e), broker: e.broker, offsets: offsets(e.base_offset, e.last_offset) }),
  high_watermark_advanced: (e) => say(gettext("the HW of %(tp)s on broker %(broker)s moved %(old)s → %(new)s"), { ...e, tp: tpOf(e) }),
  log_truncated: (e) => say(gettext("broker %(broker)s truncated %(tp)s to offset %(to_offset)s (%(records)s removed)"),
    { ...e, tp: tpOf(e), records: records(e.records_removed) }),
  isr_shrunk: (e) => say(gettext("broker %(brokers)s left the ISR of %(tp)s"), { brokers: e.removed.join(", "), tp: tpOf(e) }),
  isr_expanded: (e) => say(gettext("broker %(brokers)s rejoined the ISR of %(tp)s"), { brokers: e.added.join(", "), tp: tpOf(e) }),
  leader_elected: (e) => say(gettext("broker %(leader)s now leads %(tp)s (leader epoch %(leader_epoch)s)"), { ...e, tp: tpOf(e) }),
  partition_offline: (e) => say(gettext("%(tp)s went offline: %(reason)s"), { ...e, tp: tpOf(e) }),
  topic_deletion_started: (e) => say(gettext("topic %(topic)s is being deleted"), e),
  topic_deleted: (e) => say(gettext("topic %(topic)s is gone"), e),
  replica_deleted: () => null,
  deleted_log_removed: () => null,
  reassignment_started: (e) => say(gettext("%(tp)s starts moving to brokers %(target)s"), { tp: tpOf(e), target: e.target.join(", ") }),
  reassignment_step: () => null,
  reassignment_completed: (e) => say(gettext("%(tp)s now lives on brokers %(replicas)s"), { tp: tpOf(e), replicas: e.replicas.join(", ") }),
  controller_elected: (e) => say(gettext("broker %(broker)s became the controller"), e),
  broker_session_expired: (e) => say(gettext("broker %(broker)s's registration is gone"), e),
  broker_crashed: (e) => say(gettext("broker %(broker)s crashed"), e),
  broker_started: (e) => say(gettext("broker %(broker)s started"), e),
  checkpoint_written: () => null,
  topic_created: (e) => say(ngettext("topic %(topic)s created (%(partitions)s partition, replication factor %(replication_factor)s)",
    "topic %(topic)s created (%(partitions)s partitions, replication factor %(replication_factor)s)", e.partitions), e),
  fault_injected: (e) => `${e.fault.replace(/_/g, " ")}${e.brokers?.length ? say(gettext(" (broker %(brokers)s)"), { brokers: e.brokers.join(", ") }) : ""}${e.detail ? ` ${e.detail}` : ""}`,
  produce_acknowledged: (e) => (e.offset >= 0
    ? say(gettext("the producer's request %(request_id)s was acknowledged (offset %(offset)s)"), e)
    : say(gettext("the producer's request %(request_id)s was acknowledged"), e)),
  produce_failed: (e) => say(gettext("the producer's request %(request_id)s failed: %(error)s"), e),
  member_removed: (e) => say(gettext("%(member)s was removed from group %(group)s"), { member: e.client_id || e.member_id, group: e.group }),
  rebalance_started: (e) => say(gettext("group %(group)s started rebalancing"), e),
  rebalance_completed: (e) => say(gettext("group %(group)s is stable in generation %(generation)s"), e),
  offsets_committed: (e) => say(gettext("group %(group)s committed %(offsets)s"),
    { group: e.group, offsets: Object.entries(e.offsets || {}).map(([tp, o]) => `${tp}=${o}`).join(", ") }),
  consumer_left_group: (e) => say(gettext("%(consumer)s left group %(group)s: %(reason)s"), e),
  quorum_controller_activated: (e) => say(gettext("node %(node)s became the active controller (epoch %(epoch)s)"), e),
  raft_leader_elected: (e) => say(gettext("node %(node)s won the Raft election of epoch %(epoch)s"), e),
  raft_election_started: (e) => say(gettext("node %(node)s started a Raft election (epoch %(epoch)s)"), e),
  metadata_committed: (e) => say(gettext("the controller committed metadata up to offset %(last_offset)s"), e),
  broker_fenced: (e) => say(gettext("broker %(broker)s was fenced"), e),
  broker_unfenced: (e) => say(gettext("broker %(broker)s was unfenced"), e),
  broker_registered: (e) => say(gettext("broker %(broker)s registered (broker epoch %(broker_epoch)s)"), e),
  controller_node_crashed: (e) => say(gettext("controller node %(node)s crashed"), e),
  controller_node_started: (e) => say(gettext("controller node %(node)s started"), e),
  preferred_read_replica_changed: (e) => (e.replica >= 0
    ? say(gettext("%(consumer)s now reads %(tp)s from broker %(replica)s, a follower in its rack"), { ...e, tp: tpOf(e) })
    : say(gettext("%(consumer)s reads %(tp)s from its leader again"), { ...e, tp: tpOf(e) })),
};

const INTERNAL = /^__/;

// What a list of events changed, as clauses (the learner's topics only).
export function describeEvents(events = []) {
  const clauses = [];
  for (const e of events) {
    if (e.topic !== undefined && INTERNAL.test(e.topic)) continue;
    const clause = EVENT_CLAUSES[e.kind]?.(e);
    if (clause && !clauses.includes(clause)) clauses.push(clause);
  }
  return clauses;
}

// "broker 2 got broker 1's answer to its Fetch: 3 records copied to t-0 on broker 2 (offsets 4–6)".
export function describeAction(label, events = []) {
  const head = actionHead(label);
  const clauses = describeEvents(events);
  if (!clauses.length) {
    const sent = events.filter((e) => e.kind === "message_sent");
    const to = sent.map((e) => say(gettext("%(api)s to %(node)s"), { api: e.api, node: nodeName(e.dst) })).slice(0, 2);
    if (sent.length) clauses.push(say(gettext("it sent %(requests)s"), { requests: to.join(gettext(" and ")) }));
  }
  if (!clauses.length) {
    if (/^deliver Fetch /.test(label || "")) clauses.push(gettext("nothing new to send yet, so the request waits (replica.fetch.wait.max.ms)"));
    else if (/^deliver FetchResponse /.test(label || "")) clauses.push(gettext("nothing new"));
  }
  const shown = clauses.slice(0, 3);
  const more = clauses.length > shown.length ? say(gettext("; and %(count)s more"), { count: clauses.length - shown.length }) : "";
  return `${head}${shown.length ? `: ${shown.join("; ")}${more}` : ""}`;
}

// -- scenarios ---------------------------------------------------------------------------------
// The clock message's scenario (lab/host.py clock()) → {where, main, next} sentences.
export function scenarioGuide(s, describeCommand) {
  if (!s) return null;
  const n = s.steps;
  const what = (step) => (step ? describeCommand(step.command) : "");
  const name = s.name || "";
  // A step's command and, when the scenario has one, its note (the scenario's own words, in the
  // page's language when the scenario has them in it: `note_zh`).
  const chinese = pageLanguage().toLowerCase().startsWith("zh");
  const pick = (english, zh) => (chinese && zh ? zh : english);
  const noted = (step, note) => `${what(step)}${note ? ` — ${note}` : ""}`;
  s = { ...s, last_note: pick(s.last_note, s.last_note_zh), next_note: pick(s.next_note, s.next_note_zh) };
  if (s.done) {
    const last = s.last_step !== null && s.last_step !== undefined ? s.last_step + 1 : n;
    return {
      where: say(gettext("scenario %(name)s · all %(steps)s steps played"), { name, steps: n }),
      main: say(gettext("Finished. Step %(step)s of %(steps)s, %(what)s"), { step: last, steps: n, what: noted(s.last, s.last_note) }),
      next: gettext("Rewind on the timeline to look again, or load another scenario."),
    };
  }
  const current = s.next_step + 1;
  if (s.in_progress) {
    return {
      where: say(gettext("scenario %(name)s · playing step %(step)s of %(steps)s"), { name, step: current, steps: n }),
      main: say(gettext("Step %(step)s of %(steps)s: %(what)s"), { step: current, steps: n, what: noted(s.next, s.next_note) }),
      next: s.last ? say(gettext("Before it, step %(step)s: %(what)s"), { step: s.last_step + 1, what: noted(s.last, s.last_note) }) : "",
    };
  }
  if (!s.last) {
    return {
      where: say(gettext("scenario %(name)s · %(steps)s steps, none played yet"), { name, steps: n }),
      main: say(gettext("Press Step to play step 1 of %(steps)s: %(what)s (or Play to run them all)."), { steps: n, what: noted(s.next, s.next_note) }),
      next: "",
    };
  }
  return {
    where: say(gettext("scenario %(name)s · %(played)s of %(steps)s steps played"), { name, played: s.next_step, steps: n }),
    main: say(gettext("Step %(step)s of %(steps)s did: %(what)s"), { step: s.last_step + 1, steps: n, what: noted(s.last, s.last_note) }),
    next: say(gettext("Next, step %(step)s: %(what)s"), { step: current, what: noted(s.next, s.next_note) }),
  };
}
