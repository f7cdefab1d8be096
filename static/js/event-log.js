// The event log: every engine event as one line, newest at the bottom, filterable by kind, broker,
// partition and text. Network messages (message_sent/dropped) are many, so they are hidden until
// asked for — and the count of hidden ones is shown. Clicking a line rewinds the timeline to the
// step that produced it (each event is tagged with the scheduler step of the frame it came in).
//
// A busy session adds thousands of lines a frame, more than anyone reads: `add` only stores them
// (bounded: the newest KEEP), a line's sentence is written when it is first shown or searched, and
// `render` — called every animation frame — redraws a log that changed, paced to a quarter of the
// main thread at most (dom.js Pacer): a fast stream makes the log move less often (still at least
// once a second) instead of freezing the page.

import { $, h, Pacer, patch } from "./dom.js";
import { describeEvent } from "./describe.js";

const KEEP = 20000;
const SHOWN = 400;
const NETWORK_KINDS = new Set(["message_sent", "message_dropped"]);

function textOf(entry) {
  entry.text ??= describeEvent(entry.e);
  return entry.text;
}

export class EventLog {
  constructor(root, { onRewind } = {}) {
    this.root = root;
    this.onRewind = onRewind;
    this.entries = [];
    this.kinds = new Set();
    this.list = $("[data-log=list]", root);
    this.count = $("[data-log=count]", root);
    this.kindSelect = $("[data-log=kind]", root);
    this.brokerInput = $("[data-log=broker]", root);
    this.partitionInput = $("[data-log=partition]", root);
    this.textInput = $("[data-log=text]", root);
    this.networkBox = $("[data-log=network]", root);
    this.dirty = false;
    this.visible = false;
    this.pacer = new Pacer(0.25, 1000);
    for (const input of [this.kindSelect, this.brokerInput, this.partitionInput, this.textInput, this.networkBox]) {
      input.addEventListener("input", () => this.render(true));
    }
    this.list.addEventListener("click", (event) => this._pick(event.target.closest("[data-step]")));
    this.list.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); this._pick(event.target.closest("[data-step]")); }
    });
  }

  _pick(line) {
    if (line) this.onRewind?.(Number(line.dataset.step), Number(line.dataset.seq));
  }

  add(events, step) {
    for (const e of events) {
      this.entries.push({ e, step, text: null, search: null });
      if (!this.kinds.has(e.kind)) { this.kinds.add(e.kind); this._kindsChanged = true; }
    }
    if (this.entries.length > KEEP) this.entries.splice(0, this.entries.length - KEEP);
    this.dirty = true;
  }

  // The server folded `n` events into a state snapshot (too many to send one by one).
  noteCoalesced(n) {
    this.coalesced = (this.coalesced || 0) + n;
    this.dirty = true;
  }

  // After a rewind to `step`, what happened later has not happened (yet).
  cutAfter(step) {
    this.entries = this.entries.filter((entry) => entry.step <= step);
    this.dirty = true;
  }

  clear() {
    this.entries = [];
    this.dirty = true;
  }

  _matches(entry, filter) {
    const e = entry.e;
    if (!filter.network && NETWORK_KINDS.has(e.kind) && filter.kind !== e.kind) return false;
    if (filter.kind && e.kind !== filter.kind) return false;
    if (filter.broker !== null) {
      const b = filter.broker;
      const nodes = [e.src, e.dst].filter(Boolean);
      const hit = e.broker === b || e.leader === b || (e.brokers || []).includes(b) || nodes.includes(`broker-${b}`) ||
        (e.isr || []).includes(b) || e.previous_leader === b;
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
      kind: this.kindSelect.value, network: this.networkBox.checked,
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
      patch(this.kindSelect, [h("option", { key: "", value: "" }, "all kinds"),
        ...Array.from(this.kinds).sort().map((k) => h("option", { key: k, value: k, selected: k === current ? true : null }, k))], false);
    }
    const filter = this._filter();
    const matching = [];
    let hiddenNetwork = 0;
    for (const entry of this.entries) {
      if (this._matches(entry, filter)) matching.push(entry);
      else if (!filter.network && NETWORK_KINDS.has(entry.e.kind)) hiddenNetwork++;
    }
    const shown = matching.slice(-SHOWN);
    const nearBottom = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    patch(this.list, shown.map((entry) => h("li", {
      key: `e${entry.e.seq}:${entry.step}`, class: `log-line kind-${entry.e.kind}`, tabindex: 0, role: "button",
      "data-step": entry.step, "data-seq": entry.e.seq, "data-kind": entry.e.kind,
      title: `event ${entry.e.seq} · step ${entry.step} · click to rewind the timeline to here`,
    }, [
      h("span", { class: "log-time" }, `${(entry.e.time_ms / 1000).toFixed(3)}s`),
      h("span", { class: "log-step" }, `#${entry.step}`),
      h("span", { class: "log-kind" }, entry.e.kind),
      h("span", { class: "log-text" }, textOf(entry)),
    ])), false);
    if (nearBottom) this.list.scrollTop = this.list.scrollHeight;
    const more = matching.length > SHOWN ? ` (the last ${SHOWN} shown)` : "";
    const hidden = hiddenNetwork ? ` · ${hiddenNetwork} network messages hidden` : "";
    const folded = this.coalesced ? ` · ${this.coalesced} more were too many to send one by one (folded into snapshots)` : "";
    this.count.textContent = `${matching.length} of ${this.entries.length} events${more}${hidden}${folded}`;
  }
}
