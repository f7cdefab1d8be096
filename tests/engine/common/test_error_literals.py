"""The engine names Kafka's errors through `Errors`, never as bare strings.

`Errors` is a StrEnum valued by the name, so `"NONE"` and `Errors.NONE` compare, hash and JSON-encode alike
and nothing at run time tells a bare literal from the member: a typo ("NOT_LEADER_FOR_PARTITION") or a name
Kafka does not have would pass silently. `Errors.NOT_LEADER_FOR_PARTITION` fails at import instead, and mypy
sees it. This test reads engine/'s source (ast) and lists every string constant that equals one of Errors'
names, wherever it stands in code: a comparison, an assignment, a return, a call's argument, a set or dict.
Docstrings and f-strings' text are prose and `__all__` lists Python names (record_batch exports its compression
codec NONE), so neither counts; engine/common/errors.py itself is where the names are defined.
"""
from __future__ import annotations

import ast
from pathlib import Path

from engine.common.errors import Errors

ENGINE = Path(__file__).resolve().parents[3] / "engine"
NAMES = frozenset(error.value for error in Errors)
DEFINED_HERE = ENGINE / "common" / "errors.py"
# (path under engine/, the literal) -> why it may stay a bare string. Keep it small; every entry says why.
ALLOWED: dict[tuple[str, str], str] = {}


def _prose_and_exports(tree: ast.Module) -> set[int]:
    """ids of the constants that are not error values: docstrings, the names in `__all__`, f-strings' text."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                  for t in node.targets):
            skipped.update(id(sub) for sub in ast.walk(node.value))
        elif isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
    return skipped


def bare_error_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of every string constant in `source` that is one of Errors' names."""
    tree = ast.parse(source)
    skipped = _prose_and_exports(tree)
    found = [(node.lineno, node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and type(node.value) is str and node.value in NAMES
             and id(node) not in skipped]
    return sorted(found)


def test_the_scan_finds_a_bare_name_in_code_but_not_in_prose_or_exports() -> None:
    source = '''"""NONE of this is code."""
__all__ = ["NONE", "GZIP"]
NOT_LEADER = "NOT_LEADER_OR_FOLLOWER"


def answer(error):
    """Compares with "NONE"."""
    if error == "NONE":
        return f"NONE{error}"
    respond("REQUEST_TIMED_OUT", error=Errors.NONE)
    return {"UNKNOWN_MEMBER_ID": 1, "key": "Stable"}
'''
    assert bare_error_names(source) == [(3, "NOT_LEADER_OR_FOLLOWER"), (8, "NONE"), (10, "REQUEST_TIMED_OUT"),
                                        (11, "UNKNOWN_MEMBER_ID")]


def test_the_engine_names_no_kafka_error_as_a_bare_string() -> None:
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        if path == DEFINED_HERE:
            continue
        relative = path.relative_to(ENGINE).as_posix()
        for line, name in bare_error_names(path.read_text(encoding="utf-8")):
            if (relative, name) not in ALLOWED:
                found.append(f"engine/{relative}:{line}: {name!r} -> Errors.{name}")
    assert not found, "Kafka error names written as bare strings (use Errors.<NAME>):\n" + "\n".join(found)


def test_every_allowed_literal_is_still_there() -> None:
    """An allowance outlives its reason silently otherwise."""
    stale = [f"engine/{relative}: {name!r}" for relative, name in ALLOWED
             if name not in {n for _, n in bare_error_names((ENGINE / relative).read_text(encoding="utf-8"))}]
    assert not stale, "ALLOWED lists literals the engine no longer has:\n" + "\n".join(stale)
