// The session page's entry point: one WebSocket, one view model, and the views that draw it.
// The model is the server's (lab-state.js): a `hello` or `state` gives it whole, each `events`
// frame gives the patches since the frame before. Frames are numbered: if one is missing the page
// stops trusting its model, asks for a `state` and, until it comes, keeps later frames aside (it
// applies them after the state). Events only animate and fill the log. A requestAnimationFrame
// loop redraws from (model, virtual now) whenever something changed or is moving.

import { $, $all, Pacer } from "./dom.js";
import { applyEffects, applyModel, applyPatch, emptyView, expireEffects, forgetEffectsAfter, hasEffects,
         modelSummary } from "./lab-state.js";
import { LabSocket } from "./lab-socket.js";
import { renderCluster, renderSummary, renderTruncations } from "./cluster-view.js";
import { Timeline, VirtualClock, describeCommand } from "./timeline.js";
import { EventLog } from "./event-log.js";
import { Charts } from "./charts.js";
import { GroupView } from "./group-view.js";
import { renderMetadata } from "./metadata-view.js";
import { SegmentView } from "./segment-view.js";
import { MessageBrowser } from "./messages.js";
import { Controls } from "./controls.js";
import { errorToast, initToasts, toast } from "./toasts.js";
import { gettext, interpolate as say, ngettext } from "./i18n.js";
import { renderTimers } from "./guidance.js";
import { StartOptions, readStartOptions } from "./start-options.js";
import { ScenarioModes } from "./scenario-modes.js";
import { showPointer } from "./pointer.js";

const root = document.getElementById("lab");
initToasts($("[data-toasts]", root));

const app = {
  view: emptyView(),
  dirty: true,
  selected: null,
  showInternal: false,      // draw __consumer_offsets and other internal topics too
  resyncing: false,         // a frame went missing: waiting for a `state`
  viewing: false,           // a watcher looks at another step (watch.js): live frames are set aside
  held: [],                 // frames that came while resyncing (applied after the state)
  timelineInfo: { future: 0, undo: null, steps: 0 },
};
const vclock = new VirtualClock();
const svg = $("[data-cluster-svg]", root);

// What this tab has taken in, for the console, the drift checks and `python -m lab.bench_browser`:
// frames and events, the main-thread time spent ingesting them, how often the page was drawn,
// frames that did not follow the last one (gaps) and the resynchronisations they caused, and the
// newest frames as [step, time_ms, wall-clock ms when ingested].
const RECENT_FRAMES = 256;
const stats = { frames: 0, events: 0, ingestMs: 0, draws: 0, gaps: 0, resyncs: 0, recentFrames: [] };

// -- the socket ----------------------------------------------------------------------------------
const socket = new LabSocket(root.dataset.wsUrl, {
  hello(m) {
    const newLine = app.view.session && m.session?.generation !== app.view.session.generation;
    const clients = app.view.clients;
    app.view = emptyView();
    app.view.session = m.session;
    app.view.clients = clients;
    app.resyncing = false;
    app.viewing = false;
    app.held = [];
    applyModel(app.view, m.model, m.frame);
    showMeta(m.session);
    if (m.timeline) onTimeline(m.timeline);
    if (m.clock) onClock(m.clock);
    eventLog.reset(m.model.seq);
    charts.setSeries(m.series);
    groupView.cut();
    loadHistory(m.history);
    afterModel(true);
    segmentView.refresh();   // the panels read the running session: only now is it sure to be loaded
    hideBanner();
    // A lesson page rebuilds its cluster at every jump between beats: its pane says where it is.
    if (newLine && !startOptions.consumeOwnLine() && !root.closest(".lesson-lab")) {
      toast(gettext("A new line of time: the session was reset or a scenario was loaded"), { kind: "info" });
    }
    startOptions.onHello(m);
    announce("hello", m);
  },
  events(m) { onFrame(m); },
  state(m) { onFrame(m); },
  timeline(m) { onTimeline(m); },
  clock(m) { onClock(m); },
  command_done(m) { commandDone(m); },
  ack() { /* the frames carry what the command did; controls.js reads the ack itself */ },
  error(m) { errorToast(m.message, m.kafka_error); },
  pointer(m) { showPointer(root, m.target); announce("pointer", m); },
  unknown(m) {
    // A broadcast's messages (docs/lab-protocol.md, "Broadcast") are for the page built on this one (watch.js).
    if (BROADCAST_MESSAGES.has(m.type)) { announce(m.type, m); return; }
    errorToast(say(gettext("The server sent a message of unknown type “%(type)s”"), { type: m.type }), null); },
  status(status, detail) { showStatus(status, detail); },
});

// 4408: this page fell too far behind a busy session's stream; LabSocket reconnects by itself.
socket.onFellBehind = () => toast(gettext("This page fell behind the session's stream; reconnecting"), { kind: "info" });

const BROADCAST_MESSAGES = new Set(["broadcast", "view", "forked", "watchers", "playlist_item", "lesson_beat"]);

function onFrame(m) {
  const started = performance.now();
  if (app.viewing) {
    // Not applied: following again asks for a fresh `state` (followLive).
  } else if (app.resyncing) {
    if (m.type === "state") { app.resyncing = false; applyFrame(m); for (const held of app.held.splice(0)) onFrame(held); }
    else app.held.push(m);
  } else if (m.frame <= app.view.frame) {
    // Already in the model (a frame sealed while this tab's hello or state was taken).
  } else if (m.frame !== app.view.frame + 1 && m.type !== "state") {
    stats.gaps += 1;
    resync(m);
  } else {
    applyFrame(m);
  }
  countFrame(m, started);
}

// The model goes first (it is the truth), then the events animate it and fill the log.
function applyFrame(m) {
  if (m.frame <= app.view.frame) return;
  const back = m.type === "state" && m.step < app.view.step;
  if (m.type === "state") applyModel(app.view, m.model, m.frame);
  else for (const patch of m.patches || []) applyPatch(app.view, patch);
  app.view.frame = m.frame;
  for (const key of ["step", "time_ms", "seq"]) if (typeof m[key] === "number") app.view[key] = m[key];
  if (back || m.type === "state") {
    // Back in time (a rewind, an undo): what came after this moment has not happened (yet).
    forgetEffectsAfter(app.view, app.view.time_ms);
    eventLog.cutFrom(app.view.seq);
    if (m.series) charts.setSeries(m.series); else charts.cutAfter(app.view.time_ms);
    groupView.cut();
  }
  const events = m.events || [];
  if (events.length) {
    applyEffects(app.view, events, performance.now(), m.time_ms);
    eventLog.add(events);
    charts.onEvents(events);
    groupView.onEvents(events, performance.now());
    segmentView.onEvents(events);
    messageBrowser.onEvents(events);
    announceFailures(events);
  }
  if (m.coalesced) eventLog.noteCoalesced(m.coalesced);
  if (m.last_action !== undefined) timeline.setLastAction(m, events);
  afterModel(m.type === "state");
  announce("frame", m);
}

// A watcher's view of an earlier step (a `view` answer, static/js/watch.js): the page shows its
// model; the live frames that keep coming are not applied until it follows again.
function showView(m) {
  app.viewing = true;
  app.resyncing = false;
  app.held = [];
  applyModel(app.view, m.model, -1);
  for (const key of ["step", "time_ms", "seq"]) if (typeof m.model[key] === "number") app.view[key] = m.model[key];
  forgetEffectsAfter(app.view, app.view.time_ms);   // the event log and the charts keep what happened live
  groupView.cut();
  afterModel(true);
}

function followLive() {
  app.viewing = false;
  app.resyncing = true;
  app.held = [];
  socket.send({ type: "snapshot" });
}

function resync(m) {
  app.resyncing = true;
  app.held = [m];
  stats.resyncs += 1;
  socket.send({ type: "snapshot" });
}

function afterModel(whole) {
  vclock.sync(app.view.time_ms);
  timeline.setStep(app.view.step, app.view.time_ms);
  charts.onModel(app.view);
  if (whole) {
    segmentView.onEvents([{ kind: "topic_created" }]);
    messageBrowser.onEvents([{ kind: "high_watermark_advanced" }]);
  }
  app.dirty = true;
}

function countFrame(m, started) {
  const done = performance.now();
  stats.frames += 1;
  stats.events += (m.events || []).length;
  stats.ingestMs += done - started;
  stats.recentFrames.push([m.step, m.time_ms, performance.timeOrigin + done]);
  if (stats.recentFrames.length > RECENT_FRAMES) stats.recentFrames.shift();
}

function onTimeline(m) {
  app.timelineInfo = m;
  timeline.applyTimeline(m);
}

function onClock(m) {
  timeline.applyClock(m);
  announce("clock", m);
}

// Other parts of a page built on this one (the lesson pane, static/js/lesson-player.js) follow the
// session through DOM events on the lab's root: `lab:hello`, `lab:clock`, `lab:frame` (detail:
// the message). They only read; the model stays this module's.
function announce(kind, m) {
  root.dispatchEvent(new CustomEvent(`lab:${kind}`, { detail: m }));
}

function commandDone(m) {
  if (m.error) errorToast(say(gettext("%(command)s (command %(index)s) failed: %(error)s"), m), m.kafka_error);
  else toast(say(gettext("%(command)s (command %(index)s) finished"), m), { kind: "info" });
  for (const warning of m.warnings || []) toast(warning, { kind: "info" });
}

// The event log of a page opened later: the session's history, a page at a time (newest first).
async function loadHistory(bounds, before = null) {
  if (!bounds || bounds.next_seq === bounds.first_seq) { eventLog.setHistory({ more: false, first_seq: bounds?.first_seq ?? 0 }); return; }
  try {
    const page = await socket.request({ type: "history", limit: 400, ...(before === null ? {} : { before_seq: before }),
                                        internal: eventLog.showInternal(), network: eventLog.showNetwork() });
    eventLog.prepend(page.events, { more: page.more, first_seq: page.first_seq });
  } catch (error) {
    if (!error.handled) errorToast(say(gettext("Could not load the event history: %(error)s"), { error: error.message }));
  }
}

function announceFailures(events) {
  const failed = new Map();
  for (const e of events) {
    if (["produce_failed", "producer_batch_failed", "offset_commit_failed"].includes(e.kind)) {
      const what = e.kind === "offset_commit_failed" ? "commit" : "produce";
      const key = `${what}|${e.error}`;
      failed.set(key, (failed.get(key) || 0) + 1);
    }
  }
  for (const [key, n] of failed) {
    const [what, error] = key.split("|");
    errorToast(say(what === "commit" ? ngettext("%(count)s offset commit failed", "%(count)s offset commits failed", n)
      : ngettext("%(count)s produce request failed", "%(count)s produce requests failed", n), { count: n }), error);
  }
}

// Before a command cuts off the timeline's future (after a rewind), ask; it can be undone.
function guardFuture() {
  const info = app.timelineInfo;
  if (!info.future) return {};
  const question = ngettext(
    "You rewound: %(count)s command (up to step %(steps)s) lie ahead on the timeline. A new command replaces that future. " +
    "You can undo this right after (Undo on the timeline). Go on?",
    "You rewound: %(count)s commands (up to step %(steps)s) lie ahead on the timeline. A new command replaces that future. " +
    "You can undo this right after (Undo on the timeline). Go on?", info.future);
  if (!confirm(say(question, { count: info.future, steps: info.steps }))) return null;
  return { discardFuture: true };
}

// -- the views -----------------------------------------------------------------------------------
const timeline = new Timeline($("[data-clock-root]", root), socket, vclock, {
  onUndo() { socket.send({ type: "undo" }); },
});
const eventLog = new EventLog($("[data-event-log]", root), {
  onRewind(step, seq) {
    // Just after this event: its step, with the commands applied before it and no later ones.
    timeline.rewind(step, { afterSeq: seq });
    toast(say(gettext("Rewinding to step %(step)s, just after event %(seq)s…"), { step, seq }), { kind: "info" });
  },
  onEarlier(before) { loadHistory({ first_seq: 0, next_seq: before }, before); },
  onFilterChange() { eventLog.reset(app.view.seq); loadHistory({ first_seq: 0, next_seq: app.view.seq }); },
});
const charts = new Charts($("#x-charts", root), root.dataset.plotlyUrl);
const groupView = new GroupView($("[data-group-view]", root));
const segmentView = new SegmentView($("#x-segments", root), root.dataset.segmentsUrl);
const messageBrowser = new MessageBrowser($("[data-messages-panel]", root), root.dataset.messagesUrl);
const controls = new Controls(root, socket, {
  guard: guardFuture,
  confirmReplace: askReplace,
});

// The lab explaining itself (guidance.js): what the cluster waits for, a card's start options
// (start-options.js), a built-in scenario in either truncation mode (scenario-modes.js), and why
// nothing moves after Produce while the clock is paused.
const timersOut = $("[data-clock=timers]", root);
function askReplace(name) {
  return confirm(say(gettext("Load %(name)s? It replaces this session's cluster with the scenario's (the current " +
                             "command log is kept as the session's history)."), { name }));
}
async function fetchScenario(name) {
  const response = await fetch(`${root.dataset.scenarioUrl}${encodeURIComponent(name)}.json`);
  if (!response.ok) throw new Error(say(gettext("the lab answered %(status)s"), { status: response.status }));
  return response.json();
}
const startOptions = new StartOptions(readStartOptions(), {
  send: (message) => socket.send(message),
  stepScenario(count) { for (let i = 0; i < count; i++) socket.clock("step"); },
  selectTab(id) { const tab = document.getElementById(`tab-${id}`); if (tab) selectTab(tab); },
  confirmReplace: askReplace,
  fetchScenario,
  fail: (message) => errorToast(message),
});
new ScenarioModes(root, { send: (message) => socket.send(message), confirmReplace: askReplace,
                          fail: (message) => errorToast(message) });
$("form[data-form=produce]", root).addEventListener("submit", (event) => {
  const form = event.currentTarget;
  setTimeout(() => {   // after controls.js has checked the form (a refused one is marked aria-invalid)
    if (vclock.mode === "live" || form.querySelector("[aria-invalid=true]")) return;
    timeline.say(gettext("Produce queued: press Play or Step — nothing moves while paused"));
    toast(gettext("Queued: press Play or Step — nothing moves while the clock is paused"), { kind: "info" });
  }, 0);
});

const tabListeners = {
  "x-segments": (v) => segmentView.setVisible(v),
  "x-messages": (v) => messageBrowser.setVisible(v),
  "x-charts": (v) => charts.setVisible(v),
  "x-events": (v) => eventLog.setVisible(v),
  "x-group": (v) => { groupVisible = v; app.dirty = true; },
  "x-metadata": (v) => { metadataVisible = v; app.dirty = true; },
};
let groupVisible = false;
let metadataVisible = false;

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
  // The tab a list opens with is the template's: its view (and only it) is told it is visible.
  selectTab(tabs.find((tab) => tab.getAttribute("aria-selected") === "true") || tabs[0]);
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
  connecting: gettext("connecting…"), open: gettext("connected"), reconnecting: gettext("reconnecting"), refused: gettext("refused"),
  closed: gettext("disconnected"),
};

function showStatus(status, detail) {
  root.dataset.status = status;
  const shortDetail = status === "reconnecting" ? detail : "";
  $("[data-conn-text]", root).textContent = `${STATUS_TEXT[status] || status}${shortDetail ? ` (${shortDetail})` : ""}`;
  if (status === "refused") {
    showBanner(say(gettext("The lab server closed this page's connection: %(reason)s. Open “My sessions” or start a new session."), { reason: detail }));
  } else if (status === "reconnecting") {
    showBanner(say(gettext("Lost the connection to the lab server — reconnecting %(when)s. Nothing you did is lost: the server keeps this session's command log."),
                   { when: detail }));
  } else if (status === "open") {
    hideBanner();
  }
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
    if (el && session[key] !== undefined) {
      el.textContent = key === "brokers" ? say(ngettext("%(count)s broker", "%(count)s brokers", session[key]), { count: session[key] }) : String(session[key]);
    }
  }
  // The metadata mode lives in the config (lab/views_sessions.py metadata_mode says it the same way).
  const mode = $('[data-meta="metadata"]', root);
  const config = session.config || {};
  if (mode && session.config) {
    mode.textContent = config.metadata === "kraft" ? `kraft (${config["controller.mode"] || "combined"})` : (config.metadata || "zookeeper");
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
  if (!htmx) { errorToast(gettext("htmx did not load: the explorer panels will not work")); return; }
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
    errorToast(status === 404 ? gettext("That panel is not available: the session is not running or is not yours")
      : say(gettext("The lab answered %(status)s"), { status }));
  });
  document.body.addEventListener("htmx:sendError", () => errorToast(gettext("The lab server cannot be reached")));
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
  renderCluster(svg, app.view, vnow, wall, { selected: app.selected, showInternal: app.showInternal, vnow,
                                             animate: eventRate.perSecond < CALM_EVENTS_PER_S });
  renderTimers(timersOut, app.view.timers, vnow);
  if (app.dirty) {
    app.dirty = false;
    renderSummary($("[data-partition-summary-body]", root), app.view, { showInternal: app.showInternal });
    const internal = Array.from(app.view.topics.keys()).filter((t) => t.startsWith("__"));
    internalToggle.hidden = internal.length === 0;
    renderTruncations($("[data-truncation-list]", root), app.view, { showInternal: app.showInternal });
    controls.refreshOptions(app.view);
    if (groupVisible) groupView.render(app.view, wall);
    if (metadataVisible) renderMetadata($("[data-metadata-view]", root), app.view, { showInternal: app.showInternal });
  } else if (groupVisible && moving) {
    groupView.render(app.view, wall);
  }
  timeline.render();
}

function frame() {
  const wall = performance.now();
  const vnow = vclock.now(wall);
  const wasBusy = eventRate.perSecond >= CALM_EVENTS_PER_S;
  // Measured every animation frame, drawn or not: once the stream calms (or stops), the rate says
  // so within a second, and the picture is drawn calm again.
  if (wasBusy !== (eventsPerSecond(wall) >= CALM_EVENTS_PER_S)) stale = true;
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

// For the console, the browser tests and lab/bench_browser.py: `model()` is the page's model in
// the server's shape (lab-state.js modelSummary), to compare with a fresh one from the server.
window.kafkaLab = { app, socket, stats, segmentView, model: () => modelSummary(app.view), describeCommand,
                    showView, followLive };
socket.connect();
requestAnimationFrame(frame);
