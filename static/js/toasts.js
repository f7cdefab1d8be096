// Toasts: every error the server sends (and the few the page finds itself) shows here, in words,
// with Kafka's error name when there is one. Errors stay until closed or for 12 s; notes for 4 s.

import { gettext } from "./i18n.js";

const ERROR_MS = 12000;
const INFO_MS = 4000;
const MAX_TOASTS = 5;

let container = null;

export function initToasts(element) {
  container = element;
}

export function toast(message, { kind = "info", detail = "" } = {}) {
  if (!container) { console.warn(message, detail); return null; }
  const item = document.createElement("div");
  item.className = `toast toast-${kind}`;
  item.setAttribute("role", kind === "error" ? "alert" : "status");
  item.dataset.kind = kind;
  const text = document.createElement("div");
  text.className = "toast-text";
  text.textContent = message;
  item.append(text);
  if (detail) {
    const code = document.createElement("code");
    code.className = "toast-detail";
    code.textContent = detail;
    item.append(code);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.className = "toast-close";
  close.setAttribute("aria-label", gettext("Dismiss"));
  close.textContent = "×";
  close.addEventListener("click", () => item.remove());
  item.append(close);
  container.append(item);
  while (container.children.length > MAX_TOASTS) container.firstElementChild.remove();
  setTimeout(() => item.remove(), kind === "error" ? ERROR_MS : INFO_MS);
  return item;
}

export function errorToast(message, kafkaError) {
  return toast(message || gettext("Something went wrong"), { kind: "error", detail: kafkaError || "" });
}
