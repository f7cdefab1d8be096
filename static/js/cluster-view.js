// The cluster view: brokers as boxes, each holding its replicas as rows of offset cells, with
// LEO and HW markers, ISR/OSR colours, the leader marked, messages travelling between nodes and
// truncated cells shown in red. `renderCluster` is a pure function of (view, virtual time,
// wall time) — pausing or scrubbing just calls it with another instant. With `ui.animate` false
// (a busy stream, see session.js) new cells do not fly in and the markers jump instead of sliding.
//
// Stable hooks for tests and tools: every broker box has data-broker-id/-alive/-controller;
// every replica row data-broker/-topic/-partition/-role/-leo/-hw/-isr/-alive; every cell
// data-offset/-committed; the HW marker data-hw.

import { h, patch } from "./dom.js";
import { messageProgress, partitionKey, partitionLabel, sortedPartitions } from "./lab-state.js";
import { controllerNotice } from "./guidance.js";

const W = 1000;
const PAD = 16;
const GAP_X = 22;
const GAP_Y = 70;
const ARC_SPACE = 56;
const CLIENT_BAND = 64;
const HEADER_H = 50;
const ROW_H = 64;
const INNER = 12;
const CELL = 26;          // cell pitch (24 wide + 2 gap)
const CELL_W = 24;
const CELL_H = 26;
const MESSAGES_DRAWN = 60;  // in flight at once, at most (the newest): more is a blur, and costs every frame

const API_CLASS = {
  Fetch: "msg-fetch", FetchResponse: "msg-fetch-resp", Produce: "msg-produce", ProduceResponse: "msg-produce-resp",
  LeaderAndIsr: "msg-control", LeaderAndIsrResponse: "msg-control", UpdateMetadata: "msg-control",
  OffsetsForLeaderEpoch: "msg-epoch", OffsetsForLeaderEpochResponse: "msg-epoch",
};

// Width of `text` in SVG units at the replica label's font (measured once per string).
const widths = new Map();
let measureContext = null;
export function labelWidth(text, font = "700 16px system-ui, sans-serif") {
  const key = `${font}|${text}`;
  if (!widths.has(key)) {
    measureContext ??= document.createElement("canvas").getContext("2d");
    let width = text.length * 10;
    if (measureContext) {
      measureContext.font = `${font.split(" ").slice(0, 2).join(" ")} ${getComputedStyle(document.body).fontFamily}`;
      width = measureContext.measureText(text).width;
    }
    widths.set(key, width);
  }
  return widths.get(key);
}

function columnsFor(n) {
  if (n <= 3) return Math.max(n, 1);
  return n === 4 ? 2 : 3;
}

// Geometry first (pure numbers), then nodes from it.
export function layout(view, ui = {}) {
  const brokers = Array.from(view.brokers.values()).sort((a, b) => a.id - b.id);
  const partitions = sortedPartitions(view, { internal: !!ui.showInternal });
  const cols = columnsFor(brokers.length);
  const bw = (W - 2 * PAD - (cols - 1) * GAP_X) / cols;
  const clients = Array.from(view.clients).sort();
  const top = (clients.length ? CLIENT_BAND : 0) + ARC_SPACE;
  const hosted = new Map(brokers.map((b) => [b.id, partitions.filter((p) => p.replicas.includes(b.id) || p.replicaStates.has(b.id))]));
  const boxes = new Map();
  let y = top;
  for (let row = 0; row * cols < brokers.length; row++) {
    const inRow = brokers.slice(row * cols, row * cols + cols);
    const height = Math.max(...inRow.map((b) => HEADER_H + Math.max(1, hosted.get(b.id).length) * ROW_H + 8));
    inRow.forEach((b, i) => boxes.set(b.id, { x: PAD + i * (bw + GAP_X), y, w: bw, h: height, partitions: hosted.get(b.id) }));
    y += height + GAP_Y;
  }
  const nodes = new Map();
  for (const [id, box] of boxes) nodes.set(`broker-${id}`, { x: box.x + box.w / 2, y: box.y, box });
  clients.forEach((name, i) => nodes.set(name, { x: PAD + 70 + i * 150, y: 28 }));
  const window = Math.max(4, Math.floor((bw - 2 * INNER) / CELL));
  const windows = new Map();
  for (const p of partitions) {
    let end = 0;
    for (const rep of p.replicaStates.values()) end = Math.max(end, rep.log_end_offset);
    for (const g of view.ghosts) if (g.topic === p.topic && g.partition === p.partition) end = Math.max(end, g.offset + 1);
    windows.set(partitionKey(p.topic, p.partition), { start: Math.max(0, end - window), end, size: window });
  }
  return { brokers, boxes, nodes, windows, height: Math.max(y - GAP_Y + PAD, top + 120), clients };
}

function arc(a, b) {
  const lift = 30 + Math.min(60, Math.abs(a.x - b.x) / 8);
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

// A cell is keyed by its offset, so that it slides along as the log grows and a new one flies in.
// Without animation (a busy stream) it is keyed by its place in the window: a draw then rewrites
// the cells in place instead of replacing every one of them.
function cellNodes(view, part, brokerId, rep, win, x0, y0, animate) {
  const cells = [];
  const still = animate ? null : "animation: none";
  const dead = !rep.alive;
  const from = Math.max(win.start, rep.log_start_offset || 0);
  for (let offset = from; offset < rep.log_end_offset; offset++) {
    if (offset < win.start) continue;
    const record = rep.records.get(offset);
    const committed = offset < rep.high_watermark;
    const x = x0 + (offset - win.start) * CELL;
    const tip = record ? `offset ${offset} · key ${record.key ?? "null"} · value ${record.value ?? "null"}` : `offset ${offset}`;
    cells.push(h("g", { key: animate ? `c${offset}` : `slot${offset - win.start}`, class: `cell ${committed ? "committed" : "uncommitted"}${dead ? " stale" : ""}`,
                        style: still, "data-offset": offset, "data-committed": committed ? "true" : "false" }, [
      h("rect", { x, y: y0, width: CELL_W, height: CELL_H, rx: 3 }),
      h("text", { x: x + CELL_W / 2, y: y0 + CELL_H / 2 + 5, "text-anchor": "middle" }, String(offset % 1000)),
      h("title", {}, tip + (committed ? " · committed (below HW)" : " · not committed yet (at or above HW)")),
    ]));
  }
  for (const g of view.ghosts) {
    if (g.broker !== brokerId || g.topic !== part.topic || g.partition !== part.partition || g.offset < win.start) continue;
    const ghost = ghostCell(g, ghostFate(view, g), x0 + (g.offset - win.start) * CELL, y0);
    if (ghost) cells.push(ghost);
  }
  return cells;
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
function ghostCell(g, fate, x, y0) {
  if (fate === "refetched" || fate === "expired") return null;
  const kept = fate === "kept";
  const what = `key ${g.key ?? "null"} · value ${g.value ?? "null"}`;
  return h("g", { key: `ghost${g.offset}`, class: `cell ghost${kept ? " kept" : ""}`, "data-truncated-offset": g.offset,
                  "data-fate": fate ?? "" }, [
    h("rect", { x, y: y0, width: CELL_W, height: CELL_H, rx: 3 }),
    h("text", { x: x + CELL_W / 2, y: y0 + CELL_H / 2 + 5, "text-anchor": "middle" }, kept ? "↺" : "✕"),
    h("title", {}, kept ? `offset ${g.offset} was truncated here, but the leader still holds it (${what}): it will be fetched back`
      : `offset ${g.offset} was truncated and is lost: ${what}`),
  ]);
}

function markerX(x0, win, offset) {
  return x0 + (Math.max(offset, win.start) - win.start) * CELL - 1;
}

function replicaNode(view, part, brokerId, box, index, layoutInfo, wallNow, ui) {
  const selected = ui.selected;
  const animate = ui.animate !== false;
  const slide = animate ? "" : "; transition: none";
  const rep = part.replicaStates.get(brokerId) || { alive: false, log_end_offset: 0, high_watermark: 0, log_start_offset: 0, records: new Map() };
  const win = layoutInfo.windows.get(partitionKey(part.topic, part.partition));
  const y = box.y + HEADER_H + index * ROW_H;
  const x0 = box.x + INNER;
  const isLeader = part.leader === brokerId;
  const inIsr = part.isr.includes(brokerId);
  const alive = rep.alive && view.brokers.get(brokerId)?.alive !== false;
  const flash = view.flashes.get(`replica:${brokerId}:${partitionKey(part.topic, part.partition)}`);
  const label = partitionLabel(part.topic, part.partition);
  const state = !alive ? "dead" : inIsr ? "isr" : "osr";
  const isSelected = selected && selected.broker === brokerId && selected.topic === part.topic && selected.partition === part.partition;
  const cellsY = y + 28;
  const earlier = Math.max(0, win.start - (rep.log_start_offset || 0));
  const afterLabel = x0 + labelWidth(label) + 8;
  return h("g", {
    key: `r:${label}`, class: `replica ${state}${isLeader ? " leader" : ""}${flash ? " " + flash.cls : ""}${isSelected ? " selected" : ""}`,
    "data-replica": "", "data-broker": brokerId, "data-topic": part.topic, "data-partition": part.partition,
    "data-role": isLeader ? "leader" : "follower", "data-leo": rep.log_end_offset, "data-hw": rep.high_watermark,
    "data-isr": inIsr ? "true" : "false", "data-alive": alive ? "true" : "false", tabindex: 0, role: "button",
    "aria-label": `${label} on broker ${brokerId}: ${isLeader ? "leader" : "follower"}, ${inIsr ? "in sync" : "out of sync"}, LEO ${rep.log_end_offset}, HW ${rep.high_watermark}. Open its segments.`,
  }, [
    h("rect", { class: "replica-bg", x: box.x + 4, y: y + 2, width: box.w - 8, height: ROW_H - 6, rx: 6 }),
    h("text", { class: "replica-name", x: x0, y: y + 20 }, label),
    isLeader ? h("g", { key: "lead", class: "leader-badge" }, [
      h("rect", { x: afterLabel, y: y + 6, width: 62, height: 19, rx: 9 }),
      h("text", { x: afterLabel + 31, y: y + 20, "text-anchor": "middle" }, "LEADER"),
    ]) : null,
    h("text", { class: `isr-tag ${state}`, x: afterLabel + (isLeader ? 70 : 0), y: y + 20 },
      !alive ? "down" : inIsr ? "ISR" : "OSR"),
    h("text", { class: "replica-offsets", x: box.x + box.w - INNER, y: y + 20, "text-anchor": "end" },
      `LEO ${rep.log_end_offset} · HW ${rep.high_watermark}`),
    earlier > 0 ? h("text", { key: "earlier", class: "earlier", x: x0 - 2, y: cellsY - 3 }, `…${earlier} earlier`) : null,
    h("g", { key: "cells", class: "cells" }, cellNodes(view, part, brokerId, rep, win, x0, cellsY, animate)),
    h("g", { key: "leo", class: "leo-marker", style: `transform: translate(${markerX(x0, win, rep.log_end_offset)}px, ${cellsY}px)${slide}`,
             "data-leo": rep.log_end_offset }, [
      h("line", { x1: 0, y1: -3, x2: 0, y2: CELL_H + 3 }),
    ]),
    h("g", { key: "hw", class: "hw-marker", style: `transform: translate(${markerX(x0, win, rep.high_watermark)}px, ${cellsY}px)${slide}`,
             "data-hw": rep.high_watermark }, [
      h("line", { x1: 0, y1: -5, x2: 0, y2: CELL_H + 5 }),
      h("polygon", { points: "-5,-9 5,-9 0,-3" }),
      h("title", {}, `high watermark ${rep.high_watermark}: offsets below it are committed`),
    ]),
  ]);
}

function brokerNode(view, b, box, layoutInfo, wallNow, ui) {
  const flash = view.flashes.get(`broker:${b.id}`);
  const cut = view.links_cut.filter((pair) => pair.includes(`broker-${b.id}`)).length;
  const badges = [];
  let bx = box.x + 118;
  const badge = (cls, text) => {
    const width = text.length * 8 + 16;
    badges.push(h("g", { key: `badge-${cls}`, class: `badge-svg ${cls}` }, [
      h("rect", { x: bx, y: box.y + 12, width, height: 22, rx: 11 }),
      h("text", { x: bx + width / 2, y: box.y + 28, "text-anchor": "middle" }, text),
    ]));
    bx += width + 6;
  };
  badge(b.alive ? "up" : "down", b.alive ? "up" : "DOWN");
  // A dead controller stays the controller until ZooKeeper expires its session: say for how long.
  if (b.controller || view.controller === b.id) {
    badge("controller", b.alive ? "controller" : "controller (down)");
    const notice = b.alive ? null : controllerNotice(view, b.id, ui.vnow);
    if (notice) badge("controller-notice", notice);
  }
  if (b.paused_fetcher) badge("paused", "fetch paused");
  if (b.slow_ms) badge("slow", `+${b.slow_ms} ms`);
  if (cut) badge("cut", `✂ ${cut} link${cut > 1 ? "s" : ""}`);
  const rows = box.partitions.map((p, i) => replicaNode(view, p, b.id, box, i, layoutInfo, wallNow, ui));
  return h("g", { key: `b${b.id}`, class: `broker ${b.alive ? "alive" : "dead"}${flash ? " " + flash.cls : ""}`,
                  "data-broker-id": b.id, "data-alive": b.alive ? "true" : "false",
                  "data-controller": (b.controller || view.controller === b.id) ? "true" : "false" }, [
    h("rect", { class: "broker-box", x: box.x, y: box.y, width: box.w, height: box.h, rx: 10 }),
    h("text", { class: "broker-name", x: box.x + 14, y: box.y + 30 }, `Broker ${b.id}`),
    ...badges,
    rows.length ? rows : h("text", { class: "empty-note", x: box.x + 14, y: box.y + HEADER_H + 24 }, "no replicas yet"),
  ]);
}

function networkNodes(view, layoutInfo, vnow, wallNow) {
  const out = [];
  for (const pair of view.links_cut) {
    const r = route(layoutInfo.nodes, pair[0], pair[1]);
    if (!r) continue;
    const mid = pointOn(r.a, r.c, r.b, 0.5);
    out.push(h("g", { key: `cut:${pair.join("|")}`, class: "link-cut", "data-cut": pair.join(" x ") }, [
      h("path", { d: pathOf(r) }), h("text", { x: mid.x, y: mid.y + 6, "text-anchor": "middle" }, "✂"),
      h("title", {}, `link cut: ${pair[0]} ✕ ${pair[1]}`),
    ]));
  }
  for (const [key, t] of view.trails) {   // one per route (lab-state.js)
    const r = route(layoutInfo.nodes, t.src, t.dst);
    if (!r) continue;
    const opacity = Math.max(0, Math.min(1, (t.until - wallNow) / 900));
    out.push(h("path", { key: `trail:${key}`, class: `trail ${API_CLASS[t.api] || "msg-other"}${t.lost ? " lost" : ""}`,
                         d: pathOf(r), style: `opacity:${(opacity * 0.6).toFixed(2)}` }));
  }
  const showLabels = view.inflight.size <= 6;
  let skip = view.inflight.size - MESSAGES_DRAWN;
  for (const m of view.inflight.values()) {
    if (skip-- > 0) continue;
    const r = route(layoutInfo.nodes, m.src, m.dst);
    if (!r || vnow < m.send_ms) continue;
    const p = pointOn(r.a, r.c, r.b, messageProgress(m, vnow));
    out.push(h("g", { key: `m${m.message_id}`, class: `message ${API_CLASS[m.api] || "msg-other"}`, "data-api": m.api,
                      "data-src": m.src, "data-dst": m.dst }, [
      h("circle", { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: 7 }),
      showLabels ? h("text", { x: (p.x + 10).toFixed(1), y: (p.y - 8).toFixed(1) }, m.api) : null,
      h("title", {}, `${m.api} ${m.src} → ${m.dst}, sent at ${m.send_ms} ms, arrives at ${m.arrive_ms} ms`),
    ]));
  }
  return out;
}

function clientNodes(layoutInfo) {
  return layoutInfo.clients.map((name) => {
    const p = layoutInfo.nodes.get(name);
    return h("g", { key: `client:${name}`, class: "client-node", "data-client": name }, [
      h("rect", { x: p.x - 66, y: p.y - 16, width: 132, height: 32, rx: 16 }),
      h("text", { x: p.x, y: p.y + 6, "text-anchor": "middle" }, name.length > 16 ? name.slice(0, 15) + "…" : name),
    ]);
  });
}

export function renderCluster(svg, view, vnow, wallNow, ui = {}) {
  const info = layout(view, ui);
  const viewBox = `0 0 ${W} ${Math.ceil(info.height)}`;
  // Setting it, even unchanged, makes Blink lay out every text of the picture again.
  if (svg.getAttribute("viewBox") !== viewBox) svg.setAttribute("viewBox", viewBox);
  const brokers = info.brokers.map((b) => brokerNode(view, b, info.boxes.get(b.id), info, wallNow, ui));
  const empty = info.brokers.length ? null
    : h("text", { key: "waiting", class: "empty-note", x: W / 2, y: 120, "text-anchor": "middle" }, "Waiting for the cluster…");
  patch(svg, [
    h("g", { key: "clients", class: "clients" }, clientNodes(info)),
    h("g", { key: "brokers", class: "brokers" }, brokers),
    h("g", { key: "network", class: "network" }, networkNodes(view, info, vnow, wallNow)),
    empty,
  ]);
}

// The table under the picture: the same facts in words, per partition.
export function renderSummary(tbody, view, ui = {}) {
  const rows = sortedPartitions(view, { internal: !!ui.showInternal }).map((p) => {
    const osr = p.replicas.filter((b) => !p.isr.includes(b));
    const leos = p.replicas.map((b) => {
      const rep = p.replicaStates.get(b);
      return `${b}: ${rep ? rep.log_end_offset : "?"}${rep && !rep.alive ? " (down)" : ""}`;
    }).join(", ");
    const label = partitionLabel(p.topic, p.partition);
    return h("tr", { key: label, "data-partition-summary": label, "data-leader": p.leader, "data-isr": p.isr.join(","),
                     "data-hw": p.high_watermark, "data-leader-epoch": p.leader_epoch }, [
      h("th", { scope: "row" }, label),
      h("td", { class: p.leader < 0 ? "offline" : "" }, p.leader < 0 ? "none (offline)" : `broker ${p.leader}`),
      h("td", {}, String(p.leader_epoch)),
      h("td", {}, `[${p.isr.join(", ")}]`),
      h("td", { class: osr.length ? "osr-text" : "" }, osr.length ? `[${osr.join(", ")}]` : "—"),
      h("td", { class: p.high_watermark < 0 ? "offline" : "" }, p.high_watermark < 0 ? "— (no leader)" : String(p.high_watermark)),
      h("td", {}, leos),
    ]);
  });
  patch(tbody, rows.length ? rows : [h("tr", { key: "none" }, [h("td", { colspan: 7, class: "muted" }, "No topics yet — create one on the left.")])]);
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
    const record = (r) => `offset ${r.offset} (key ${r.key ?? "null"}, ${r.value ?? "null"})` +
      (r.fate === "lost" && r.now ? ` — now ${r.now.value ?? "null"} there` : "");
    const line = (fate, cls, words) => {
      const rs = group(fate);
      return rs.length ? h("div", { key: fate, class: cls, "data-fate": fate }, `${words}: ${rs.map(record).join(" · ")}`) : null;
    };
    const unlisted = t.records_removed - removed.length;
    const counts = [t.lost ? `${t.lost} lost` : null, t.refetched ? `${t.refetched} fetched back` : null,
                    t.kept ? `${t.kept} still on the leader` : null].filter(Boolean).join(", ");
    return h("li", { key: `t${t.seq}`, "data-truncation": `${t.topic}-${t.partition}`, "data-broker": t.broker,
                     "data-lost": t.lost, "data-refetched": t.refetched }, [
      h("strong", {}, `Broker ${t.broker} · ${t.topic}-${t.partition}`),
      h("span", {}, ` truncated from offset ${t.from_offset} to ${t.to_offset} (${t.reason}) — ` +
        `${t.records_removed} record${t.records_removed === 1 ? "" : "s"} removed${counts ? `: ${counts}` : ""}`),
      line("lost", "lost", "lost 丢失"),
      line("refetched", "refetched", "fetched back 已找回 (the same record is at that offset again)"),
      line("kept", "kept", "still on the leader, to be fetched back"),
      unlisted > 0 ? h("div", { key: "more", class: "muted" }, `…and ${unlisted} more not listed`) : null,
    ]);
  });
  patch(list, items);
  const box = list.closest("[data-truncations]");
  box?.toggleAttribute("hidden", items.length === 0);
  const heading = box?.querySelector("h2");
  if (heading) heading.textContent = shown.some((t) => t.lost) ? "What was lost 丢失的数据" : "What truncation removed 截断的记录";
}
