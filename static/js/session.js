// The session page's entry point: one WebSocket, one view model, and the views that draw it.
// Server messages update the view model (lab-state.js); a requestAnimationFrame loop redraws the
// cluster from (view, virtual now) whenever something changed or is moving. Nothing here decides
// Kafka semantics: the engine's events and snapshots say what is true.

import { $, $all, Pacer } from "./dom.js";
import { applyEvents, applySnapshot, emptyView, expireEffects, hasEffects } from "./lab-state.js";
import { LabSocket } from "./lab-socket.js";
import { renderCluster, renderSummary, renderTruncations } from "./cluster-view.js";
import { Timeline, VirtualClock } from "./timeline.js";
import { EventLog } from "./event-log.js";
import { Charts } from "./charts.js";
import { GroupView, isGroupEvent } from "./group-view.js";
import { SegmentView } from "./segment-view.js";
import { MessageBrowser } from "./messages.js";
import { Controls } from "./controls.js";
import { errorToast, initToasts, toast } from "./toasts.js";

const root = document.getElementById("lab");
initToasts($("[data-toasts]", root));

const app = {
  view: emptyView(),
  seenSeq: -1,          // events up to this seq are already in the view (acks and frames may repeat them)
  dirty: true,
  rewinding: null,
  selected: null,
  groupsInSnapshot: null,   // does the server's snapshot carry groups? (null: not known yet)
  probingGroups: false,
  commandSeqs: [],          // {step, firstSeq} of each acknowledged command: where in a step it came
  showInternal: false,      // draw __consumer_offsets and other internal topics too
};
const vclock = new VirtualClock();
const svg = $("[data-cluster-svg]", root);

// -- the socket ----------------------------------------------------------------------------------
const socket = new LabSocket(root.dataset.wsUrl, {
  hello(m) {
    const generation = m.session?.generation;
    if (app.view.session && generation !== undefined && generation !== app.view.session.generation) {
      app.rewinding = 0;   // a reset or a loaded scenario: a new line of time
    }
    const previous = app.view;
    app.view = emptyView();
    app.view.session = m.session;
    app.view.clients = previous.clients;
    app.view.step = previous.step;
    if (app.rewinding === null) app.view.eventGroups = previous.eventGroups;   // a reconnect: same line of time
    app.seenSeq = -1;
    showMeta(m.session);
    if (m.timeline) timeline.applyTimeline(m.timeline);
    if (m.clock) timeline.applyClock(m.clock);
    takeSnapshot(m.state, m.state?.step ?? 0, m.state?.time_ms ?? 0);
    segmentView.refresh();   // the panels read the running session: only now is it sure to be loaded
    hideBanner();
  },
  events(m) {
    const started = performance.now();
    ingest(m.events || [], m.step, m.time_ms);
    if (m.coalesced) eventLog.noteCoalesced(m.coalesced);
    countFrame(m, started);
  },
  state(m) {
    takeSnapshot(m.state, m.step ?? m.state?.step, m.time_ms ?? m.state?.time_ms);
  },
  timeline(m) { timeline.applyTimeline(m); },
  clock(m) { timeline.applyClock(m); },
  ack(m) {
    const seqs = (m.events || []).map((e) => e.seq).filter((n) => typeof n === "number");
    if (seqs.length) app.commandSeqs.push({ step: app.view.step, firstSeq: Math.min(...seqs) });
    ingest(m.events || [], app.view.step, app.view.time_ms);
  },
  error(m) { errorToast(m.message, m.kafka_error); },
  unknown(m) { errorToast(`The server sent a message of unknown type “${m.type}”`, null); },
  status(status, detail) { showStatus(status, detail); },
});

// What this tab has taken in, for the console and `python -m lab.bench_browser`: `events` frames
// and the events in them, the main-thread time spent ingesting them, how often the page was
// drawn, and the newest frames as [step, time_ms, wall-clock ms when ingested] — the bench
// matches those with when its own socket got the same frame: how far the page lags the stream.
const RECENT_FRAMES = 256;
const stats = { frames: 0, events: 0, ingestMs: 0, draws: 0, recentFrames: [] };

function countFrame(m, started) {
  const done = performance.now();
  stats.frames += 1;
  stats.events += (m.events || []).length;
  stats.ingestMs += done - started;
  stats.recentFrames.push([m.step, m.time_ms, performance.timeOrigin + done]);
  if (stats.recentFrames.length > RECENT_FRAMES) stats.recentFrames.shift();
}

function takeSnapshot(state, step, timeMs) {
  if (!state) return;
  const newStep = step ?? state.step ?? app.view.step;
  const back = app.rewinding !== null || newStep < app.view.step;
  applySnapshot(app.view, { ...state, step: newStep, time_ms: timeMs ?? state.time_ms });
  if ((state.groups || []).length) app.groupsInSnapshot = true;
  else if (app.probingGroups && app.groupsInSnapshot === null) app.groupsInSnapshot = false;  // the events tell groups
  app.probingGroups = false;
  if (back) {
    // Back in time: what came after this step has not happened (yet). Event numbers restart
    // from here, so forget which ones we saw.
    app.seenSeq = -1;
    app.view.inflight.clear();
    app.view.trails.clear();
    app.view.ghosts = [];
    app.view.truncations = app.view.truncations.filter((e) => e.time_ms <= app.view.time_ms);
    eventLog.cutAfter(app.view.step);
    charts.cutAfter(app.view.time_ms);
    groupView.cut();
    app.view.eventGroups.clear();   // the groups at this step show again with their next events
    app.commandSeqs = app.commandSeqs.filter((c) => c.step < app.view.step);
    app.rewinding = null;
  }
  vclock.sync(app.view.time_ms);
  timeline.setStep(app.view.step, app.view.time_ms);
  charts.onSnapshot(app.view);
  segmentView.onEvents([{ kind: "topic_created" }]);
  messageBrowser.onEvents([{ kind: "high_watermark_advanced" }]);
  app.dirty = true;
}

// A frame's events go into the view model and each view's buffers in bulk; nothing here touches
// the DOM (the frame loop below draws, at most once per animation frame), so a frame of 2,000
// events costs a few milliseconds however many frames arrive between two paints.
function ingest(events, step, timeMs) {
  const now = performance.now();
  const fresh = [];
  let newest = app.seenSeq;
  for (const e of events) {
    if (typeof e.seq !== "number") fresh.push(e);
    else if (e.seq > app.seenSeq) { fresh.push(e); if (e.seq > newest) newest = e.seq; }
  }
  app.seenSeq = newest;
  applyEvents(app.view, fresh, now, timeMs);
  if (typeof step === "number") app.view.step = step;
  if (typeof timeMs === "number") app.view.time_ms = Math.max(app.view.time_ms, timeMs);
  vclock.sync(app.view.time_ms);
  timeline.setStep(app.view.step, app.view.time_ms);
  if (!fresh.length) return;
  eventLog.add(fresh, app.view.step);
  charts.onEvents(fresh);
  groupView.onEvents(fresh, now);
  segmentView.onEvents(fresh);
  messageBrowser.onEvents(fresh);
  announceFailures(fresh);
  if (app.groupsInSnapshot !== false && fresh.some((e) => isGroupEvent(e.kind))) askForSnapshotSoon();
  app.dirty = true;
}

// Groups live in the snapshot; after group events, ask for one (at most every 400 ms).
let snapshotTimer = null;
function askForSnapshotSoon() {
  if (snapshotTimer) return;
  snapshotTimer = setTimeout(() => {
    snapshotTimer = null;
    app.probingGroups = true;
    socket.send({ type: "snapshot" });
  }, 400);
}

function announceFailures(events) {
  const failed = new Map();
  for (const e of events) {
    if (["produce_failed", "producer_batch_failed", "offset_commit_failed"].includes(e.kind)) {
      const what = e.kind === "offset_commit_failed" ? "offset commit" : "produce request";
      const key = `${what}|${e.error}`;
      failed.set(key, (failed.get(key) || 0) + 1);
    }
  }
  for (const [key, n] of failed) {
    const [what, error] = key.split("|");
    errorToast(`${n} ${what}${n === 1 ? "" : "s"} failed`, error);
  }
}

// -- the views -----------------------------------------------------------------------------------
const timeline = new Timeline($("[data-clock-root]", root), socket, vclock, {
  onRewind(step) { app.rewinding = step; },
});
const eventLog = new EventLog($("[data-event-log]", root), {
  onRewind(step, seq) {
    // A rewind to step N replays every command applied at N. If this event came before a command
    // applied in the same step, stop one step earlier, or the command would be in the picture.
    const command = app.commandSeqs.find((c) => c.step === step && c.firstSeq > seq);
    const to = command ? Math.max(0, step - 1) : step;
    timeline.rewind(to);
    toast(command ? `Rewinding to step ${to}: just before this event (a command was applied later in step ${step})`
                  : `Rewinding to step ${to}…`, { kind: "info" });
  },
});
const charts = new Charts($("#x-charts", root), root.dataset.plotlyUrl);
const groupView = new GroupView($("[data-group-view]", root));
const segmentView = new SegmentView($("#x-segments", root), root.dataset.segmentsUrl);
const messageBrowser = new MessageBrowser($("[data-messages-panel]", root), root.dataset.messagesUrl);
const controls = new Controls(root, socket, {
  onScenario() { app.rewinding = 0; },
});

const tabListeners = {
  "x-segments": (v) => segmentView.setVisible(v),
  "x-messages": (v) => messageBrowser.setVisible(v),
  "x-charts": (v) => charts.setVisible(v),
  "x-events": (v) => eventLog.setVisible(v),
  "x-group": (v) => { groupVisible = v; app.dirty = true; },
};
let groupVisible = false;

function selectTab(tab) {
  const list = tab.closest("[role=tablist]");
  for (const other of $all("[role=tab]", list)) {
    const selected = other === tab;
    other.setAttribute("aria-selected", selected ? "true" : "false");
    other.tabIndex = selected ? 0 : -1;
    const panel = document.getElementById(other.getAttribute("aria-controls"));
    panel.hidden = !selected;
    tabListeners[panel.id]?.(selected);
  }
}

for (const list of $all("[role=tablist]", root)) {
  const tabs = $all("[role=tab]", list);
  tabs.forEach((tab, i) => {
    tab.tabIndex = tab.getAttribute("aria-selected") === "true" ? 0 : -1;
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", (event) => {
      const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      event.preventDefault();
      const next = tabs[(i + step + tabs.length) % tabs.length];
      next.focus();
      selectTab(next);
    });
  });
}

function openReplica(target) {
  const row = target.closest("[data-replica]");
  if (!row) return;
  app.selected = { broker: Number(row.dataset.broker), topic: row.dataset.topic, partition: Number(row.dataset.partition) };
  selectTab(document.getElementById("tab-x-segments"));
  segmentView.open(app.selected.broker, app.selected.topic, app.selected.partition);
  app.dirty = true;
}
svg.addEventListener("click", (event) => openReplica(event.target));
svg.addEventListener("keydown", (event) => {
  if (event.key === "Enter" || event.key === " ") { event.preventDefault(); openReplica(event.target); }
});

const internalToggle = $("[data-internal-toggle]", root);
$("input", internalToggle).addEventListener("change", (event) => { app.showInternal = event.target.checked; app.dirty = true; });

// -- page chrome -----------------------------------------------------------------------------------
const STATUS_TEXT = {
  connecting: "connecting…", open: "connected", reconnecting: "reconnecting", refused: "refused", closed: "disconnected",
};

function showStatus(status, detail) {
  root.dataset.status = status;
  const shortDetail = status === "reconnecting" ? detail : "";
  $("[data-conn-text]", root).textContent = `${STATUS_TEXT[status] || status}${shortDetail ? ` (${shortDetail})` : ""}`;
  if (status === "refused") showBanner(`The lab server closed this page's connection: ${detail}. Open “My sessions” or start a new session.`);
  else if (status === "reconnecting") showBanner(`Lost the connection to the lab server — reconnecting ${detail}. Nothing you did is lost: the server keeps this session's command log.`);
  else if (status === "open") hideBanner();
}

function showBanner(text) {
  const banner = $("[data-banner]", root);
  banner.textContent = text;
  banner.hidden = false;
}

function hideBanner() {
  $("[data-banner]", root).hidden = true;
}

function showMeta(session) {
  if (!session) return;
  for (const key of ["brokers", "seed", "truncation"]) {
    const el = $(`[data-meta="${key}"]`, root);
    if (el && session[key] !== undefined) el.textContent = key === "brokers" ? `${session[key]} brokers` : String(session[key]);
  }
}

const projector = $("[data-projector]", root);
function setProjector(on) {
  document.documentElement.classList.toggle("projector", on);
  projector.setAttribute("aria-pressed", on ? "true" : "false");
  try { localStorage.setItem("kafka-lab-projector", on ? "1" : "0"); } catch { /* private mode */ }
}
projector.addEventListener("click", () => setProjector(!document.documentElement.classList.contains("projector")));
try { setProjector(localStorage.getItem("kafka-lab-projector") === "1"); } catch { /* private mode */ }

// htmx: panel errors (400) are swapped in like any answer, and also toasted; others are toasted.
function configureHtmx() {
  const htmx = window.htmx;
  if (!htmx) { errorToast("htmx did not load: the explorer panels will not work"); return; }
  htmx.config.responseHandling = [
    { code: "204", swap: false }, { code: "[23]..", swap: true }, { code: "400", swap: true }, { code: "[45]..", swap: false, error: true },
  ];
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.xhr?.status === 400) {
      const message = event.detail.target.querySelector("[data-panel-error]");
      if (message) errorToast(message.textContent.replace(/\s+/g, " ").trim());
    }
  });
  document.body.addEventListener("htmx:responseError", (event) => {
    const status = event.detail.xhr?.status;
    errorToast(status === 404 ? "That panel is not available: the session is not running or is not yours" : `The lab answered ${status}`);
  });
  document.body.addEventListener("htmx:sendError", () => errorToast("The lab server cannot be reached"));
}
if (window.htmx) configureHtmx(); else window.addEventListener("load", configureHtmx);

// -- the frame loop ----------------------------------------------------------------------------------
// Every animation frame expires effects and moves the virtual clock; the page is drawn (the
// cluster picture, the summary, the clock bar, the group panel) when the view changed or
// something moves. A draw — its script, then the browser's style, layout and paint — may take at
// most half the main thread (dom.js Pacer): when a busy session's frames keep the page busy, it is
// drawn less often (still at least twice a second) while the frames are still taken in as they
// come, so the page does not fall behind the stream. Above CALM_EVENTS_PER_S the picture also
// skips the cells' entry animation and the markers' slides: they would start over at every draw,
// and keep the browser drawing in between.
const CALM_EVENTS_PER_S = 2000;
const pacer = new Pacer(0.5, 500);
const eventRate = { since: performance.now(), events: 0, perSecond: 0 };
let stale = true;

function eventsPerSecond(wall) {
  if (wall - eventRate.since >= 1000) {
    eventRate.perSecond = (stats.events - eventRate.events) * 1000 / (wall - eventRate.since);
    eventRate.since = wall;
    eventRate.events = stats.events;
  }
  return eventRate.perSecond;
}

function draw(wall, vnow, moving) {
  renderCluster(svg, app.view, vnow, wall, { selected: app.selected, showInternal: app.showInternal,
                                             animate: eventsPerSecond(wall) < CALM_EVENTS_PER_S });
  if (app.dirty) {
    app.dirty = false;
    renderSummary($("[data-partition-summary-body]", root), app.view, { showInternal: app.showInternal });
    const internal = Array.from(app.view.topics.keys()).filter((t) => t.startsWith("__"));
    internalToggle.hidden = internal.length === 0;
    renderTruncations($("[data-truncation-list]", root), app.view);
    controls.refreshOptions(app.view);
    if (groupVisible) groupView.render(app.view, wall);
    charts.sampleLag(app.view);
  } else if (groupVisible && moving) {
    groupView.render(app.view, wall);
  }
  timeline.render();
}

function frame() {
  const wall = performance.now();
  const vnow = vclock.now(wall);
  const moving = hasEffects(app.view) || vclock.mode === "live";
  expireEffects(app.view, wall, vnow);
  if (app.dirty || timeline.dirty) stale = true;
  if ((stale || moving) && pacer.due(wall)) {
    stale = false;
    draw(wall, vnow, moving);
    pacer.drawn(wall);
    stats.draws += 1;
  }
  eventLog.render();   // paced by itself (event-log.js)
  charts.setNow(Math.round(vnow));
  charts.draw();
  segmentView.tick();
  messageBrowser.tick();
  requestAnimationFrame(frame);
}

window.kafkaLab = { app, socket, stats };   // for the console, the browser tests and lab/bench_browser.py
socket.connect();
requestAnimationFrame(frame);
