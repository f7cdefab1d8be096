"""One place that reads a configuration value given under Kafka's name.

Configs reach the engine from Python code, JSON scenario files and web forms, so numbers and
booleans may come as text ("1024", "true"). Every config class (topic, broker, producer,
consumer) turns them into the field's type here, with the same clear error for bad input.
"""
from __future__ import annotations

from typing import Any


def field_kind(annotation: Any) -> str:
    """"int", "bool", "float" or "str" for a dataclass field's annotation (a string under
    `from __future__ import annotations`, e.g. "int" or "str | None")."""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).split("|")[0].strip()


def parse_config_value(key: str, raw: Any, kind: str, error: type[Exception]) -> Any:
    """`raw` as `kind`; raises `error` naming the key and the value when it cannot be."""
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise error(f"Invalid value {raw!r} for configuration {key}: expected true or false")
    if kind in ("int", "float"):
        if isinstance(raw, bool):
            raise error(f"Invalid value {raw!r} for configuration {key}: expected a number (an integer)")
        try:
            return int(raw) if kind == "int" else float(raw)
        except (TypeError, ValueError):
            expected = "a number (an integer)" if kind == "int" else "a number"
            raise error(f"Invalid value {raw!r} for configuration {key}: expected {expected}") from None
    return None if raw is None else str(raw)
