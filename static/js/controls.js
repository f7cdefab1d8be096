// The control forms: each turns its fields into one scenario step (docs/lab-protocol.md: the
// lab's commands are the scenario steps) and sends it as a `command`. Before sending, a form
// checks what the browser can tell (counts and ranges against this session's limits, which the
// page gets from the server; names; a link from a node to itself; a "__" topic; a consumer name
// already in a group) and shows each problem next to its field and in a toast; nothing is
// clamped. The server checks everything again: its `error` shows at the form too, and the
// warnings of its `ack` as info toasts. Selects marked data-options="brokers|topics|…" are kept
// filled from the cluster view.

import { $, $all, h, patch } from "./dom.js";
import { clearProblems, linkProblem, nameProblem, serverProblem, showProblems, topicProblem,
         wholeProblem } from "./form-checks.js";
import { gettext, interpolate as say, ngettext } from "./i18n.js";
import { isInternal, partitionLabel, sortedPartitions } from "./lab-state.js";
import { errorToast, toast } from "./toasts.js";

// Where a server refusal of each command shows: step argument or Kafka error → form field.
const SERVER_FIELDS = {
  create_topic: { topic: "topic", partitions: "partitions", replication_factor: "replication_factor",
                  config: "extra_config", INVALID_REPLICATION_FACTOR: "replication_factor",
                  TOPIC_ALREADY_EXISTS: "topic", INVALID_TOPIC_EXCEPTION: "topic", POLICY_VIOLATION: "partitions" },
  add_partitions: { topic: "topic", count: "partitions", INVALID_PARTITIONS: "partitions", POLICY_VIOLATION: "partitions" },
  delete_topic: { topic: "topic", INVALID_TOPIC_EXCEPTION: "topic", TOPIC_DELETION_DISABLED: "topic",
                  UNKNOWN_TOPIC_OR_PARTITION: "topic" },
  produce: { topic: "topic", values: "count", value: "value", key: "key", partition: "partition", acks: "acks",
             THROTTLING_QUOTA_EXCEEDED: "count", INVALID_TOPIC_EXCEPTION: "topic" },
  kill_broker: { broker: "broker", mode: "mode", leader_of: "leader_of", BROKER_NOT_AVAILABLE: "broker" },
  slow_broker: { broker: "broker", delay_ms: "delay_ms", BROKER_NOT_AVAILABLE: "broker" },
  partition_network: { a: "a", b: "b", messages: { "to itself": "b" } },
  heal_network: { a: "a", b: "b", messages: { "to itself": "b" } },
  consumer_join: { member: "member", group: "group", topics: "topics", assignor: "assignor",
                   poll_every_ms: "poll_every_ms", config: "auto.offset.reset", INVALID_CONFIG: "auto.offset.reset",
                   messages: { "is already running": "member", "auto.offset.reset": "auto.offset.reset" } },
  consumer_poll: { member: "member" }, consumer_commit: { member: "member" },
  consumer_leave: { member: "member" }, consumer_crash: { member: "member" },
};
for (const command of ["restart_broker", "pause_fetcher", "resume_fetcher", "flush"]) {
  SERVER_FIELDS[command] = { broker: "broker", BROKER_NOT_AVAILABLE: "broker" };
}
for (const command of ["kill_controller_node", "restart_controller_node"]) {
  SERVER_FIELDS[command] = { node: "node", BROKER_NOT_AVAILABLE: "node", INVALID_REQUEST: "node" };
}

// This session's limits and the step arguments' bounds, as the server rendered them.
function readJson(root, id) {
  try { return JSON.parse($(`#${id}`, root)?.textContent || "{}"); } catch { return {}; }
}

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
    if (eq <= 0) throw new Error(say(gettext("“%(line)s” is not key=value"), { line }));
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

// `count` has passed produceProblems: a whole number within the session's limit.
export function produceArgs(form) {
  const data = new FormData(form);
  const count = num(data.get("count"));
  const value = String(data.get("value") ?? "");
  const values = count === 1 ? [value] : Array.from({ length: count }, (_, i) => `${value}-${i + 1}`);
  const args = { topic: data.get("topic"), values, acks: data.get("acks") === "all" ? "all" : Number(data.get("acks")) };
  const key = String(data.get("key") ?? "");
  if (key !== "") args.key = key;
  const partition = num(data.get("partition"));
  if (partition !== null) args.partition = partition;
  return { args, rate: num(data.get("rate")) };
}

// A consumer that polls by itself (the default: a running application, consumer_app.PollLoop)
// gets `poll_every_ms`; one that polls only when the learner presses Poll does not.
// auto.offset.reset goes in the consumer's `config`.
export function consumerJoinArgs(form) {
  const data = new FormData(form);
  const args = { member: String(data.get("member")).trim(), group: String(data.get("group")).trim(),
                 topics: splitTopics(data.get("topics")) };
  if (data.get("assignor")) args.assignor = data.get("assignor");
  if (pollsByItself(form)) args.poll_every_ms = num(data.get("poll_every_ms"));
  const reset = data.get("auto.offset.reset");
  if (reset) args.config = { "auto.offset.reset": reset };
  return args;
}

function pollsByItself(form) {
  return (form.elements.namedItem("poll_mode")?.value ?? "auto") !== "manual";
}

function splitTopics(text) {
  return String(text ?? "").split(",").map((t) => t.trim()).filter(Boolean);
}

// -- what each form checks before sending: {field: sentence} ("" = fine) ----------------------------
// `ctx`: {limits, bounds, view} — the session's limits and the step bounds from the server, and
// the cluster view (null until the first state).
function badInput(form, name) {
  return Boolean(form.elements.namedItem(name)?.validity?.badInput);
}

function whole(form, name, min, max, options = {}) {
  return wholeProblem(form.elements.namedItem(name)?.value, min, max, { ...options, badInput: badInput(form, name) });
}

function chosen(form, name, missing) {
  return String(form.elements.namedItem(name)?.value ?? "") === "" ? missing : "";
}

export function createTopicProblems(form, { limits, view }) {
  const topic = String(form.elements.topic.value).trim();
  const exists = !topicProblem(topic) && view?.topics?.has(topic) ? say(gettext("Topic “%(topic)s” already exists."), { topic }) : "";
  const problems = {
    topic: topicProblem(topic, { creating: true }) || exists,
    partitions: whole(form, "partitions", 1, limits.max_partitions ?? Infinity),
    replication_factor: whole(form, "replication_factor", 1, limits.max_brokers ?? Infinity),
    "min.insync.replicas": whole(form, "min.insync.replicas", 1, limits.max_brokers ?? Infinity, { required: false }),
    "segment.bytes": whole(form, "segment.bytes", 14, 2 ** 31 - 1, { required: false }),
    "index.interval.bytes": whole(form, "index.interval.bytes", 0, 2 ** 31 - 1, { required: false }),
  };
  try { parseConfigLines(form.elements.extra_config.value); } catch (error) { problems.extra_config = error.message; }
  return problems;
}

export function addPartitionsProblems(form, { limits, view }) {
  const topic = form.elements.topic.value;
  const current = view?.topics?.get(topic)?.partitions ?? 1;
  let partitions = whole(form, "partitions", current + 1, limits.max_partitions ?? Infinity);
  const asked = String(form.elements.partitions.value).trim();
  if (partitions && !badInput(form, "partitions") && asked !== "" && Number.isInteger(Number(asked)) && Number(asked) <= current) {
    partitions = say(ngettext("%(topic)s has %(count)s partition: the new total must be more (partitions are never removed).",
      "%(topic)s has %(count)s partitions: the new total must be more (partitions are never removed).", current), { topic, count: current });
  }
  return { topic: chosen(form, "topic", gettext("No topic yet: create one first.")), partitions };
}

export function produceProblems(form, { limits }) {
  const max = limits.max_records_per_s ?? Infinity;
  const raw = form.elements.count.value;
  let count = whole(form, "count", 1, max);
  if (count && Number.isInteger(Number(raw)) && Number(raw) > max) {
    count = say(gettext("One command may produce at most %(max)s records in this lab session, not %(count)s."), { max, count: raw });
  }
  const rateText = String(form.elements.rate.value).trim();
  const rate = Number(rateText);
  const rateProblem = badInput(form, "rate") ? gettext("Not a number.")
    : rateText !== "" && !(rate >= 0.1 && rate <= 100) ? say(gettext("From 0.1 to 100 records a second, not %(rate)s."), { rate: rateText }) : "";
  return { topic: chosen(form, "topic", gettext("No topic yet: create one first.")), count, rate: rateProblem };
}

export function brokerProblems(command, form, { bounds }) {
  const problems = { broker: chosen(form, "broker", gettext("Choose a broker.")) };
  if (command === "slow_broker") problems.delay_ms = whole(form, "delay_ms", 0, bounds.max_delay_ms ?? Infinity);
  return problems;
}

export function consumerJoinProblems(form, { bounds, view }) {
  const member = String(form.elements.member.value).trim();
  const group = String(form.elements.group.value).trim();
  const topics = splitTopics(form.elements.topics.value);
  const owner = view ? activeConsumers(view).get(member) : undefined;
  const taken = owner === undefined ? ""
    : say(gettext("“%(member)s” is already a running consumer (group “%(group)s”): choose another name, or first free this one with Leave or Crash below."),
      { member, group: owner });
  const every = pollsByItself(form) ? whole(form, "poll_every_ms", bounds.min_poll_every_ms ?? 10, bounds.max_wait_ms ?? Infinity) : "";
  return {
    member: nameProblem(member, bounds.max_client_name ?? 100) || taken,
    group: group === "" ? gettext("Give the group a name.")
      : group.length > (bounds.max_group_id ?? 249) ? say(gettext("At most %(max)s characters."), { max: bounds.max_group_id ?? 249 }) : "",
    topics: topics.length === 0 ? gettext("Name at least one topic.") : topics.map((t) => topicProblem(t)).find(Boolean) || "",
    poll_every_ms: every === gettext("Required.") ? gettext("How often it polls, in ms — or choose “only when you press Poll”.") : every,
  };
}

// What Kafka allows but a learner rarely means, said at the field before the server's warning
// comes (a join's warnings come when the join finishes): topics that do not exist yet.
export function consumerJoinNotes(form, { view }) {
  const missing = view ? splitTopics(form.elements.topics.value).filter((t) => !view.topics.has(t)) : [];
  if (!missing.length) return {};
  return { topics: missing.length === 1
    ? say(gettext("Topic “%(topic)s” does not exist yet: the consumer joins anyway (Kafka allows it) and gets no partitions of it until it is created."),
      { topic: missing[0] })
    : say(gettext("Topics %(topics)s do not exist yet: the consumer joins anyway (Kafka allows it) and gets no partitions of them until they are created."),
      { topics: missing.map((t) => `“${t}”`).join(", ") }) };
}

// Consumer name → its group, for the consumers still running (the model's `consumers`).
function activeConsumers(view) {
  return new Map((view.consumers || []).filter((c) => c.status === "active").map((c) => [c.name, c.group]));
}

export function resetProblems(form, { limits }) {
  return { brokers: whole(form, "brokers", 1, limits.max_brokers ?? Infinity),
           seed: whole(form, "seed", 0, Number.MAX_SAFE_INTEGER) };
}

export class Controls {
  // guard(command) -> {discardFuture} to send, or null to not send (session.js asks before a
  // command cuts off the timeline's future); confirmReplace(what) -> bool before a scenario
  // replaces the session's cluster.
  constructor(root, socket, { onScenario, guard, confirmReplace } = {}) {
    this.root = root;
    this.socket = socket;
    this.onScenario = onScenario;
    this.guard = guard;
    this.confirmReplace = confirmReplace;
    this.optionSets = new Map();
    this.rateTimer = null;
    this.view = null;
    this.ctx = { limits: readJson(root, "lab-limits"), bounds: readJson(root, "lab-step-bounds"), view: null };
    this._wire();
  }

  // Send one command; its warnings show as info toasts, a refusal at `form` (and as a toast).
  async send(command, args, { form = null, note = "" } = {}) {
    const options = this.guard ? this.guard(command) : {};
    if (options === null) return null;
    try {
      const ack = await this.socket.command(command, args, options);
      if (form) clearProblems(form);
      if (note) toast(note, { kind: "info" });
      for (const warning of ack.warnings || []) toast(warning, { kind: "info" });
      return ack;
    } catch (error) {
      if (!error.handled) errorToast(error.message, error.kafka_error);
      if (form) showProblems(form, serverProblem(error, command, SERVER_FIELDS[command]));
      return null;
    }
  }

  // Show a form's problems (at the fields and in a toast); true when there are none.
  _fine(form, problems) {
    const first = showProblems(form, problems);
    if (first) errorToast(first);
    return !first;
  }

  _form(name) {
    return $(`form[data-form="${name}"]`, this.root);
  }

  _wire() {
    for (const form of $all("form[data-form]", this.root)) {
      // Editing a field takes its message away; the next send checks again.
      const clear = (event) => { if (event.target.name) clearProblems(form, event.target.name); };
      form.addEventListener("input", clear);
      form.addEventListener("change", clear);
    }
    this._submit("create-topic", (form) => {
      if (this._fine(form, createTopicProblems(form, this.ctx))) this.send("create_topic", createTopicArgs(form), { form });
    });
    this._submit("add-partitions", (form) => {
      if (!this._fine(form, addPartitionsProblems(form, this.ctx))) return;
      this.send("add_partitions", { topic: form.elements.topic.value, count: num(form.elements.partitions.value) }, { form });
    });
    this._submit("delete-topic", (form) => {
      if (!this._fine(form, { topic: chosen(form, "topic", gettext("No topic yet: create one first.")) })) return;
      this.send("delete_topic", { topic: form.elements.topic.value }, { form });
    });
    this._submit("produce", (form) => this._produce(form));
    $("[data-produce-stop]", this.root).addEventListener("click", () => this._stopRate(gettext("stopped")));
    this._buttons("broker-faults", (command, data) => {
      const broker = num(data.get("broker"));
      if (command === "kill_broker") return { broker, mode: data.get("mode") };
      if (command === "slow_broker") return { broker, delay_ms: num(data.get("delay_ms")) ?? 0 };
      return { broker };
    }, (command, form) => brokerProblems(command, form, this.ctx));
    this._buttons("kill-leader", () => ({ mode: "process" }), () => ({}));
    this._submit("kill-leader", (form) => {
      if (!this._fine(form, { leader_of: chosen(form, "leader_of", gettext("No partition yet: create a topic first.")) })) return;
      this.send("kill_broker", { leader_of: form.elements.leader_of.value }, { form });
    });
    // KRaft's dedicated controllers (nodes 101-103): the engine's kill/restart_controller_node.
    this._buttons("controller-nodes", (command, data) => ({ node: num(data.get("node")) }),
      (command, form) => ({ node: chosen(form, "node", gettext("This cluster has no controller nodes of its own: they come with KRaft's dedicated controllers.")) }));
    this._buttons("links", (command, data) => ({ a: nodeArg(data.get("a")), b: nodeArg(data.get("b")) }),
      (command, form) => ({ b: linkProblem(form.elements.a.value, form.elements.b.value) }));
    this._wireConsumerJoin();
    this._buttons("consumer-actions", (command, data) => ({ member: data.get("member") }),
      (command, form) => ({ member: chosen(form, "member", gettext("No consumer yet: join one first.")) }));
    this._submit("builtin-scenario", (form) => this._builtin(form));
    $("[data-scenario-select]", this.root).addEventListener("change", (event) => {
      const option = event.target.selectedOptions[0];
      $("[data-scenario-description]", this.root).textContent = option ? option.title : "";
    });
    this._submit("upload-scenario", (form) => this._upload(form));
    this._submit("reset", (form) => {
      if (!this._fine(form, resetProblems(form, this.ctx))) return;
      const data = new FormData(form);
      if (!confirm(gettext("Start a fresh cluster in this session? (The old command log is kept.)"))) return;
      this.socket.send({ type: "reset", brokers: num(data.get("brokers")), seed: num(data.get("seed")), truncation: data.get("truncation") });
    });
  }

  // The join form: the poll interval only for a consumer that polls by itself; a note for
  // auto.offset.reset=none; topics that do not exist said at their field (the join still goes).
  _wireConsumerJoin() {
    const form = this._form("consumer-join");
    const sync = () => {
      const auto = pollsByItself(form);
      form.elements.poll_every_ms.disabled = !auto;
      $("[data-reset-none]", form).hidden = !(auto && form.elements["auto.offset.reset"].value === "none");
    };
    form.addEventListener("change", sync);
    sync();
    this._submit("consumer-join", (form) => {
      if (!this._fine(form, consumerJoinProblems(form, this.ctx))) return;
      const notes = consumerJoinNotes(form, this.ctx);
      this.send("consumer_join", consumerJoinArgs(form), { form }).then((ack) => { if (ack) showNotes(form, notes); });
    });
  }

  _submit(formName, handler) {
    this._form(formName).addEventListener("submit", (event) => { event.preventDefault(); handler(event.target); });
  }

  // Forms whose buttons each send a different command from the same fields.
  _buttons(formName, argsFor, problemsFor) {
    const form = this._form(formName);
    for (const button of $all("button[type=button][data-command]", form)) {
      button.addEventListener("click", () => {
        const command = button.dataset.command;
        if (!this._fine(form, problemsFor(command, form))) return;
        this.send(command, argsFor(command, new FormData(form)), { form });
      });
    }
  }

  _produce(form) {
    if (!this._fine(form, produceProblems(form, this.ctx))) return;
    const { args, rate } = produceArgs(form);
    if (!rate) { this.send("produce", args, { form }); return; }
    // A rate: one produce command per record, paced in wall time (virtual time follows the clock's speed).
    this._stopRate();
    const values = args.values.slice();
    const status = $("[data-produce-status]", form);
    const stop = $("[data-produce-stop]", form);
    stop.hidden = false;
    let sent = 0;
    const tick = async () => {
      if (!values.length) { this._stopRate(say(gettext("sent %(sent)s"), { sent })); return; }
      const ack = await this.send("produce", { ...args, values: [values.shift()] }, { form });
      if (!ack) { this._stopRate(say(gettext("stopped after %(sent)s (error)"), { sent })); return; }
      sent += 1;
      status.textContent = say(gettext("sent %(sent)s of %(count)s…"), { sent, count: args.values.length });
    };
    tick();
    this.rateTimer = setInterval(tick, 1000 / rate);
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
    if (!this._fine(form, { name: name ? "" : gettext("Choose a scenario first.") })) return;
    try {
      const response = await fetch(`${this.root.closest("[data-scenario-url]").dataset.scenarioUrl}${encodeURIComponent(name)}.json`);
      if (!response.ok) throw new Error(say(gettext("the lab answered %(status)s"), { status: response.status }));
      this._loadScenario(await response.json(), name);
    } catch (error) {
      this._fine(form, { name: say(gettext("Could not load scenario %(name)s: %(error)s"), { name, error: error.message }) });
    }
  }

  async _upload(form) {
    const file = form.querySelector("input[type=file]").files[0];
    if (!this._fine(form, { file: file ? "" : gettext("Choose a JSON file first.") })) return;
    let scenario;
    try {
      scenario = JSON.parse(await file.text());
    } catch (error) {
      this._fine(form, { file: say(gettext("%(file)s is not valid JSON: %(error)s"), { file: file.name, error: error.message }) });
      return;
    }
    if (!scenario || typeof scenario !== "object" || !Array.isArray(scenario.steps)) {
      this._fine(form, { file: say(gettext("%(file)s is not a scenario: it needs a \"steps\" list"), { file: file.name }) });
      return;
    }
    this._loadScenario(scenario, file.name);
  }

  _loadScenario(scenario, name) {
    if (this.confirmReplace && !this.confirmReplace(name)) return;
    if (this.socket.send({ type: "load_scenario", scenario })) {
      toast(say(gettext("Loading %(name)s: %(steps)s steps queued — press Step or Play"), { name, steps: scenario.steps.length }), { kind: "info" });
      this.onScenario?.(scenario);
    }
  }

  // Keep the data-options selects in step with the cluster.
  refreshOptions(view) {
    this.view = view;
    this.ctx.view = view;
    const brokers = Array.from(view.brokers.values()).sort((a, b) => a.id - b.id)
      .map((b) => ({ value: String(b.id), label: say(gettext("broker %(id)s"), { id: b.id }) + (b.alive ? "" : gettext(" (down)")) +
                     (view.controller === b.id ? gettext(" · controller") : "") }));
    const topics = Array.from(view.topics.keys()).filter((t) => !isInternal(t)).sort().map((t) => ({ value: t, label: t }));
    const partitions = sortedPartitions(view).filter((p) => !isInternal(p.topic)).map((p) => {
      const label = partitionLabel(p.topic, p.partition);
      return { value: label, label: p.leader < 0 ? say(gettext("%(partition)s (leader none)"), { partition: label })
        : say(gettext("%(partition)s (leader %(leader)s)"), { partition: label, leader: p.leader }) };
    });
    const nodes = [...brokers.map((b) => ({ value: `broker-${b.value}`, label: say(gettext("broker %(id)s"), { id: b.value }) })),
                   ...(view.controller_nodes || []).map((n) => ({ value: n.node, label: say(gettext("controller %(id)s"), { id: n.id }) })),
                   ...Array.from(view.clients).sort().map((c) => ({ value: c, label: c }))];
    const controllerNodes = (view.controller_nodes || []).map((n) => ({ value: String(n.id),
      label: say(gettext("controller %(id)s"), { id: n.id }) + (n.alive ? "" : gettext(" (down)")) + (n.active ? gettext(" · active") : "") }));
    // Consumers that can still act: not crashed, not closed (lab/model.py `consumers`).
    const consumers = new Set((view.consumers || []).filter((c) => c.status === "active").map((c) => c.name));
    this._fill("brokers", brokers);
    this._fill("topics", topics);
    this._fill("partitions", partitions);
    this._fill("nodes", nodes);
    this._fill("controller-nodes", controllerNodes);
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
        : [h("option", { key: "", value: "" }, NONE_YET[kind]?.() ?? say(gettext("no %(kind)s yet"), { kind }))], false);
      if (chosen !== undefined) select.value = chosen;
    }
  }

  _fillTopicPartitions(view) {
    const form = this._form("produce");
    const topic = form.elements.topic.value;
    const count = view.topics.get(topic)?.partitions || 0;
    this._fill("topic-partitions", [{ value: "", label: gettext("by key / sticky") },
      ...Array.from({ length: count }, (_, p) => ({ value: String(p), label: `${topic}-${p}` }))]);
    if (!form.__topicWired) {
      form.__topicWired = true;
      form.elements.topic.addEventListener("change", () => this._fillTopicPartitions(this.view));
    }
  }
}

// What an empty picker says (its data-options kind).
const NONE_YET = {
  brokers: () => gettext("no brokers yet"), topics: () => gettext("no topics yet"), partitions: () => gettext("no partitions yet"),
  nodes: () => gettext("no nodes yet"), consumers: () => gettext("no consumers yet"),
  "controller-nodes": () => gettext("none (KRaft with dedicated controllers only)"),
};

// Notes at fields ({fieldName: sentence}): not problems — the command went — but worth reading.
// They go when the field is edited or the form is sent again.
function showNotes(form, notes) {
  for (const old of form.querySelectorAll("[data-field-note]")) old.remove();
  for (const [name, text] of Object.entries(notes)) {
    const field = form.elements.namedItem(name);
    if (!text || !field || field.nodeType !== Node.ELEMENT_NODE) continue;
    const note = document.createElement("span");
    note.className = "field-note";
    note.dataset.fieldNote = name;
    note.setAttribute("role", "status");
    note.textContent = text;
    field.after(note);
    field.addEventListener("input", () => note.remove(), { once: true });
  }
}

// Broker nodes go as their id (the engine takes ints for brokers, names for clients).
function nodeArg(node) {
  const match = /^broker-(\d+)$/.exec(String(node));
  return match ? Number(match[1]) : node;
}
