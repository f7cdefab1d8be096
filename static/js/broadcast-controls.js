// The instructor's panel on their broadcast's watch page (templates/classroom/broadcast_panel.html):
// who watches (a `watchers` message on every change), handing the controls to one signed-in watcher
// and taking them back (`controller`), the pointer (`pointer`), and the playlist (`next_item`; the
// item's speaker notes come back to this socket only, in `playlist_item`). docs/lab-protocol.md.

import { gettext, interpolate as say, ngettext } from "./i18n.js";
import { toast } from "./toasts.js";

const root = document.getElementById("lab");
const panel = document.querySelector("[data-broadcast-panel]");
const socket = window.kafkaLab.socket;

// -- the watch link -----------------------------------------------------------------------------
panel.querySelector("[data-copy-link]")?.addEventListener("click", async () => {
  const input = panel.querySelector("[data-watch-link]");
  try {
    await navigator.clipboard.writeText(input.value);
    toast(gettext("Watch link copied"), { kind: "info" });
  } catch {
    input.select();   // no clipboard (an http page): selected, for Ctrl+C
  }
});

// -- watchers and the controls ----------------------------------------------------------------------
const list = panel.querySelector("[data-watchers]");
const takeBack = panel.querySelector("[data-take-back]");
root.addEventListener("lab:watchers", (event) => {
  const m = event.detail;
  panel.querySelector("[data-watcher-count]").textContent = String(m.count);
  panel.querySelector("[data-anonymous]").textContent = m.anonymous
    ? say(ngettext("%(count)s watcher by the link, not signed in", "%(count)s watchers by the link, not signed in", m.anonymous), { count: m.anonymous }) : "";
  list.replaceChildren(...m.watchers.map((w) => {
    const li = document.createElement("li");
    li.dataset.watcher = String(w.user);
    const name = document.createElement("span");
    name.textContent = w.name;
    li.append(name);
    if (w.controls) {
      const badge = document.createElement("strong");
      badge.textContent = ` ${gettext("(holds the controls)")}`;
      li.append(badge);
    } else {
      const hand = document.createElement("button");
      hand.type = "button";
      hand.className = "link";
      hand.dataset.hand = String(w.user);
      hand.textContent = gettext("Hand the controls");
      hand.addEventListener("click", () => socket.send({ type: "controller", user: w.user }));
      li.append(" ", hand);
    }
    return li;
  }));
  takeBack.hidden = !m.watchers.some((w) => w.controls);
});
takeBack.addEventListener("click", () => socket.send({ type: "controller", user: null }));

// -- the pointer --------------------------------------------------------------------------------------
const pointerForm = panel.querySelector("[data-pointer-form]");
function showPointerFields() {
  const kind = pointerForm.elements.kind.value;
  for (const label of pointerForm.querySelectorAll("[data-for]")) label.hidden = !label.dataset.for.split(" ").includes(kind);
}
pointerForm.elements.kind.addEventListener("change", showPointerFields);
showPointerFields();
pointerForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const f = pointerForm.elements;
  const whole = (input) => (input.value.trim() === "" ? null : Number(input.value));
  const kind = f.kind.value;
  const target = kind === "broker" ? { kind, broker: whole(f.broker) }
    : kind === "replica" ? { kind, topic: f.topic.value.trim(), partition: whole(f.partition), broker: whole(f.broker) }
    : { kind, seq: whole(f.seq) };
  socket.send({ type: "pointer", target });
});
panel.querySelector("[data-pointer-clear]").addEventListener("click", () => socket.send({ type: "pointer", target: null }));

// -- the playlist ---------------------------------------------------------------------------------------
const notes = panel.querySelector("[data-notes]");
panel.querySelector("[data-next-item]")?.addEventListener("click", () => socket.send({ type: "next_item" }));
for (const button of panel.querySelectorAll("[data-play-item]")) {
  button.addEventListener("click", () => socket.send({ type: "next_item", index: Number(button.dataset.playItem) }));
}
root.addEventListener("lab:playlist_item", (event) => {
  const m = event.detail;
  for (const li of panel.querySelectorAll("[data-item]")) li.classList.toggle("is-current", Number(li.dataset.item) === m.index);
  notes.hidden = false;
  notes.querySelector("[data-notes-title]").textContent = say(gettext("%(n)s of %(count)s: %(title)s"), { n: m.index + 1, count: m.count, title: m.title });
  notes.querySelector("[data-notes-text]").textContent = m.notes || gettext("(no notes)");
});
