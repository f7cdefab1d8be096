"""Events as the browser gets them: lab.snapshot's fast event_dict / event_json give exactly what
`json.dumps(event.to_dict())` gives, for every kind of event a run of the built-in scenarios makes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import events as ev
from engine.scenarios.runner import load_scenario, run_scenario
from lab.snapshot import event_dict, event_json


@pytest.mark.parametrize("name", ["kip101-data-loss", "unclean-election-loss", "group-member-joins", "producer-duplicates"])
def test_every_event_encodes_as_its_to_dict(name: str, tmp_path: Path) -> None:
    seen: list[ev.Event] = []
    run_scenario(load_scenario(name), str(tmp_path), trace=seen.append)
    assert len({e.kind for e in seen}) >= 5
    for event in seen:
        assert event_json(event) == json.dumps(event.to_dict())
        assert list(event_dict(event)) == list(event.to_dict())


def test_an_event_with_something_not_json_is_refused() -> None:
    event = ev.MessageSent(message_id=1, api="Fetch", src="broker-1", dst="broker-2", send_ms=0, arrive_ms=1,
                           summary={"raw": b"bytes"})
    with pytest.raises(TypeError, match="bytes is not JSON serializable"):
        event_json(event)
