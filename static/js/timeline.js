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
  constructor(root, socket, clock, { onRewind } = {}) {
    this.root = root;
    this.socket = socket;
    this.clock = clock;
    this.onRewind = onRewind;
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
      if (mark) this.rewind(Number(mark.dataset.step));
    });
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

  rewind(step) {
    const to = Math.max(0, Math.min(step, this.steps));
    if (this.socket.clock("rewind", { to })) this.onRewind?.(to);
  }

  setKinds(kinds) {
    const current = this.kindSelect.value;
    patch(this.kindSelect, kinds.map((k) => h("option", { key: k, value: k, selected: k === current ? true : null }, k)), false);
  }

  applyClock(message) {
    this.clock.setMode(message.mode, message.speed);
    const live = message.mode === "live";
    this.playButton.textContent = live ? "❚❚ Pause" : "▶ Play";
    this.playButton.setAttribute("aria-pressed", live ? "true" : "false");
    this.root.dataset.mode = message.mode;
    this.modeOut.textContent = live ? "live 运行中" : "paused 已暂停";
    const scenario = $("[data-clock=scenario]", this.root);
    if (message.scenario) {
      const s = message.scenario;
      scenario.hidden = false;
      scenario.textContent = `scenario ${s.name || ""} · next: step ${Math.min(s.next_step + 1, s.steps)} of ${s.steps}`;
    } else {
      scenario.hidden = true;
    }
    if (message.speed) {
      this.speedInput.value = speedToSlider(message.speed);
      this.speedOut.value = `${message.speed}×`;
    }
  }

  applyTimeline(message) {
    this.steps = message.steps ?? this.steps;
    this.marks = message.marks || [];
    this._renderMarks();
    this.dirty = true;
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
    const atStep = this.scrubbing && step !== this.step ? ` → rewind to step ${step}` : "";
    this.readout.textContent = `t = ${seconds} s · step ${this.step} of ${this.steps}${atStep}`;
  }

  _renderMarks() {
    const seen = new Map();   // a step can hold several commands: key each by its place among them
    patch(this.marksEl, this.marks.map((m) => {
      const n = (seen.get(m.step) || 0) + 1;
      seen.set(m.step, n);
      const what = describeCommand(m.command);
      return h("button", {
        key: `m${m.step}:${n}`, type: "button", class: "mark",
        style: `--mark-step: ${m.step}; left: calc(100% * var(--mark-step) / var(--steps, 1))`,
        title: `step ${m.step} · ${(m.time_ms / 1000).toFixed(3)} s · ${what} — click to rewind here`,
        "aria-label": `Rewind to step ${m.step}: ${what}`, "data-step": m.step,
      }, "");
    }), false);
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
