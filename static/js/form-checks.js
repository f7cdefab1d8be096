// Problems at a form: what the control forms check before sending, and how a problem shows — an
// inline message next to its field (the field gets aria-invalid and aria-describedby), or one
// message for the whole form. The server checks every argument again (engine/scenarios/schema.py)
// and its refusal shows here too. Nothing is clamped: a value out of range is refused with words.
//
// A check returns "" when the value is fine, else the sentence to show (in the page's language).

import { gettext, interpolate as say } from "./i18n.js";

const TOPIC_CHARS = /^[A-Za-z0-9._-]+$/;
const NAME_CHARS = /^[A-Za-z0-9._-]+$/;
const MAX_TOPIC_LENGTH = 249;

// A whole number from `min` to `max`; `raw` is the field's text ("" when empty).
export function wholeProblem(raw, min, max, { required = true, badInput = false } = {}) {
  const text = String(raw ?? "").trim();
  if (badInput) return gettext("Not a number.");
  if (text === "") return required ? gettext("Required.") : "";
  const n = Number(text);
  if (!Number.isFinite(n)) return say(gettext("Not a number: “%(text)s”."), { text });
  if (!Number.isInteger(n)) return say(gettext("A whole number, please — not %(text)s."), { text });
  if (n < min || n > max) return say(gettext("From %(min)s to %(max)s, not %(text)s."), { min, max, text });
  return "";
}

// Kafka's rules for a topic name; `creating` adds the rule that "__" names are Kafka's own.
export function topicProblem(raw, { creating = false } = {}) {
  const name = String(raw ?? "").trim();
  if (name === "") return gettext("Give the topic a name.");
  if (name === "." || name === "..") return gettext("A topic cannot be called “.” or “..”.");
  if (name.length > MAX_TOPIC_LENGTH) return say(gettext("At most %(max)s characters (this one has %(length)s)."), { max: MAX_TOPIC_LENGTH, length: name.length });
  if (!TOPIC_CHARS.test(name)) return say(gettext("“%(name)s”: only ASCII letters, digits, “.”, “_” and “-”."), { name });
  if (creating && name.startsWith("__")) {
    return gettext("Names starting with “__” are Kafka's internal topics (like __consumer_offsets): the brokers create those themselves.");
  }
  return "";
}

// A producer's or consumer's name (it becomes a network node: consumer-<name>).
export function nameProblem(raw, maxLength) {
  const name = String(raw ?? "").trim();
  if (name === "") return gettext("Give it a name.");
  if (name.length > maxLength) return say(gettext("At most %(max)s characters (this one has %(length)s)."), { max: maxLength, length: name.length });
  if (!NAME_CHARS.test(name)) return say(gettext("“%(name)s”: only letters, digits, “.”, “_” and “-”."), { name });
  return "";
}

// The two ends of a network link.
export function linkProblem(a, b) {
  if (!a || !b) return gettext("Choose two nodes.");
  return a === b ? say(gettext("A link joins two different nodes: %(node)s and %(node)s is no link. Choose another node."), { node: a }) : "";
}

// -- showing -----------------------------------------------------------------------------------------
let nextId = 1;

function fieldLabel(field) {
  const label = field.closest("label");
  const text = label ? Array.from(label.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE)
    .map((n) => n.textContent.trim()).filter(Boolean)[0] : "";
  return text || field.name;
}

// Show `problems` ({fieldName: message}; the key "" is the form as a whole); returns the first as
// "label: message" for a toast, or "" when there is none. Earlier problems are cleared first.
export function showProblems(form, problems) {
  clearProblems(form);
  let first = "";
  for (const [name, message] of Object.entries(problems)) {
    if (!message) continue;
    const field = name ? form.elements.namedItem(name) : null;
    if (field && field.nodeType === Node.ELEMENT_NODE) {
      const note = document.createElement("span");
      note.className = "field-error";
      note.id = `field-error-${nextId++}`;
      note.dataset.fieldError = name;
      note.textContent = message;
      field.after(note);
      field.setAttribute("aria-invalid", "true");
      field.dataset.describedBefore = field.getAttribute("aria-describedby") || "";
      field.setAttribute("aria-describedby", `${field.dataset.describedBefore} ${note.id}`.trim());
      first ||= `${fieldLabel(field)}: ${message}`;
    } else {
      formMessage(form, message);
      first ||= message;
    }
  }
  return first;
}

function formMessage(form, message) {
  const note = document.createElement("p");
  note.className = "form-error";
  note.dataset.formError = "";
  note.setAttribute("role", "alert");
  note.textContent = message;
  form.append(note);
}

export function clearProblems(form, name = null) {
  for (const note of form.querySelectorAll("[data-field-error]")) {
    if (name === null || note.dataset.fieldError === name) clearField(form, note);
  }
  for (const note of form.querySelectorAll("[data-form-error]")) note.remove();
}

function clearField(form, note) {
  const field = form.elements.namedItem(note.dataset.fieldError);
  if (field && field.nodeType === Node.ELEMENT_NODE) {
    field.removeAttribute("aria-invalid");
    const before = field.dataset.describedBefore;
    if (before) field.setAttribute("aria-describedby", before); else field.removeAttribute("aria-describedby");
    delete field.dataset.describedBefore;
  }
  note.remove();
}

export function hasProblems(form) {
  return form.querySelector("[aria-invalid=true], [data-form-error]") !== null;
}

// A server refusal, put where it belongs: at the field the message names ("produce.values must
// be …" names `values`) or that Kafka's error points to, else at the form. `fields` maps step
// arguments and Kafka error names to this form's field names.
export function serverProblem(error, command, fields = {}) {
  const message = String(error?.message || gettext("The server refused that"));
  const named = new RegExp(`^${command}\\.([a-z_]+) `).exec(message);
  const field = (named && fields[named[1]]) || fields[error?.kafka_error] ||
    Object.entries(fields.messages || {}).find(([pattern]) => new RegExp(pattern).test(message))?.[1] || "";
  const text = error?.kafka_error ? `${message} (${error.kafka_error})` : message;
  return { [field]: text };
}
