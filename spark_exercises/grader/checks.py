"""The contract of an exercise's `checks.py`, and helpers to read a learner's answers.

An exercise's `checks.py` defines `QUESTIONS`, a list of `Question`. After the notebook has run,
the grader:
- pulls every variable a question names in `answers` out of the kernel, as plain values (a Spark
  DataFrame becomes a list of row dicts, a Row a dict, bytes a str; dict keys keep their types);
- gives the question 0 points, without calling its check, when one of them is undefined or None;
- otherwise calls `check(answers, lab)`, where `answers` maps each name to its plain value and
  `lab` (grader.lab.Lab) is the exercise's scenario played into a cluster: the truth.

`check` returns `(ok, feedback)`; `ok` earns all of the question's points. It raises `AnswerError`
when an answer has the wrong shape; the message is shown as the feedback. Feedback says what is
wrong — how many, which kind, where to look — and never what the answer is: checks.py is hidden.
Any other exception in a check is the checker's bug; the learner sees a neutral line and 0 points.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spark_exercises.grader.lab import Lab

Verdict = tuple[bool, str]
CORRECT = "correct"


class AnswerError(Exception):
    """An answer does not have the shape the exercise asks for (the message says which)."""


@dataclass(frozen=True)
class Question:
    id: str
    title: str
    points: int
    answers: tuple[str, ...]
    check: Callable[[dict[str, Any], Lab], Verdict]

    def __post_init__(self) -> None:
        if self.points <= 0:
            raise ValueError(f"question {self.id}: points must be positive")
        if not self.answers:
            raise ValueError(f"question {self.id}: name at least one answer variable")


# -- reading answers ---------------------------------------------------------------------------
def as_rows(value: Any, name: str, columns: Iterable[str]) -> list[dict]:
    """A list of row dicts with at least `columns` (from a DataFrame, a list of dicts or Rows)."""
    wanted = list(columns)
    if isinstance(value, dict):
        raise AnswerError(f"`{name}` should be rows (a DataFrame or a list of dicts) with columns "
                          f"{', '.join(wanted)}, not a dict")
    if not isinstance(value, list):
        raise AnswerError(f"`{name}` should be a DataFrame or a list of rows, not {type(value).__name__}")
    for row in value:
        if not isinstance(row, dict):
            raise AnswerError(f"every row of `{name}` should have named columns ({', '.join(wanted)})")
        missing = [c for c in wanted if c not in row]
        if missing:
            raise AnswerError(f"`{name}` has no column {', '.join(missing)} (it has: {', '.join(map(str, row))})")
    return value


def as_mapping(value: Any, name: str, *, key: str, value_column: str) -> dict:
    """A dict, or rows with columns `key` and `value_column`, as a dict (each key once)."""
    if isinstance(value, dict):
        return value
    rows = as_rows(value, name, [key, value_column])
    seen = Counter(_hashable(r[key]) for r in rows)
    twice = [k for k, n in seen.items() if n > 1]
    if twice:
        raise AnswerError(f"`{name}` has {len(twice)} {key} value(s) on more than one row; one row per {key}")
    return {_hashable(r[key]): r[value_column] for r in rows}


def as_list(value: Any, name: str) -> list:
    """A list (a set or tuple arrives as a list; one-column rows become their values)."""
    if not isinstance(value, list):
        raise AnswerError(f"`{name}` should be a list, not {type(value).__name__}")
    out = []
    for item in value:
        if isinstance(item, dict):
            if len(item) != 1:
                raise AnswerError(f"`{name}` should be a list of values, or rows with one column")
            item = next(iter(item.values()))
        out.append(item)
    return out


def as_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise AnswerError(f"`{name}` should be a whole number, not {type(value).__name__}")
    return int(value)


def int_keys(mapping: dict, name: str) -> dict[int, Any]:
    """Keys such as 0, "0" or 0.0 as ints (partitions, offsets)."""
    out = {}
    for k, v in mapping.items():
        try:
            out[int(k)] = v
        except (TypeError, ValueError):
            raise AnswerError(f"the keys of `{name}` should be numbers, found {k!r}") from None
    return out


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


# -- comparing without giving the answer away ----------------------------------------------------
def compare_sets(got: Iterable, expected: Iterable, what: str) -> Verdict:
    """(ok, feedback) for two collections that should hold the same items, each once."""
    got_list = [_hashable(g) for g in got]
    duplicates = sum(n - 1 for n in Counter(got_list).values() if n > 1)
    got_set, expected_set = set(got_list), {_hashable(e) for e in expected}
    missing, extra = len(expected_set - got_set), len(got_set - expected_set)
    if not (missing or extra or duplicates):
        return True, CORRECT
    problems = []
    if missing:
        problems.append(f"{missing} {what} missing")
    if extra:
        problems.append(f"{extra} {what} that should not be there")
    if duplicates:
        problems.append(f"{duplicates} listed more than once")
    return False, f"{len(got_list)} {what} given: " + "; ".join(problems)


def compare_mappings(got: dict, expected: dict, what: str, key_name: str) -> Verdict:
    """(ok, feedback) for two dicts: how many keys are missing, extra or wrong (never which values)."""
    got = {_hashable(k): v for k, v in got.items()}
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    wrong = [k for k in expected if k in got and got[k] != expected[k]]
    if not (missing or extra or wrong):
        return True, CORRECT
    problems = []
    if missing:
        problems.append(f"{len(missing)} {key_name}(s) missing")
    if extra:
        problems.append(f"{len(extra)} {key_name}(s) that should not be there")
    if wrong:
        problems.append(f"{len(wrong)} {key_name}(s) with a wrong {what}")
    return False, "; ".join(problems)


def as_tuples(value: Any, name: str, columns: Iterable[str]) -> list[tuple]:
    """Items as tuples in `columns` order: from rows with those columns, or from lists/tuples."""
    wanted = list(columns)
    if not isinstance(value, list):
        raise AnswerError(f"`{name}` should be a list (or a DataFrame) of ({', '.join(wanted)}), "
                          f"not {type(value).__name__}")
    out = []
    for item in value:
        if isinstance(item, dict):
            missing = [c for c in wanted if c not in item]
            if missing:
                raise AnswerError(f"`{name}` has no column {', '.join(missing)}")
            out.append(tuple(_hashable(item[c]) for c in wanted))
        elif isinstance(item, (list, tuple)) and len(item) == len(wanted):
            out.append(tuple(_hashable(v) for v in item))
        else:
            raise AnswerError(f"every item of `{name}` should be ({', '.join(wanted)})")
    return out
