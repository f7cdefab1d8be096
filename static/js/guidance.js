// What the page says in words, beside the picture, so that the lab explains itself:
// - the timers the cluster is waiting for (the model's `timers`, engine/timers.py), counting down
//   in virtual time — after a broker dies nothing happens for zookeeper.session.timeout.ms, and
//   the learner should know why and for how long;
// - what the last step did, as a sentence ("broker 2 got broker 1's answer to its Fetch: 3 records
//   copied to t-0"), from the frame's last action and that action's events;
// - where a loaded scenario stands and what its steps' notes say.
// Pure functions of their inputs (and `renderTimers`, which draws one of them).

import { h, patch } from "./dom.js";

const TIMERS_SHOWN = 3;

// "12.3 s", "4 min 05 s", "now": a countdown of virtual milliseconds.
export function countdown(ms) {
  if (ms <= 0) return "now";
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
  if (s === "client") return "the producer";
  return s.replace(/^broker-(\d+)$/, "broker $1").replace(/^consumer-(.+)$/, "consumer $1").replace(/^producer-(.+)$/, "producer $1");
}

// A timer's few words, for the "waiting for" line (the whole sentence is its `text`).
const TIMER_WORDS = {
  session_expiry: (t) => `${nodeName(t.subject)}'s ZooKeeper session expires`,
  controller_election: () => "a new controller is elected",
  leader_election: (t) => `${t.subject} gets a new leader`,
  isr_shrink: (t) => {
    const [partitions, broker] = t.subject.split(": ");
    return broker ? `${broker} leaves the ISR of ${partitions}` : `the ISR of ${t.subject} shrinks`;
  },
  produce_timeout: (t) => `produce to ${t.subject} times out`,
  initial_rebalance_delay: (t) => `${t.subject} forms its first generation`,
  rebalance_timeout: (t) => `${t.subject} ends its join phase`,
  sync_timeout: (t) => `${t.subject} ends its sync phase`,
  member_session: (t) => {
    const [member, group] = t.subject.split(" in ");
    return `${member} is removed from ${group || "its group"}`;
  },
  poll_timeout: (t) => `${t.subject} leaves its group (poll timeout)`,
};

export function timerWords(timer) {
  return (TIMER_WORDS[timer.kind] || ((t) => `${t.kind} (${t.subject})`))(timer);
}

// The "Waiting for 等待" line: the soonest timers with their countdowns, the first one's reason below.
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
    h("span", { class: "timer-in", "data-countdown": "" }, t.due_ms - vnow > 0 ? `in ${countdown(t.due_ms - vnow)}` : "now"),
    h("code", { class: "timer-setting" }, `${t.setting} = ${duration(t.value_ms)}`),
  ]));
  if (list.length > shown.length) items.push(h("li", { key: "more", class: "timer-more" }, `+${list.length - shown.length} more`));
  patch(el, [
    h("span", { key: "label", class: "timers-label" }, "Waiting for 等待"),
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
  const when = left > 0 ? `in ${countdown(left)}` : "now";
  const words = [`ZooKeeper notices ${when}`, `ZK notices ${when}`, when];
  return words.find((w) => width(w) <= room) || words[words.length - 1];
}

// -- what a step did, in words --------------------------------------------------------------------
const REQUEST_WORDS = {
  Fetch: "a Fetch", Produce: "a Produce request", LeaderAndIsr: "LeaderAndIsr (the controller's orders)",
  OffsetsForLeaderEpoch: "an OffsetsForLeaderEpoch request", UpdateMetadata: "UpdateMetadata",
  Metadata: "a Metadata request", JoinGroup: "a JoinGroup", SyncGroup: "a SyncGroup", Heartbeat: "a heartbeat",
  LeaveGroup: "a LeaveGroup", OffsetCommit: "an offset commit", OffsetFetch: "an OffsetFetch",
  FindCoordinator: "a FindCoordinator request", ListOffsets: "a ListOffsets request",
};

function requestWords(api) {
  return REQUEST_WORDS[api] || `a ${api} request`;
}

// The scheduler action's label ("deliver Fetch broker-2->broker-1", "broker-2: HW checkpoint") as a clause.
function actionHead(label) {
  const deliver = /^deliver (\S+) (\S+)->(\S+)$/.exec(label || "");
  if (deliver) {
    const [, api, src, dst] = deliver;
    if (api.endsWith("Response")) return `${nodeName(dst)} got ${nodeName(src)}'s answer to its ${api.slice(0, -8)}`;
    return `${nodeName(dst)} got ${requestWords(api)} from ${nodeName(src)}`;
  }
  const session = /^session of broker (\d+) expires$/.exec(label || "");
  if (session) return `ZooKeeper's session timeout for broker ${session[1]} ran out`;
  if (/^watch /.test(label || "")) return `ZooKeeper told its watchers that ${label.slice(6)} changed`;
  const own = /^([\w.-]+): (.+)$/.exec(label || "");
  if (own) {
    const [, node, what] = own;
    const words = {
      "HW checkpoint": "wrote its high watermarks to replication-offset-checkpoint",
      "recovery-point checkpoint": "wrote its recovery points to recovery-point-offset-checkpoint",
      "isr-expiration": "checked its followers' lag (the isr-expiration task)",
      "log retention": "ran its log retention check",
      "controller election": "tried to create /controller",
      "request time-out": "gave up waiting for an answer (request time-out)",
      "heartbeat thread": "ran its heartbeat thread",
      "application poll loop": "called poll()",
      "processing a record": "finished processing a record",
      "produce purgatory timeout": "timed out an acks=all request waiting in its purgatory",
    }[what] || (what.startsWith("group coordinator ") ? `fired its group coordinator timer ${what.slice(18)}` : what);
    return `${nodeName(node)} ${words}`;
  }
  return label || "an action";
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function offsets(a, b) {
  return a === b ? `offset ${a}` : `offsets ${a}–${b}`;
}

// What an event changed, as a clause (null: nothing worth saying).
const EVENT_CLAUSES = {
  records_appended: (e) => e.role === "follower"
    ? `${plural(e.records_count, "record")} copied to ${e.topic}-${e.partition} on broker ${e.broker} (${offsets(e.base_offset, e.last_offset)})`
    : `${plural(e.records_count, "record")} appended to ${e.topic}-${e.partition} by its leader, broker ${e.broker} (${offsets(e.base_offset, e.last_offset)})`,
  high_watermark_advanced: (e) => `the HW of ${e.topic}-${e.partition} on broker ${e.broker} moved ${e.old} → ${e.new}`,
  log_truncated: (e) => `broker ${e.broker} truncated ${e.topic}-${e.partition} to offset ${e.to_offset} (${plural(e.records_removed, "record")} removed)`,
  isr_shrunk: (e) => `broker ${e.removed.join(", ")} left the ISR of ${e.topic}-${e.partition}`,
  isr_expanded: (e) => `broker ${e.added.join(", ")} rejoined the ISR of ${e.topic}-${e.partition}`,
  leader_elected: (e) => `broker ${e.leader} now leads ${e.topic}-${e.partition} (leader epoch ${e.leader_epoch})`,
  partition_offline: (e) => `${e.topic}-${e.partition} went offline: ${e.reason}`,
  controller_elected: (e) => `broker ${e.broker} became the controller`,
  broker_session_expired: (e) => `broker ${e.broker}'s registration is gone`,
  broker_crashed: (e) => `broker ${e.broker} crashed`,
  broker_started: (e) => `broker ${e.broker} started`,
  checkpoint_written: () => null,
  topic_created: (e) => `topic ${e.topic} created (${plural(e.partitions, "partition")}, replication factor ${e.replication_factor})`,
  fault_injected: (e) => `${e.fault.replace(/_/g, " ")}${e.brokers?.length ? ` (broker ${e.brokers.join(", ")})` : ""}${e.detail ? ` ${e.detail}` : ""}`,
  produce_acknowledged: (e) => `the producer's request ${e.request_id} was acknowledged${e.offset >= 0 ? ` (offset ${e.offset})` : ""}`,
  produce_failed: (e) => `the producer's request ${e.request_id} failed: ${e.error}`,
  member_removed: (e) => `${e.client_id || e.member_id} was removed from group ${e.group}`,
  rebalance_started: (e) => `group ${e.group} started rebalancing`,
  rebalance_completed: (e) => `group ${e.group} is stable in generation ${e.generation}`,
  offsets_committed: (e) => `group ${e.group} committed ${Object.entries(e.offsets || {}).map(([tp, o]) => `${tp}=${o}`).join(", ")}`,
  consumer_left_group: (e) => `${e.consumer} left group ${e.group}: ${e.reason}`,
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
    if (sent.length) clauses.push(`it sent ${sent.map((e) => `${e.api} to ${nodeName(e.dst)}`).slice(0, 2).join(" and ")}`);
  }
  if (!clauses.length) {
    if (/^deliver Fetch /.test(label || "")) clauses.push("nothing new to send yet, so the request waits (replica.fetch.wait.max.ms)");
    else if (/^deliver FetchResponse /.test(label || "")) clauses.push("nothing new");
  }
  const shown = clauses.slice(0, 3);
  const more = clauses.length > shown.length ? `; and ${clauses.length - shown.length} more` : "";
  return `${head}${shown.length ? `: ${shown.join("; ")}${more}` : ""}`;
}

// -- scenarios ---------------------------------------------------------------------------------
// The clock message's scenario (lab/host.py clock()) → {where, main, next} sentences.
export function scenarioGuide(s, describeCommand) {
  if (!s) return null;
  const n = s.steps;
  const what = (step) => (step ? describeCommand(step.command) : "");
  if (s.done) {
    const last = s.last_step !== null && s.last_step !== undefined ? s.last_step + 1 : n;
    return {
      where: `scenario ${s.name || ""} · all ${n} steps played`,
      main: `Finished. Step ${last} of ${n}, ${what(s.last)}${s.last_note ? ` — ${s.last_note}` : ""}`,
      next: "Rewind on the timeline to look again, or load another scenario.",
    };
  }
  const current = s.next_step + 1;
  if (s.in_progress) {
    return {
      where: `scenario ${s.name || ""} · playing step ${current} of ${n}`,
      main: `Step ${current} of ${n}: ${what(s.next)}${s.next_note ? ` — ${s.next_note}` : ""}`,
      next: s.last ? `Before it, step ${s.last_step + 1}: ${what(s.last)}${s.last_note ? ` — ${s.last_note}` : ""}` : "",
    };
  }
  if (!s.last) {
    return {
      where: `scenario ${s.name || ""} · ${n} steps, none played yet`,
      main: `Press Step to play step 1 of ${n}: ${what(s.next)}${s.next_note ? ` — ${s.next_note}` : ""} (or Play to run them all).`,
      next: "",
    };
  }
  return {
    where: `scenario ${s.name || ""} · ${s.next_step} of ${n} steps played`,
    main: `Step ${s.last_step + 1} of ${n} did: ${what(s.last)}${s.last_note ? ` — ${s.last_note}` : ""}`,
    next: `Next, step ${current}: ${what(s.next)}${s.next_note ? ` — ${s.next_note}` : ""}`,
  };
}
