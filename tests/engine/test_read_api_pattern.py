"""Issue 11, finding 4: the read API's `?pattern=` is a regular expression from a URL, and it must
not freeze the process. Python's `re` backtracked for 21 s on `(a|aa)+b` against a topic named
`a`×41, holding the GIL (another user's command waited as long); engine.topic_pattern runs the
same syntax as an automaton, in time linear in the name."""
from __future__ import annotations

import json
import threading
import time

import pytest

from engine import Cluster
from engine.read_api import list_partitions
from engine.read_api_server import handle
from engine.topic_pattern import MAX_PATTERN_CHARS, PatternError, TopicPattern

GUARD_S = 10.0


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(1, str(tmp_path / "lab"), seed=3)
    c.create_topic("a" * 41, 1, 1)
    c.create_topic("views", 1, 1)
    c.create_topic("clicks", 2, 1)
    yield c
    c.close()


def test_a_catastrophic_pattern_answers_at_once_and_the_process_keeps_running(cluster):
    answer: list = []
    request = threading.Thread(target=lambda: answer.append(handle(
        lambda _s: cluster, "/api/v1/sessions/s/partitions", {"pattern": ["(a|aa)+b"]})), daemon=True)
    ticks, started = 0, time.monotonic()
    request.start()
    while request.is_alive() and time.monotonic() - started < GUARD_S:
        ticks += 1                # this thread gets the interpreter too: the pattern does not hold it
        time.sleep(0.001)
    request.join(0.1)

    assert answer, f"the request was still running after {GUARD_S} s"
    status, _, body = answer[0]
    assert status == 200 and json.loads(body) == {"partitions": []}
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("pattern, topics", [
    ("vie.*", ["views"]), ("cl.*", ["clicks", "clicks"]), ("c", []), ("views|clicks", ["clicks", "clicks", "views"]),
    ("[a-z]{5}", ["views"]), ("(a|aa)+", ["a" * 41]), ("^v\\w+s$", ["views"]), ("(?:cl|vi)[a-z]*s", ["clicks", "clicks", "views"]),
])
def test_a_pattern_matches_whole_topic_names_as_a_regular_expression_does(cluster, pattern, topics):
    assert sorted(i.topic for i in list_partitions(cluster, pattern=pattern)) == sorted(topics)


@pytest.mark.parametrize("pattern, why", [
    ("(a)\\1", "groupref"), ("(?=v)views", "assert"), ("(?i)VIEWS", "inline flags"), ("a++", "possessive"),
    ("x" * (MAX_PATTERN_CHARS + 1), "at most 1000 characters"), ("(", "Not a valid pattern"),
    ("a{1000}b{1000}c{1000}", "too big"),
])
def test_a_pattern_it_will_not_run_is_a_400_that_says_why(cluster, pattern, why):
    status, _, body = handle(lambda _s: cluster, "/api/v1/sessions/s/partitions", {"pattern": [pattern]})
    assert status == 400
    assert json.loads(body)["error"] == "INVALID_REQUEST" and why in json.loads(body)["message"]


def test_a_pattern_stops_once_it_has_done_a_bounded_amount_of_work():
    pattern = TopicPattern("(a|a|a|a|a|a|a|a|a|a|a|a|a|a|a|a)*(a*)*(a*)*b")
    started = time.monotonic()
    with pytest.raises(PatternError, match="costs too much"):
        for _ in range(10_000):
            pattern.fullmatch("a" * 249)
    assert time.monotonic() - started < 10
