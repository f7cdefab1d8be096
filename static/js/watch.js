// A broadcast's watch page (templates/classroom/watch.html) on top of the session page (session.js):
// read-only until the instructor hands this watcher the controls (a `broadcast` message says this
// tab's role), a watcher's own view of an earlier step (`view`) with a bar back to live, and
// "Fork at this moment" (`fork`, then the new session's page). docs/lab-protocol.md, "Broadcast".

import { gettext, interpolate as say } from "./i18n.js";
import { toast } from "./toasts.js";

const root = document.getElementById("lab");
const bar = document.querySelector("[data-watch-bar]");
const viewingBar = bar.querySelector("[data-viewing]");
const roleText = bar.querySelector("[data-watch-role-text]");
const page = { role: bar.dataset.role, viewing: null };
root.dataset.watchRole = page.role;

const lab = () => window.kafkaLab;   // session.js, loaded first, sets it
const mayControl = () => page.role === "instructor" || page.role === "controller";

// The timeline's scrubber, its marks and the event log "rewind" the session; a watcher's instead
// asks for their own view of that step — the instructor's clock is not touched.
const socket = lab().socket;
const clock = socket.clock.bind(socket);
socket.clock = (action, extra = {}) => {
  if (action === "rewind" && !mayControl()) return socket.send({ type: "view", step: extra.to });
  return clock(action, extra);
};

// The explorer's Segments and Messages panels read the session through views only its owner may
// use: for anyone else they say so instead of failing (their tabs are hidden too: watch.html).
if (page.role !== "instructor") {
  const segments = lab().segmentView;
  segments._load = async () => {
    const note = document.createElement("p");
    note.className = "muted";
    note.textContent = gettext("This panel reads the instructor's own session: fork it to browse your copy.");
    segments.panel.replaceChildren(note);
  };
}

root.addEventListener("lab:broadcast", (event) => {
  const m = event.detail;
  const before = page.role;
  page.role = m.role;
  root.dataset.watchRole = m.role;
  roleText.hidden = m.role !== "controller" && !m.controller;
  roleText.textContent = m.role === "controller" ? gettext("You hold the controls")
    : m.controller ? say(gettext("%(name)s holds the controls"), { name: m.controller }) : "";
  if (before === "watcher" && m.role === "controller") toast(gettext("The instructor handed you the controls"), { kind: "info" });
  if (before === "controller" && m.role === "watcher") toast(gettext("The instructor took the controls back"), { kind: "info" });
});

root.addEventListener("lab:view", (event) => {
  const m = event.detail;
  page.viewing = m.step;
  lab().showView(m);
  viewingBar.hidden = false;
  root.dataset.viewingStep = String(m.step);
  bar.querySelector("[data-viewing-text]").textContent =
    say(gettext("Viewing step %(step)s — the session is live at step %(live)s"), { step: m.step, live: m.live_step });
});

function follow() {
  page.viewing = null;
  viewingBar.hidden = true;
  delete root.dataset.viewingStep;
  lab().followLive();
}
bar.querySelector("[data-follow]").addEventListener("click", follow);
root.addEventListener("lab:hello", () => { if (page.viewing !== null) { page.viewing = null; viewingBar.hidden = true; delete root.dataset.viewingStep; } });

bar.querySelector("[data-fork]").addEventListener("click", () => {
  socket.send({ type: "fork", ...(page.viewing !== null ? { step: page.viewing } : {}) });
  toast(gettext("Making your own copy of this session…"), { kind: "info" });
});
root.addEventListener("lab:forked", (event) => { location.assign(event.detail.url); });

// A lesson's session: which lesson and beat the picture belongs to (`lesson_beat`).
const lessonLine = bar.querySelector("[data-lesson-beat]");
root.addEventListener("lab:lesson_beat", (event) => {
  const m = event.detail;
  lessonLine.hidden = false;
  lessonLine.textContent = say(gettext("Lesson “%(title)s”, beat %(n)s of %(count)s: %(text)s"),
                               { title: m.title, n: m.beat + 1, count: m.beats, text: m.question || m.text });
});
