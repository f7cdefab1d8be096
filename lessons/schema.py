"""A lesson folder, read and checked: `lessons/<NN>-<slug>/` holds the same three files each.

- `lesson.json`: what the lesson plays and asks (no prose);
- `en.md`, `zh.md`: the prose, one file per language, in the structure of lessons/text.py.

`lesson.json`:

    {"follows": [{"note": "001", "sections": ["2.2.3"]}],        the notes' sections it follows
     "rows": ["B40", "B41"],                                       rows of the coverage map it answers
     "scenario": "hw-truncation-story",                            a built-in scenario (the Scenario tab has it)
     "callouts": [{"id": "isr-head", "note": "001", "section": "2.2.3", "rows": ["B44"],
                   "verdict": "wrong", "since": null}],
     "beats": [
       {"id": "setup", "play": [0, 3]},                             scenario steps 0..3, inclusive
       {"id": "hw", "play": [4, 9], "callouts": ["hw-off-by-one"],
        "question": {"kind": "number", "answer": <query>, "expect": 4,
                     "hints": [{"when": 3, "hint": "off-by-one"}], "evidence": [<query>, ...]}},
       {"id": "kill", "do": {"check": <query giving true>, "replaces": [10, 10]}},
       {"id": "next", "scenario": "kip101-data-loss", "play": [0, 5]}
     ]}

A beat plays a range of its scenario's steps (the ranges of one scenario follow each other from
step 0), or asks the learner to act (`do`: the lab checks `check` against the engine after every
frame; `replaces` names the scenario steps the action stands for, which the player applies when
the learner skips ahead or asks to be shown — or `instead` lists such steps outside the scenario).
A beat with `scenario` starts that scenario afresh (a new cluster). A question is asked before
the beat's steps run; `answer` is a query (lessons/queries.py) run after they ran; `expect` is
the answer the lesson's own explanation assumes — `lessons check` fails when the engine
disagrees, the player never uses it. Kinds: `number`, `broker`, `choice` (`choices`: [{"id",
"value"}], the text in the prose), `list` (`items`: "number" or "text", `order`: "exact" or
"any"). `hints` name known wrong answers and the prose section that answers them.

Every error names the file, the beat and the field (LessonError). Pure Python: no Django.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from engine.scenarios.runner import STEP_META_KEYS, ScenarioError, builtin_names, load_scenario, validate
from engine.scenarios.schema import StepArgumentError, check_step
from lessons import queries, text

LESSONS_DIR = os.path.dirname(os.path.abspath(__file__))
FILES = ("lesson.json", "en.md", "zh.md")
LANGUAGES = ("en", "zh")
FOLDER = re.compile(r"^(\d{2})-([a-z0-9][a-z0-9-]{1,60})$")
ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,60}$")
NOTES = {"000": "A", "001": "B", "002": "C", "003": "D", "004": "E"}
ROW = re.compile(r"^[A-E]\d{1,2}$")
VERDICTS = ("wrong", "outdated", "simplified")
KINDS = ("number", "broker", "choice", "list")
LESSON_KEYS = {"follows", "rows", "scenario", "callouts", "beats"}
BEAT_KEYS = {"id", "scenario", "play", "do", "question", "callouts"}
QUESTION_KEYS = {"kind", "answer", "expect", "choices", "items", "order", "hints", "evidence"}
MAX_BEATS = 40
MAX_INSTEAD = 20


class LessonError(ValueError):
    """A lesson that cannot be played: the message starts with its file, beat and field."""

    def __init__(self, file: str, message: str, beat: str | None = None, field_name: str | None = None) -> None:
        where = file + (f": beat {beat!r}" if beat else "") + (f": {field_name}" if field_name else "")
        super().__init__(f"{where}: {message}")
        self.file, self.beat, self.field = file, beat, field_name


@dataclass(frozen=True)
class Choice:
    id: str
    value: Any


@dataclass(frozen=True)
class Hint:
    when: Any
    hint: str


@dataclass(frozen=True)
class Question:
    kind: str
    answer: dict
    expect: Any
    choices: tuple[Choice, ...] = ()
    items: str = "number"
    order: str = "exact"
    hints: tuple[Hint, ...] = ()
    evidence: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Do:
    check: dict
    instead: tuple[dict, ...]
    replaces: tuple[int, int] | None = None     # the scenario steps the learner's action stands for


@dataclass(frozen=True)
class Callout:
    id: str
    note: str
    section: str
    rows: tuple[str, ...]
    verdict: str
    since: str | None


@dataclass(frozen=True)
class Beat:
    id: str
    index: int
    scenario: str                      # the scenario this beat plays in
    starts_scenario: bool              # a fresh cluster of `scenario` before this beat
    play: tuple[int, int] | None
    do: Do | None
    question: Question | None
    callouts: tuple[str, ...]

    def steps(self, scenario: dict) -> list[tuple[int, dict]]:
        """(scenario step index, step) this beat plays; a `do` beat's `instead` steps get index -1."""
        span = self.play or (self.do.replaces if self.do is not None else None)
        if span is not None:
            return [(i, scenario["steps"][i]) for i in range(span[0], span[1] + 1)]
        return [(-1, step) for step in self.do.instead] if self.do is not None else []


@dataclass(frozen=True)
class Lesson:
    slug: str
    order: int
    folder: str
    follows: tuple[dict, ...]
    rows: tuple[str, ...]
    beats: tuple[Beat, ...]
    callouts: dict[str, Callout]
    prose: dict[str, text.Prose]
    scenarios: dict[str, dict] = field(repr=False)

    def title(self, language: str) -> str:
        return self.prose[language].get("title")

    def summary(self, language: str) -> str:
        return self.prose[language].get("summary")

    def beat(self, beat_id: str) -> Beat:
        for beat in self.beats:
            if beat.id == beat_id:
                return beat
        raise KeyError(beat_id)

    @property
    def questions(self) -> list[Beat]:
        return [b for b in self.beats if b.question is not None]

    @property
    def scenario_names(self) -> list[str]:
        return list(dict.fromkeys(b.scenario for b in self.beats))


# -- loading ----------------------------------------------------------------------------------
def lesson_folders(root: str = LESSONS_DIR) -> list[str]:
    return sorted(os.path.join(root, name) for name in os.listdir(root)
                  if FOLDER.match(name) and os.path.isdir(os.path.join(root, name)))


def load(folder: str) -> Lesson:
    """Read and check one lesson folder; LessonError names what is wrong."""
    name = os.path.basename(folder.rstrip("/"))
    rel = os.path.relpath(folder, os.path.dirname(LESSONS_DIR)) if folder.startswith(LESSONS_DIR) else folder
    match = FOLDER.match(name)
    if not match:
        raise LessonError(rel, "a lesson folder is named '<two digits>-<slug>' (lower case, digits, '-')")
    for file in FILES:
        if not os.path.isfile(os.path.join(folder, file)):
            raise LessonError(f"{rel}/{file}", "missing (every lesson folder has " + ", ".join(FILES) + ")")
    json_file = f"{rel}/lesson.json"
    try:
        with open(os.path.join(folder, "lesson.json"), encoding="utf-8") as f:
            data = json.load(f, parse_constant=_no_constant)
    except (json.JSONDecodeError, ValueError) as error:
        raise LessonError(json_file, f"not valid JSON: {error}") from None
    prose = {}
    for language in LANGUAGES:
        try:
            with open(os.path.join(folder, f"{language}.md"), encoding="utf-8") as f:
                prose[language] = text.parse(f.read())
        except text.ProseError as error:
            raise LessonError(f"{rel}/{language}.md", f"line {error.line}: {error}") from None
        except UnicodeDecodeError as error:
            raise LessonError(f"{rel}/{language}.md", f"not UTF-8: {error}") from None
    try:
        lesson = _lesson(data, json_file, match.group(2), int(match.group(1)), folder, prose)
    except (TypeError, AttributeError, KeyError) as error:   # a shape no check above foresaw
        raise LessonError(json_file, f"malformed: {type(error).__name__}: {error}") from None
    for language in LANGUAGES:
        _check_prose(lesson, prose[language], f"{rel}/{language}.md")
    return lesson


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a lesson may use")


def _lesson(data: Any, file: str, slug: str, order: int, folder: str, prose: dict) -> Lesson:
    if not isinstance(data, dict):
        raise LessonError(file, "must be a JSON object")
    unknown = set(data) - LESSON_KEYS
    if unknown:
        raise LessonError(file, f"unknown keys {sorted(unknown)} (known: {sorted(LESSON_KEYS)})")
    follows = _follows(data.get("follows"), file)
    rows = _rows(data.get("rows"), file, "rows")
    callouts = _callouts(data.get("callouts", []), file)
    scenarios: dict[str, dict] = {}
    first = _scenario(data.get("scenario"), file, None, "scenario", scenarios)
    raw_beats = data.get("beats")
    if not isinstance(raw_beats, list) or not 1 <= len(raw_beats) <= MAX_BEATS:
        raise LessonError(file, f"must be a list of 1 to {MAX_BEATS} beats", field_name="beats")
    beats, seen = [], set()
    current, next_step = first, 0
    for index, raw in enumerate(raw_beats):
        beat_id = raw.get("id") if isinstance(raw, dict) else None
        label = beat_id if isinstance(beat_id, str) else f"#{index}"
        if not isinstance(raw, dict):
            raise LessonError(file, "must be an object", label)
        unknown = set(raw) - BEAT_KEYS
        if unknown:
            raise LessonError(file, f"unknown keys {sorted(unknown)} (known: {sorted(BEAT_KEYS)})", label)
        if not isinstance(beat_id, str) or not ID.match(beat_id):
            raise LessonError(file, "must be lower-case letters, digits and '-'", label, "id")
        if beat_id in seen:
            raise LessonError(file, "appears twice", label, "id")
        seen.add(beat_id)
        starts = "scenario" in raw
        if starts:
            current, next_step = _scenario(raw["scenario"], file, label, "scenario", scenarios), 0
        play = _play(raw.get("play"), file, label, scenarios[current], next_step)
        if play is not None:
            next_step = play[1] + 1
        do = _do(raw.get("do"), file, label, scenarios[current], next_step)
        if do is not None and do.replaces is not None:
            next_step = do.replaces[1] + 1
        if play is not None and do is not None:
            raise LessonError(file, "a beat plays steps or asks the learner to act, not both", label, "do")
        question = _question(raw.get("question"), file, label)
        beat_callouts = tuple(_ids(raw.get("callouts", []), file, label, "callouts"))
        if len(set(beat_callouts)) != len(beat_callouts):
            raise LessonError(file, "lists a callout twice", label, "callouts")
        for callout in beat_callouts:
            if callout not in callouts:
                raise LessonError(file, f"{callout!r} is not one of the lesson's callouts", label, "callouts")
        beats.append(Beat(beat_id, index, current, starts or index == 0, play, do, question, beat_callouts))
    used = {c for b in beats for c in b.callouts}
    for callout in callouts:
        if callout not in used:
            raise LessonError(file, f"callout {callout!r} is shown by no beat", field_name="callouts")
    return Lesson(slug, order, folder, follows, rows, tuple(beats), callouts, prose, scenarios)


def _follows(value: Any, file: str) -> tuple[dict, ...]:
    if not isinstance(value, list) or not value:
        raise LessonError(file, "must list the note sections the lesson follows", field_name="follows")
    out = []
    for index, item in enumerate(value):
        where = f"follows[{index}]"
        if not isinstance(item, dict) or set(item) != {"note", "sections"}:
            raise LessonError(file, "must be {'note': '001', 'sections': [...]}", field_name=where)
        if item["note"] not in NOTES:
            raise LessonError(file, f"note must be one of {sorted(NOTES)}", field_name=f"{where}.note")
        sections = item["sections"]
        if not isinstance(sections, list) or not all(isinstance(s, str) and 0 < len(s) <= 80 for s in sections):
            raise LessonError(file, "must be a list of section names", field_name=f"{where}.sections")
        out.append({"note": item["note"], "sections": list(sections)})
    return tuple(out)


def _rows(value: Any, file: str, where: str, beat: str | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(r, str) and ROW.match(r) for r in value):
        raise LessonError(file, "must be a list of coverage-map rows such as 'B21'", beat, where)
    return tuple(value)


def _ids(value: Any, file: str, beat: str | None, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and ID.match(v) for v in value):
        raise LessonError(file, "must be a list of ids (lower-case letters, digits, '-')", beat, where)
    return value


def _callouts(value: Any, file: str) -> dict[str, Callout]:
    if not isinstance(value, list):
        raise LessonError(file, "must be a list", field_name="callouts")
    out: dict[str, Callout] = {}
    for index, item in enumerate(value):
        where = f"callouts[{index}]"
        keys = {"id", "note", "section", "rows", "verdict", "since"}
        if not isinstance(item, dict) or set(item) - keys or not {"id", "note", "section", "rows", "verdict"} <= set(item):
            raise LessonError(file, f"must be an object with {sorted(keys)} ('since' optional)", field_name=where)
        if not isinstance(item["id"], str) or not ID.match(item["id"]) or item["id"] in out:
            raise LessonError(file, "must be a new id", field_name=f"{where}.id")
        if item["note"] not in NOTES:
            raise LessonError(file, f"must be one of {sorted(NOTES)}", field_name=f"{where}.note")
        if not isinstance(item["section"], str) or not item["section"]:
            raise LessonError(file, "must name the note's section", field_name=f"{where}.section")
        if item["verdict"] not in VERDICTS:
            raise LessonError(file, f"must be one of {', '.join(VERDICTS)}", field_name=f"{where}.verdict")
        since = item.get("since")
        if since is not None and not (isinstance(since, str) and 0 < len(since) <= 80):
            raise LessonError(file, "must be a version/KIP text or null", field_name=f"{where}.since")
        rows = _rows(item["rows"], file, f"{where}.rows")
        out[item["id"]] = Callout(item["id"], item["note"], item["section"], rows, item["verdict"], since)
    return out


def _scenario(value: Any, file: str, beat: str | None, where: str, scenarios: dict[str, dict]) -> str:
    if not isinstance(value, str) or value not in builtin_names():
        raise LessonError(file, f"must name a built-in scenario (engine/scenarios/builtin), not {value!r}",
                          beat, where)
    if value not in scenarios:
        try:
            scenario = load_scenario(value)
            validate(scenario)
        except ScenarioError as error:
            raise LessonError(file, f"scenario {value!r} is broken: {error}", beat, where) from None
        scenarios[value] = scenario
    return value


def _play(value: Any, file: str, beat: str, scenario: dict, next_step: int,
          where: str = "play") -> tuple[int, int] | None:
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise LessonError(file, "must be [first step, last step]", beat, where)
    first, last = value
    if first != next_step:
        raise LessonError(file, f"must start at step {next_step} (the beats of a scenario play its steps in "
                                f"order, from 0)", beat, where)
    if not first <= last < len(scenario["steps"]):
        raise LessonError(file, f"steps {first}..{last} are not in {scenario['name']!r} "
                                f"(steps 0..{len(scenario['steps']) - 1})", beat, where)
    return first, last


def _do(value: Any, file: str, beat: str, scenario: dict, next_step: int) -> Do | None:
    if value is None:
        return None
    if not isinstance(value, dict) or "check" not in value or len(set(value) & {"instead", "replaces"}) != 1 \
            or set(value) - {"check", "instead", "replaces"}:
        raise LessonError(file, "must be {'check': <query>, 'replaces': [first, last]} or {'check': <query>, "
                                "'instead': [steps]}", beat, "do")
    _query(value["check"], file, beat, "do.check")
    if "replaces" in value:
        try:
            first, last = _play(value["replaces"], file, beat, scenario, next_step, "do.replaces") or (-1, -1)
        except LessonError:
            raise
        if first < 0:
            raise LessonError(file, "must be [first step, last step]", beat, "do.replaces")
        return Do(value["check"], tuple(scenario["steps"][first:last + 1]), (first, last))
    instead = value["instead"]
    if not isinstance(instead, list) or not 1 <= len(instead) <= MAX_INSTEAD:
        raise LessonError(file, f"must be a list of 1 to {MAX_INSTEAD} scenario steps", beat, "do.instead")
    for index, step in enumerate(instead):
        commands = [k for k in step if k not in STEP_META_KEYS] if isinstance(step, dict) else []
        if len(commands) != 1:
            raise LessonError(file, "must be a scenario step with one command", beat, f"do.instead[{index}]")
        try:
            check_step(commands[0], step[commands[0]] or {})
        except (StepArgumentError, KeyError) as error:
            raise LessonError(file, str(error), beat, f"do.instead[{index}]") from None
    return Do(value["check"], tuple(instead))


def _query(value: Any, file: str, beat: str, where: str) -> dict:
    try:
        queries.check(value, where)
    except queries.QueryError as error:
        raise LessonError(file, str(error), beat) from None
    return value


def _question(value: Any, file: str, beat: str) -> Question | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise LessonError(file, "must be an object", beat, "question")
    unknown = set(value) - QUESTION_KEYS
    if unknown:
        raise LessonError(file, f"unknown keys {sorted(unknown)} (known: {sorted(QUESTION_KEYS)})", beat, "question")
    kind = value.get("kind")
    if kind not in KINDS:
        raise LessonError(file, f"must be one of {', '.join(KINDS)}", beat, "question.kind")
    answer = _query(value.get("answer"), file, beat, "question.answer")
    if "expect" not in value:
        raise LessonError(file, "must state the answer the lesson's explanation assumes", beat, "question.expect")
    _finite(value["expect"], file, beat, "question.expect")
    choices: list[Choice] = []
    if kind == "choice":
        raw = value.get("choices")
        if not isinstance(raw, list) or not 2 <= len(raw) <= 8:
            raise LessonError(file, "must be a list of 2 to 8 choices", beat, "question.choices")
        for index, item in enumerate(raw):
            if not isinstance(item, dict) or set(item) != {"id", "value"} or not isinstance(item["id"], str) \
                    or not ID.match(item["id"]):
                raise LessonError(file, "must be {'id': 'a', 'value': …}", beat, f"question.choices[{index}]")
            _finite(item["value"], file, beat, f"question.choices[{index}].value")
            choices.append(Choice(item["id"], item["value"]))
        if len({c.id for c in choices}) != len(choices) or len({json.dumps(c.value) for c in choices}) != len(choices):
            raise LessonError(file, "choice ids and values must differ", beat, "question.choices")
    elif "choices" in value:
        raise LessonError(file, "only choice questions have choices", beat, "question.choices")
    items, order = value.get("items", "number"), value.get("order", "exact")
    if items not in ("number", "text") or order not in ("exact", "any"):
        raise LessonError(file, "items is 'number' or 'text', order 'exact' or 'any'", beat, "question.items")
    hints = []
    if not isinstance(value.get("hints", []), list):
        raise LessonError(file, "must be a list of {'when', 'hint'}", beat, "question.hints")
    for index, item in enumerate(value.get("hints", [])):
        if not isinstance(item, dict) or set(item) != {"when", "hint"} or not ID.match(str(item["hint"])):
            raise LessonError(file, "must be {'when': <wrong answer>, 'hint': <id>}", beat, f"question.hints[{index}]")
        _finite(item["when"], file, beat, f"question.hints[{index}].when")
        hints.append(Hint(item["when"], item["hint"]))
    evidence = value.get("evidence", [])
    if not isinstance(evidence, list):
        raise LessonError(file, "must be a list of queries", beat, "question.evidence")
    for index, query in enumerate(evidence):
        _query(query, file, beat, f"question.evidence[{index}]")
    return Question(kind, answer, value["expect"], tuple(choices), items, order, tuple(hints), tuple(evidence))


def _finite(value: Any, file: str, beat: str, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise LessonError(file, "must be finite", beat, where)
    if isinstance(value, list):
        for item in value:
            _finite(item, file, beat, where)


def _check_prose(lesson: Lesson, prose: text.Prose, file: str) -> None:
    """Both languages hold every piece the lesson's structure needs, and nothing else."""
    if not prose.get("title") or not prose.get("summary"):
        raise LessonError(file, "needs '# <title>' and a summary paragraph under it")
    wanted = {"title", "summary"}
    for beat in lesson.beats:
        wanted.add(f"beat:{beat.id}")
        if beat.do is not None:
            wanted.add(f"{beat.id}/do")
        question = beat.question
        if question is not None:
            wanted |= {f"{beat.id}/question", f"{beat.id}/explain"}
            wanted |= {f"{beat.id}/choice:{c.id}" for c in question.choices}
            wanted |= {f"{beat.id}/hint:{h.hint}" for h in question.hints}
        for callout in beat.callouts:
            wanted |= {f"{beat.id}/notes-say:{callout}", f"{beat.id}/engine-shows:{callout}"}
    missing = sorted(k for k in wanted if not prose.get(k) and k != "title")
    if missing:
        first = missing[0]
        beat = first.split("/")[0].removeprefix("beat:") if first not in ("summary",) else None
        raise LessonError(file, f"missing or empty section {first!r}" + (f" (and {len(missing) - 1} more)"
                                                                          if len(missing) > 1 else ""), beat)
    extra = sorted(prose.keys() - wanted)
    if extra:
        raise LessonError(file, f"section {extra[0]!r} belongs to nothing in lesson.json")
