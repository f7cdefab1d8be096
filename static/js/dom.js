// A tiny keyed renderer: views describe what they want as plain objects (`h(...)`) and `patch`
// makes the DOM match, keeping elements whose key survives. Keeping elements is what lets CSS
// transitions run (a HW marker slides instead of jumping) and entry animations play only once.
//
// A busy page redraws many times a second while most of it stays the same: a vnode may carry a
// `memo` (an array of values) and its children as a function. When the element's last memo has
// the same values (===), the element and everything under it are left as they are, and the
// function is never called — so an unchanged replica costs one comparison, not a subtree.

const SVG_NS = "http://www.w3.org/2000/svg";
const SVG_TAGS = new Set(["svg", "g", "rect", "line", "circle", "text", "path", "polygon", "title", "tspan"]);

// h("rect", {key: "cell-3", x: 10, class: "cell"}, [children] | "text" | () => [children])
// h("g", {key: "r1", memo: [a, b]}, () => [...]): redrawn only when a or b changed.
export function h(tag, attrs = {}, children = []) {
  const { key, memo, ...rest } = attrs;
  const text = typeof children === "string" ? children : null;
  const thunk = typeof children === "function" ? children : null;
  return { tag, key: key ?? null, memo, attrs: rest, children: text === null && !thunk ? children : null, thunk, text };
}

function sameMemo(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function create(vnode, svg) {
  const isSvg = svg || SVG_TAGS.has(vnode.tag);
  const el = isSvg ? document.createElementNS(SVG_NS, vnode.tag) : document.createElement(vnode.tag);
  el.__key = vnode.key;
  update(el, vnode, isSvg && vnode.tag !== "foreignObject");
  return el;
}

function update(el, vnode, svg) {
  if (vnode.memo !== undefined && sameMemo(el.__memo, vnode.memo)) return;
  el.__memo = vnode.memo;
  const old = el.__attrs || {};
  const attrs = vnode.attrs;
  for (const name in attrs) {
    const value = attrs[name];
    if (value === null || value === undefined || value === false) {
      if (name in old) el.removeAttribute(name);
    } else if (old[name] !== value) {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const name in old) {
    if (!(name in attrs)) el.removeAttribute(name);
  }
  el.__attrs = vnode.attrs;
  if (vnode.text !== null) {
    // Rewrite the text node's data rather than replace the node (no node leaves or enters the tree).
    const only = el.firstChild;
    if (only && only.nodeType === Node.TEXT_NODE && only === el.lastChild) {
      if (only.data !== vnode.text) only.data = vnode.text;
    } else if (el.textContent !== vnode.text) {
      el.textContent = vnode.text;
    }
  } else {
    patch(el, (vnode.thunk ? vnode.thunk() : vnode.children) || [], svg);
  }
}

// Make `parent`'s children match `vnodes` (null entries are skipped; arrays are flattened).
// Elements are matched by key, or by position among unkeyed ones of the same tag. Most calls find
// the same elements in the same places: those are updated in place, without maps or moves.
export function patch(parent, vnodes, svg = parent instanceof SVGElement) {
  const list = flatten(vnodes, []);
  if (inPlace(parent, list)) {
    let el = parent.firstElementChild;
    for (const vnode of list) {
      const next = el.nextElementSibling;
      update(el, vnode, svg || SVG_TAGS.has(vnode.tag));
      el = next;
    }
    return;
  }
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

function flatten(vnodes, out) {
  for (const vnode of vnodes) {
    if (Array.isArray(vnode)) flatten(vnode, out);
    else if (vnode) out.push(vnode);
  }
  return out;
}

// Are `parent`'s children already the elements `list` wants, in its order?
function inPlace(parent, list) {
  if (parent.childElementCount !== list.length) return false;
  let el = parent.firstElementChild;
  for (const vnode of list) {
    const key = el.__key ?? null;
    if (key !== vnode.key || el.localName !== vnode.tag) return false;
    el = el.nextElementSibling;
  }
  return true;
}

// Paces a costly redraw so that it takes at most `share` of the main thread, counting what the
// browser does after the script (style, layout, paint): `due()` says whether one may start now,
// `drawn()` is called right after it. A message posted then runs once the frame is painted, which
// times it; the next is due after a pause in proportion (at most `maxGapMs`). A cheap redraw is
// due again at the next animation frame (or after `minGapMs`, for what need not change at every
// frame); a costly one on a busy page waits, and the page's other work (taking in the socket's
// frames) goes on in between.
export class Pacer {
  constructor(share, maxGapMs, minGapMs = 0) {
    this.share = share;
    this.maxGapMs = maxGapMs;
    this.minGapMs = minGapMs;
    this.next = 0;
    this.started = 0;
    this.channel = new MessageChannel();
    this.channel.port1.onmessage = () => {
      const done = performance.now();
      const pause = Math.min(this.maxGapMs, (done - this.started) * (1 / this.share - 1));
      this.next = Math.max(done + pause, this.started + this.minGapMs);
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
