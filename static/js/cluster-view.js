// The cluster view: brokers as boxes, each holding its replicas as rows of offset cells, with
// LEO and HW markers, ISR/OSR colours, the leader marked, messages travelling between nodes and
// truncated cells shown in red. `renderCluster` is a function of (view, virtual time, wall time)
// — pausing or scrubbing just calls it with another instant.
//
// Geometry. The picture is drawn at the size it is shown: its viewBox is as wide as its box on
// the page in CSS pixels (÷ 1.25 in projector mode, which makes everything bigger), so text is
// always 11–20 px on screen and a phone gets one column of brokers with fewer cells per row
// instead of a whole cluster shrunk to 330 px. Every label is measured (`labelWidth`) and laid
// out so that nothing overlaps or leaves its box: a broker's badges wrap to a second line, a
// replica's "LEO · HW" moves under its cells when its header has no room, long names end in "…"
// with the whole name in a <title>.
//
// Cost (python -m lab.bench_browser watches a 9-broker session at 10×). A busy session changes
// most replicas at every frame, which nobody can follow; so:
// - a replica row and a broker's header are redrawn only when what they show changed (dom.js
//   `memo`); a row's cells sit in one group that moves as the log grows;
// - a small, calm picture is lively (cells fly in, markers slide); a big or busy one is not (Blink
//   gives each running SVG transform animation a compositing layer), keys cells by their place
//   in the window and, while the stream is busy (`ui.animate` false), shows no offset in them;
// - a picture that is not lively is drawn at most every BUSY_DRAW_MS, leaves rows out of sight
//   as they were, and is drawn whole SETTLE_MS after its last busy draw: it always ends exact;
// - the requests in flight — what moves at every animation frame — are drawn on a second SVG laid
//   over the first, a compositing layer of its own, so that moving a dot repaints the dots only.
//
// Stable hooks for tests and tools: every broker box has data-broker-id/-alive/-controller;
// every replica row data-broker/-topic/-partition/-role/-leo/-hw/-isr/-alive; every cell
// data-offset/-committed; the HW marker data-hw.

import { h, patch } from "./dom.js";
import { messageProgress, partitionKey, partitionLabel, sortedPartitions } from "./lab-state.js";
import { controllerNotice } from "./guidance.js";
import { gettext, interpolate as say, ngettext } from "./i18n.js";

// The picture's words, looked up once (it is drawn many times a second; the page's language
// does not change under it).
const WORDS = {
  up: gettext("up"), down: gettext("DOWN"), controller: gettext("controller"), controllerDown: gettext("controller (down)"),
  rack: gettext("rack %(rack)s"),
  fetchPaused: gettext("fetch paused"), broker: gettext("Broker %(id)s"), nums: gettext("LEO %(leo)s · HW %(hw)s"),
  numsOnDisk: gettext("LEO %(leo)s · HW %(hw)s on disk"), noLog: gettext("no log on disk"), downTag: gettext("down"),
  leader: gettext("LEADER"), lostNote: gettext("lost %(count)s unflushed on power loss"),
  controllerNode: gettext("controller %(id)s"), active: gettext("active"),
  controllerNodeTip: gettext("KRaft controller %(id)s (process.roles=controller): a voter of the metadata quorum, no partitions"),
};

const PAD = 16;
const GAP_X = 22;
const GAP_Y = 56;
const ARC_SPACE = 38;        // over the first row of boxes: arcs between brokers of one row
const CLIENT_BAND = 46;
const BROKER_HEAD = 48;      // a broker's name and badges, one line
const BADGE_LINE = 26;       // each further line of badges
const ROW_H = 64;            // a replica: its header line and its cells
const NUMS_LINE = 18;        // "LEO · HW" under the cells, when the header has no room for it
const INNER = 12;
const CELL = 26;             // cell pitch (24 wide + 2 gap)
const CELL_W = 24;
const CELL_H = 26;
const CELLS_DY = 30;         // from a row's top to its cells
const EARLIER_W = 34;        // "…15" before the first cell drawn
const MIN_BOX = 210;         // a broker box is never narrower (fewer columns instead)
const MAX_COLUMNS = 5;
const NAME_MIN = 64;         // a replica's name keeps at least this much room (else "LEO · HW" moves down)
const DOWN_NAME_MIN = 28;    // … a down replica's less (its row says more: "LEO 44 · HW 40 on disk")
const LEADER_W = 62;
const PROJECTOR_ZOOM = 1.25;
const MESSAGES_DRAWN = 60;   // in flight at once, at most (the newest): more is a blur, and costs every frame
const MESSAGES_DRAWN_BUSY = 24;   // … in a picture that is not lively (see LIVELY_ROWS): most arrive within a frame
// Cells fly in and markers slide only in a picture of at most LIVELY_ROWS replicas: Blink gives
// every running SVG transform animation a compositing layer of its own, and a 9-broker picture
// whose seventy rows all move at once spent 100 ms a frame just sorting those layers out.
const LIVELY_ROWS = 24;

const FONT = {
  broker: "700 20px", badge: "700 13px", replica: "700 16px", leader: "800 12px", tag: "800 13px",
  nums: "600 14px", note: "600 11px", client: "600 14px",
};

const API_CLASS = {
  Fetch: "msg-fetch", FetchResponse: "msg-fetch-resp", Produce: "msg-produce", ProduceResponse: "msg-produce-resp",
  LeaderAndIsr: "msg-control", LeaderAndIsrResponse: "msg-control", UpdateMetadata: "msg-control",
  OffsetsForLeaderEpoch: "msg-epoch", OffsetsForLeaderEpochResponse: "msg-epoch",
};

// -- measuring text ---------------------------------------------------------------------------
// Width of `text` in SVG units (= CSS px at zoom 1) at `font` ("weight size"), measured once per
// string. Digits are measured as zeros (the picture's numbers are tabular): "LEO 1234" and
// "LEO 5678" share one entry, so the cache stays small however far the offsets go.
const widths = new Map();
let measureContext = null;
let fontFamily = null;
export function labelWidth(text, font = FONT.replica) {
  let byText = widths.get(font);
  if (!byText) widths.set(font, byText = new Map());
  let width = byText.get(text);
  if (width === undefined) {
    const zeros = String(text).replace(/[0-9]/g, "0");
    width = byText.get(zeros) ?? measureText(zeros, font);
    if (byText.size > 4000) byText.clear();
    byText.set(zeros, width);
    byText.set(text, width);
  }
  return width;
}

function measureText(text, font) {
  measureContext ??= document.createElement("canvas").getContext("2d");
  fontFamily ??= getComputedStyle(document.body).fontFamily;
  if (!measureContext) return text.length * 10;
  measureContext.font = `${font.split(" ").slice(0, 2).join(" ")} ${fontFamily}`;
  return measureContext.measureText(text).width;
}

// `text` cut to fit `max` units with "…" (the longest prefix that fits), or as it is.
export function fitText(text, font, max) {
  if (labelWidth(text, font) <= max) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (labelWidth(text.slice(0, mid) + "…", font) <= max) lo = mid; else hi = mid - 1;
  }
  return lo > 0 ? text.slice(0, lo) + "…" : "…";
}

// A text that may have been cut: the whole of it in a <title> (the tooltip) when it was. (The two
// shapes have two keys: an element never turns from one into the other.)
function fittedText(attrs, text, font, max) {
  const shown = fitText(text, font, max);
  const key = attrs.key ?? "text";
  if (shown === text) return h("text", { ...attrs, key }, text);
  return h("text", { ...attrs, key: `${key}…` }, [h("title", { key: "full" }, text), h("tspan", { key: "shown" }, shown)]);
}

// -- the picture's width ------------------------------------------------------------------------
// The width of the picture's box on the page, watched (a ResizeObserver): read from a cache, so a
// draw never forces a layout. When it changes, the picture is drawn again at once.
const boxWidths = new WeakMap();
const lastDraw = new WeakMap();
let resizes = null;

function pictureWidth(svg) {
  const box = svg.parentElement || svg;
  if (!boxWidths.has(box)) {
    boxWidths.set(box, box.clientWidth || 1000);
    resizes ??= new ResizeObserver((entries) => {
      for (const entry of entries) {
        const width = Math.round(entry.contentRect.width);
        if (!width || width === boxWidths.get(entry.target)) continue;
        boxWidths.set(entry.target, width);
        const svgs = Array.from(entry.target.querySelectorAll("[data-cluster-svg]"));
        for (const drawn of svgs) if (lastDraw.has(drawn)) renderCluster(...lastDraw.get(drawn));
      }
    });
    resizes.observe(box);
  }
  const zoom = document.documentElement.classList.contains("projector") ? PROJECTOR_ZOOM : 1;
  return Math.max(260, Math.floor(boxWidths.get(box) / zoom));
}

// -- geometry first (pure numbers), then nodes from it -------------------------------------------
function columnsFor(brokers, width) {
  const fit = Math.max(1, Math.floor((width - 2 * PAD + GAP_X) / (MIN_BOX + GAP_X)));
  const most = Math.min(brokers, fit, MAX_COLUMNS);
  const rows = Math.ceil(brokers / Math.max(1, most));
  return Math.max(1, Math.ceil(brokers / rows));   // rows as even as the width allows
}

// A broker's badges, in lines of at most `room` units after its name: [{cls, text, width, line, x}].
function brokerBadges(view, b, room, vnow) {
  const cut = view.links_cut.filter((pair) => pair.includes(`broker-${b.id}`)).length;
  const wanted = [[b.alive ? "up" : "down", b.alive ? WORDS.up : WORDS.down]];
  // A dead controller stays the controller until ZooKeeper expires its session: say for how long.
  if (b.controller || view.controller === b.id) {
    wanted.push(["controller", b.alive ? WORDS.controller : WORDS.controllerDown]);
    const notice = b.alive ? null : controllerNotice(view, b.id, vnow, room - 16, (t) => labelWidth(t, FONT.badge));
    if (notice) wanted.push(["controller-notice", notice]);
  }
  if (b.rack) wanted.push(["rack", say(WORDS.rack, { rack: b.rack })]);   // broker.rack (KIP-392, rack-aware placement)
  if (b.paused_fetcher) wanted.push(["paused", WORDS.fetchPaused]);
  if (b.slow_ms) wanted.push(["slow", `+${b.slow_ms} ms`]);
  if (cut) wanted.push(["cut", say(ngettext("✂ %(count)s link", "✂ %(count)s links", cut), { count: cut })]);
  const nameWidth = labelWidth(say(WORDS.broker, { id: b.id }), FONT.broker) + 10;
  let line = 0;
  let x = nameWidth;
  return wanted.map(([cls, text]) => {
    const width = Math.min(room, labelWidth(text, FONT.badge) + 16);
    if (x + width > room && x > 0) { line += 1; x = 0; }
    const badge = { cls, text, width, line, x };
    x += width + 6;
    return badge;
  });
}

// What a replica's header says: its state word and its offsets.
function replicaWords(rep, alive) {
  const offsets = { leo: rep.log_end_offset, hw: rep.high_watermark };
  if (alive) return { tag: null, nums: say(WORDS.nums, offsets) };
  if (rep.on_disk === false) return { tag: "down", nums: WORDS.noLog };
  return { tag: "down", nums: say(WORDS.numsOnDisk, offsets) };
}

const NO_REPLICA = { alive: false, log_end_offset: 0, high_watermark: 0, log_start_offset: 0, records: new Map() };

function replicaOf(part, brokerId) {
  return part.replicaStates.get(brokerId) || NO_REPLICA;
}

function replicaAlive(view, rep, brokerId) {
  return rep.alive && view.brokers.get(brokerId)?.alive !== false;
}

// After a replica's name: the LEADER pill, or the follower's state (ISR, OSR, down).
function replicaTag(part, brokerId, alive) {
  if (part.leader === brokerId && alive) return null;
  return alive ? (part.isr.includes(brokerId) ? "ISR" : "OSR") : WORDS.downTag;
}

function tagWidth(tag) {
  return tag === null ? LEADER_W + 8 : labelWidth(tag, FONT.tag) + 8;
}

// Offsets measured as if they had three digits at least: the rows keep their shape up to 1,000.
function numsWidth(nums) {
  return labelWidth(nums.replace(/\d+/g, (digits) => digits.padStart(3, "0")), FONT.nums);
}

// Room a replica's header needs on one line beside "LEO · HW", its name left NAME_MIN wide at least.
function headerNeed(view, part, brokerId) {
  const rep = replicaOf(part, brokerId);
  const alive = replicaAlive(view, rep, brokerId);
  return (alive ? NAME_MIN : DOWN_NAME_MIN) + 8 + tagWidth(replicaTag(part, brokerId, alive)) +
    numsWidth(replicaWords(rep, alive).nums) + 12;
}

// The cells each partition shows: the newest that fit, the same window on every replica (so a
// partition's offsets line up from broker to broker); with a slot for "…N earlier" when the log
// goes further back than the window.
function cellWindows(view, partitions, inner) {
  const full = Math.max(3, Math.floor(inner / CELL));
  const shortened = Math.max(2, Math.floor((inner - EARLIER_W) / CELL));
  const windows = new Map();
  for (const p of partitions) {
    let end = 0;
    for (const rep of p.replicaStates.values()) end = Math.max(end, rep.log_end_offset + (rep.alive ? 0 : rep.lost_on_crash || 0));
    for (const g of view.ghosts) if (g.topic === p.topic && g.partition === p.partition) end = Math.max(end, g.offset + 1);
    const size = end > full ? shortened : full;
    const start = Math.max(0, end - size);
    windows.set(partitionKey(p.topic, p.partition), { start, end, size, lead: start > 0 ? EARLIER_W : 0 });
  }
  return windows;
}

export function layout(view, ui = {}) {
  const W = ui.width || 1000;
  const brokers = Array.from(view.brokers.values()).sort((a, b) => a.id - b.id);
  const partitions = sortedPartitions(view, { internal: !!ui.showInternal });
  const cols = columnsFor(brokers.length, W);
  const bw = (W - 2 * PAD - (cols - 1) * GAP_X) / cols;
  const inner = bw - 2 * INNER;
  const clients = Array.from(view.clients).sort();
  // KRaft's dedicated controllers are nodes too (requests travel to them), but hold no partitions:
  // pills in the band over the brokers, before the clients.
  const controllers = view.controller_nodes || [];
  const band = controllers.length + clients.length;
  const top = (band ? CLIENT_BAND : 0) + ARC_SPACE;
  const hosted = new Map(brokers.map((b) => [b.id, partitions.filter((p) => p.replicas.includes(b.id) || p.replicaStates.has(b.id))]));
  const badges = new Map(brokers.map((b) => [b.id, brokerBadges(view, b, bw - 28, ui.vnow)]));
  const badgeLines = Math.max(0, ...Array.from(badges.values(), (list) => Math.max(0, ...list.map((x) => x.line))));
  const headH = BROKER_HEAD + badgeLines * BADGE_LINE;
  let numsBelow = false;
  for (const b of brokers) for (const p of hosted.get(b.id)) if (headerNeed(view, p, b.id) > inner) numsBelow = true;
  const rowH = ROW_H + (numsBelow ? NUMS_LINE : 0);
  const boxes = new Map();
  let y = top;
  for (let row = 0; row * cols < brokers.length; row++) {
    const inRow = brokers.slice(row * cols, row * cols + cols);
    const height = Math.max(...inRow.map((b) => headH + Math.max(1, hosted.get(b.id).length) * rowH + 8));
    inRow.forEach((b, i) => boxes.set(b.id, { x: PAD + i * (bw + GAP_X), y, w: bw, h: height, partitions: hosted.get(b.id) }));
    y += height + GAP_Y;
  }
  const nodes = new Map();
  for (const [id, box] of boxes) nodes.set(`broker-${id}`, { x: box.x + box.w / 2, y: box.y, box });
  const pill = Math.min(150, (W - 2 * PAD) / Math.max(1, band));
  controllers.forEach((n, i) => nodes.set(n.node, { x: PAD + pill * (i + 0.5), y: 26, pill: pill - 10 }));
  clients.forEach((name, i) => nodes.set(name, { x: PAD + pill * (controllers.length + i + 0.5), y: 26, pill: pill - 10 }));
  const rows = brokers.reduce((n, b) => n + hosted.get(b.id).length, 0);
  return { W, brokers, boxes, nodes, windows: cellWindows(view, partitions, inner), height: Math.max(y - GAP_Y + PAD, top + 120),
           clients, controllers, badges, headH, rowH, numsBelow, inner, lively: ui.animate !== false && rows <= LIVELY_ROWS,
           numbers: ui.animate !== false, busy: ui.animate === false };
}

export function arc(a, b) {
  const lift = 20 + Math.min(ARC_SPACE - 16, Math.abs(a.x - b.x) / 10);
  return { x: (a.x + b.x) / 2, y: Math.min(a.y, b.y) - lift };
}

// Where a line between two nodes starts and ends, and how it bends: brokers in one row are joined
// by an arc over their tops; brokers in different rows by a line through the gap between the rows
// (from the upper box's bottom to the lower box's top), so lines do not cross the boxes' logs.
export function route(nodes, src, dst) {
  const a = nodes.get(src);
  const b = nodes.get(dst);
  if (!a || !b) return null;
  if (a.box && b.box && a.box.y !== b.box.y) {
    const down = a.box.y < b.box.y;
    const from = { x: a.x, y: down ? a.box.y + a.box.h : a.box.y };
    const to = { x: b.x, y: down ? b.box.y : b.box.y + b.box.h };
    return { a: from, b: to, c: { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 } };
  }
  return { a, b, c: arc(a, b) };
}

function pointOn(a, c, b, t) {
  const u = 1 - t;
  return { x: u * u * a.x + 2 * u * t * c.x + t * t * b.x, y: u * u * a.y + 2 * u * t * c.y + t * t * b.y };
}

function pathOf({ a, b, c }) {
  return `M${a.x.toFixed(1)},${a.y.toFixed(1)} Q${c.x.toFixed(1)},${c.y.toFixed(1)} ${b.x.toFixed(1)},${b.y.toFixed(1)}`;
}

// -- a replica row --------------------------------------------------------------------------------
// A lively picture keys cells by offset and places them at offset × CELL in the row's cells
// group, which is moved so that the window's first offset sits at the row's left: as the log
// grows the group moves and a new cell flies in. Otherwise (a batch of records at every draw
// would replace every cell of every row) cells are keyed by their place in the window, and a
// cell is rewritten instead of made anew. While the stream is busy (`numbers` false) cells carry
// no offset: numbers that change eight times a second cannot be read, and rewriting them was most
// of the picture's layout; the row still says where its log ends ("LEO · HW") and how much lies
// before the window. Paused, the numbers come back.
function cellNodes(part, rep, win, lively, numbers) {
  const cells = [];
  const stale = rep.alive ? "" : " stale";
  const from = Math.max(win.start, rep.log_start_offset || 0);
  for (let offset = from; offset < rep.log_end_offset; offset++) {
    const committed = offset < rep.high_watermark;
    const x = (lively ? offset : offset - win.start) * CELL;
    cells.push(h("g", { key: lively ? `c${offset}` : `s${offset - win.start}`, class: `cell ${committed ? "committed" : "uncommitted"}${stale}`,
                        "data-offset": offset, "data-committed": committed ? "true" : "false" }, [
      h("rect", { x, y: 0, width: CELL_W, height: CELL_H, rx: 3 }),
      numbers ? h("text", { x: x + CELL_W / 2, y: CELL_H / 2 + 5, "text-anchor": "middle" }, String(offset % 1000)) : null,
    ]));
  }
  return cells;
}

// Truncated cells, placed at offset × CELL (their group is moved like a calm row's cells).
function ghostNodes(view, part, brokerId, win) {
  const cells = [];
  for (const g of view.ghosts) {
    if (g.broker !== brokerId || g.topic !== part.topic || g.partition !== part.partition || g.offset < win.start) continue;
    const ghost = ghostCell(g, ghostFate(view, g));
    if (ghost) cells.push(ghost);
  }
  return cells;
}

// A cell's tooltip: its record as the model holds it.
function cellTip(view, cell) {
  const row = cell.closest("[data-replica]");
  if (!row) return null;
  const part = view.partitions.get(partitionKey(row.dataset.topic, Number(row.dataset.partition)));
  const offset = Number(cell.dataset.offset);
  const record = part?.replicaStates.get(Number(row.dataset.broker))?.records.get(offset);
  const what = record ? say(gettext("offset %(offset)s · key %(key)s · value %(value)s"), { offset, key: record.key ?? "null", value: record.value ?? "null" })
    : say(gettext("offset %(offset)s"), { offset });
  return what + (cell.dataset.committed === "true" ? gettext(" · committed (below HW)") : gettext(" · not committed yet (at or above HW)"));
}

// What became of a truncated cell's record (the model's `truncations`, lab/truncations.py):
// "lost", "refetched", "kept" (still on the leader) — or null while the server has not said.
function ghostFate(view, g) {
  for (let i = view.truncations.length - 1; i >= 0; i--) {
    const t = view.truncations[i];
    if (t.broker !== g.broker || t.topic !== g.topic || t.partition !== g.partition) continue;
    const r = t.removed.find((x) => x.offset === g.offset && x.value === g.value && x.key === g.key);
    if (r) return r.fate;
  }
  return null;
}

// Only a lost record gets the red ✕. One fetched back needs no mark (its cell is there again);
// one the leader still holds gets a calm outline where it will come back.
function ghostCell(g, fate) {
  if (fate === "refetched" || fate === "expired") return null;
  const x = g.offset * CELL;
  const kept = fate === "kept";
  const what = say(gettext("key %(key)s · value %(value)s"), { key: g.key ?? "null", value: g.value ?? "null" });
  return h("g", { key: `ghost${g.offset}`, class: `cell ghost${kept ? " kept" : ""}`, "data-truncated-offset": g.offset,
                  "data-fate": fate ?? "" }, [
    h("rect", { x, y: 0, width: CELL_W, height: CELL_H, rx: 3 }),
    h("text", { x: x + CELL_W / 2, y: CELL_H / 2 + 5, "text-anchor": "middle" }, kept ? "↺" : "✕"),
    h("title", {}, say(kept ? gettext("offset %(offset)s was truncated here, but the leader still holds it (%(what)s): it will be fetched back")
      : gettext("offset %(offset)s was truncated and is lost: %(what)s"), { offset: g.offset, what })),
  ]);
}

// Markers at the edge of their offset (clamped to the window), in the row's coordinates: they
// slide (animated) when the offset moves in the window, not when the window moves.
function markerNodes(rep, win, x0, cellsY) {
  const at = (offset) => x0 + win.lead + (Math.max(offset, win.start) - win.start) * CELL - 1;
  return [
    h("g", { key: "leo", class: "leo-marker", style: `transform: translate(${at(rep.log_end_offset)}px, ${cellsY}px)`,
             "data-leo": rep.log_end_offset }, [h("line", { x1: 0, y1: -3, x2: 0, y2: CELL_H + 3 })]),
    h("g", { key: "hw", class: "hw-marker", style: `transform: translate(${at(rep.high_watermark)}px, ${cellsY}px)`,
             "data-hw": rep.high_watermark }, [
      h("line", { x1: 0, y1: -4, x2: 0, y2: CELL_H + 3 }),
      h("polygon", { points: "-4,-8 4,-8 0,-3" }),
      h("title", {}, say(gettext("high watermark %(hw)s: offsets below it are committed"), { hw: rep.high_watermark })),
    ]),
  ];
}

function ghostsOf(view, brokerId, part) {
  if (!view.ghosts.length) return "";
  return view.ghosts.filter((g) => g.broker === brokerId && g.topic === part.topic && g.partition === part.partition)
    .map((g) => `${g.offset}:${ghostFate(view, g)}`).join(",");
}

function replicaDescription(label, brokerId, isLeader, inIsr, alive, rep) {
  const values = { label, broker: brokerId, leo: rep.log_end_offset, hw: rep.high_watermark, lost: rep.lost_on_crash };
  if (alive) {
    return say(isLeader ? (inIsr ? gettext("%(label)s on broker %(broker)s: leader, in sync, LEO %(leo)s, HW %(hw)s")
      : gettext("%(label)s on broker %(broker)s: leader, out of sync, LEO %(leo)s, HW %(hw)s"))
      : inIsr ? gettext("%(label)s on broker %(broker)s: follower, in sync, LEO %(leo)s, HW %(hw)s")
        : gettext("%(label)s on broker %(broker)s: follower, out of sync, LEO %(leo)s, HW %(hw)s"), values);
  }
  const lost = rep.lost_on_crash > 0 ? say(gettext("; lost %(lost)s unflushed on power loss"), values) : "";
  const disk = rep.on_disk === false ? gettext("%(label)s on broker %(broker)s: down, no log on disk")
    : gettext("%(label)s on broker %(broker)s: down, on disk: LEO %(leo)s, HW %(hw)s");
  return say(disk, values) + lost;
}

function replicaNode(view, part, brokerId, box, index, info, ui) {
  const rep = replicaOf(part, brokerId);
  const win = info.windows.get(partitionKey(part.topic, part.partition));
  const y = box.y + info.headH + index * info.rowH;
  const isLeader = part.leader === brokerId;
  const inIsr = part.isr.includes(brokerId);
  const alive = replicaAlive(view, rep, brokerId);
  const flash = view.flashes.get(`replica:${brokerId}:${partitionKey(part.topic, part.partition)}`);
  const label = partitionLabel(part.topic, part.partition);
  const state = !alive ? "dead" : inIsr ? "isr" : "osr";
  const selected = ui.selected;
  const isSelected = !!selected && selected.broker === brokerId && selected.topic === part.topic && selected.partition === part.partition;
  const key = `r:${label}`;
  const seen = sightKey(brokerId, label);
  const place = `${y}|${box.x}|${box.w}|${info.numsBelow}|${info.lively}|${win.lead}`;
  const last = info.sight?.drawn.get(seen);
  if (info.busy && last?.place === place && info.sight.inSight.get(seen) === false && info.sight.rows.get(seen)?.isConnected) {
    return h("g", { key, memo: last.memo });   // left as drawn: the same memo, so patch passes it by
  }
  const memo = [rep, part.leader, part.isr, alive, flash?.cls, isSelected, y, box.x, box.w, info.numsBelow, win.start,
                win.lead, ghostsOf(view, brokerId, part), info.lively, info.numbers];
  info.sight?.drawn.set(seen, { memo, place });
  const description = replicaDescription(label, brokerId, isLeader, inIsr, alive, rep);
  const about = { label, isLeader, alive, state, inIsr, description, tag: replicaTag(part, brokerId, alive) };
  return h("g", {
    key, memo,
    class: `replica ${state}${isLeader ? " leader" : ""}${flash ? " " + flash.cls : ""}${isSelected ? " selected" : ""}`,
    "data-replica": "", "data-broker": brokerId, "data-topic": part.topic, "data-partition": part.partition,
    "data-role": isLeader ? "leader" : "follower", "data-leo": rep.log_end_offset, "data-hw": rep.high_watermark,
    "data-isr": inIsr ? "true" : "false", "data-alive": alive ? "true" : "false", tabindex: 0, role: "button",
    "aria-label": say(gettext("%(description)s. Open its segments."), { description }),
  }, () => replicaChildren(view, part, brokerId, rep, box, y, win, info, about, info.lively));
}

function replicaChildren(view, part, brokerId, rep, box, y, win, info, r, lively) {
  const x0 = box.x + INNER;
  const right = box.x + box.w - INNER;
  const words = replicaWords(rep, r.alive);
  const nums = fitText(words.nums, FONT.nums, info.inner);
  const headRoom = info.inner - (info.numsBelow ? 0 : labelWidth(nums, FONT.nums) + 12);
  const name = fitText(r.label, FONT.replica, Math.max(headRoom - tagWidth(r.tag), 12));
  const afterName = x0 + labelWidth(name, FONT.replica) + 8;
  const cellsY = y + CELLS_DY;
  const numsAt = info.numsBelow ? { x: x0, y: cellsY + CELL_H + 15, anchor: "start" } : { x: right, y: y + 20, anchor: "end" };
  return [
    h("rect", { class: "replica-bg", x: box.x + 4, y: y + 2, width: box.w - 8, height: info.rowH - 6, rx: 6 }),
    h("title", { key: "about" }, r.description),
    h("text", { key: "name", class: "replica-name", x: x0, y: y + 20 }, name),
    r.tag === null ? h("g", { key: "lead", class: "leader-badge" }, [
      h("rect", { x: afterName, y: y + 6, width: LEADER_W, height: 19, rx: 9 }),
      h("text", { x: afterName + LEADER_W / 2, y: y + 20, "text-anchor": "middle" }, WORDS.leader),
    ]) : h("text", { key: "tag", class: `isr-tag ${r.state}`, x: afterName, y: y + 20 }, r.tag),
    h("text", { key: "nums", class: `replica-offsets${r.alive ? "" : " on-disk"}`, x: numsAt.x, y: numsAt.y,
                "text-anchor": numsAt.anchor }, nums),
    win.lead && rep.log_end_offset > win.start
      ? h("text", { key: "earlier", class: "earlier", x: x0 + win.lead - 5, y: cellsY + 17, "text-anchor": "end" },
          `…${earlierCount(win.start - (rep.log_start_offset || 0))}`)
      : null,
    lostNote(rep, r.alive, win, x0, right, cellsY),
    h("g", { key: "cells", class: "cells", style: `transform: translate(${x0 + win.lead - (lively ? win.start * CELL : 0)}px, ${cellsY}px)` },
      cellNodes(part, rep, win, lively, info.numbers)),
    view.ghosts.length ? h("g", { key: "ghosts", class: "ghosts", style: `transform: translate(${x0 + win.lead - win.start * CELL}px, ${cellsY}px)` },
      ghostNodes(view, part, brokerId, win)) : null,
    ...markerNodes(rep, win, x0, cellsY),
  ];
}

// "…15", "…12k", "…3M": what lies before the window, in at most four characters.
function earlierCount(n) {
  if (n < 1000) return String(n);
  return n < 1e6 ? `${Math.floor(n / 1000)}k` : `${Math.floor(n / 1e6)}M`;
}

// A power loss took the records after the on-disk log end: say so where they were.
function lostNote(rep, alive, win, x0, right, cellsY) {
  if (alive || !(rep.lost_on_crash > 0)) return null;
  const text = say(WORDS.lostNote, { count: rep.lost_on_crash });
  const x = x0 + win.lead + (Math.max(rep.log_end_offset, win.start) - win.start) * CELL + 6;
  if (right - x < 40) return null;   // no room in the row: the row's title and aria-label say it
  return fittedText({ key: "lost", class: "lost-note", x, y: cellsY + 17 }, text, FONT.note, right - x);
}

// -- a broker box ------------------------------------------------------------------------------------
function brokerHeader(view, b, box, badges) {
  const flash = view.flashes.get(`broker:${b.id}`);
  const memo = [b.alive, b.controller, view.controller, b.paused_fetcher, b.slow_ms, badges.map((x) => x.text).join("|"),
                box.x, box.y, box.w, box.h, flash?.cls];
  return h("g", { key: "head", class: "broker-head", memo }, () => [
    h("rect", { class: "broker-box", x: box.x, y: box.y, width: box.w, height: box.h, rx: 10 }),
    h("text", { class: "broker-name", x: box.x + 14, y: box.y + 30 }, say(WORDS.broker, { id: b.id })),
    ...badges.map((badge) => {
      const x = box.x + 14 + badge.x;
      const y = box.y + 12 + badge.line * BADGE_LINE;
      return h("g", { key: `badge-${badge.cls}`, class: `badge-svg ${badge.cls}` }, [
        h("rect", { x, y, width: badge.width, height: 22, rx: 11 }),
        h("text", { x: x + badge.width / 2, y: y + 16, "text-anchor": "middle" }, fitText(badge.text, FONT.badge, badge.width - 12)),
      ]);
    }),
  ]);
}

function brokerNode(view, b, box, info, ui) {
  const flash = view.flashes.get(`broker:${b.id}`);
  const rows = box.partitions.map((p, i) => replicaNode(view, p, b.id, box, i, info, ui));
  return h("g", { key: `b${b.id}`, class: `broker ${b.alive ? "alive" : "dead"}${flash ? " " + flash.cls : ""}`,
                  "data-broker-id": b.id, "data-alive": b.alive ? "true" : "false",
                  "data-controller": (b.controller || view.controller === b.id) ? "true" : "false" }, [
    brokerHeader(view, b, box, info.badges.get(b.id)),
    rows.length ? rows : h("text", { key: "empty", class: "empty-note", x: box.x + 14, y: box.y + info.headH + 24 }, gettext("no replicas yet")),
  ]);
}

// -- what travels between nodes -----------------------------------------------------------------
function linkCutNodes(view, info) {
  const out = [];
  for (const pair of view.links_cut) {
    const r = route(info.nodes, pair[0], pair[1]);
    if (!r) continue;
    const mid = pointOn(r.a, r.c, r.b, 0.5);
    out.push(h("g", { key: `cut:${pair.join("|")}`, class: "link-cut", "data-cut": pair.join(" x ") }, [
      h("path", { d: pathOf(r) }), h("text", { x: mid.x, y: mid.y + 6, "text-anchor": "middle" }, "✂"),
      h("title", {}, say(gettext("link cut: %(a)s ✕ %(b)s"), { a: pair[0], b: pair[1] })),
    ]));
  }
  return out;
}

// A trail shows a route used in the last moment (lab-state.js keeps it TRAIL_MS); it does not fade:
// a trail is a long curve, and repainting every trail's whole area at every frame was a quarter of
// a core of rasterising for a 9-broker picture. Dots are keyed by their place in the list, not by
// message: at 10× most requests arrive within a frame or two, and keying them by message would
// create and remove dozens of elements a frame instead of moving the same few. Few in flight (a
// slow clock): each dot is named and has a tooltip.
function networkNodes(view, info, vnow) {
  const out = [];
  // A picture that is not lively has its routes all busy at once: their trails would be a web over
  // every box (and repaint its area each time one comes or goes); the dots say enough.
  for (const [key, t] of info.lively ? view.trails : []) {   // one per route (lab-state.js)
    const r = route(info.nodes, t.src, t.dst);
    if (!r) continue;
    out.push(h("path", { key: `trail:${key}`, class: `trail ${API_CLASS[t.api] || "msg-other"}${t.lost ? " lost" : ""}`,
                         d: pathOf(r) }));
  }
  const few = view.inflight.size <= 6;
  let skip = view.inflight.size - (info.lively ? MESSAGES_DRAWN : MESSAGES_DRAWN_BUSY);
  let slot = 0;
  for (const m of view.inflight.values()) {
    if (skip-- > 0) continue;
    const r = route(info.nodes, m.src, m.dst);
    if (!r || vnow < m.send_ms) continue;
    const p = pointOn(r.a, r.c, r.b, messageProgress(m, vnow));
    out.push(h("g", { key: few ? `m${m.message_id}` : `slot${slot++}`, class: `message ${API_CLASS[m.api] || "msg-other"}`,
                      "data-api": m.api, "data-src": m.src, "data-dst": m.dst }, [
      h("circle", { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: 7 }),
      few ? h("text", { x: (p.x + 10).toFixed(1), y: (p.y - 8).toFixed(1) }, m.api) : null,
      few ? h("title", {}, say(gettext("%(api)s %(src)s → %(dst)s, sent at %(send_ms)s ms, arrives at %(arrive_ms)s ms"), m)) : null,
    ]));
  }
  return out;
}

function clientNodes(info) {
  return info.clients.map((name) => {
    const p = info.nodes.get(name);
    const width = Math.min(p.pill, labelWidth(name, FONT.client) + 28);
    return h("g", { key: `client:${name}`, class: "client-node", "data-client": name, memo: [p.x, width] }, () => [
      h("rect", { x: p.x - width / 2, y: p.y - 16, width, height: 32, rx: 16 }),
      fittedText({ key: "name", x: p.x, y: p.y + 6, "text-anchor": "middle" }, name, FONT.client, width - 20),
    ]);
  });
}

// KRaft's dedicated controller nodes: a pill each, the active one marked, a dead one dashed.
function controllerNodes(info) {
  return info.controllers.map((n) => {
    const p = info.nodes.get(n.node);
    const name = say(WORDS.controllerNode, { id: n.id });   // active: a thick border; down: dashed red (lab.css)
    const width = Math.min(p.pill, labelWidth(name, FONT.client) + 28);
    return h("g", { key: `controller:${n.id}`, class: `controller-node${n.active ? " active" : ""}${n.alive ? "" : " dead"}`,
                    "data-controller-node": n.id, "data-alive": n.alive ? "true" : "false", "data-active": n.active ? "true" : "false",
                    memo: [p.x, width, name, n.active, n.alive] }, () => [
      h("rect", { x: p.x - width / 2, y: p.y - 16, width, height: 32, rx: 8 }),
      fittedText({ key: "name", x: p.x, y: p.y + 6, "text-anchor": "middle" }, name, FONT.client, width - 16),
      h("title", {}, say(WORDS.controllerNodeTip, { id: n.id }) + (n.active ? ` · ${WORDS.active}` : n.alive ? "" : ` · ${WORDS.down}`)),
    ]);
  });
}

// The layer the moving things are drawn on: a second <svg> over the picture (created once).
const layers = new WeakMap();
function networkLayer(svg) {
  let layer = layers.get(svg);
  if (!layer) {
    layer = document.createElementNS(svg.namespaceURI, "svg");
    layer.setAttribute("class", "cluster-network");
    layer.setAttribute("data-cluster-network", "");
    layer.setAttribute("aria-hidden", "true");
    layer.setAttribute("preserveAspectRatio", svg.getAttribute("preserveAspectRatio") || "xMidYMin meet");
    svg.after(layer);   // (beside the picture; a picture outside a page keeps its layer detached)
    layers.set(svg, layer);
  }
  return layer;
}

// A cell's tooltip (offset, key, value) is made when the pointer comes over it, not with every
// cell: a busy session rewrites thousands of cells a second and few are ever pointed at.
function cellTips(svg) {
  if (svg.__cellTips) return;
  svg.__cellTips = true;
  svg.addEventListener("pointerover", (event) => {
    const cell = event.target.closest?.(".cell[data-offset]");
    if (!cell || cell.querySelector(":scope > title") || !lastDraw.has(svg)) return;
    const tip = cellTip(lastDraw.get(svg)[1], cell);
    if (!tip) return;
    const title = document.createElementNS(svg.namespaceURI, "title");
    title.textContent = tip;
    cell.append(title);
  });
}

// Unless the picture is lively (a calm stream, few rows) the brokers are laid out and drawn at
// most every BUSY_DRAW_MS: a picture rewritten twenty times a second is a blur, and each time
// costs every changed row's style, layout and paint. The requests in flight still move at every
// frame (over the layout last drawn). A change left undrawn is drawn when the time is up (a
// timer): the picture always ends on the model.
const BUSY_DRAW_MS = 200;
const SETTLE_MS = 500;
const brokerDraws = new WeakMap();   // svg -> {at, timer, settle (timers), info: the layout drawn, frame (the model's) and when it came}

// The layout the picture shows now: drawn anew if it is due, else the last one.
function brokersNow(svg, view, ui) {
  let state = brokerDraws.get(svg);
  if (!state) brokerDraws.set(svg, state = { at: -Infinity, timer: null, settle: null, info: null, frame: null, frameAt: 0 });
  const now = performance.now();
  const width = pictureWidth(svg);
  const last = state.info;
  if (last && !last.lively && last.W === width && now - state.at < BUSY_DRAW_MS) {
    state.timer ??= setTimeout(() => {
      state.timer = null;
      const [, latest, , , latestUi] = lastDraw.get(svg);
      brokersNow(svg, latest, latestUi);
    }, BUSY_DRAW_MS - (now - state.at) + 1);
    return last;
  }
  return redrawBrokers(svg, view, ui, width);
}

function redrawBrokers(svg, view, ui, width = pictureWidth(svg), settled = false) {
  const state = brokerDraws.get(svg);
  clearTimeout(state.timer);
  clearTimeout(state.settle);
  state.timer = null;
  state.at = performance.now();
  state.info = layout(view, { ...ui, width });
  // A busy draw leaves rows out of sight as they were and cells without numbers. The stream has
  // stopped (the clock paused) when no frame has come for SETTLE_MS: then everything is drawn as it is.
  if (view.frame !== state.frame) Object.assign(state, { frame: view.frame, frameAt: state.at });
  if (settled || state.at - state.frameAt >= SETTLE_MS) Object.assign(state.info, { busy: false, numbers: true });
  drawBrokers(svg, view, state.info, ui);
  if (state.info.busy) state.settle = setTimeout(() => redrawSettled(svg), SETTLE_MS);
  return state.info;
}

function redrawSettled(svg) {
  const [, view, , , ui] = lastDraw.get(svg);
  redrawBrokers(svg, view, ui, pictureWidth(svg), true);
}

// -- rows out of sight -----------------------------------------------------------------------------
// While the stream is busy, a replica row out of sight (scrolled away in its panel, or off the
// page) is left as it was last drawn: a 9-broker picture is several screens tall, and redrawing
// what nobody sees was most of its style, layout, paint and rasterising. An IntersectionObserver
// says which rows are in sight; a row coming into sight is drawn at once, and once the stream calms
// down (a pause) every row is drawn again: the picture always ends on the model.
const sights = new WeakMap();   // svg -> {inSight, drawn (memo, place), rows: row key -> element; watched, observer}

function sightKey(brokerId, label) {
  return `${brokerId}|${label}`;
}

function rowSightKey(row) {
  return sightKey(Number(row.dataset.broker), partitionLabel(row.dataset.topic, Number(row.dataset.partition)));
}

function sightOf(svg) {
  let sight = sights.get(svg);
  if (!sight) {
    sight = { inSight: new Map(), drawn: new Map(), rows: new Map(), watched: new Set(), observer: null };
    sight.observer = new IntersectionObserver((entries) => {
      let appeared = false;
      for (const entry of entries) {
        sight.inSight.set(rowSightKey(entry.target), entry.isIntersecting);
        appeared ||= entry.isIntersecting;
      }
      if (appeared && lastDraw.has(svg) && brokerDraws.has(svg)) {
        const [, view, , , ui] = lastDraw.get(svg);
        redrawBrokers(svg, view, ui);
      }
    });
    sights.set(svg, sight);
  }
  return sight;
}

function watchRows(svg, sight) {
  for (const row of sight.watched) {
    if (!row.isConnected) { sight.observer.unobserve(row); sight.watched.delete(row); }
  }
  for (const row of svg.querySelectorAll("[data-replica]")) {
    sight.rows.set(rowSightKey(row), row);
    if (!sight.watched.has(row)) { sight.watched.add(row); sight.observer.observe(row); }
  }
}

function drawBrokers(svg, view, info, ui) {
  info.sight = sightOf(svg);
  streamBusy = info.busy;
  const viewBox = `0 0 ${info.W} ${Math.ceil(info.height)}`;
  // Setting it, even unchanged, makes Blink lay out every text of the picture again.
  for (const el of [svg, networkLayer(svg)]) if (el.getAttribute("viewBox") !== viewBox) el.setAttribute("viewBox", viewBox);
  if (svg.classList.contains("calm") === info.lively) svg.classList.toggle("calm", !info.lively);
  const empty = info.brokers.length ? null
    : h("text", { key: "waiting", class: "empty-note", x: info.W / 2, y: 120, "text-anchor": "middle" }, gettext("Waiting for the cluster…"));
  patch(svg, [
    h("g", { key: "clients", class: "clients" }, [...controllerNodes(info), ...clientNodes(info)]),
    h("g", { key: "brokers", class: "brokers" }, info.brokers.map((b) => brokerNode(view, b, info.boxes.get(b.id), info, ui))),
    h("g", { key: "cuts", class: "link-cuts" }, linkCutNodes(view, info)),
    empty,
  ]);
  watchRows(svg, info.sight);
}

export function renderCluster(svg, view, vnow, wallNow, ui = {}) {
  lastDraw.set(svg, [svg, view, vnow, wallNow, ui]);
  cellTips(svg);
  const info = brokersNow(svg, view, ui);
  patch(networkLayer(svg), networkNodes(view, info, vnow));
}

// The table under the picture: the same facts in words, per partition. A row is rewritten only
// when its partition was (lab-state.js replaces a partition's entry when a patch changes it); the
// table at most every SUMMARY_MS (a busy stream changes every row at every frame), and, while the
// stream is busy and the table out of sight (below the picture, in its panel), only when it comes
// into sight or SETTLE_MS after the last change: it always ends on the model.
const SUMMARY_MS = 250;
let streamBusy = false;   // as the picture was last drawn (see drawBrokers)
const summaries = new WeakMap();   // tbody -> {at, timer, settle, inSight, latest: [view, ui]}

export function renderSummary(tbody, view, ui = {}) {
  const state = summaryState(tbody);
  state.latest = [view, ui];
  clearTimeout(state.settle);
  state.settle = setTimeout(() => drawLatestSummary(tbody, state), SETTLE_MS);
  if (state.inSight === false && streamBusy) return;
  const now = performance.now();
  if (now - state.at < SUMMARY_MS) {
    state.timer ??= setTimeout(() => drawLatestSummary(tbody, state), SUMMARY_MS - (now - state.at) + 1);
    return;
  }
  drawLatestSummary(tbody, state);
}

function summaryState(tbody) {
  let state = summaries.get(tbody);
  if (!state) {
    summaries.set(tbody, state = { at: -Infinity, timer: null, settle: null, inSight: null, latest: null });
    new IntersectionObserver(([entry]) => {
      state.inSight = entry.isIntersecting;
      if (state.inSight && state.latest) drawLatestSummary(tbody, state);
    }).observe(tbody.closest("table") || tbody);
  }
  return state;
}

function drawLatestSummary(tbody, state) {
  clearTimeout(state.timer);
  state.timer = null;
  state.at = performance.now();
  drawSummary(tbody, ...state.latest);
}

function drawSummary(tbody, view, ui) {
  const rows = sortedPartitions(view, { internal: !!ui.showInternal }).map((p) => {
    const label = partitionLabel(p.topic, p.partition);
    return h("tr", { key: label, memo: [p.leader, p.leader_epoch, p.isr, p.high_watermark, p.replicaStates],
                     "data-partition-summary": label, "data-leader": p.leader, "data-isr": p.isr.join(","),
                     "data-hw": p.high_watermark, "data-leader-epoch": p.leader_epoch }, () => summaryCells(p, label));
  });
  patch(tbody, rows.length ? rows : [h("tr", { key: "none" }, [h("td", { colspan: 7, class: "muted" }, gettext("No topics yet — create one on the left."))])]);
}

function summaryCells(p, label) {
  const osr = p.replicas.filter((b) => !p.isr.includes(b));
  const leos = p.replicas.map((b) => {
    const rep = p.replicaStates.get(b);
    const down = rep && !rep.alive ? (rep.on_disk === false ? gettext(" (down, no log)") : gettext(" (down, on disk)")) : "";
    return `${b}: ${rep ? rep.log_end_offset : "?"}${down}`;
  }).join(", ");
  return [
    h("th", { scope: "row" }, label),
    h("td", { class: p.leader < 0 ? "offline" : "" }, p.leader < 0 ? gettext("none (offline)") : say(gettext("broker %(id)s"), { id: p.leader })),
    h("td", {}, String(p.leader_epoch)),
    h("td", {}, `[${p.isr.join(", ")}]`),
    h("td", { class: osr.length ? "osr-text" : "" }, osr.length ? `[${osr.join(", ")}]` : "—"),
    h("td", { class: p.high_watermark < 0 ? "offline" : "" }, p.high_watermark < 0 ? gettext("— (no leader)") : String(p.high_watermark)),
    h("td", {}, leos),
  ];
}

// "What was lost": the recent truncations (the model's `truncations`), newest first, each removed
// record under what became of it — lost (no replica of the partition holds it at that offset any
// more), fetched back, or still on the leader — so a record truncated and copied back again is
// never listed as lost. Internal topics only with `ui.showInternal`.
export function renderTruncations(list, view, ui = {}) {
  const shown = (view.truncations || []).filter((t) => ui.showInternal || !t.internal);
  const items = shown.slice().reverse().map((t) => {
    const removed = t.removed || [];
    const group = (fate) => removed.filter((r) => r.fate === fate);
    const record = (r) => say(gettext("offset %(offset)s (key %(key)s, %(value)s)"), { offset: r.offset, key: r.key ?? "null", value: r.value ?? "null" }) +
      (r.fate === "lost" && r.now ? say(gettext(" — now %(value)s there"), { value: r.now.value ?? "null" }) : "");
    const line = (fate, cls, words) => {
      const rs = group(fate);
      return rs.length ? h("div", { key: fate, class: cls, "data-fate": fate }, `${words}: ${rs.map(record).join(" · ")}`) : null;
    };
    const unlisted = t.records_removed - removed.length;
    const counts = [t.lost ? say(gettext("%(count)s lost"), { count: t.lost }) : null,
                    t.refetched ? say(gettext("%(count)s fetched back"), { count: t.refetched }) : null,
                    t.kept ? say(gettext("%(count)s still on the leader"), { count: t.kept }) : null].filter(Boolean).join(", ");
    return h("li", { key: `t${t.seq}`, "data-truncation": `${t.topic}-${t.partition}`, "data-broker": t.broker,
                     "data-lost": t.lost, "data-refetched": t.refetched }, [
      h("strong", {}, `${say(WORDS.broker, { id: t.broker })} · ${t.topic}-${t.partition}`),
      h("span", {}, " " + say(gettext("truncated from offset %(from)s to %(to)s (%(reason)s) — %(removed)s"), {
        from: t.from_offset, to: t.to_offset, reason: t.reason,
        removed: say(ngettext("%(count)s record removed", "%(count)s records removed", t.records_removed), { count: t.records_removed }),
      }) + (counts ? `: ${counts}` : "")),
      line("lost", "lost", gettext("lost")),
      line("refetched", "refetched", gettext("fetched back (the same record is at that offset again)")),
      line("kept", "kept", gettext("still on the leader, to be fetched back")),
      unlisted > 0 ? h("div", { key: "more", class: "muted" }, say(gettext("…and %(count)s more not listed"), { count: unlisted })) : null,
    ]);
  });
  patch(list, items);
  const box = list.closest("[data-truncations]");
  box?.toggleAttribute("hidden", items.length === 0);
  const heading = box?.querySelector("h2");
  if (heading) heading.textContent = shown.some((t) => t.lost) ? gettext("What was lost") : gettext("What truncation removed");
}
