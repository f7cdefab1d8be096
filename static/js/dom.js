// A tiny keyed renderer: views describe what they want as plain objects (`h(...)`) and `patch`
// makes the DOM match, keeping elements whose key survives. Keeping elements is what lets CSS
// transitions run (a HW marker slides instead of jumping) and entry animations play only once.

const SVG_NS = "http://www.w3.org/2000/svg";
const SVG_TAGS = new Set(["svg", "g", "rect", "line", "circle", "text", "path", "polygon", "title", "tspan"]);

// h("rect", {key: "cell-3", x: 10, class: "cell"}, [children] | "text")
export function h(tag, attrs = {}, children = []) {
  const { key, ...rest } = attrs;
  return { tag, key: key ?? null, attrs: rest, children: typeof children === "string" ? null : children,
           text: typeof children === "string" ? children : null };
}

function create(vnode, svg) {
  const isSvg = svg || SVG_TAGS.has(vnode.tag);
  const el = isSvg ? document.createElementNS(SVG_NS, vnode.tag) : document.createElement(vnode.tag);
  el.__key = vnode.key;
  update(el, vnode, isSvg && vnode.tag !== "foreignObject");
  return el;
}

function update(el, vnode, svg) {
  const old = el.__attrs || {};
  for (const [name, value] of Object.entries(vnode.attrs)) {
    if (value === null || value === undefined || value === false) {
      if (name in old) el.removeAttribute(name);
    } else if (old[name] !== value) {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const name of Object.keys(old)) {
    if (!(name in vnode.attrs)) el.removeAttribute(name);
  }
  el.__attrs = vnode.attrs;
  if (vnode.text !== null) {
    if (el.textContent !== vnode.text) el.textContent = vnode.text;
  } else {
    patch(el, vnode.children || [], svg);
  }
}

// Make `parent`'s children match `vnodes` (null entries are skipped). Elements are matched by
// key, or by position among unkeyed ones of the same tag.
export function patch(parent, vnodes, svg = parent instanceof SVGElement) {
  const list = vnodes.flat(Infinity).filter(Boolean);
  const keyed = new Map();
  const unkeyed = [];
  for (const child of Array.from(parent.children)) {
    if (child.__key !== undefined && child.__key !== null) keyed.set(child.__key, child);
    else unkeyed.push(child);
  }
  let unkeyedIndex = 0;
  const wanted = [];
  for (const vnode of list) {
    let el = null;
    if (vnode.key !== null) {
      el = keyed.get(vnode.key) || null;
      if (el) keyed.delete(vnode.key);
    } else if (unkeyedIndex < unkeyed.length) {
      el = unkeyed[unkeyedIndex++];
    }
    if (el && el.tagName.toLowerCase() !== vnode.tag.toLowerCase()) el = null;
    if (el) update(el, vnode, svg || SVG_TAGS.has(vnode.tag));
    else el = create(vnode, svg);
    wanted.push(el);
  }
  const keep = new Set(wanted);
  for (const child of Array.from(parent.children)) {
    if (!keep.has(child)) child.remove();
  }
  wanted.forEach((el, index) => {
    if (parent.children[index] !== el) parent.insertBefore(el, parent.children[index] || null);
  });
}

// Paces a costly redraw so that it takes at most `share` of the main thread, counting what the
// browser does after the script (style, layout, paint): `due()` says whether one may start now,
// `drawn()` is called right after it. A message posted then runs once the frame is painted, which
// times it; the next is due after a pause in proportion (at most `maxGapMs`). A cheap redraw is
// due again at the next animation frame; a costly one on a busy page waits, and the page's other
// work (taking in the socket's frames) goes on in between.
export class Pacer {
  constructor(share, maxGapMs) {
    this.share = share;
    this.maxGapMs = maxGapMs;
    this.next = 0;
    this.started = 0;
    this.channel = new MessageChannel();
    this.channel.port1.onmessage = () => {
      const done = performance.now();
      this.next = done + Math.min(this.maxGapMs, (done - this.started) * (1 / this.share - 1));
    };
  }

  due(now = performance.now()) {
    return now >= this.next;
  }

  drawn(startedAt) {
    this.started = startedAt;
    this.next = Infinity;   // until it is painted
    this.channel.port2.postMessage(null);
  }
}

export function escapeHtml(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function $all(selector, root = document) {
  return Array.from(root.querySelectorAll(selector));
}

// htmx.ajax, with its promise's failure handled: htmx:sendError / htmx:responseError already
// tell the user (see session.js), so the rejection must not surface as an uncaught error.
export function ajax(verb, url, options) {
  const htmx = window.htmx;
  if (!htmx) return Promise.resolve();
  return Promise.resolve(htmx.ajax(verb, url, options)).catch(() => {});
}
