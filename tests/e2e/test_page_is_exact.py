"""The picture never lies: whatever the learner does and however fast the clock runs, the page's
model (and the partitions table it draws) equals the engine's state at the same step.

A session is driven through the page's own socket with random commands and faults while the
clock runs at 10×; many times it pauses, and the page's model (`window.kafkaLab.model()`) and the
DOM's partitions table are compared with a fresh model from the server (`/lab/<id>/model.json`).
A reload in the middle must come back exact too."""
from __future__ import annotations

import random
import time

import pytest
from playwright.sync_api import Page

from tests.e2e.helpers import new_session

pytestmark = pytest.mark.e2e
ROUNDS = 14


def summary(model: dict) -> dict:
    """The server's model in the shape of the page's `modelSummary` (static/js/lab-state.js)."""
    partitions = {}
    for name, p in model["partitions"].items():
        partitions[name] = {
            "leader": p["leader"], "leader_epoch": p["leader_epoch"], "isr": p["isr"], "replicas": p["replicas"],
            "high_watermark": p["high_watermark"],
            "replica_states": {b: {k: r[k] for k in ("alive", "log_start_offset", "log_end_offset", "high_watermark")}
                               for b, r in p["replica_states"].items()}}
    return {"step": model["step"], "time_ms": model["time_ms"], "seq": model["seq"], "controller": model["controller"],
            "brokers": sorted(({"id": b["id"], "alive": b["alive"], "controller": b["controller"]}
                               for b in model["brokers"]), key=lambda b: b["id"]),
            "partitions": partitions,
            "metadata": model["metadata"], "metadata_records": model["metadata_records"],
            "controller_nodes": model["controller_nodes"],
            "groups": [{"group": g["group"], "state": g["state"], "generation": g["generation"],
                        "members": [{"member": m["member"], "assignment": m["assignment"]} for m in g["members"]],
                        "committed": g["committed"]} for g in model["groups"]]}


def server_model(page: Page, session_id: str) -> dict:
    response = page.request.get(f"/lab/{session_id}/model.json")
    assert response.ok, response.status
    return response.json()


def page_model(page: Page) -> dict:
    return page.evaluate("window.kafkaLab.model()")


def command(page: Page, name: str, args: dict) -> str:
    return page.evaluate("([c, a]) => window.kafkaLab.socket.command(c, a, {discardFuture: true})"
                         ".then(() => 'ok', (e) => 'refused: ' + e.message)", [name, args])


def settled_compare(page: Page, session_id: str) -> None:
    """Paused: wait for the page to reach the server's step, then the two models must be equal."""
    expected = summary(server_model(page, session_id))
    deadline = time.monotonic() + 10
    while page.evaluate("window.kafkaLab.app.view.step") != expected["step"] and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    got = page_model(page)
    for key in expected:
        assert got[key] == expected[key], f"the page's {key} differs from the engine's at step {expected['step']}"
    rows = page.evaluate("""() => Object.fromEntries(Array.from(document.querySelectorAll('[data-partition-summary]'))
        .map((row) => [row.dataset.partitionSummary, [row.dataset.leader, row.dataset.isr, row.dataset.hw,
                                                      row.dataset.leaderEpoch]]))""")
    user = {name: p for name, p in expected["partitions"].items() if not name.startswith("__")}
    deadline = time.monotonic() + 5
    want = {name: [str(p["leader"]), ",".join(map(str, p["isr"])), str(p["high_watermark"]), str(p["leader_epoch"])]
            for name, p in user.items()}
    while rows != want and time.monotonic() < deadline:   # the table is redrawn on the next animation frame
        page.wait_for_timeout(50)
        rows = page.evaluate("""() => Object.fromEntries(Array.from(document.querySelectorAll('[data-partition-summary]'))
            .map((row) => [row.dataset.partitionSummary, [row.dataset.leader, row.dataset.isr, row.dataset.hw,
                                                          row.dataset.leaderEpoch]]))""")
    assert rows == want, "the partitions table differs from the engine's state"


def random_action(page: Page, rng: random.Random, down: set[int]) -> None:
    roll = rng.random()
    if roll < 0.35:
        command(page, "produce", {"topic": rng.choice(["t", "u"]), "values": [f"v{i}" for i in range(rng.randint(1, 40))],
                                  "acks": rng.choice([0, 1, "all"])})
    elif roll < 0.5 and len(down) < 2:
        broker = rng.choice([b for b in (1, 2, 3) if b not in down])
        if command(page, "kill_broker", {"broker": broker, "mode": rng.choice(["process", "power"])}) == "ok":
            down.add(broker)
    elif roll < 0.62 and down:
        broker = rng.choice(sorted(down))
        if command(page, "restart_broker", {"broker": broker}) == "ok":
            down.discard(broker)
    elif roll < 0.72:
        command(page, rng.choice(["pause_fetcher", "resume_fetcher"]), {"broker": rng.randint(1, 3)})
    elif roll < 0.82:
        a, b = rng.sample([1, 2, 3], 2)
        command(page, rng.choice(["partition_network", "heal_network"]), {"a": a, "b": b})
    else:
        command(page, "consumer_join", {"member": f"c{rng.randint(1, 9)}", "group": "g", "topics": ["t"],
                                        "poll_every_ms": 200})


def test_the_page_equals_the_engine_after_random_commands_and_faults_at_10x(page: Page) -> None:
    session_id = new_session(page, brokers=3, seed=7, name="drift check",
                             config='{"offsets.topic.num.partitions": 3}')
    assert command(page, "create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3}) == "ok"
    assert command(page, "create_topic", {"topic": "u", "partitions": 2, "replication_factor": 2}) == "ok"
    rng = random.Random(20261126)
    down: set[int] = set()
    checks = 0
    for round_ in range(ROUNDS):
        page.evaluate("window.kafkaLab.socket.clock('play', {speed: 10})")
        for _ in range(rng.randint(1, 3)):
            random_action(page, rng, down)
            page.wait_for_timeout(rng.randint(100, 700))
        page.evaluate("window.kafkaLab.socket.clock('pause')")
        settled_compare(page, session_id)
        checks += 1
        if round_ == ROUNDS // 2:
            page.reload()   # a new page: hello, then the same stream
            page.wait_for_function("window.kafkaLab && window.kafkaLab.app.view.frame >= 0")
            settled_compare(page, session_id)
            checks += 1
    stats = page.evaluate("window.kafkaLab.stats")
    assert checks >= ROUNDS and stats["frames"] > 0
    assert [e for e in page.errors if e.startswith("uncaught")] == []


def test_a_lost_frame_is_noticed_and_the_page_resynchronises(page: Page) -> None:
    session_id = new_session(page, brokers=3, seed=8, name="lost frame")
    assert command(page, "create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3}) == "ok"
    # Lose the next frame that changes the model, as a broken connection or a bug would.
    page.evaluate("""() => {
        const handlers = window.kafkaLab.socket.handlers, original = handlers.events;
        let lost = 0;
        handlers.events = (m) => { if (!lost && (m.patches || []).length) { lost += 1; return; } original(m); };
    }""")
    assert command(page, "produce", {"topic": "t", "values": ["a", "b", "c"], "acks": "all"}) == "ok"
    page.evaluate("window.kafkaLab.socket.clock('play', {speed: 10})")
    page.wait_for_timeout(800)
    page.evaluate("window.kafkaLab.socket.clock('pause')")

    settled_compare(page, session_id)
    stats = page.evaluate("window.kafkaLab.stats")
    assert stats["gaps"] >= 1 and stats["resyncs"] >= 1
