"""What a row must be before the journal writer sends it to the database.

The journal writer (lab.registry.JournalWriter) commits the writes of many sessions in one
transaction: one value a column refuses — NaN or Infinity in a JSON column (not JSON: SQLite's
JSON_VALID check and PostgreSQL's jsonb refuse it), an integer over the column's range (SQLite
raises OverflowError past 2**63-1), a text longer than its varchar, a NUL character PostgreSQL
cannot store — would roll back every session's rows of that batch. So each row is checked here
first, against its model's own fields: `problem_of(instance)` says what is wrong with it, or
None. The ranges are Django's portable ones (BaseDatabaseOperations.integer_field_ranges: what
every backend's column holds), not SQLite's looser 64-bit ones, so a row that passes here passes
on PostgreSQL too.
"""
from __future__ import annotations

import json
import math
from typing import Any

from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges
BIGINT = INTEGER_RANGES["BigIntegerField"]


def problem_of(instance: models.Model) -> str | None:
    """Why `instance` cannot be written as it is ("field args: NaN is not JSON"), or None."""
    for f in instance._meta.concrete_fields:
        if f.primary_key or getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            continue   # the database or Django's pre_save gives these
        problem = field_problem(f, getattr(instance, f.attname))
        if problem:
            return f"field {f.name}: {problem}"
    return None


def field_problem(f: models.Field, value: Any) -> str | None:
    if value is None:
        return None if f.null else "null in a column that takes no null"
    kind = f.get_internal_type()
    if kind in INTEGER_RANGES:
        return integer_problem(value, *INTEGER_RANGES[kind])
    if isinstance(f, models.JSONField):
        return json_problem(value)
    if isinstance(f, (models.CharField, models.TextField)):
        if not isinstance(value, str):
            return f"{type(value).__name__} where a string goes"
        if f.max_length is not None and len(value) > f.max_length:
            return f"{len(value)} characters, over the column's {f.max_length}"
        if "\x00" in value:
            return "a NUL character (PostgreSQL cannot store it)"
    return None


def integer_problem(value: Any, low: int, high: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{value!r} is not a whole number"
    if not low <= value <= high:
        return f"{value} is outside the column's range {low}..{high}"
    return None


def json_problem(value: Any) -> str | None:
    try:
        text = json.dumps(value, allow_nan=False)
    except ValueError:
        return f"{_non_finite(value)} is not JSON"
    except TypeError as error:
        return f"not JSON ({error})"
    if "\\u0000" in text:
        return "a NUL character (PostgreSQL's jsonb cannot store it)"
    return None


def _non_finite(value: Any) -> str:
    """The first NaN or Infinity inside `value`, as JavaScript writes it."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return "a number out of range"
