// The lab's WebSocket client (docs/lab-protocol.md, schema v2): connects, sends commands and
// clock moves, hands each server message to the handler named after its type, and reconnects
// with backoff. The server answers a reconnect with `hello` (the whole model), so nothing is lost
// but animation. Requests that carry an `id` (commands, history pages) resolve with the answer
// of that id, or reject with the server's `error` for it.
// Close codes 4000–4999 are the server refusing (4403: not your session): no reconnect then.

import { gettext, interpolate as say } from "./i18n.js";

export const PROTOCOL_VERSION = 2;
// The server's 4xxx close codes (docs/lab-protocol.md): refusals, said in words, after which the
// socket stops — except CLOSE_TOO_SLOW, which is not a refusal: a tab that fell too far behind a
// busy session's stream (lab/send_queue.py) reconnects and starts again from a `hello`.
const CLOSE_REASONS = {
  4403: () => gettext("this lab session belongs to another browser (or your browser's session cookie changed)"),
  4404: () => gettext("this lab session was deleted"),
  4410: () => gettext("the instructor ended this broadcast"),
  4429: () => gettext("you have as many lab sessions open on this server as one visitor may: close the tab of one you are not using, then reload this page"),
  4503: () => gettext("the lab server is full (every session in memory is in use): try again in a minute"),
};
export const CLOSE_TOO_SLOW = 4408;
const MAX_FRAME_BYTES = 64 * 1024;
const ACK_TIMEOUT_MS = 30000;

export function socketUrl(raw) {
  if (/^wss?:\/\//.test(raw)) return raw;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${raw.startsWith("/") ? "" : "/"}${raw}`;
}

export class LabSocket {
  // handlers: {hello, events, state, timeline, clock, ack, error, status(statusName, detail), unknown}
  constructor(url, handlers) {
    this.url = socketUrl(url);
    this.handlers = handlers;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.backoffMs = 500;
    this.stopped = false;
    this.status = "connecting";
  }

  connect() {
    this._setStatus("connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (error) {
      this._setStatus("closed", String(error));
      return;
    }
    this.ws = ws;
    ws.addEventListener("open", () => { this.backoffMs = 500; this._setStatus("open"); });
    ws.addEventListener("message", (message) => this._receive(message.data));
    ws.addEventListener("close", (close) => this._closed(close));
  }

  _closed(close) {
    this.ws = null;
    for (const [, p] of this.pending) p.reject(new Error(gettext("connection closed")));
    this.pending.clear();
    if (close.code === CLOSE_TOO_SLOW && !this.stopped) this.onFellBehind?.();
    else if (close.code >= 4000 && close.code < 5000) {
      this.stopped = true;
      this._setStatus("refused", close.reason || CLOSE_REASONS[close.code]?.() || say(gettext("closed by the server (code %(code)s)"), { code: close.code }));
      return;
    }
    if (this.stopped) { this._setStatus("closed"); return; }
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, 8000);
    this._setStatus("reconnecting", say(gettext("in %(seconds)s s"), { seconds: Math.round(delay / 100) / 10 }));
    setTimeout(() => { if (!this.stopped) this.connect(); }, delay);
  }

  close() {
    this.stopped = true;
    if (this.ws) this.ws.close(1000);
  }

  _setStatus(status, detail = "") {
    this.status = status;
    this.handlers.status?.(status, detail);
  }

  _receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      this.handlers.error?.({ message: gettext("The server sent something that is not JSON"), kafka_error: null });
      return;
    }
    let answered = false;
    if (message.id !== undefined && message.id !== null && (message.type === "ack" || message.type === "error" ||
                                                            message.type === "history" || message.type === "lesson")) {
      const pending = this.pending.get(message.id);
      if (pending) {
        this.pending.delete(message.id);
        clearTimeout(pending.timer);
        answered = true;
        if (message.type !== "error") pending.resolve(message);
        else pending.reject(Object.assign(new Error(message.message), { kafka_error: message.kafka_error, handled: !pending.quiet }));
        if (message.type === "error" && pending.quiet) return;   // the caller shows it (e.g. FUTURE_EXISTS asks first)
      }
    }
    if (answered && (message.type === "history" || message.type === "lesson")) return;
    const handler = this.handlers[message.type];
    if (handler) handler(message);
    else this.handlers.unknown?.(message);
  }

  // Send a raw protocol message; returns false (and says why) when it cannot go out.
  send(message) {
    const frame = JSON.stringify({ v: PROTOCOL_VERSION, ...message });
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
      this.handlers.error?.({ message: gettext("Not connected to the lab server — waiting to reconnect"), kafka_error: null });
      return false;
    }
    if (new Blob([frame]).size > MAX_FRAME_BYTES) {
      this.handlers.error?.({ message: say(gettext("That message is over the 64 KiB limit (%(size)s KiB)"), { size: Math.round(frame.length / 1024) }),
                              kafka_error: null });
      return false;
    }
    this.ws.send(frame);
    return true;
  }

  // Send a message with an id and wait for its answer (ack, history…) or its error. With `quiet`
  // the error is the caller's to show (it is not also handed to the `error` handler).
  request(message, { quiet = false } = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.send({ ...message, id })) {
        reject(Object.assign(new Error("not connected"), { handled: true }));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(say(gettext("No answer to %(what)s within %(seconds)s s"), { what: message.command || message.type, seconds: ACK_TIMEOUT_MS / 1000 })));
      }, ACK_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer, quiet });
    });
  }

  // Apply a scenario step now; resolves with the ack, rejects with the server's error.
  command(command, args = {}, { discardFuture = false, quiet = false } = {}) {
    return this.request({ type: "command", command, args, ...(discardFuture ? { discard_future: true } : {}) }, { quiet });
  }

  clock(action, extra = {}) {
    return this.send({ type: "clock", action, ...extra });
  }
}
