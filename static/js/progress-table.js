// A cohort's progress table, sortable by any column (templates/classroom/progress.html).
// Each heading holds a <button>, so sorting works with the keyboard (Tab, Enter or Space) as
// with the mouse; the heading's aria-sort says the order and a polite live region says it
// aloud. A cell's data-sort-value is either text (the learner column, data-sort-type="text") or
// numbers separated by spaces compared one after the other ("1 3 6" > "1 2 9"). The footer
// (totals) never moves. Nothing here loads anything: the page works unsorted without it.
import { gettext, interpolate } from "./i18n.js";

function numbers(cell) {
  return (cell?.dataset.sortValue ?? "").trim().split(/\s+/).filter(Boolean).map(Number);
}

function compareNumbers(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const x = a[i] ?? -Infinity;
    const y = b[i] ?? -Infinity;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function comparer(type, index, direction) {
  const cellOf = (row) => row.cells[index];
  const text = new Intl.Collator(document.documentElement.lang || undefined, { sensitivity: "base", numeric: true });
  return (rowA, rowB) => {
    const a = cellOf(rowA);
    const b = cellOf(rowB);
    const order = type === "text"
      ? text.compare(a?.dataset.sortValue ?? "", b?.dataset.sortValue ?? "")
      : compareNumbers(numbers(a), numbers(b));
    // Equal cells keep the learners' alphabetical order, whichever way the column runs.
    return order * direction || text.compare(rowA.cells[0]?.dataset.sortValue ?? "", rowB.cells[0]?.dataset.sortValue ?? "");
  };
}

export function sortTable(table, index, ascending) {
  const heading = table.tHead.rows[0].cells[index];
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  rows.sort(comparer(heading.dataset.sortType || "number", index, ascending ? 1 : -1));
  body.append(...rows);
  for (const th of table.tHead.rows[0].cells) th.removeAttribute("aria-sort");
  heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
}

function wire(table) {
  const status = table.closest("section")?.querySelector("[data-sort-status]");
  Array.from(table.tHead.rows[0].cells).forEach((th, index) => {
    const button = th.querySelector("[data-sort-button]");
    if (!button) return;
    button.addEventListener("click", () => {
      // A first click sorts numbers from the highest (who is furthest along), text from A.
      const current = th.getAttribute("aria-sort");
      const ascending = current ? current !== "ascending" : th.dataset.sortType === "text";
      sortTable(table, index, ascending);
      if (status) {
        status.textContent = interpolate(
          ascending ? gettext("Sorted by %(column)s, ascending") : gettext("Sorted by %(column)s, descending"),
          { column: button.textContent.trim() });
      }
    });
  });
}

for (const table of document.querySelectorAll("[data-progress-table]")) wire(table);
