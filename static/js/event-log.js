// The event log: every engine event as one line, newest at the bottom, filterable by kind, broker,
// partition and text. Kafka's bookkeeping is folded away unless asked for: network messages
// (message_sent/dropped) and events of internal topics (__consumer_offsets) are hidden, and a
// checkpoint line counts its internal partitions instead of listing them. Clicking a line
// rewinds to just after that event (its own step, and the event number: lab/host.py rewind).
//
// Where the lines come from: the live frames, and — for what happened before this page opened
// (a reload) — the session's history on the server, a page at a time ("Show earlier events").
// After a rewind the lines from that moment on are cut: they have not happened (yet).
//
// A busy session adds thousands of lines a frame, more than anyone reads: `add` only stores them
// (bounded: the newest KEEP), a line's sentence is written when it is first shown or searched, and
// `render` — called every animation frame — redraws a log that changed, paced to a quarter of the
// main thread at most (dom.js Pacer).

import { $, h, Pacer, patch } from "./dom.js";
import { describeEvent } from "./describe.js";
import { gettext, interpolate as say } from "./i18n.js";

const KEEP = 20000;
const SHOWN = 400;
// A busy stream (more new lines between two draws than BUSY_SHOWN) while the list follows its
// newest line: only the newest BUSY_SHOWN are drawn. Nobody reads hundreds of lines a second, and
// drawing them took most of a 9-broker page's frames at 10× (python -m lab.bench_browser).
// Scrolled up, or once the stream calms down (paused), the last SHOWN again.
const BUSY_SHOWN = 80;
const BUSY_GAP_MS = 200;   // … and five draws a second at most
const NETWORK_KINDS = new Set(["message_sent", "message_dropped"]);
const LINE_TITLE = gettext("event %(seq)s · step %(step)s · click to rewind to just after it");

function textOf(entry) {
  entry.text ??= describeEvent(entry.e);
  return entry.text;
}

function isInternalEvent(e) {
  return typeof e.topic === "string" && e.topic.startsWith("__");
}

// A checkpoint lists every partition of its broker, __consumer_offsets' fifty too: keep the user's.
function folded(e) {
  if (e.kind !== "checkpoint_written" || !e.entries || e.internal_entries !== undefined) return e;
  const entries = {};
  let internal = 0;
  for (const [tp, offset] of Object.entries(e.entries)) {
    if (tp.startsWith("__")) internal += 1; else entries[tp] = offset;
  }
  return internal ? { ...e, entries, internal_entries: internal } : e;
}

export class EventLog {
  constructor(root, { onRewind, onEarlier, onFilterChange } = {}) {
    this.root = root;
    this.onRewind = onRewind;
    this.onEarlier = onEarlier;
    this.onFilterChange = onFilterChange;
    this.entries = [];
    this.kinds = new Set();
    this.list = $("[data-log=list]", root);
    this.count = $("[data-log=count]", root);
    this.kindSelect = $("[data-log=kind]", root);
    this.brokerInput = $("[data-log=broker]", root);
    this.partitionInput = $("[data-log=partition]", root);
    this.textInput = $("[data-log=text]", root);
    this.networkBox = $("[data-log=network]", root);
    this.internalBox = $("[data-log=internal]", root);
    this.earlierButton = $("[data-log=earlier]", root);
    this.dirty = false;
    this.visible = false;
    this.coalesced = 0;
    this.history = { more: false, first_seq: 0 };
    this.pacer = new Pacer(0.25, 1000, 100);   // ten draws a second at most: a log is read, not watched
    for (const input of [this.kindSelect, this.brokerInput, this.partitionInput, this.textInput]) {
      input.addEventListener("input", () => this.render(true));
    }
    for (const box of [this.networkBox, this.internalBox]) {
      // What the server's history pages hold depends on these: load them again.
      box?.addEventListener("change", () => { this.onFilterChange?.(); this.render(true); });
    }
    this.earlierButton?.addEventListener("click", () => {
      const oldest = this.entries.length ? this.entries[0].e.seq : this.floor;
      if (oldest !== undefined) this.onEarlier?.(oldest);
    });
    // The list follows its newest line until the reader scrolls up (and again once back at the end).
    // Known from scrolling, not measured at each draw: a draw then forces no layout, and a list
    // made shorter by the page around it (a line more in the clock bar) keeps following.
    this.following = true;
    this.list.addEventListener("scroll", () => {
      this.following = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    }, { passive: true });
    this.list.addEventListener("click", (event) => this._pick(event.target.closest("[data-step]")));
    this.list.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); this._pick(event.target.closest("[data-step]")); }
    });
  }

  showNetwork() { return !!this.networkBox?.checked; }
  showInternal() { return !!this.internalBox?.checked; }

  _pick(line) {
    if (line) this.onRewind?.(Number(line.dataset.step), Number(line.dataset.seq));
  }

  _entry(e) {
    if (!this.kinds.has(e.kind)) { this.kinds.add(e.kind); this._kindsChanged = true; }
    return { e: folded(e), text: null, search: null };
  }

  // Live events, in order.
  add(events) {
    this.addedSinceDraw = (this.addedSinceDraw || 0) + events.length;
    for (const e of events) this.entries.push(this._entry(e));
    if (this.entries.length > KEEP) this.entries.splice(0, this.entries.length - KEEP);
    this.dirty = true;
  }

  // Older events from the server's history (already filtered as the boxes say), before the ones held.
  prepend(events, { more, first_seq }) {
    const oldest = this.entries.length ? this.entries[0].e.seq : Infinity;
    const older = events.filter((e) => e.seq < oldest).map((e) => this._entry(e));
    this.entries = [...older, ...this.entries].slice(-KEEP);
    this.setHistory({ more, first_seq });
  }

  setHistory({ more, first_seq }) {
    this.history = { more: !!more, first_seq: first_seq ?? 0 };
    if (this.earlierButton) this.earlierButton.hidden = !more;
    this.dirty = true;
    this.render(true);
  }

  // A new model at event `seq` (a hello): start empty; the history fills what came before.
  reset(seq) {
    this.entries = [];
    this.floor = seq;
    this.coalesced = 0;
    this.dirty = true;
  }

  // The server folded `n` events out of a frame (too many to send one by one; the history has them).
  noteCoalesced(n) {
    this.coalesced += n;
    this.dirty = true;
  }

  // After a rewind to the moment before event `seq`: later events have not happened (yet).
  cutFrom(seq) {
    this.entries = this.entries.filter((entry) => entry.e.seq < seq);
    this.floor = Math.min(this.floor ?? seq, seq);
    this.dirty = true;
  }

  _matches(entry, filter) {
    const e = entry.e;
    if (!filter.network && NETWORK_KINDS.has(e.kind) && filter.kind !== e.kind) return false;
    if (!filter.internal && isInternalEvent(e)) return false;
    if (filter.kind && e.kind !== filter.kind) return false;
    if (filter.broker !== null) {
      const b = filter.broker;
      const nodes = [e.src, e.dst].filter(Boolean);
      const hit = e.broker === b || e.leader === b || (e.brokers || []).includes(b) || nodes.includes(`broker-${b}`) ||
        (e.isr || []).includes(b) || e.previous_leader === b ||
        e.node === b || e.voter === b || e.candidate === b;   // KRaft's events name node ids (combined mode: brokers)
      if (!hit) return false;
    }
    if (filter.partition) {
      const label = e.topic !== undefined && e.partition !== undefined ? `${e.topic}-${e.partition}` : null;
      const inSummary = !label && JSON.stringify(e.summary || "").includes(`"topic":"${filter.topicOf}"`) &&
        JSON.stringify(e.summary || "").includes(`"partition":${filter.partitionNo}`);
      if (label !== filter.partition && !(filter.partition === e.topic) && !inSummary) return false;
    }
    if (filter.text) {
      entry.search ??= `${textOf(entry)} ${JSON.stringify(e)}`.toLowerCase();
      if (!entry.search.includes(filter.text)) return false;
    }
    return true;
  }

  _filter() {
    const broker = this.brokerInput.value.trim();
    const partition = this.partitionInput.value.trim();
    const split = partition.match(/^(.*)-(\d+)$/);
    return {
      kind: this.kindSelect.value, network: this.showNetwork(), internal: this.showInternal(),
      broker: broker === "" || Number.isNaN(Number(broker)) ? null : Number(broker),
      partition, topicOf: split ? split[1] : partition, partitionNo: split ? Number(split[2]) : -1,
      text: this.textInput.value.trim().toLowerCase(),
    };
  }

  setVisible(visible) {
    this.visible = visible;
    if (visible) this.render(true);
  }

  render(force = false) {
    if (!(force || (this.dirty && this.visible && this.pacer.due()))) return;
    const started = performance.now();
    this._draw();
    this.pacer.drawn(started);
  }

  _draw() {
    this.dirty = false;
    if (this._kindsChanged) {
      this._kindsChanged = false;
      const current = this.kindSelect.value;
      patch(this.kindSelect, [h("option", { key: "", value: "" }, gettext("all kinds")),
        ...Array.from(this.kinds).sort().map((k) => h("option", { key: k, value: k, selected: k === current ? true : null }, k))], false);
    }
    const filter = this._filter();
    const nearBottom = this.following;
    const busy = nearBottom && this.addedSinceDraw > BUSY_SHOWN;
    this.addedSinceDraw = 0;
    this.pacer.minGapMs = busy ? BUSY_GAP_MS : 100;
    const shown = this._newest(filter, busy ? BUSY_SHOWN : SHOWN);
    // Counting every kept line (up to KEEP) at every draw was most of a busy log's cost: busy, the
    // counts are refreshed once a second.
    if (!busy || !this.counts || performance.now() - this.counts.at > 1000) this.counts = this._count(filter);
    const { matching, hidden } = this.counts;
    // A line never changes once written (memo: its entry): a draw only adds and removes lines.
    patch(this.list, shown.map((entry) => h("li", {
      key: `e${entry.e.seq}`, memo: [entry], class: `log-line kind-${entry.e.kind}`, tabindex: 0, role: "button",
      "data-step": entry.e.step, "data-seq": entry.e.seq, "data-kind": entry.e.kind,
      title: say(LINE_TITLE, entry.e),
    }, () => [
      h("span", { class: "log-time" }, `${(entry.e.time_ms / 1000).toFixed(3)}s`),
      h("span", { class: "log-step" }, `#${entry.e.step}`),
      h("span", { class: "log-kind" }, entry.e.kind),
      h("span", { class: "log-text" }, textOf(entry)),
    ])), false);
    if (nearBottom) this.list.scrollTop = this.list.scrollHeight;
    const more = matching > shown.length ? say(gettext(" (the last %(count)s shown)"), { count: shown.length }) : "";
    const folded = hidden ? say(gettext(" · %(count)s bookkeeping lines folded (network, internal topics)"), { count: hidden }) : "";
    const coalesced = this.coalesced ? say(gettext(" · %(count)s came too fast to stream (in the history)"), { count: this.coalesced }) : "";
    const earlier = this.history.more ? gettext(" · earlier events on the server") : "";
    this.count.textContent = say(gettext("%(matching)s of %(count)s events"), { matching, count: this.entries.length }) +
      `${more}${folded}${coalesced}${earlier}`;
  }

  // The newest `limit` lines the filter lets through, oldest first.
  _newest(filter, limit) {
    const shown = [];
    for (let i = this.entries.length - 1; i >= 0 && shown.length < limit; i--) {
      if (this._matches(this.entries[i], filter)) shown.push(this.entries[i]);
    }
    return shown.reverse();
  }

  // How many kept lines the filter lets through, and how many bookkeeping lines it folds.
  _count(filter) {
    let matching = 0;
    let hidden = 0;
    for (const entry of this.entries) {
      if (this._matches(entry, filter)) matching++;
      else if ((!filter.network && NETWORK_KINDS.has(entry.e.kind)) || (!filter.internal && isInternalEvent(entry.e))) hidden++;
    }
    return { matching, hidden, at: performance.now() };
  }
}
