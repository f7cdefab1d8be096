// The metadata layer, drawn from the model (lab/model.py, lab/metadata_view.py): where the cluster
// keeps what it knows about itself. ZooKeeper mode: its znodes — /controller, /brokers/ids/N (each
// broker's ephemeral registration), every partition's state — and the controller broker. KRaft: the
// controller quorum — each voter's Raft state, epoch, leader, vote, metadata log end offset and high
// watermark, the active controller — each broker's metadata offset, broker epoch and fencing, and
// the newest committed records of __cluster_metadata as Kafka prints them (kafka-dump-log
// --cluster-metadata-decoder). Nothing is computed here: the server's model says it all.

import { h, patch } from "./dom.js";
import { gettext, interpolate as say } from "./i18n.js";

const dash = (value) => (value === null || value === undefined || value < 0 ? "–" : String(value));

function th(text, title) {
  return h("th", { scope: "col", title: title || null }, text);
}

// Raft's states keep Kafka's names (QuorumState); a voter whose node is down is said in the page's language.
function raftState(voter) {
  return voter.state === "down" ? gettext("down") : voter.state;
}

function voterRow(v) {
  return h("tr", { key: `v${v.id}`, class: `voter ${v.active ? "active" : ""} ${v.alive ? "" : "dead"}`.trim(),
                   "data-voter": v.id, "data-state": v.state, "data-epoch": v.epoch, "data-leader": v.leader }, [
    h("td", {}, v.role === "dedicated" ? say(gettext("controller %(id)s"), { id: v.id }) : say(gettext("broker %(id)s"), { id: v.id })),
    h("td", {}, v.role === "dedicated" ? gettext("dedicated") : gettext("combined")),
    h("td", { class: "raft-state" }, v.active ? `${raftState(v)} · ${gettext("active controller")}` : raftState(v)),
    h("td", {}, dash(v.epoch)),
    h("td", {}, dash(v.leader)),
    h("td", {}, dash(v.voted_for)),
    h("td", {}, dash(v.log_end_offset)),
    h("td", {}, dash(v.high_watermark)),
  ]);
}

function quorumTable(m) {
  return h("table", { key: "voters", class: "data quorum-table", "data-quorum": "" }, [
    h("caption", {}, gettext("Controller quorum (Raft voters)")),
    h("thead", {}, [h("tr", {}, [
      th(gettext("node")), th(gettext("role")), th(gettext("Raft state")), th("epoch"), th("leader"),
      th(gettext("voted for")), th(gettext("log end offset"), "__cluster_metadata LEO"), th("HW", gettext("high watermark")),
    ])]),
    h("tbody", {}, m.voters.map(voterRow)),
  ]);
}

function brokerTable(m) {
  return h("table", { key: "brokers", class: "data metadata-brokers" }, [
    h("caption", {}, gettext("Brokers: their metadata offset, epoch and fencing")),
    h("thead", {}, [h("tr", {}, [
      th(gettext("broker")), th(gettext("metadata offset"), gettext("the last __cluster_metadata record its image replayed")),
      th(gettext("broker epoch"), gettext("the offset of its registration record")), th(gettext("fenced")),
    ])]),
    h("tbody", {}, m.brokers.map((b) => h("tr", { key: `b${b.id}`, class: b.alive ? "" : "dead", "data-metadata-broker": b.id,
                                                  "data-fenced": b.registered_fenced ? "true" : "false" }, [
      h("td", {}, b.alive ? say(gettext("broker %(id)s"), { id: b.id }) : `${say(gettext("broker %(id)s"), { id: b.id })} (${gettext("down")})`),
      h("td", {}, dash(b.metadata_offset)),
      h("td", {}, dash(b.broker_epoch)),
      h("td", {}, b.registered_fenced ? gettext("fenced") : gettext("unfenced")),
    ]))),
  ]);
}

function recordLine(r) {
  const text = r.record.error || JSON.stringify(r.record.data);
  return h("li", { key: `r${r.offset}`, class: r.control ? "control" : "", "data-record-offset": r.offset }, [
    h("span", { class: "record-offset" }, say(gettext("offset %(offset)s"), { offset: r.offset })),
    h("span", { class: "record-epoch" }, say(gettext("epoch %(epoch)s"), { epoch: r.epoch })),
    h("strong", { class: "record-type" }, r.record.type),
    h("code", {}, text),
  ]);
}

function kraftNodes(view) {
  const m = view.metadata;
  const active = m.voters.find((v) => v.active);
  const records = view.metadata_records || [];
  return [
    h("p", { key: "summary", class: "metadata-summary", "data-metadata-mode": "kraft",
             "data-active-controller": m.active_controller, "data-quorum-epoch": active ? active.epoch : "" },
      active
        ? say(gettext("KRaft: the active controller is node %(id)s, in epoch %(epoch)s (controllers: %(mode)s)."),
              { id: m.active_controller, epoch: active.epoch, mode: m.controller_mode === "dedicated" ? gettext("dedicated") : gettext("combined") })
        : gettext("KRaft: no active controller — the quorum is electing a leader, or too few voters are up.")),
    quorumTable(m),
    brokerTable(m),
    h("h3", { key: "records-title" }, say(gettext("The newest committed records of __cluster_metadata (%(count)s)"), { count: records.length })),
    records.length
      ? h("ol", { key: "records", class: "metadata-records", "data-metadata-records": "", reversed: true }, records.slice().reverse().map(recordLine))
      // A voter keeps its high watermark in memory only (KafkaRaftClient): a restarted voter knows no
      // committed offset until a leader tells it, so with no leader up nothing is known committed.
      : h("p", { key: "records", class: "metadata-records-none", "data-metadata-records": "" },
          gettext("No running voter knows a high watermark yet: Kafka keeps it in memory, so a restarted voter learns it from a leader.")),
  ];
}

function zookeeperNodes(view, ui) {
  const m = view.metadata;
  const znodes = m.znodes.filter((z) => ui.showInternal || !z.path.includes("/__"));
  return [
    h("p", { key: "summary", class: "metadata-summary", "data-metadata-mode": "zookeeper", "data-active-controller": m.controller },
      m.controller >= 0
        ? say(gettext("ZooKeeper: broker %(id)s is the controller (/controller), controller epoch %(epoch)s."), { id: m.controller, epoch: m.controller_epoch })
        : gettext("ZooKeeper: no controller — /controller is empty until a broker wins the election.")),
    h("table", { key: "znodes", class: "data znodes", "data-znodes": "" }, [
      h("caption", {}, say(gettext("ZooKeeper's nodes (%(count)s)"), { count: znodes.length })),
      h("thead", {}, [h("tr", {}, [th(gettext("path")), th(gettext("data")), th(gettext("kind")), th(gettext("version"))])]),
      h("tbody", {}, znodes.map((z) => h("tr", { key: z.path, "data-znode": z.path }, [
        h("td", {}, [h("code", {}, z.path)]),
        h("td", {}, [h("code", {}, z.data)]),
        h("td", {}, z.ephemeral ? gettext("ephemeral") : gettext("persistent")),
        h("td", {}, String(z.version)),
      ]))),
    ]),
  ];
}

export function renderMetadata(container, view, ui = {}) {
  if (!container) return;
  const m = view.metadata;
  if (!m) {
    patch(container, [h("p", { key: "wait", class: "muted" }, gettext("Waiting for the cluster…"))]);
    return;
  }
  patch(container, m.mode === "kraft" ? kraftNodes(view) : zookeeperNodes(view, ui));
}
