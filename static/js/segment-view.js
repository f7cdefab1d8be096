// The segment view's browser side. The panels themselves are htmx partials (lab/views_explore.py):
// a replica's files, one file dumped as DumpLogSegments prints it, and an offset's lookup path.
// This module opens a replica when it is clicked in the cluster picture, refreshes the file list
// while that replica changes, and animates the lookup: segment probes, then index probes, then the
// forward scan, then the record — one stage every STEP_MS, or one per "Next step" click.

import { $, $all } from "./dom.js";
import { gettext, interpolate as say } from "./i18n.js";
import { errorToast } from "./toasts.js";

const STEP_MS = 450;
const REFRESH_MS = 1200;
// checkpoint_written names a broker and no partition: it refreshes the broker's checkpoint files.
const TOUCHING = new Set(["records_appended", "log_truncated", "segment_rolled", "segment_deleted", "log_cleaned",
                          "log_start_offset_moved",
                          "broker_crashed", "broker_started", "checkpoint_written"]);
const RESHAPING = new Set(["topic_created", "partitions_added", "broker_crashed", "broker_started", "topic_deleted",
                           "replica_deleted", "reassignment_completed"]);

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
    this.loads = 0;
    this.reshaped = false;
    // The panel's own form (choose a replica, Refresh) loads through the same numbered path.
    this.panel.addEventListener("change", (event) => {
      if (event.target.matches("[data-segments-replica]")) this._load(event.target.value || null);
    });
    this.panel.addEventListener("submit", (event) => {
      if (!event.target.matches("[data-segments-form]")) return;
      event.preventDefault();
      this._load(this.chosen()?.value ?? null);
    });
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

  // Every load of the file list goes through _load, numbered: only the newest answer is drawn.
  // (htmx's hx-sync could not promise that: an answer that replaces the form drops the request
  // queued on it, so a replica clicked in the picture while a refresh was in flight never opened.)
  open(broker, topic, partition) {
    this._load(`${broker}:${topic}:${partition}`);
  }

  refresh() {
    this._load(this.chosen()?.value ?? null);
    this.stale = false;
    this.reshaped = false;
  }

  async _load(replica) {
    this.lastRefresh = performance.now();
    const ticket = ++this.loads;
    const select = $("[data-segments-replica]", this.panel);
    if (select && replica !== null && select.querySelector(`option[value="${CSS.escape(replica)}"]`)) select.value = replica;
    const url = new URL(this.segmentsUrl, window.location.href);
    if (replica) url.searchParams.set("replica", replica);
    let response, html;
    try {
      response = await fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
      html = await response.text();
    } catch {
      if (ticket === this.loads) { this.stale = true; errorToast(gettext("The lab server cannot be reached")); }
      return;
    }
    if (ticket !== this.loads) return;   // a newer load was asked for: its answer is the one to show
    if (!response.ok && response.status !== 400) {   // 400 is a panel with its error in it, shown like any answer
      errorToast(response.status === 404 ? gettext("That panel is not available: the session is not running or is not yours")
                                         : say(gettext("The lab answered %(status)s"), { status: response.status }));
      return;
    }
    // A refresh keeps open what the learner opened (a checkpoint file, the other files).
    const open = new Set($all("details[data-keep-open][open]", this.panel).map((d) => d.dataset.keepOpen));
    this.panel.innerHTML = html;
    for (const details of $all("details[data-keep-open]", this.panel)) {
      if (open.has(details.dataset.keepOpen)) details.open = true;
    }
    if (response.status === 400) {
      const message = this.panel.querySelector("[data-panel-error]");
      if (message) errorToast(message.textContent.replace(/\s+/g, " ").trim());
    }
    window.htmx?.process(this.panel);
    this._refreshCleaning();
    this.panel.dispatchEvent(new CustomEvent("segments:loaded", { bubbles: true }));
  }

  // An open "before and after" of the chosen replica's last cleaning is read again with the file
  // list: a newer cleaning replaces it, and its "after" side is the log as it is now.
  _refreshCleaning() {
    const shown = $("[data-segment-dump] [data-cleaning]", this.root);
    if (shown && shown.dataset.cleaning === this.chosen()?.value) $("[data-open-cleaning]", this.panel)?.click();
  }

  // Called with each batch of events: refresh the file list (throttled) when the chosen replica
  // moved; at once when the list of replicas itself changed (a topic, a partition, a broker
  // down or back), so the picker never offers a cluster that is not there any more.
  onEvents(events) {
    const chosen = this.chosen();
    // With no replica chosen only the list of replicas matters: a checkpoint written (every 5 s
    // per broker) changes nothing shown, and redrawing the picker under a visitor choosing in it
    // would drop the choice.
    const hit = events.some((e) => TOUCHING.has(e.kind) && (e.broker === chosen?.broker || (!chosen && e.kind !== "checkpoint_written")) &&
      (e.topic === undefined || (e.topic === chosen?.topic && e.partition === chosen?.partition)));
    if (events.some((e) => RESHAPING.has(e.kind))) this.reshaped = true;
    if (hit || this.reshaped) this.stale = true;
    this.tick();
  }

  tick() {
    if (!this.visible || !this.stale || document.activeElement?.closest?.("[data-segments-panel] form")) return;
    if (this.reshaped || performance.now() - this.lastRefresh >= REFRESH_MS) this.refresh();
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
