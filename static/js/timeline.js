// The clock bar: play/pause, speed (0.1×–10×, logarithmic slider), step, "step to next <event
// kind>", and the timeline scrubber that rewinds to any step (marks show where commands were
// applied). It also keeps the virtual clock the renderer reads: between server frames, live
// virtual time runs on at `speed` virtual ms per wall ms; paused, it stands still.
//
// Frames move the step ~20 times a second: `setStep` only notes it, and `render` (called from the
// page's animation frame) writes the scrubber and readout once per paint. The marks (up to 500
// buttons) are rebuilt only when the server's list of them changes; as the line of time grows
// they slide by CSS alone (each mark's `left` is its step over the container's `--steps`).

import { $, h, patch } from "./dom.js";
import { describeAction, describeEvents, scenarioGuide } from "./guidance.js";
import { gettext, interpolate as say, ngettext } from "./i18n.js";

const MIN_SPEED = 0.1;
const MAX_SPEED = 10;
const MAX_EXTRAPOLATION_MS = 1500;   // wall time we run ahead of the last frame, at most

export function sliderToSpeed(value) {
  return Math.round(10 ** Number(value) * 100) / 100;
}

export function speedToSlider(speed) {
  return Math.log10(Math.min(MAX_SPEED, Math.max(MIN_SPEED, speed)));
}

export class VirtualClock {
  constructor() {
    this.mode = "paused";
    this.speed = 1;
    this.baseTime = 0;
    this.baseWall = performance.now();
  }

  sync(timeMs) {
    this.baseTime = timeMs;
    this.baseWall = performance.now();
  }

  setMode(mode, speed) {
    this.sync(this.now());
    this.mode = mode;
    if (speed) this.speed = speed;
  }

  now(wall = performance.now()) {
    if (this.mode !== "live") return this.baseTime;
    return this.baseTime + Math.min(wall - this.baseWall, MAX_EXTRAPOLATION_MS) * this.speed;
  }
}

export class Timeline {
  // root: the clock <section>; socket: LabSocket; clock: VirtualClock
  constructor(root, socket, clock, { onRewind, onUndo } = {}) {
    this.root = root;
    this.socket = socket;
    this.clock = clock;
    this.onRewind = onRewind;
    this.onUndo = onUndo;
    this.future = 0;
    this.undo = null;
    this.steps = 0;
    this.step = 0;
    this.marks = [];
    this.scrubbing = false;
    this.dirty = false;
    this.renderedSteps = null;
    this.playButton = $("[data-clock=play]", root);
    this.speedInput = $("[data-clock=speed]", root);
    this.speedOut = $("[data-clock=speed-out]", root);
    this.scrubber = $("[data-clock=scrubber]", root);
    this.marksEl = $("[data-clock=marks]", root);
    this.readout = $("[data-clock=readout]", root);
    this.modeOut = $("[data-clock=mode]", root);
    this.kindSelect = $("[data-clock=kind]", root);
    this.undoButton = $("[data-clock=undo]", root);
    this.noteOut = $("[data-clock=note]", root);
    this.lastOut = $("[data-clock=last]", root);
    this.runningOut = $("[data-clock=running]", root);
    this._wire();
  }

  _wire() {
    this.playButton.addEventListener("click", () => this.togglePlay());
    $("[data-clock=step]", this.root).addEventListener("click", () => this.socket.clock("step"));
    $("[data-clock=step-until]", this.root).addEventListener("click", () => {
      const kind = this.kindSelect.value;
      if (kind) this.socket.clock("step_until", { kind });
    });
    this.speedInput.addEventListener("input", () => { this.speedOut.value = `${sliderToSpeed(this.speedInput.value)}×`; });
    this.speedInput.addEventListener("change", () => this.socket.clock("speed", { speed: sliderToSpeed(this.speedInput.value) }));
    this.scrubber.addEventListener("input", () => { this.scrubbing = true; this._readout(Number(this.scrubber.value)); });
    this.marksEl.addEventListener("click", (event) => {
      const mark = event.target.closest("button.mark");
      // A mark: the state just after its command (and before any later one of the same step).
      if (mark) this.rewind(Number(mark.dataset.step), { commands: Number(mark.dataset.index) + 1 });
    });
    this.undoButton?.addEventListener("click", () => this.onUndo?.());
    this.scrubber.addEventListener("change", () => {
      this.scrubbing = false;
      this.rewind(Number(this.scrubber.value));
    });
    document.addEventListener("keydown", (event) => {
      if (event.target.closest("input, select, textarea, button, [contenteditable]") || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === " ") { event.preventDefault(); this.togglePlay(); }
      else if (event.key === "ArrowRight" || event.key === ".") { event.preventDefault(); this.socket.clock("step"); }
    });
  }

  togglePlay() {
    if (this.clock.mode === "live") this.socket.clock("pause");
    else this.socket.clock("play", { speed: sliderToSpeed(this.speedInput.value) });
  }

  // Go to `step` of this line of time; `afterSeq`: just after that event; `commands`: with exactly
  // that many commands of the log applied.
  rewind(step, { afterSeq = null, commands = null } = {}) {
    const to = Math.max(0, Math.min(step, this.steps));
    const extra = { to };
    if (afterSeq !== null) extra.after_seq = afterSeq;
    if (commands !== null) extra.commands = commands;
    if (this.socket.clock("rewind", extra)) this.onRewind?.(to);
  }

  setKinds(kinds) {
    const current = this.kindSelect.value;
    patch(this.kindSelect, kinds.map((k) => h("option", { key: k, value: k, selected: k === current ? true : null }, k)), false);
  }

  applyClock(message) {
    this.clock.setMode(message.mode, message.speed);
    const live = message.mode === "live";
    this.playButton.textContent = live ? gettext("❚❚ Pause") : gettext("▶ Play");
    this.playButton.setAttribute("aria-pressed", live ? "true" : "false");
    this.root.dataset.mode = message.mode;
    this.modeOut.textContent = live ? gettext("live") : gettext("paused");
    this.applyScenario(message.scenario);
    if (this.runningOut) {
      const running = message.running || [];
      this.runningOut.textContent = running.length
        ? say(gettext("Waiting in a client call: %(commands)s — the clock runs it (Play or Step)"),
          { commands: running.map((r) => describeCommand(r.command)).join("; ") })
        : "";
      this.runningOut.hidden = running.length === 0;
    }
    if (message.speed) {
      this.speedInput.value = speedToSlider(message.speed);
      this.speedOut.value = `${message.speed}×`;
    }
  }

  applyTimeline(message) {
    this.steps = message.steps ?? this.steps;
    this.marks = message.marks || [];
    this.future = message.future || 0;
    this.undo = message.undo || null;
    this._renderMarks();
    if (this.undoButton) {
      this.undoButton.hidden = !this.undo;
      if (this.undo) {
        this.undoButton.textContent = say(ngettext("↶ Undo: bring back the %(count)s command you replaced",
          "↶ Undo: bring back the %(count)s commands you replaced", this.undo.commands), { count: this.undo.commands });
        this.undoButton.title = say(gettext("Removes the %(since)s command(s) applied since, and puts the old future back (it reached step %(steps)s)"),
          this.undo);
      }
    }
    this.root.dataset.future = String(this.future);
    this.dirty = true;
  }

  // Where a loaded scenario stands: the label ("scenario x · 3 of 18 steps played") and, prominent,
  // the note of the step just played (or playing), with the next one's below; at the end, the last.
  applyScenario(s) {
    const scenario = $("[data-clock=scenario]", this.root);
    const guide = scenarioGuide(s, describeCommand);
    scenario.hidden = !guide;
    if (guide) {
      scenario.textContent = guide.where;
      scenario.dataset.done = s.done ? "true" : "false";
      scenario.dataset.nextStep = String(s.next_step);
    }
    if (!this.noteOut) return;
    this.noteOut.hidden = !guide;
    patch(this.noteOut, guide ? [
      h("strong", { key: "main", class: "note-main" }, guide.main),
      guide.next ? h("span", { key: "next", class: "note-next" }, guide.next) : null,
    ] : []);
  }

  // What the newest frame's actions did, in a learner's words: a Step always says what it did,
  // even when it changed nothing. The sentence is the last action's (its events share its step).
  setLastAction(frame, events) {
    if (!this.lastOut) return;
    if (!frame.actions) {   // a command, with no scheduler action of its own: what it changed, if anything
      const clauses = describeEvents(events).slice(0, 3);
      if (clauses.length) {
        this.lastOut.textContent = say(gettext("Step %(step)s · a command: %(what)s"), { step: frame.step, what: clauses.join("; ") });
        this.lastOut.dataset.kind = "command";
      }
      return;
    }
    const own = events.filter((e) => e.step === frame.step);
    const sentence = describeAction(frame.last_action, own);
    this.lastOut.textContent = frame.actions === 1
      ? say(gettext("Step %(step)s · %(what)s"), { step: frame.step, what: sentence })
      : say(gettext("Step %(step)s · %(actions)s actions, the last: %(what)s"), { step: frame.step, actions: frame.actions, what: sentence });
    this.lastOut.dataset.kind = "action";
  }

  // A word in the same place when nothing moved and the learner should know why.
  say(text) {
    if (!this.lastOut) return;
    this.lastOut.textContent = text;
    this.lastOut.dataset.kind = "hint";
  }

  setStep(step, timeMs) {
    this.step = step;
    this.steps = Math.max(this.steps, step);
    this.timeMs = timeMs;
    this.dirty = true;
  }

  // Called once per animation frame: the scrubber, the readout and the marks' scale.
  render() {
    if (!this.dirty) return;
    this.dirty = false;
    const max = Math.max(1, this.steps);
    this.scrubber.max = String(max);
    if (!this.scrubbing) this.scrubber.value = String(this.step);
    this.root.dataset.step = String(this.step);
    this.root.dataset.steps = String(this.steps);
    this._readout(this.step);
    if (this.renderedSteps !== max) {
      this.renderedSteps = max;
      this.marksEl.style.setProperty("--steps", String(max));
    }
  }

  _readout(step) {
    const t = this.timeMs ?? 0;
    const seconds = (t / 1000).toFixed(3);
    const atStep = this.scrubbing && step !== this.step ? say(gettext(" → rewind to step %(step)s"), { step }) : "";
    this.readout.textContent = say(gettext("t = %(seconds)s s · step %(step)s of %(steps)s"), { seconds, step: this.step, steps: this.steps }) + atStep;
  }

  // The commands on the timeline: a mark each, merged into clusters where they would overlap
  // (MarkStrip, below).
  _renderMarks() {
    this._markStrip ??= new MarkStrip(this);
    this._markStrip.render();
  }
}

// -- the marks ---------------------------------------------------------------------------------------
// One mark per command applied (the newest 500; a rate producer adds one per record). Marks closer
// than their hit areas — at the strip's width and the timeline's length now — merge into a cluster
// that shows how many commands it holds; clicking it lists them, and a command in the list rewinds
// as a mark does (it is a `button.mark`: the timeline's click handler takes it). The strip lies
// under the scrubber, never over its thumb (lab.css). Marks are placed in per cent of the line of
// time; as it grows they are placed (and clustered) again once it has grown by RECLUSTER_GROWTH —
// about a pixel — rather than restyled at every frame.
const MARK_PX = 14;
const MARK_GAP_PX = 3;
const RECLUSTER_GROWTH = 0.004;
const LISTED = 80;
const TITLE_LINES = 12;

// The width of a mark (1 command) or of a cluster of `count`: its hit area, in CSS px (lab.css).
export function markWidth(count) {
  return count === 1 ? MARK_PX : Math.max(20, 10 + 7 * String(count).length);
}

// Group `marks` so that no two groups' hit areas come closer than MARK_GAP_PX on a strip
// `widthPx` wide for `steps` steps: [{marks (in step order), step (their mean: where it sits)}].
export function clusterMarks(marks, steps, widthPx) {
  const scale = widthPx / Math.max(1, steps);
  const sorted = marks.map((m, i) => [m, i]).sort((a, b) => a[0].step - b[0].step || a[1] - b[1]).map(([m]) => m);
  let clusters = sorted.map((m) => ({ marks: [m], sum: m.step }));
  const x = (c) => (c.sum / c.marks.length) * scale;
  for (let merged = true; merged;) {   // a merged cluster moves: merge again until none overlap
    merged = false;
    const out = [];
    for (const c of clusters) {
      const last = out[out.length - 1];
      if (last && x(c) - x(last) < (markWidth(last.marks.length) + markWidth(c.marks.length)) / 2 + MARK_GAP_PX) {
        last.marks.push(...c.marks);
        last.sum += c.sum;
        merged = true;
      } else {
        out.push(c);
      }
    }
    clusters = out;
  }
  return clusters.map((c) => ({ marks: c.marks, step: c.sum / c.marks.length }));
}

function markKey(m, i) {
  return m.index !== undefined && m.index !== null ? `m${m.index}` : `m${m.step}:${i}`;
}

function markLabel(m) {
  return say(gettext("step %(step)s · %(seconds)s s · %(command)s"),
    { step: m.step, seconds: (m.time_ms / 1000).toFixed(3), command: describeCommand(m.command) });
}

function percentOf(step, steps) {
  return `${(100 * step / steps).toFixed(3)}%`;
}

function markButton(m, key, steps) {
  const what = describeCommand(m.command);
  return h("button", {
    key, type: "button", class: `mark${m.running ? " running" : ""}`, style: `left: ${percentOf(m.step, steps)}`,
    title: say(gettext("%(mark)s — click to rewind here"), { mark: markLabel(m) }),
    "aria-label": say(gettext("Rewind to step %(step)s: %(command)s"), { step: m.step, command: what }),
    "data-step": m.step, "data-index": m.index ?? "",
  }, "");
}

// A cluster's tooltip lists its newest commands: made once per cluster and size (clusters are
// placed again many times a second while the line of time grows fast).
const clusterTitles = new Map();
function clusterTitle(c, key) {
  const n = c.marks.length;
  const id = `${key}|${n}|${c.marks[n - 1].index}`;
  let title = clusterTitles.get(id);
  if (title === undefined) {
    const lines = c.marks.slice(-TITLE_LINES).map(markLabel);
    const more = n > TITLE_LINES ? "\n" + say(gettext("(the last %(shown)s of %(count)s)"), { shown: TITLE_LINES, count: n }) : "";
    title = say(gettext("%(count)s commands, steps %(first)s–%(last)s:"), { count: n, first: c.marks[0].step, last: c.marks[n - 1].step }) +
      `\n${lines.join("\n")}${more}\n` + gettext("click to list them");
    if (clusterTitles.size > 2000) clusterTitles.clear();
    clusterTitles.set(id, title);
  }
  return title;
}

function clusterButton(c, key, open, steps) {
  const n = c.marks.length;
  const first = c.marks[0].step;
  const last = c.marks[n - 1].step;
  return h("button", {
    key, type: "button", class: "mark-cluster", style: `left: ${percentOf(c.step, steps)}`,
    title: clusterTitle(c, key),
    "aria-label": say(gettext("%(count)s commands between steps %(first)s and %(last)s: list them"), { count: n, first, last }),
    "aria-expanded": open ? "true" : "false",
    "data-cluster": key, "data-count": n, "data-first-step": first, "data-last-step": last,
  }, String(n));
}

function markList(c, steps) {
  const n = c.marks.length;
  const shown = c.marks.slice(-LISTED);
  const words = n > shown.length
    ? gettext("%(count)s commands, steps %(first)s–%(last)s (the last %(shown)s): rewind to just after one")
    : gettext("%(count)s commands, steps %(first)s–%(last)s: rewind to just after one");
  return h("div", { key: "list", class: "mark-list", role: "group", "aria-label": gettext("Commands in this cluster"),
                    style: `--at: ${percentOf(c.step, steps)}` }, [
    h("p", { key: "head", class: "mark-list-head" },
      say(words, { count: n, first: c.marks[0].step, last: c.marks[n - 1].step, shown: shown.length })),
    ...shown.map((m, i) => h("button", {
      key: markKey(m, i), type: "button", class: `mark${m.running ? " running" : ""}`, "data-step": m.step,
      "data-index": m.index ?? "", title: say(gettext("%(mark)s — click to rewind here"), { mark: markLabel(m) }),
    }, markLabel(m))),
  ]);
}

class MarkStrip {
  constructor(timeline) {
    this.timeline = timeline;
    this.el = timeline.marksEl;
    this.open = null;        // the key of the cluster whose list is open
    this.steps = 1;          // the timeline's length the clusters were made for
    this.width = this.el.clientWidth || 600;
    new ResizeObserver(([entry]) => {
      const width = Math.round(entry.contentRect.width);
      if (width && Math.abs(width - this.width) >= 4) { this.width = width; this.render(); }
    }).observe(this.el);
    // timeline.render() sets --steps on the strip as the line of time grows
    new MutationObserver(() => this._grown()).observe(this.el, { attributes: true, attributeFilter: ["style"] });
    this.el.addEventListener("click", (event) => this._click(event));
    document.addEventListener("pointerdown", (event) => { if (this.open && !this.el.contains(event.target)) this._close(); });
    document.addEventListener("keydown", (event) => { if (event.key === "Escape" && this.open) this._close(); });
  }

  _grown() {
    const steps = Math.max(1, this.timeline.steps);
    if (Math.abs(steps - this.steps) > RECLUSTER_GROWTH * this.steps) this.render();
  }

  _click(event) {
    const cluster = event.target.closest("button.mark-cluster");
    if (cluster) {
      this.open = this.open === cluster.dataset.cluster ? null : cluster.dataset.cluster;
      this.render();
      if (this.open) this.el.querySelector(".mark-list button")?.focus();
    } else if (event.target.closest(".mark-list button.mark")) {
      this._close();   // the timeline's own handler rewinds
    }
  }

  _close() {
    this.open = null;
    this.render();
  }

  render() {
    const marks = this.timeline.marks;
    this.steps = Math.max(1, this.timeline.steps);
    const position = new Map(marks.map((m, i) => [m, i]));
    const clusters = clusterMarks(marks, this.steps, this.width).map((c) => {
      const first = markKey(c.marks[0], position.get(c.marks[0]));
      return { ...c, key: c.marks.length === 1 ? first : `k${first}` };
    });
    const open = clusters.find((c) => c.key === this.open && c.marks.length > 1) || null;
    this.open = open?.key ?? null;
    patch(this.el, [
      ...clusters.map((c) => (c.marks.length === 1 ? markButton(c.marks[0], c.key, this.steps)
        : clusterButton(c, c.key, c === open, this.steps))),
      open ? markList(open, this.steps) : null,
    ], false);
  }
}

export function describeCommand(command) {
  if (!command) return "";
  if (typeof command === "string") return command;
  const name = command.command || command.name || Object.keys(command)[0];
  const args = command.args || command[name] || {};
  const parts = Object.entries(args).slice(0, 4).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`);
  return `${name}${parts.length ? " " + parts.join(" ") : ""}`;
}
