// The control forms: each turns its fields into one scenario step (docs/lab-protocol.md: the
// lab's commands are the scenario steps) and sends it as a `command`. The server decides whether
// it is valid; its `error` shows as a toast. Selects marked data-options="brokers|topics|…" are
// kept filled from the cluster view.

import { $, $all, h, patch } from "./dom.js";
import { currentGroups, isInternal, partitionLabel, sortedPartitions } from "./lab-state.js";
import { errorToast, toast } from "./toasts.js";

const MAX_COUNT = 1000;

function num(value) {
  const n = Number(value);
  return value === "" || value === null || Number.isNaN(n) ? null : n;
}

// "a=b" lines → {a: "b"}, numbers as numbers.
export function parseConfigLines(text) {
  const config = {};
  for (const raw of String(text || "").split(/\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`“${line}” is not key=value`);
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    config[key] = /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return config;
}

export function createTopicArgs(form) {
  const data = new FormData(form);
  const config = parseConfigLines(data.get("extra_config"));
  for (const key of ["min.insync.replicas", "segment.bytes", "index.interval.bytes"]) {
    const value = num(data.get(key));
    if (value !== null) config[key] = value;
  }
  if (data.get("unclean.leader.election.enable")) config["unclean.leader.election.enable"] = true;
  return { topic: String(data.get("topic")).trim(), partitions: num(data.get("partitions")),
           replication_factor: num(data.get("replication_factor")), config };
}

export function produceArgs(form) {
  const data = new FormData(form);
  const count = Math.min(MAX_COUNT, Math.max(1, num(data.get("count")) ?? 1));
  const value = String(data.get("value") ?? "");
  const values = count === 1 ? [value] : Array.from({ length: count }, (_, i) => `${value}-${i + 1}`);
  const args = { topic: data.get("topic"), values, acks: data.get("acks") === "all" ? "all" : Number(data.get("acks")) };
  const key = String(data.get("key") ?? "");
  if (key !== "") args.key = key;
  const partition = num(data.get("partition"));
  if (partition !== null) args.partition = partition;
  return { args, rate: num(data.get("rate")) };
}

export function consumerJoinArgs(form) {
  const data = new FormData(form);
  const args = { member: String(data.get("member")).trim(), group: String(data.get("group")).trim(),
                 topics: String(data.get("topics")).split(",").map((t) => t.trim()).filter(Boolean) };
  if (data.get("assignor")) args.assignor = data.get("assignor");
  const every = num(data.get("poll_every_ms"));
  if (every !== null) args.poll_every_ms = every;
  return args;
}

export class Controls {
  constructor(root, socket, { onScenario } = {}) {
    this.root = root;
    this.socket = socket;
    this.onScenario = onScenario;
    this.optionSets = new Map();
    this.rateTimer = null;
    this._wire();
  }

  async send(command, args, note) {
    try {
      const ack = await this.socket.command(command, args);
      if (note) toast(note, { kind: "info" });
      return ack;
    } catch (error) {
      if (!error.handled) errorToast(error.message, error.kafka_error);
      return null;
    }
  }

  _form(name) {
    return $(`form[data-form="${name}"]`, this.root);
  }

  _wire() {
    this._form("create-topic").addEventListener("submit", (event) => {
      event.preventDefault();
      let args;
      try { args = createTopicArgs(event.target); } catch (error) { errorToast(`Config: ${error.message}`); return; }
      this.send("create_topic", args);
    });
    this._form("add-partitions").addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(event.target);
      this.send("add_partitions", { topic: data.get("topic"), count: num(data.get("partitions")) });
    });
    this._form("produce").addEventListener("submit", (event) => { event.preventDefault(); this._produce(event.target); });
    $("[data-produce-stop]", this.root).addEventListener("click", () => this._stopRate("stopped"));
    this._buttons("broker-faults", (command, data) => {
      const broker = num(data.get("broker"));
      if (command === "kill_broker") return { broker, mode: data.get("mode") };
      if (command === "slow_broker") return { broker, delay_ms: num(data.get("delay_ms")) ?? 0 };
      return { broker };
    });
    this._buttons("kill-leader", (command, data) =>
      command === "kill_controller" ? { mode: "process" } : { leader_of: data.get("leader_of") });
    this._form("kill-leader").addEventListener("submit", (event) => {
      event.preventDefault();
      this.send("kill_broker", { leader_of: new FormData(event.target).get("leader_of") });
    });
    this._buttons("links", (command, data) => ({ a: nodeArg(data.get("a")), b: nodeArg(data.get("b")) }));
    this._form("consumer-join").addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(event.target);
      this.send("consumer_join", consumerJoinArgs(event.target));
    });
    this._buttons("consumer-actions", (command, data) => ({ member: data.get("member") }));
    this._form("builtin-scenario").addEventListener("submit", (event) => { event.preventDefault(); this._builtin(event.target); });
    $("[data-scenario-select]", this.root).addEventListener("change", (event) => {
      const option = event.target.selectedOptions[0];
      $("[data-scenario-description]", this.root).textContent = option ? option.title : "";
    });
    this._form("upload-scenario").addEventListener("submit", (event) => { event.preventDefault(); this._upload(event.target); });
    this._form("reset").addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(event.target);
      if (!confirm("Start a fresh cluster in this session? (The old command log is kept.)")) return;
      this.socket.send({ type: "reset", brokers: num(data.get("brokers")), seed: num(data.get("seed")), truncation: data.get("truncation") });
    });
  }

  // Forms whose buttons each send a different command from the same fields.
  _buttons(formName, argsFor) {
    const form = this._form(formName);
    for (const button of $all("button[type=button][data-command]", form)) {
      button.addEventListener("click", () => {
        if (!form.reportValidity()) return;
        const command = button.dataset.command;
        this.send(command, argsFor(command, new FormData(form)));
      });
    }
  }

  _produce(form) {
    const { args, rate } = produceArgs(form);
    if (!rate) { this.send("produce", args); return; }
    // A rate: one produce command per record, paced in wall time (virtual time follows the clock's speed).
    this._stopRate();
    const values = args.values.slice();
    const status = $("[data-produce-status]", form);
    const stop = $("[data-produce-stop]", form);
    stop.hidden = false;
    let sent = 0;
    const tick = async () => {
      if (!values.length) { this._stopRate(`sent ${sent}`); return; }
      const ack = await this.send("produce", { ...args, values: [values.shift()] });
      if (!ack) { this._stopRate(`stopped after ${sent} (error)`); return; }
      sent += 1;
      status.textContent = `sent ${sent} of ${args.values.length}…`;
    };
    tick();
    this.rateTimer = setInterval(tick, 1000 / Math.min(100, rate));
  }

  _stopRate(message) {
    if (this.rateTimer) clearInterval(this.rateTimer);
    this.rateTimer = null;
    const form = this._form("produce");
    $("[data-produce-stop]", form).hidden = true;
    if (message) $("[data-produce-status]", form).textContent = message;
  }

  async _builtin(form) {
    const name = new FormData(form).get("name");
    if (!name) { errorToast("Choose a scenario first"); return; }
    try {
      const response = await fetch(`${this.root.closest("[data-scenario-url]").dataset.scenarioUrl}${encodeURIComponent(name)}.json`);
      if (!response.ok) throw new Error(`the lab answered ${response.status}`);
      this._loadScenario(await response.json(), name);
    } catch (error) {
      errorToast(`Could not load scenario ${name}: ${error.message}`);
    }
  }

  async _upload(form) {
    const file = form.querySelector("input[type=file]").files[0];
    if (!file) { errorToast("Choose a JSON file first"); return; }
    let scenario;
    try {
      scenario = JSON.parse(await file.text());
    } catch (error) {
      errorToast(`${file.name} is not valid JSON: ${error.message}`);
      return;
    }
    if (!scenario || typeof scenario !== "object" || !Array.isArray(scenario.steps)) {
      errorToast(`${file.name} is not a scenario: it needs a "steps" list`);
      return;
    }
    this._loadScenario(scenario, file.name);
  }

  _loadScenario(scenario, name) {
    if (this.socket.send({ type: "load_scenario", scenario })) {
      toast(`Loading ${name}: ${scenario.steps.length} steps queued — press Step or Play`, { kind: "info" });
      this.onScenario?.(scenario);
    }
  }

  // Keep the data-options selects in step with the cluster.
  refreshOptions(view) {
    this.view = view;
    const brokers = Array.from(view.brokers.values()).sort((a, b) => a.id - b.id)
      .map((b) => ({ value: String(b.id), label: `broker ${b.id}${b.alive ? "" : " (down)"}${view.controller === b.id ? " · controller" : ""}` }));
    const topics = Array.from(view.topics.keys()).filter((t) => !isInternal(t)).sort().map((t) => ({ value: t, label: t }));
    const partitions = sortedPartitions(view).filter((p) => !isInternal(p.topic)).map((p) => {
      const label = partitionLabel(p.topic, p.partition);
      return { value: label, label: `${label} (leader ${p.leader < 0 ? "none" : p.leader})` };
    });
    const nodes = [...brokers.map((b) => ({ value: `broker-${b.value}`, label: `broker ${b.value}` })),
                   ...Array.from(view.clients).sort().map((c) => ({ value: c, label: c }))];
    const consumers = new Set();
    for (const g of currentGroups(view)) for (const m of g.members || []) consumers.add(String(m.member ?? m.client_id ?? m.consumer ?? m.name ?? m.member_id ?? m).replace(/^consumer-/, ""));
    for (const c of view.clients) if (c.startsWith("consumer-")) consumers.add(c.slice("consumer-".length));
    this._fill("brokers", brokers);
    this._fill("topics", topics);
    this._fill("partitions", partitions);
    this._fill("nodes", nodes);
    this._fill("consumers", Array.from(consumers).sort().map((c) => ({ value: c, label: c })));
    this._fillTopicPartitions(view);
  }

  _fill(kind, options) {
    const signature = JSON.stringify(options);
    if (this.optionSets.get(kind) === signature) return;
    this.optionSets.set(kind, signature);
    for (const select of $all(`select[data-options="${kind}"]`, this.root)) {
      const current = select.value;
      const fallback = options[Number(select.dataset.defaultIndex || 0)]?.value ?? options[0]?.value;
      const chosen = options.some((o) => o.value === current) ? current : fallback;
      patch(select, options.length ? options.map((o) => h("option", { key: o.value, value: o.value, selected: o.value === chosen ? true : null }, o.label))
        : [h("option", { key: "", value: "" }, `no ${kind} yet`)], false);
      if (chosen !== undefined) select.value = chosen;
    }
  }

  _fillTopicPartitions(view) {
    const form = this._form("produce");
    const topic = form.elements.topic.value;
    const count = view.topics.get(topic)?.partitions || 0;
    this._fill("topic-partitions", [{ value: "", label: "by key / round robin" },
      ...Array.from({ length: count }, (_, p) => ({ value: String(p), label: `${topic}-${p}` }))]);
    if (!form.__topicWired) {
      form.__topicWired = true;
      form.elements.topic.addEventListener("change", () => this._fillTopicPartitions(this.view));
    }
  }
}

// Broker nodes go as their id (the engine takes ints for brokers, names for clients).
function nodeArg(node) {
  const match = /^broker-(\d+)$/.exec(String(node));
  return match ? Number(match[1]) : node;
}
