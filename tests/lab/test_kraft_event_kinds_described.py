"""Issue 15: the event log says every KRaft event in words (static/js/describe.js), the "step to next"
control offers every kind, and the host steps to one (lab/host.py step_until)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import events as ev
from lab.host import SessionHost, Shape

REPO = Path(__file__).resolve().parents[2]
KRAFT_KINDS = sorted(kind for kind, cls in ev.EVENT_TYPES.items()
                     if cls.__name__.startswith(("QuorumController", "Raft", "ControllerNode", "BrokerRegistered",
                                                 "BrokerFenced", "BrokerUnfenced", "BrokerMetadataApplied"))
                     or kind in ("metadata_committed", "metadata_high_watermark_advanced"))


def test_there_are_the_kraft_kinds_the_issue_names() -> None:
    assert {"quorum_controller_activated", "quorum_controller_renounced", "metadata_committed", "broker_registered",
            "broker_fenced", "broker_unfenced", "broker_metadata_applied", "controller_node_started",
            "controller_node_crashed", "raft_election_started", "raft_vote_cast", "raft_leader_elected",
            "raft_leader_resigned", "raft_log_truncated", "metadata_high_watermark_advanced"} <= set(KRAFT_KINDS)


@pytest.mark.parametrize("kind", KRAFT_KINDS)
def test_each_kraft_kind_has_a_sentence_in_the_event_log(kind: str) -> None:
    describe = (REPO / "static" / "js" / "describe.js").read_text(encoding="utf-8")
    entry = re.search(rf"^  {kind}: \(e\) => (.*?)(?=^  \w+: \(e\)|^}};)", describe, re.S | re.M)
    assert entry, f"static/js/describe.js has no sentence for {kind}"
    assert "gettext(" in entry.group(1), f"{kind}'s sentence is not marked for translation"


@pytest.mark.django_db
def test_the_step_to_next_control_offers_them_and_the_host_steps_to_one(tmp_path: Path, client) -> None:
    options = client.get("/lab/explore/event-kinds/").content.decode()
    for kind in KRAFT_KINDS:
        assert f'<option value="{kind}"' in options

    host = SessionHost(str(tmp_path / "h"), Shape(3, 4, config={"metadata": "kraft", "controller.mode": "dedicated"}))
    try:
        host.apply("kill_controller", {})
        events = host.step_until("raft_leader_elected")
        elected = [e for e in events.events if e.kind == "raft_leader_elected"]
        assert elected and elected[-1].epoch > 1
        voters = {v["id"]: v for v in host.model()["metadata"]["voters"]}
        assert (voters[elected[-1].node]["state"], voters[elected[-1].node]["epoch"]) == ("leader", elected[-1].epoch)
    finally:
        host.close()
