// The message browser's browser side: the panel is an htmx partial (committed records only,
// below the HW). It loads when the tab first opens and re-asks (throttled, and never while you
// are typing in its form) when a partition's high watermark moves while the tab shows. A field
// the server refused shows its message next to it (the server answers the form alone, so the
// results stay); the panel does not re-ask until that field is changed and the form sent again.

import { $, ajax } from "./dom.js";

const REFRESH_MS = 1500;

export class MessageBrowser {
  constructor(panel, url) {
    this.panel = panel;
    this.url = url;
    this.loaded = false;
    this.visible = false;
    this.stale = false;
    this.lastRefresh = 0;
  }

  setVisible(visible) {
    this.visible = visible;
    if (visible && !this.loaded) {
      this.loaded = true;
      ajax("GET", this.url, { target: this.panel });
      this.lastRefresh = performance.now();
    } else {
      this.tick();
    }
  }

  onEvents(events) {
    if (events.some((e) => e.kind === "high_watermark_advanced" || e.kind === "topic_created" || e.kind === "log_truncated" ||
                           e.kind === "leader_elected")) {
      this.stale = true;
    }
    this.tick();
  }

  tick() {
    if (!this.visible || !this.stale || !this.loaded) return;
    const form = $("[data-messages-form]", this.panel);
    if (document.activeElement && form?.contains(document.activeElement) && document.activeElement.tagName !== "BUTTON") return;
    if (form?.querySelector("[aria-invalid=true]")) return;   // it would only say the same again
    if (performance.now() - this.lastRefresh < REFRESH_MS) return;
    this.stale = false;
    this.lastRefresh = performance.now();
    if (form) form.requestSubmit();
    else ajax("GET", this.url, { target: this.panel });
  }

  reload() {
    this.stale = true;
    this.lastRefresh = 0;
    this.tick();
  }
}
