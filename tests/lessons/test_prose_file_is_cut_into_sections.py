"""A lesson's prose file (en.md, zh.md) is cut into keyed sections, and refused, naming its line,
when it breaks the fixed structure of lessons/text.py."""
from __future__ import annotations

import pytest

from lessons import text

GOOD = """\
# The title
The summary,
on two lines.

## beat: first
The first beat.

### question
What is 2 + 2?

### choice: a-four
Four.

### hint: off-by-one
Count again.

### explain
It is {answer}.

## beat: second
The second beat.

### do
Kill broker 1.

### notes-say: isr-head
The note says.

### engine-shows: isr-head
The engine shows.
"""


def refusal(source: str) -> text.ProseError:
    with pytest.raises(text.ProseError) as caught:
        text.parse(source)
    return caught.value


def test_a_well_formed_file_is_cut_into_its_keyed_sections() -> None:
    prose = text.parse(GOOD)
    assert prose.keys() == {
        "title", "summary", "beat:first", "first/question", "first/choice:a-four", "first/hint:off-by-one",
        "first/explain", "beat:second", "second/do", "second/notes-say:isr-head", "second/engine-shows:isr-head"}
    assert prose.get("title") == "The title"
    assert prose.get("summary") == "The summary,\non two lines."
    assert prose.get("first/question") == "What is 2 + 2?"
    assert prose.get("first/explain") == "It is {answer}."
    assert prose.get("second/engine-shows:isr-head") == "The engine shows."


def test_a_section_the_file_does_not_have_reads_as_empty() -> None:
    assert text.parse(GOOD).get("second/question") == ""


def test_a_file_that_starts_with_prose_instead_of_a_title_is_refused_at_that_line() -> None:
    error = refusal("\n\nSome words before any title.\n# Title\n")
    assert error.line == 3
    assert "# <title>" in str(error)


def test_an_empty_file_is_refused_for_its_missing_title() -> None:
    error = refusal("")
    assert "# <title>" in str(error)
    assert error.line == 1


def test_a_file_that_starts_with_a_beat_heading_is_refused_at_that_heading() -> None:
    error = refusal("\n\n## beat: first\nThe first beat.\n")
    assert error.line == 3


def test_a_level_two_heading_must_be_a_beat() -> None:
    error = refusal("# Title\nSummary.\n\n## Notes\nx\n")
    assert error.line == 4
    assert "'## Notes'" in str(error)


def test_a_beat_id_with_capitals_is_refused() -> None:
    error = refusal("# Title\nSummary.\n\n## beat: First\nx\n")
    assert error.line == 4


def test_an_unknown_sub_section_is_refused_with_its_line_and_the_known_kinds() -> None:
    error = refusal("# Title\nSummary.\n\n## beat: first\nx\n\n### x\ny\n")
    assert error.line == 7
    assert "'### x'" in str(error)
    assert "notes-say" in str(error)


def test_a_keyed_sub_section_without_its_id_is_refused() -> None:
    error = refusal("# Title\nSummary.\n\n## beat: first\nx\n\n### hint\ny\n")
    assert error.line == 7
    assert "needs ': <id>'" in str(error)


@pytest.mark.parametrize("kind", ["choice", "hint", "notes-say", "engine-shows"])
def test_every_keyed_kind_needs_its_id(kind: str) -> None:
    error = refusal(f"# Title\nSummary.\n\n## beat: first\nx\n\n### {kind}\ny\n")
    assert f"'### {kind}' needs" in str(error)


def test_an_unkeyed_sub_section_with_an_id_is_refused() -> None:
    error = refusal("# Title\nSummary.\n\n## beat: first\nx\n\n### question: q1\ny\n")
    assert error.line == 7
    assert "takes no ': <id>'" in str(error)


def test_a_sub_section_before_any_beat_is_refused() -> None:
    error = refusal("# Title\nSummary.\n\n### question\ny\n")
    assert error.line == 4
    assert "before any '## beat:'" in str(error)


def test_a_beat_that_appears_twice_is_refused_at_its_second_heading() -> None:
    error = refusal("# Title\nSummary.\n\n## beat: first\nx\n\n## beat: first\ny\n")
    assert error.line == 7
    assert "'beat:first' appears twice" in str(error)


def test_a_sub_section_that_appears_twice_in_one_beat_is_refused() -> None:
    error = refusal("# Title\nSummary.\n\n## beat: first\nx\n\n### hint: h\ny\n\n### hint: h\nz\n")
    assert error.line == 10
    assert "'first/hint:h' appears twice" in str(error)


def test_two_beats_may_each_have_the_same_sub_section() -> None:
    prose = text.parse("# Title\nS.\n\n## beat: a\nx\n### question\nq\n## beat: b\ny\n### question\nr\n")
    assert prose.get("a/question") == "q"
    assert prose.get("b/question") == "r"
