// The segment view's browser side. The panels themselves are htmx partials (lab/views_explore.py):
// a replica's files, one file dumped as DumpLogSegments prints it, and an offset's lookup path.
// This module opens a replica when it is clicked in the cluster picture, refreshes the file list
// while that replica changes, and animates the lookup: segment probes, then index probes, then the
// forward scan, then the record — one stage every STEP_MS, or one per "Next step" click.

import { $, $all, ajax } from "./dom.js";

const STEP_MS = 450;
const REFRESH_MS = 1200;
const TOUCHING = new Set(["records_appended", "log_truncated", "segment_rolled", "segment_deleted", "log_start_offset_moved",
                          "broker_crashed", "broker_started"]);

export class SegmentView {
  constructor(root, segmentsUrl) {
    this.root = root;
    this.segmentsUrl = segmentsUrl;
    this.panel = $("[data-segments-panel]", root);
    this.lookup = $("[data-segment-lookup]", root);
    this.visible = true;
    this.stale = false;
    this.lastRefresh = 0;
    this.timer = null;
    document.body.addEventListener("htmx:afterSwap", (event) => {
      if (event.detail.target === this.lookup) this.animate();
    });
    this.lookup.addEventListener("click", (event) => {
      if (event.target.closest("[data-lookup-replay]")) this.animate();
      if (event.target.closest("[data-lookup-next]")) this.next();
    });
  }

  chosen() {
    const select = $("[data-segments-replica]", this.panel);
    if (!select || !select.value) return null;
    const [broker, ...rest] = select.value.split(":");
    const partition = rest.pop();
    return { broker: Number(broker), topic: rest.join(":"), partition: Number(partition), value: select.value };
  }

  // Every request for the file list has the panel's form as its source when it is there (its
  // hx-sync="this:queue last" runs only the newest after the one in flight): an automatic refresh that started before
  // the learner picked another replica must not land after it and show the old one.
  open(broker, topic, partition) {
    this._load(`${broker}:${topic}:${partition}`);
  }

  refresh() {
    this._load(this.chosen()?.value ?? null);
    this.stale = false;
  }

  _load(replica) {
    this.lastRefresh = performance.now();
    const form = $("[data-segments-form]", this.panel);
    const select = form && $("[data-segments-replica]", form);
    const listed = select && (replica === null || select.querySelector(`option[value="${CSS.escape(replica)}"]`));
    if (!listed) {   // no form yet, or a replica its list does not have yet: ask for it directly
      ajax("GET", this.segmentsUrl, { target: this.panel, values: replica ? { replica } : {} });
      return;
    }
    if (replica !== null) select.value = replica;   // the form's own value is what it sends
    ajax("GET", this.segmentsUrl, { source: form, target: this.panel });
  }

  // Called with each batch of events: refresh the file list (throttled) when the chosen replica moved.
  onEvents(events) {
    const chosen = this.chosen();
    const hit = events.some((e) => TOUCHING.has(e.kind) && (e.broker === chosen?.broker || !chosen) &&
      (e.topic === undefined || (e.topic === chosen?.topic && e.partition === chosen?.partition)));
    if (hit || events.some((e) => e.kind === "topic_created" || e.kind === "partitions_added")) this.stale = true;
    this.tick();
  }

  tick() {
    if (!this.visible || !this.stale || document.activeElement?.closest?.("[data-segments-panel] form")) return;
    if (performance.now() - this.lastRefresh >= REFRESH_MS) this.refresh();
  }

  setVisible(visible) {
    this.visible = visible;
    this.tick();
  }

  // -- the lookup animation ------------------------------------------------------------------
  animate() {
    clearInterval(this.timer);
    const box = $("[data-lookup]", this.lookup);
    if (!box) return;
    this.order = JSON.parse(box.dataset.steps || "[]");
    this.position = 0;
    $all(".probing, .lit, .shown", box).forEach((el) => el.classList.remove("probing", "lit", "shown"));
    box.classList.add("animating");
    this.timer = setInterval(() => { if (!this.next()) clearInterval(this.timer); }, STEP_MS);
  }

  next() {
    const box = $("[data-lookup]", this.lookup);
    if (!box || !this.order || this.position >= this.order.length) {
      box?.classList.remove("animating");
      return false;
    }
    const step = this.order[this.position++];
    $all(".probing", box).forEach((el) => el.classList.remove("probing"));
    const stage = step.stage.replace("-found", "");
    $(`[data-stage="${stage === "segment" ? "segment" : stage}"]`, box)?.classList.add("shown");
    let target = null;
    if (stage === "segment") target = $(`.lk-segment[data-slot="${step.slot}"]`, box);
    else if (stage === "index") target = $(`.lk-entry[data-slot="${step.slot}"]`, box);
    else if (stage === "scan") target = $(`.lk-scan[data-position="${step.position}"]`, box);
    else if (stage === "record") target = $(`[data-stage="record"]`, box);
    if (target) {
      target.classList.add(step.stage.endsWith("-found") || stage === "record" ? "lit" : "probing");
      if (stage === "scan" && target.classList.contains("found")) target.classList.add("lit");
      target.scrollIntoView?.({ block: "nearest" });
    }
    if (this.position >= this.order.length) box.classList.remove("animating");
    return this.position < this.order.length;
  }
}
