"""A tab's command with arguments its step refuses — NaN and Infinity, which Python's JSON reader
lets through unless told not to — gets an `error` (INVALID_REQUEST) and reaches neither the
engine nor the log; the session keeps working. A command's warnings come in its `ack`
(docs/lab-protocol.md)."""
from __future__ import annotations

import pytest

from lab.models import LabCommand
from lab.registry import PROTOCOL_VERSION
from tests.lab.test_consumer import lab_session, lab_settings, opened, run_async, until, visitor  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _command(request_id: str, command: str, args_json: str) -> str:
    """A command frame as raw text: NaN and Infinity are not JSON, but a browser's hand-written
    frame (or any client's) may hold them, and Python's reader takes them."""
    return (f'{{"v": {PROTOCOL_VERSION}, "type": "command", "id": "{request_id}", "command": "{command}", '
            f'"args": {args_json}}}')


def test_nan_or_infinity_in_a_command_is_refused_and_the_session_goes_on() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, dict, dict]:
        socket, _ = await opened(session.id, key)
        await socket.send_to(text_data=_command("a", "kill_broker", '{"broker": NaN}'))
        nan, _ = await until(socket, "error")
        await socket.send_to(text_data=_command("b", "slow_broker", '{"broker": 1, "delay_ms": -Infinity}'))
        infinite, _ = await until(socket, "error")
        await socket.send_to(text_data=_command("c", "kill_broker", '{"broker": 2}'))
        ack, _ = await until(socket, "ack")
        await socket.disconnect()
        return nan, infinite, ack

    nan, infinite, ack = run_async(scenario)

    # Refused by the frame reader (not JSON) or by the step's schema (naming the field): either way
    # the error says which number, and nothing reached the engine.
    assert nan["kafka_error"] == infinite["kafka_error"] == "INVALID_REQUEST"
    assert "NaN" in nan["message"] and "Infinity" in infinite["message"]
    assert ack["id"] == "c" and ack["warnings"] == []
    assert [c.command for c in LabCommand.objects.all()] == ["kill_broker"]


def test_a_commands_warnings_come_in_its_ack() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> dict:
        socket, _ = await opened(session.id, key)
        await socket.send_to(text_data=_command("t", "create_topic", '{"topic": "orders.eu_1"}'))
        ack, _ = await until(socket, "ack")
        await socket.disconnect()
        return ack

    ack = run_async(scenario)

    assert ack["id"] == "t" and len(ack["warnings"]) == 1
    assert "could collide" in ack["warnings"][0]


@pytest.mark.parametrize(("fields", "message"), [
    ({"seed": 2**64}, "cluster.seed must be a whole number from"),
    ({"brokers": 3.5}, "cluster.brokers must be a whole number from 1 to 9, not 3.5"),
    ({"config": {"offsets.topic.num.partitions": 3000}}, "offsets.topic.num.partitions: must be from 1 to 1000"),
    ({"config": {"offsets.topic.num.partitions": 65}}, "__consumer_offsets may have at most 64 partitions"),
    ({"config": {"log.retention.check.interval.ms": 0}}, "log.retention.check.interval.ms: must be at least 1"),
    ({"config": {"replica.high.watermark.checkpoint.interval.ms": 0}}, "must be at least 1 (the lab's minimum"),
    ({"config": {"segment.bytes": 3}}, "segment.bytes: must be at least 14"),
    ({"truncation": "sometimes"}, "cluster.truncation must be one of"),
])
def test_a_reset_with_a_bad_shape_is_one_error_and_nothing_changes(settings, fields: dict, message: str) -> None:
    """Issue 11, findings 2 and 6 and part of 3: `reset` with seed 2**64 overflowed the database's
    BIGINT in the journal writer's batch (losing other sessions' rows); offsets.topic.num.partitions
    3000 made 3,064 partitions against a cap of 64; a 0 ms checkpoint or retention-check interval
    hung the worker thread for good. Each is now refused at the edge, for that tab only."""
    settings.KAFKA_LAB_MAX_PARTITIONS = 64
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, dict]:
        socket, _ = await opened(session.id, key)
        await socket.send_json_to({"v": PROTOCOL_VERSION, "type": "reset", **fields})
        error, _ = await until(socket, "error")
        await socket.send_to(text_data=_command("c", "kill_broker", '{"broker": 2}'))
        ack, _ = await until(socket, "ack")
        await socket.disconnect()
        return error, ack

    error, ack = run_async(scenario)

    assert message in error["message"], error["message"]
    assert ack["id"] == "c" and ack["command"]["index"] == 0   # the same generation goes on
    session.refresh_from_db()
    assert (session.generation, session.seed, session.brokers, session.config) == (1, 3, 3, {})


@pytest.mark.parametrize(("cluster", "message"), [
    ({"brokers": 3, "config": {"offsets.topic.num.partitions": 3000}}, "must be from 1 to 1000"),
    ({"brokers": 3, "config": {"offsets.topic.num.partitions": 100}}, "at most 64 partitions"),
    ({"brokers": 3, "config": {"log.flush.offset.checkpoint.interval.ms": 0}}, "must be at least 1"),
])
def test_an_uploaded_scenario_with_a_bad_cluster_is_refused_before_the_reset(settings, cluster: dict,
                                                                            message: str) -> None:
    settings.KAFKA_LAB_MAX_PARTITIONS = 64
    key = visitor()
    session = lab_session(key)
    scenario_json = {"name": "mine", "cluster": cluster, "steps": [{"run": {"ms": 10}}]}

    async def scenario() -> dict:
        socket, _ = await opened(session.id, key)
        await socket.send_json_to({"v": PROTOCOL_VERSION, "type": "load_scenario", "scenario": scenario_json})
        error, _ = await until(socket, "error")
        await socket.disconnect()
        return error

    error = run_async(scenario)

    assert message in error["message"], error["message"]
    session.refresh_from_db()
    assert session.generation == 1



@pytest.mark.parametrize(("fields", "message"), [
    ({"to": -1}, "rewind needs a step number >= 0, not -1"),
    ({"to": 2**64}, "Step 18446744073709551616 lies beyond this line of time"),
    ({"to": 0, "after_seq": -3}, "after_seq must be"),
    ({"to": 0, "commands": 1.5}, "'commands' must be a whole number, not 1.5"),
])
def test_a_rewind_outside_the_line_of_time_is_one_error(fields: dict, message: str) -> None:
    """Clock messages are checked before they move anything (these already passed before issue 11)."""
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, dict]:
        socket, _ = await opened(session.id, key)
        await socket.send_json_to({"v": PROTOCOL_VERSION, "type": "clock", "action": "rewind", "id": "r", **fields})
        error, _ = await until(socket, "error")
        await socket.send_to(text_data=_command("c", "kill_broker", '{"broker": 2}'))
        ack, _ = await until(socket, "ack")
        await socket.disconnect()
        return error, ack

    error, ack = run_async(scenario)

    assert message in error["message"] and error["id"] == "r"
    assert ack["id"] == "c"
