"""A learner's answer and the engine's, in one form so they compare: checked at the edge.

`given(question, raw)` turns what the browser sent into the question's kind — or AnswerError with
a one-line message the page shows beside the input (a wrong type is never "wrong", it is not an
answer yet). `engine(question, value)` does the same for a query's value (a choice question maps
the value to its choice id). `same` compares them (a list with order "any" as a multiset);
`hint_for` finds the hint for a known wrong answer.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from lessons.schema import Question

MAX_NUMBER = 2**63 - 1
MAX_ITEMS = 100
MAX_TEXT = 200
_SPLIT = re.compile(r"[,\s，、]+")


class AnswerError(ValueError):
    """Not an answer of the question's kind; `code` lets the page say it in the learner's language."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def given(question: Question, raw: Any) -> Any:
    """The learner's answer in the question's form, or AnswerError."""
    if question.kind in ("number", "broker"):
        return _whole(raw, "a whole number" if question.kind == "number" else "a broker id")
    if question.kind == "choice":
        ids = [c.id for c in question.choices]
        if not isinstance(raw, str) or raw not in ids:
            raise AnswerError(f"pick one of the choices ({', '.join(ids)})", "choice")
        return raw
    items = raw if isinstance(raw, list) else _SPLIT.split(raw.strip()) if isinstance(raw, str) else None
    if items is None:
        raise AnswerError("a list, e.g. 1, 2, 3", "list")
    items = [i for i in items if not (isinstance(i, str) and not i.strip())]
    if len(items) > MAX_ITEMS:
        raise AnswerError(f"at most {MAX_ITEMS} items", "too_many")
    if question.items == "number":
        return _ordered(question, [_whole(i, "whole numbers") for i in items])
    if not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in items):
        raise AnswerError("a list of names, e.g. m1, m2", "list")
    texts = [str(i).strip() for i in items]
    if any(len(t) > MAX_TEXT for t in texts):
        raise AnswerError(f"each item at most {MAX_TEXT} characters", "too_long")
    return _ordered(question, texts)


def engine(question: Question, value: Any) -> Any:
    """The query's value in the question's form; ValueError if it cannot be one (a lesson bug)."""
    if question.kind in ("number", "broker"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"the engine's answer {value!r} is not a whole number")
        return value
    if question.kind == "choice":
        for choice in question.choices:
            if _key(choice.value) == _key(value):
                return choice.id
        raise ValueError(f"the engine's answer {value!r} is none of the choices' values")
    if not isinstance(value, list):
        raise ValueError(f"the engine's answer {value!r} is not a list")
    if question.items == "number" and not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"the engine's answer {value!r} is not a list of whole numbers")
    return _ordered(question, [v if question.items == "number" else str(v) for v in value])


def expected(question: Question, value: Any) -> Any:
    """A literal from lesson.json (`expect`, a hint's `when`) in the question's form."""
    if question.kind == "choice":
        if value in [c.id for c in question.choices]:
            return value
        return engine(question, value)
    try:
        return given(question, value)
    except AnswerError as error:
        raise ValueError(f"{value!r} is not a {question.kind} answer: {error}") from None


def same(a: Any, b: Any) -> bool:
    return _key(a) == _key(b)


def hint_for(question: Question, answer: Any) -> str | None:
    for hint in question.hints:
        try:
            if same(expected(question, hint.when), answer):
                return hint.hint
        except ValueError:
            continue
    return None


def shown(value: Any) -> str:
    """An answer as the prose's `{answer}` shows it."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "—"
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _whole(raw: Any, what: str) -> int:
    if isinstance(raw, bool):
        raise AnswerError(f"{what}, not true/false", "number")
    if isinstance(raw, float):
        if not math.isfinite(raw) or raw != int(raw):
            raise AnswerError(f"{what}", "number")
        raw = int(raw)
    if isinstance(raw, str):
        text = raw.strip()
        if not re.fullmatch(r"-?\d{1,19}", text):
            raise AnswerError(f"{what}, e.g. 4", "number")
        raw = int(text)
    if not isinstance(raw, int) or not -1 <= raw <= MAX_NUMBER:
        raise AnswerError(f"{what} from -1 up", "number")
    return raw


def _ordered(question: Question, items: list) -> list:
    return sorted(items, key=_key) if question.order == "any" else items


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
