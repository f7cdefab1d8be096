// The lesson pane (templates/lessons/lesson.html): predict, then observe, beat by beat, on the
// lab session the page already shows. It keeps no model of the cluster: the lab's own views draw
// it (static/js/session.js), and every answer comes from the server, computed by the engine
// (lessons/consumers.py). This script sends `lesson` messages over the lab's socket, shows the
// beat the server says the learner is on, and highlights the evidence of an answer in the lab.
//
// Flow of a beat: "ready" (the question or the Play button) → the learner answers → "playing"
// (the steps animate on the lab's clock) → the clock pauses → `reveal` → "done" (the engine's
// answer, right or wrong, the hint, the explanation, the callouts) → Next. A `do` beat waits
// for the learner's own action in the lab, checked against the engine after every frame.
import { gettext, interpolate } from "./i18n.js";

const pane = document.querySelector("[data-lesson-pane]");
const root = document.getElementById("lab");
const structure = JSON.parse(document.getElementById("lesson-structure").textContent);
const beats = structure.beats;
const REVEAL_POLL_MS = 700;
const CHECK_EVERY_MS = 600;

let progress = null;          // the server's word on where the learner is
let waiting = false;          // a lesson message is on its way
let revealTimer = null;
let lastCheck = 0;
let checkTimer = null;
let evidenceStyle = null;

// -- talking to the server ---------------------------------------------------------------------
function socket() {
  return window.kafkaLab?.socket || null;
}

async function ask(action, extra = {}) {
  const lab = socket();
  if (!lab) throw new Error(gettext("Not connected to the lab server yet"));
  const beat = extra.beat ?? progress?.beat ?? 0;
  waiting = true;
  render();
  try {
    const reply = await lab.request({ type: "lesson", action, beat, ...extra }, { quiet: true });
    if (reply.progress) progress = reply.progress;
    return reply;
  } catch (error) {
    status(error.message || String(error), "error");
    throw error;
  } finally {
    waiting = false;
    render();
  }
}

function speed() {
  return Number(pane.querySelector("[data-lesson-speed]").value) || 5;
}

// -- actions -----------------------------------------------------------------------------------
async function loadState() {
  try {
    await ask("state");
    if (progress?.phase === "playing") scheduleReveal(0);
  } catch { /* shown */ }
}

async function goto(index) {
  if (index < 0 || index >= beats.length || waiting) return;
  clearEvidence();
  try {
    await ask("goto", { beat: index });
    status("");
  } catch { /* shown */ }
}

async function answer(form) {
  const beat = beats[progress.beat];
  const raw = readAnswer(form, beat.question);
  const error = form.querySelector("[data-answer-error]");
  if (raw === null || raw === "") {
    showAnswerError(error, gettext("Give an answer first: the beat plays once you have predicted."));
    return;
  }
  error.hidden = true;
  try {
    const reply = await ask("answer", { answer: raw, speed: speed() });
    if (reply.answer_error) {
      showAnswerError(error, answerErrorText(reply.answer_error, reply.message));
      return;
    }
    scheduleReveal(REVEAL_POLL_MS);
  } catch { /* shown */ }
}

async function play() {
  try {
    await ask("play", { speed: speed() });
    scheduleReveal(REVEAL_POLL_MS);
  } catch { /* shown */ }
}

function scheduleReveal(delay) {
  clearTimeout(revealTimer);
  revealTimer = setTimeout(reveal, delay);
}

async function reveal() {
  if (progress?.phase !== "playing" || waiting) {
    if (progress?.phase === "playing") scheduleReveal(REVEAL_POLL_MS);
    return;
  }
  let reply;
  try {
    reply = await ask("reveal");
  } catch {
    scheduleReveal(REVEAL_POLL_MS * 3);
    return;
  }
  if (reply.interrupted === "playing") {
    scheduleReveal(REVEAL_POLL_MS);
  } else if (reply.interrupted) {
    pane.querySelector("[data-interrupted]").hidden = false;
  } else if (reply.result) {
    highlight(reply.result.evidence || []);
    render();
    pane.querySelector(`[data-beat="${progress.beat}"] [data-reveal]`)?.scrollIntoView({ block: "nearest" });
  }
}

async function checkAction() {
  const beat = beats[progress?.beat ?? -1];
  if (!beat?.do || progress.phase !== "ready" || waiting) return;
  lastCheck = performance.now();
  try {
    const reply = await ask("check");
    if (reply.passed) status(gettext("Done: the engine sees it."), "ok");
  } catch { /* shown */ }
}

function scheduleCheck() {
  const beat = beats[progress?.beat ?? -1];
  if (!beat?.do || progress.phase !== "ready") return;
  clearTimeout(checkTimer);
  checkTimer = setTimeout(checkAction, Math.max(0, CHECK_EVERY_MS - (performance.now() - lastCheck)));
}

// -- reading and showing -----------------------------------------------------------------------
function readAnswer(form, question) {
  if (question.kind === "choice") return form.querySelector("input[name=answer]:checked")?.value ?? null;
  return form.querySelector("input[name=answer]").value.trim();
}

function showAnswerError(box, text) {
  box.textContent = text;
  box.hidden = false;
}

function answerErrorText(code, message) {
  const texts = {
    number: gettext("That is not a whole number: type digits only, e.g. 4."),
    choice: gettext("Pick one of the choices."),
    list: gettext("Type a list, the items separated by commas, e.g. m1, m2."),
    too_many: gettext("That list is too long."),
    too_long: gettext("One of the items is too long."),
  };
  return texts[code] || message;
}

function status(text, kind = "info") {
  const line = pane.querySelector("[data-lesson-status]");
  line.textContent = text;
  line.dataset.kind = kind;
}

function render() {
  if (!progress) return;
  const index = progress.beat;
  const beat = beats[index];
  const phase = progress.phase;
  pane.dataset.phase = phase;
  pane.dataset.currentBeat = String(index);
  pane.dataset.busy = waiting ? "true" : "false";
  for (const section of pane.querySelectorAll("[data-beat]")) section.hidden = Number(section.dataset.beat) !== index;
  const section = pane.querySelector(`[data-beat="${index}"]`);
  renderDots(index);
  const answered = beat.question && progress.answers[beat.id];
  const form = section.querySelector("[data-question]");
  if (form) {
    form.hidden = phase !== "ready";
    for (const control of form.querySelectorAll("input, button")) control.disabled = waiting;
  }
  const revealBox = section.querySelector("[data-reveal]");
  if (revealBox) {
    const result = phase === "done" ? progress.revealed : null;
    revealBox.hidden = !result;
    if (result) fillReveal(section, beat, result);
  }
  const doBox = section.querySelector("[data-do]");
  if (doBox) {
    doBox.querySelector("[data-do-status]").textContent = phase === "done"
      ? gettext("Done: the engine sees it.") : phase === "playing" ? gettext("Playing it for you…")
        : gettext("Waiting for you to do it in the lab…");
    doBox.dataset.done = phase === "done" ? "true" : "false";
    doBox.querySelector("[data-lesson=show]").disabled = waiting || phase !== "ready";
  }
  for (const callout of section.querySelectorAll("[data-callout]")) callout.hidden = phase !== "done";
  const button = (name) => pane.querySelector(`.lesson-nav [data-lesson=${name}]`);
  button("back").disabled = waiting || index === 0;
  button("next").disabled = waiting || phase !== "done" || index === beats.length - 1;
  button("play").disabled = waiting || phase !== "ready" || !!beat.question || beat.do;
  button("play").hidden = !!beat.question || beat.do;
  button("replay").disabled = waiting;
  pane.querySelector("[data-finished-box]").hidden = !(progress.finished && index === beats.length - 1 && phase === "done");
  if (phase !== "playing") pane.querySelector("[data-interrupted]").hidden = true;
  if (phase === "playing") status(interpolate(gettext("Playing the beat on the lab's clock (%(speed)s×)…"), { speed: speed() }));
  else if (phase === "ready" && beat.question && !answered) status(gettext("Predict first: the beat plays after you answer."));
  else if (phase === "ready" && beat.question) status(gettext("Answer again: only your first answer counts."));
  else if (pane.querySelector("[data-lesson-status]").dataset.kind !== "error") status("");
}

function renderDots(index) {
  for (const dot of pane.querySelectorAll("[data-goto]")) {
    const i = Number(dot.dataset.goto);
    const beat = beats[i];
    const first = beat.question ? progress.answers[beat.id] : null;
    dot.classList.toggle("is-current", i === index);
    dot.classList.toggle("is-seen", progress.seen.includes(beat.id));
    dot.classList.toggle("is-right", first?.right === true);
    dot.classList.toggle("is-wrong", first?.right === false);
    dot.setAttribute("aria-current", i === index ? "step" : "false");
    dot.disabled = waiting;
  }
}

function fillReveal(section, beat, result) {
  const verdict = section.querySelector("[data-verdict]");
  const shown = beat.question.kind === "choice" ? choiceText(section, result.engine) : result.shown;
  const given = beat.question.kind === "choice" ? choiceText(section, result.first) : formatted(result.first);
  if (result.problem) {
    verdict.textContent = interpolate(gettext("The engine could not answer here: %(problem)s"), { problem: result.problem });
    verdict.dataset.right = "unknown";
  } else if (result.right === true) {
    verdict.textContent = interpolate(gettext("Right: %(answer)s."), { answer: shown });
    verdict.dataset.right = "true";
  } else if (result.right === false) {
    verdict.textContent = interpolate(gettext("Not quite: you said %(given)s; the engine says %(answer)s."), { given, answer: shown });
    verdict.dataset.right = "false";
  } else {
    verdict.textContent = interpolate(gettext("The engine says %(answer)s."), { answer: shown });
    verdict.dataset.right = "unknown";
  }
  for (const hint of section.querySelectorAll("[data-hint]")) hint.hidden = hint.dataset.hint !== result.hint;
  for (const slot of section.querySelectorAll("[data-answer]")) slot.textContent = result.shown;
  const box = section.querySelector("[data-evidence-box]");
  const list = section.querySelector("[data-evidence]");
  list.replaceChildren(...(result.evidence || []).slice(0, 30).map(evidenceItem));
  box.hidden = !(result.evidence || []).length;
  highlight(result.evidence || []);
}

function choiceText(section, id) {
  const input = section.querySelector(`input[name=answer][value="${CSS.escape(String(id ?? ""))}"]`);
  return input ? input.closest("label").textContent.trim() : String(id ?? "—");
}

function formatted(value) {
  if (Array.isArray(value)) return value.join(", ");
  return value === null || value === undefined ? "—" : String(value);
}

function evidenceItem(ref) {
  const li = document.createElement("li");
  li.dataset.evidenceKind = ref.kind;
  if (ref.kind === "event") {
    const parts = [ref.event_kind || gettext("event"), ref.tp, ref.broker !== undefined ? interpolate(gettext("broker %(id)s"), { id: ref.broker }) : null,
      typeof ref.time_ms === "number" ? `${(ref.time_ms / 1000).toFixed(3)} s` : null].filter(Boolean);
    li.textContent = `#${ref.seq} ${parts.join(" · ")}`;
  } else if (ref.kind === "replica") {
    li.textContent = interpolate(gettext("replica of %(tp)s on broker %(broker)s"), ref);
  } else if (ref.kind === "partition") {
    li.textContent = interpolate(gettext("partition %(tp)s (every replica)"), ref);
  } else if (ref.kind === "segment") {
    li.textContent = interpolate(gettext("segment %(base)s of %(tp)s on broker %(broker)s"),
      { ...ref, base: String(ref.base_offset).padStart(20, "0") });
    li.append(" ", openSegmentsButton(ref));
  } else if (ref.kind === "lookup") {
    li.textContent = interpolate(gettext("the lookup of offset %(offset)s on broker %(broker)s (%(tp)s)"), ref);
    li.append(" ", openSegmentsButton(ref, ref.offset));
  } else if (ref.kind === "checkpoint") {
    li.textContent = interpolate(gettext("%(file)s on broker %(broker)s, line %(tp)s"), ref);
    li.append(" ", openSegmentsButton(ref));
  } else if (ref.kind === "broker") {
    li.textContent = interpolate(gettext("broker %(id)s"), { id: ref.broker });
  } else if (ref.kind === "member" || ref.kind === "group") {
    li.textContent = interpolate(gettext("group %(group)s %(member)s (Consumers tab)"), { group: ref.group, member: ref.member || "" });
  } else {
    li.textContent = JSON.stringify(ref);
  }
  return li;
}

// Segments, checkpoint files and lookups live in the Segments panel: open it on that replica
// (and, for a lookup, run it there, stage by stage, once the replica's panel has loaded).
function openSegmentsButton(ref, lookupOffset = null) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "link-button";
  button.dataset.openSegments = "";
  button.textContent = lookupOffset === null ? gettext("open in the Segments panel") : gettext("look it up in the Segments panel");
  button.addEventListener("click", () => {
    const [topic, partition] = splitTp(ref.tp);
    document.getElementById("tab-x-segments")?.click();
    window.kafkaLab?.segmentView?.open(ref.broker, topic, Number(partition));
    if (lookupOffset !== null) lookUp(`${ref.broker}:${topic}:${partition}`, lookupOffset, performance.now() + 5000);
  });
  return button;
}

function lookUp(replica, offset, deadline) {
  const form = document.querySelector(`#lab [data-lookup-form]`);
  const ready = form && form.querySelector("input[name=replica]")?.value === replica;
  if (!ready) {
    if (performance.now() < deadline) setTimeout(() => lookUp(replica, offset, deadline), 100);
    return;
  }
  form.querySelector("input[name=offset]").value = String(offset);
  form.requestSubmit();
}

// The evidence in the lab's own views: CSS rules over their stable data attributes, so the marks
// survive every redraw (cluster-view.js, event-log.js).
function highlight(evidence) {
  const rules = [];
  const q = (value) => `"${CSS.escape(String(value))}"`;
  for (const ref of evidence) {
    const [topic, partition] = splitTp(ref.tp);
    if (ref.kind === "event") rules.push(`#lab [data-seq=${q(ref.seq)}]`);
    else if (ref.kind === "replica") rules.push(`#lab [data-replica][data-broker=${q(ref.broker)}][data-topic=${q(topic)}][data-partition=${q(partition)}]`);
    else if (ref.kind === "partition") rules.push(`#lab [data-replica][data-topic=${q(topic)}][data-partition=${q(partition)}]`);
    else if (ref.kind === "broker" || ref.kind === "checkpoint") rules.push(`#lab [data-broker-id=${q(ref.broker)}]`);
    else if (ref.kind === "segment" || ref.kind === "lookup") {
      rules.push(`#lab [data-replica][data-broker=${q(ref.broker)}][data-topic=${q(topic)}][data-partition=${q(partition)}]`);
      rules.push(`#lab [data-segments-panel] [data-segment=${q(String(ref.base_offset).padStart(20, "0"))}]`);
    }
  }
  if (!evidenceStyle) {
    evidenceStyle = document.createElement("style");
    evidenceStyle.dataset.lessonEvidence = "";
    document.head.append(evidenceStyle);
  }
  evidenceStyle.textContent = rules.length ? `${rules.slice(0, 200).join(",\n")} { outline: 3px solid var(--evidence, #d97706); outline-offset: 1px; filter: drop-shadow(0 0 2px var(--evidence, #d97706)); }` : "";
  root.dataset.lessonEvidence = String(rules.length);
}

function clearEvidence() {
  if (evidenceStyle) evidenceStyle.textContent = "";
  root.dataset.lessonEvidence = "0";
}

function splitTp(tp) {
  if (typeof tp !== "string") return ["", ""];
  const cut = tp.lastIndexOf("-");
  return [tp.slice(0, cut), tp.slice(cut + 1)];
}

// -- wiring ------------------------------------------------------------------------------------
pane.addEventListener("submit", (event) => {
  const form = event.target.closest("[data-question]");
  if (!form) return;
  event.preventDefault();
  answer(form);
});

pane.addEventListener("click", (event) => {
  const dot = event.target.closest("[data-goto]");
  if (dot) { goto(Number(dot.dataset.goto)); return; }
  const button = event.target.closest("button[data-lesson]");
  if (!button || button.disabled) return;
  const action = button.dataset.lesson;
  if (action === "next") goto(progress.beat + 1);
  else if (action === "back") goto(progress.beat - 1);
  else if (action === "replay") goto(progress.beat);
  else if (action === "play" || action === "show") play();
});

document.addEventListener("keydown", (event) => {
  if (!progress || event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (target instanceof HTMLElement && (target.closest("input, textarea, select, [contenteditable], dialog") || target.isContentEditable)) return;
  const nav = (name) => pane.querySelector(`.lesson-nav [data-lesson=${name}]`);
  if (event.key === "ArrowRight" && !nav("next").disabled) goto(progress.beat + 1);
  else if (event.key === "ArrowLeft" && !nav("back").disabled) goto(progress.beat - 1);
  else if (event.key === " " && target.closest?.("button, a") == null) {
    if (!nav("play").disabled && !nav("play").hidden) play();
    else if (!nav("next").disabled) goto(progress.beat + 1);
    else return;
  } else return;
  event.preventDefault();
});

root.addEventListener("lab:hello", () => loadState());
root.addEventListener("lab:clock", (event) => {
  if (progress?.phase === "playing" && event.detail?.mode === "paused") scheduleReveal(0);
});
root.addEventListener("lab:frame", () => scheduleCheck());
