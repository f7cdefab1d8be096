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
