"""Topic patterns from outside the process, matched in time linear in the topic name.

Kafka's `subscribe(Pattern)` and Spark's `subscribePattern` take a regular expression over topic
names, so the read API's `?pattern=` does too (`vie.*`, `orders|clicks`, `logs-[0-9]+`). Python's
`re` backtracks: `(a|aa)+b` against a name of 41 `a`s ran 21 s, holding the GIL — every session
of the server stood still — and each more character cost ×1.6. So a pattern from a URL is never
handed to `re` here. `re`'s own parser reads it (the same syntax, the same errors), and the parse
tree is run as a Thompson automaton: the set of states the name could be in, one character at a
time — at most (states × name length) steps, whatever the pattern; and a compiled pattern stops
with PatternError once it has visited MAX_WORK states over all the names it was asked about (a
second or so), so a server never spends more than that on one request's pattern.

Supported: literals, `.`, classes (`[a-z]`, `[^.]`, `\\d`, `\\w`, `\\s`), `|`, groups, `*`, `+`, `?`,
`{m,n}` (expanded; at most MAX_STATES states in all), `^` and `$`. The match is a full match, as
Kafka's is. Refused with PatternError: back-references, look-arounds, `\\b`, possessive and atomic
groups, and inline flags — what an automaton cannot run or what would change the meaning quietly.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typeshed describes re's parser under its older public names only (the same modules)
    import sre_constants as _sre
    import sre_parse as _sre_parse
else:
    try:  # Python 3.11+ (re's parser), with the older name before it
        from re import _constants as _sre
        from re import _parser as _sre_parse
    except ImportError:  # pragma: no cover
        import sre_constants as _sre
        import sre_parse as _sre_parse

MAX_PATTERN_CHARS = 1_000    # as engine.scenarios.schema.MAX_PATTERN
MAX_STATES = 2_000           # after {m,n} are expanded: bounds the work per character of a name
MAX_WORK = 1_000_000         # states visited by one compiled pattern over all the names it is asked about


class PatternError(ValueError):
    """A pattern this matcher will not run; the message says why, in words."""


@dataclass
class _State:
    """One automaton state: a character test (`test` then `out`), a fork (`outs`, no test), an
    anchor (`anchor` is "start" or "end", then `out`), or the accepting state (`accept`)."""
    test: Callable[[str], bool] | None = None
    out: int = -1
    outs: list[int] = field(default_factory=list)
    anchor: str = ""
    accept: bool = False


class TopicPattern:
    """A compiled pattern: `fullmatch(name)` says whether the whole name matches."""

    def __init__(self, pattern: str, *, per_name: bool = False) -> None:
        """`per_name`: MAX_WORK bounds each name's match, not the pattern's whole life — for a
        consumer's subscription, matched against every topic at every metadata refresh of a long
        session (one name costs at most MAX_STATES × its length, 249 characters at most)."""
        if not isinstance(pattern, str):
            raise PatternError(f"A pattern is text, not {pattern!r}")
        if len(pattern) > MAX_PATTERN_CHARS:
            raise PatternError(f"A pattern may be at most {MAX_PATTERN_CHARS} characters, not {len(pattern)}")
        try:
            parsed = _sre_parse.parse(pattern)
        except re.error as error:
            raise PatternError(f"Not a valid pattern {pattern!r}: {error}") from None
        if parsed.state.flags & ~(_sre.SRE_FLAG_UNICODE):
            raise PatternError(f"Pattern {pattern!r}: inline flags such as (?i) are not supported here")
        self.pattern = pattern
        self.per_name = per_name
        self.work = 0
        self._states: list[_State] = []
        accept = self._add(_State(accept=True))
        self.start = self._sequence(list(parsed.data), accept)

    def fullmatch(self, name: str) -> bool:
        if self.per_name:
            self.work = 0
        current = self._closure({self.start}, 0, len(name))
        for position, char in enumerate(name):
            moved = {self._states[s].out for s in current if (test := self._states[s].test) is not None
                     and test(char)}
            current = self._closure(moved, position + 1, len(name))
            if not current:
                return False
            self.work += len(current)
            if self.work > MAX_WORK:
                raise PatternError(f"Pattern {self.pattern!r} costs too much to match against these topic "
                                   f"names (over {MAX_WORK} automaton steps): make it simpler")
        return any(self._states[s].accept for s in current)

    # -- running --------------------------------------------------------------------------------
    def _closure(self, states: set[int], position: int, length: int) -> set[int]:
        """`states` and every state reachable from them without reading a character."""
        seen, stack = set(), list(states)
        while stack:
            index = stack.pop()
            if index in seen:
                continue
            seen.add(index)
            state = self._states[index]
            if state.outs:
                stack.extend(state.outs)
            elif state.anchor == "start" and position == 0 or state.anchor == "end" and position == length:
                stack.append(state.out)
        return seen

    # -- building (continuation style: each piece is built in front of what follows it) --------
    def _add(self, state: _State) -> int:
        if len(self._states) >= MAX_STATES:
            raise PatternError(f"Pattern {self.pattern!r} is too big (over {MAX_STATES} states once its "
                               f"repetitions are written out)")
        self._states.append(state)
        return len(self._states) - 1

    def _sequence(self, items: list, follow: int) -> int:
        for op, av in reversed(items):
            follow = self._item(op, av, follow)
        return follow

    def _item(self, op, av, follow: int) -> int:
        if op is _sre.LITERAL:
            return self._add(_State(test=_literal(av), out=follow))
        if op is _sre.NOT_LITERAL:
            return self._add(_State(test=_not(_literal(av)), out=follow))
        if op is _sre.ANY:
            return self._add(_State(test=lambda c: c != "\n", out=follow))
        if op is _sre.IN:
            return self._add(_State(test=_class(av, self.pattern), out=follow))
        if op is _sre.BRANCH:
            return self._add(_State(outs=[self._sequence(list(branch), follow) for branch in av[1]]))
        if op is _sre.SUBPATTERN:
            _group, add_flags, del_flags, body = av
            if add_flags or del_flags:
                raise PatternError(f"Pattern {self.pattern!r}: inline flags are not supported here")
            return self._sequence(list(body), follow)
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):   # greedy or lazy: the same for a full match
            least, most, body = av
            return self._repeat(least, most, body, follow)
        if op is _sre.AT and av in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING):
            return self._add(_State(anchor="start", out=follow))
        if op is _sre.AT and av in (_sre.AT_END, _sre.AT_END_STRING):
            return self._add(_State(anchor="end", out=follow))
        raise PatternError(f"Pattern {self.pattern!r}: {str(op).lower()} is not supported here (back-references, "
                           f"look-arounds, word boundaries, possessive and atomic groups are not)")

    def _repeat(self, least: int, most: int, body, follow: int) -> int:
        items = list(body)
        if most == _sre.MAXREPEAT:           # body*: a fork that loops back through the body
            loop = self._add(_State())
            self._states[loop].outs = [self._sequence(items, loop), follow]
            start = loop
        else:                                # body{0,k}: k optional copies, each leading to the next
            start = follow
            for _ in range(most - least):
                start = self._add(_State(outs=[self._sequence(items, start), follow]))
        for _ in range(least):
            start = self._sequence(items, start)
        return start


def _literal(code: int) -> Callable[[str], bool]:
    char = chr(code)
    return lambda c: c == char


def _not(test: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda c: not test(c)


_CATEGORIES: dict[object, Callable[[str], bool]] = {
    _sre.CATEGORY_DIGIT: str.isdecimal,
    _sre.CATEGORY_NOT_DIGIT: lambda c: not c.isdecimal(),
    _sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    _sre.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
    _sre.CATEGORY_SPACE: str.isspace,
    _sre.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
}


def _class(items, pattern: str) -> Callable[[str], bool]:
    """A character class ([...], \\d, ...) as one test."""
    negate, chars, ranges, categories = False, set(), [], []
    for op, av in items:
        if op is _sre.NEGATE:
            negate = True
        elif op is _sre.LITERAL:
            chars.add(chr(av))
        elif op is _sre.RANGE:
            ranges.append(av)
        elif op is _sre.CATEGORY and av in _CATEGORIES:
            categories.append(_CATEGORIES[av])
        else:
            raise PatternError(f"Pattern {pattern!r}: {str(op).lower()} in a character class is not supported here")

    def test(c: str) -> bool:
        found = c in chars or any(lo <= ord(c) <= hi for lo, hi in ranges) or any(t(c) for t in categories)
        return found != negate
    return test


def compile_pattern(pattern: str) -> TopicPattern:
    return TopicPattern(pattern)
