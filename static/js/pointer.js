// The instructor's pointer (a `pointer` message, docs/lab-protocol.md "Broadcast"): a highlight on
// a broker, a replica or an event, drawn by CSS rules over the views' stable data attributes — as
// a lesson's evidence is (lesson-player.js) — so the mark survives every redraw. A null target
// clears it. The root says what is pointed at in `data-pointer` (for tests and assistive text).

let style = null;

export function pointerRule(target) {
  if (!target) return "";
  const q = (value) => `"${CSS.escape(String(value))}"`;
  if (target.kind === "broker") return `#lab [data-broker-id=${q(target.broker)}]`;
  if (target.kind === "replica") {
    return `#lab [data-replica][data-broker=${q(target.broker)}][data-topic=${q(target.topic)}][data-partition=${q(target.partition)}]`;
  }
  if (target.kind === "event") return `#lab [data-seq=${q(target.seq)}]`;
  return "";
}

export function showPointer(root, target) {
  if (!style) {
    style = document.createElement("style");
    style.dataset.labPointer = "";
    document.head.append(style);
  }
  const rule = pointerRule(target);
  style.textContent = rule
    ? `${rule} { outline: 4px solid var(--pointer, #c026d3); outline-offset: 2px; filter: drop-shadow(0 0 4px var(--pointer, #c026d3)); }`
    : "";
  root.dataset.pointer = rule ? JSON.stringify(target) : "";
}
