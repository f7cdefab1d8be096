// Charts over virtual time (plotly, served by the lab itself and loaded on first use): records
// produced and consumed per second, consumer lag per partition, ISR size per partition. The
// server keeps the series of the whole session (lab/series.py): a `hello` or `state` brings them,
// and the live events extend them; plotly redraws only while the tab shows.

import { lagSamples } from "./group-view.js";
import { gettext, interpolate as say } from "./i18n.js";
import { isInternal, partitionLabel, sortedPartitions } from "./lab-state.js";

const BUCKET_MS = 1000;
const REDRAW_MS = 700;
const CONSUME_KIND = /poll|consum|fetched/i;

function loadScript(url) {
  return new Promise((resolve, reject) => {
    if (window.Plotly) { resolve(window.Plotly); return; }
    const script = document.createElement("script");
    script.src = url;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => reject(new Error(say(gettext("could not load %(url)s"), { url })));
    document.head.append(script);
  });
}

export class Charts {
  constructor(root, plotlyUrl) {
    this.root = root;
    this.plotlyUrl = plotlyUrl;
    this.visible = false;
    this.lastDraw = 0;
    this.dirty = true;
    this.nowMs = 0;
    this.reset();
  }

  reset() {
    this.bucketMs = BUCKET_MS;
    this.produced = new Map();     // bucket -> records
    this.consumed = new Map();
    this.isr = new Map();          // "t-0" -> [[time_s, size]]
    this.lag = new Map();          // "group t-0" -> [[time_s, lag]]
    this.dirty = true;
  }

  // The server's series (lab/series.py `to_dict`): the whole session up to this moment.
  setSeries(series) {
    this.reset();
    if (!series) return;
    this.bucketMs = series.bucket_ms || BUCKET_MS;
    const buckets = (rates) => new Map((rates || []).map(([startS, perS]) =>
      [Math.round(startS * 1000 / this.bucketMs), Math.round(perS * this.bucketMs / 1000)]));
    this.produced = buckets(series.produced);
    this.consumed = buckets(series.consumed);
    this.isr = new Map(Object.entries(series.isr || {}).map(([k, pts]) => [k, pts.map((p) => [...p])]));
    this.lag = new Map(Object.entries(series.lag || {}).map(([k, pts]) => [k, pts.map((p) => [...p])]));
  }

  // Forget what happened after virtual time `timeMs` (after a rewind).
  cutAfter(timeMs) {
    const bucket = Math.floor(timeMs / this.bucketMs);
    for (const map of [this.produced, this.consumed]) for (const b of Array.from(map.keys())) if (b > bucket) map.delete(b);
    for (const map of [this.isr, this.lag]) for (const [k, pts] of map) map.set(k, pts.filter(([t]) => t <= timeMs / 1000));
    this.dirty = true;
  }

  _push(map, key, t, value) {
    const pts = map.get(key) || [];
    const last = pts[pts.length - 1];
    if (last && last[1] === value) return;
    if (last && last[0] === t) last[1] = value; else pts.push([t, value]);
    if (pts.length > 5000) pts.splice(0, pts.length - 5000);
    map.set(key, pts);
    this.dirty = true;
  }

  setNow(timeMs) {
    if (timeMs !== this.nowMs) { this.nowMs = timeMs; this.dirty = true; }
  }

  // The model changed: ISR sizes and lag as it says now (exact; the events only add what came between).
  onModel(view) {
    const t = view.time_ms / 1000;
    for (const p of sortedPartitions(view, { internal: false })) this._push(this.isr, partitionLabel(p.topic, p.partition), t, p.isr.length);
    this.sampleLag(view);
  }

  sampleLag(view) {
    const t = view.time_ms / 1000;
    for (const s of lagSamples(view)) this._push(this.lag, `${s.group} ${s.tp}`, t, s.lag);
  }

  onEvents(events) {
    for (const e of events) {
      const bucket = Math.floor(e.time_ms / this.bucketMs);
      if (isInternal(e.topic ?? "")) continue;   // __consumer_offsets: bookkeeping, not traffic
      if (e.kind === "records_appended" && e.role === "leader") {
        this.produced.set(bucket, (this.produced.get(bucket) || 0) + (e.records_count || 0));
        this.dirty = true;
      } else if (CONSUME_KIND.test(e.kind) && e.kind !== "records_appended") {
        const n = e.records_count ?? e.count ?? (Array.isArray(e.records) ? e.records.length : 0);
        if (n) { this.consumed.set(bucket, (this.consumed.get(bucket) || 0) + n); this.dirty = true; }
      }
      if (["isr_shrunk", "isr_expanded", "leader_elected", "partition_offline"].includes(e.kind) && Array.isArray(e.isr)) {
        this._push(this.isr, partitionLabel(e.topic, e.partition), e.time_ms / 1000, e.isr.length);
      }
    }
  }

  setVisible(visible) {
    this.visible = visible;
    if (visible) this.draw(true);
  }

  async draw(force = false) {
    if (!this.visible || (!force && (!this.dirty || performance.now() - this.lastDraw < REDRAW_MS))) return;
    this.lastDraw = performance.now();
    this.dirty = false;
    let Plotly;
    try {
      Plotly = await loadScript(this.plotlyUrl);
    } catch (error) {
      this.root.querySelector("[data-chart=status]").textContent = say(gettext("Charts unavailable: %(error)s"), { error: error.message });
      return;
    }
    this.root.querySelector("[data-chart=status]").textContent = "";
    // The page's own font stack: it ends in the lab's CJK face, so the titles' Chinese renders on
    // a machine without CJK fonts (plotly's default stack has none).
    const family = getComputedStyle(this.root).fontFamily;
    const base = {
      margin: { l: 56, r: 16, t: 44, b: 96 }, height: 300, font: { family, size: 14, color: "#1d2330" },
      paper_bgcolor: "#ffffff", plot_bgcolor: "#ffffff", legend: { orientation: "h", x: 0, y: -0.42, yanchor: "top" },
      xaxis: { title: { text: gettext("virtual time (s)"), standoff: 6 }, zeroline: false },
    };
    const config = { displaylogo: false, displayModeBar: false, responsive: true };
    const bars = (map, name, color) => {
      const keys = Array.from(map.keys()).sort((a, b) => a - b);
      return { type: "bar", name, x: keys.map((k) => (k + 0.5) * this.bucketMs / 1000), y: keys.map((k) => map.get(k) * 1000 / this.bucketMs), marker: { color } };
    };
    // Step lines run on to the present: a value holds until it changes.
    const nowS = this.nowMs / 1000;
    const steps = (map) => Array.from(map.entries()).map(([name, pts]) => {
      const last = pts[pts.length - 1];
      const all = last && last[0] < nowS ? [...pts, [nowS, last[1]]] : pts;
      return { type: "scatter", mode: "lines", line: { shape: "hv", width: 3 }, name, x: all.map((p) => p[0]), y: all.map((p) => p[1]) };
    });
    base.xaxis = { ...base.xaxis, range: [0, Math.max(1, nowS * 1.02)] };
    await Plotly.react(this.root.querySelector("[data-chart=rate]"),
      [bars(this.produced, gettext("produced"), "#2f5fd0"), bars(this.consumed, gettext("consumed"), "#1f7a45")],
      { ...base, title: { text: gettext("Records per second") }, barmode: "group", yaxis: { title: { text: gettext("records/s") }, rangemode: "tozero" } }, config);
    await Plotly.react(this.root.querySelector("[data-chart=lag]"), steps(this.lag),
      { ...base, title: { text: gettext("Consumer lag per partition") }, yaxis: { title: { text: gettext("records") }, rangemode: "tozero" },
        annotations: this.lag.size ? [] : [{ text: gettext("no committed offsets yet"), showarrow: false, xref: "paper", yref: "paper", x: 0.5, y: 0.5 }] }, config);
    await Plotly.react(this.root.querySelector("[data-chart=isr]"), steps(this.isr),
      { ...base, title: { text: gettext("ISR size per partition") }, yaxis: { title: { text: gettext("replicas in sync") }, rangemode: "tozero", dtick: 1 } }, config);
  }
}
