// The two truncation modes of a built-in scenario, in one click (the Scenario tab):
// "Play in leader-epoch mode" / "Play in high-watermark mode" load the chosen scenario with its
// cluster's `truncation` replaced; "Compare both modes" opens a dialog with the two end states
// side by side, which the server computes by running the scenario headless in each mode
// (lab/views_compare.py).

import { $, $all, ajax, escapeHtml } from "./dom.js";
import { gettext, interpolate as say } from "./i18n.js";
import { toast } from "./toasts.js";

export const MODES = { "leader-epoch": "leader-epoch (KIP-101, Kafka 0.11+)", "high-watermark": "high-watermark (before 0.11)" };

// The scenario with its truncation mode replaced (a copy).
export function inMode(scenario, mode) {
  return { ...scenario, name: `${scenario.name || "scenario"} (${mode})`,
           cluster: { ...(scenario.cluster || {}), truncation: mode } };
}

export class ScenarioModes {
  // root: the session page; hooks: {send(message), confirmReplace(name), fail(message)}
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.box = $("[data-scenario-modes]", root);
    this.dialog = $("[data-compare-dialog]", root);
    this.panel = $("[data-compare-panel]", root);
    if (!this.box) return;
    this.select = $("[data-scenario-select]", root);
    this.select.addEventListener("change", () => this.refresh());
    for (const button of $all("[data-play-mode]", this.box)) {
      button.addEventListener("click", () => this.play(button.dataset.playMode));
    }
    $("[data-compare-modes]", this.box).addEventListener("click", () => this.compare());
    $("[data-compare-close]", this.dialog)?.addEventListener("click", () => this.dialog.close());
    this.refresh();
  }

  chosen() {
    return this.select.value || "";
  }

  refresh() {
    const name = this.chosen();
    for (const button of $all("button", this.box)) button.disabled = !name;
  }

  async play(mode) {
    const name = this.chosen();
    if (!name) return;
    try {
      const response = await fetch(`${this.root.dataset.scenarioUrl}${encodeURIComponent(name)}.json`);
      if (!response.ok) throw new Error(say(gettext("the lab answered %(status)s"), { status: response.status }));
      const scenario = inMode(await response.json(), mode);
      if (!this.hooks.confirmReplace(scenario.name)) return;
      if (this.hooks.send({ type: "load_scenario", scenario })) {
        toast(say(gettext("Loading %(name)s in %(mode)s mode: %(steps)s steps queued — press Step or Play"),
                  { name, mode, steps: scenario.steps.length }), { kind: "info" });
      }
    } catch (error) {
      this.hooks.fail(say(gettext("Could not load scenario %(name)s: %(error)s"), { name, error: error.message }));
    }
  }

  compare() {
    const name = this.chosen();
    if (!name) return;
    this.panel.innerHTML = `<p class="muted">${escapeHtml(say(gettext("Running %(name)s in both modes…"), { name }))}</p>`;
    if (!this.dialog.open) this.dialog.showModal();
    ajax("GET", this.root.dataset.compareUrl.replace("__name__", encodeURIComponent(name)), { target: this.panel });
  }
}
