// How a session page opens when a landing-page card sent the learner here: the card's link
// carries `?scenario=<built-in>`, `?open=segments` and `?tab=<panel ids>` through the new-session
// form (lab/views_sessions.py) to this page, which acts on them once — on its first `hello` — and
// then takes them out of its address, so a reload does not do it again.
//
// - scenario: a brand-new session loads it without asking (nothing would be replaced); an older
//   one asks first, as loading from the Scenario tab does;
// - open=segments: a topic made for the segment view (1 KiB segments, an index entry every 100
//   bytes) with forty records, played at once, and the Segments tab open;
// - tab: the panels to show ("c-scenario", "x-group", ...).

import { gettext, interpolate as say } from "./i18n.js";

export const SEGMENT_TOPIC = "log";

export function readStartOptions(location = window.location) {
  const params = new URLSearchParams(location.search);
  const options = {
    scenario: params.get("scenario") || "",
    open: params.get("open") || "",
    tabs: (params.get("tab") || "").split(",").map((t) => t.trim()).filter((t) => /^[cx]-[a-z]+$/.test(t)),
  };
  return options.scenario || options.open || options.tabs.length ? options : null;
}

export function forgetStartOptions() {
  const url = new URL(window.location.href);
  for (const name of ["scenario", "open", "tab"]) url.searchParams.delete(name);
  window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
}

// A scenario that builds the segment view's topic in a cluster of this session's shape.
export function segmentTour(session) {
  const brokers = Number(session?.brokers) || 3;
  const values = Array.from({ length: 40 }, (_, i) => `record-${String(i + 1).padStart(2, "0")}`);
  return {
    name: "segment-tour",
    description: gettext("A topic made for the segment view: segments of about 1 KiB, so forty records fill several."),
    cluster: { brokers, seed: Number(session?.seed) || 0, truncation: session?.truncation || "leader-epoch",
               config: session?.config || {} },
    steps: [
      { create_topic: { topic: SEGMENT_TOPIC, partitions: 1, replication_factor: Math.min(3, brokers),
                        config: { "segment.bytes": 1024, "index.interval.bytes": 100 } },
        note: gettext("segment.bytes=1024: the active segment rolls once it holds about a kilobyte; index.interval.bytes=100: an offset-index entry every ~100 bytes") },
      { produce: { topic: SEGMENT_TOPIC, key: "k", values, acks: "all" },
        note: gettext("forty records, each its own batch of about 80 bytes") },
      { run_until_idle: {}, note: gettext("every replica has them: open the Segments tab's files, dump one, look an offset up") },
    ],
  };
}

export class StartOptions {
  // options: readStartOptions(); hooks: {send(message), stepScenario(count), selectTab(id), confirmReplace(name), fetchScenario(name)}
  constructor(options, hooks) {
    this.options = options;
    this.hooks = hooks;
    this.pending = Boolean(options);
    this.ownLine = false;        // the next new line of time is the one we asked for
    this.steps = 0;              // scenario steps to play once it is loaded
  }

  // Called with every hello; acts on the first only (and plays the segment tour after its own load).
  async onHello(hello) {
    if (this.steps && hello.clock?.scenario) {
      const steps = this.steps;
      this.steps = 0;
      this.hooks.stepScenario(steps);
      return;
    }
    if (!this.pending) return;
    this.pending = false;
    forgetStartOptions();
    const { scenario, open, tabs } = this.options;
    for (const tab of tabs) this.hooks.selectTab(tab);
    const brandNew = !(hello.timeline?.marks || []).length && !hello.clock?.scenario;
    if (open === "segments") {
      this.hooks.selectTab("x-segments");
      const tour = segmentTour(hello.session);
      if (!brandNew && !this.hooks.confirmReplace(gettext("the segment view's topic"))) return;
      this.load(tour, tour.steps.length);
    } else if (scenario) {
      if (!brandNew && !this.hooks.confirmReplace(scenario)) return;
      try {
        this.load(await this.hooks.fetchScenario(scenario), 0);
      } catch (error) {
        this.hooks.fail(say(gettext("Could not load scenario %(name)s: %(error)s"), { name: scenario, error: error.message }));
      }
    }
  }

  load(scenario, playSteps) {
    this.ownLine = true;
    this.steps = playSteps;
    this.hooks.send({ type: "load_scenario", scenario });
  }

  // True once, for the new line of time this page asked for (no "a new line of time" toast then).
  consumeOwnLine() {
    const own = this.ownLine;
    this.ownLine = false;
    return own;
  }
}
