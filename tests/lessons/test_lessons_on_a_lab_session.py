"""Every lesson played on a lab session's host, as the lesson page plays it (lessons/live.py:
the beat's steps queued on the session's clock, the answer computed from the host's cluster and
the events read back from the session's history), gives the answers the headless player gives
(lessons/player.py, what `lessons check` and the golden traces use). The engine is deterministic;
this checks that the two ways of playing a beat are the same way."""
from __future__ import annotations

from pathlib import Path

import pytest

from lab.host import SessionHost
from lab.scenario_play import shape_of_scenario
from lessons import catalog, live, player
from lessons.schema import Lesson

LESSONS = catalog.lessons()


def play_on_a_host(lesson: Lesson, root: Path) -> dict:
    answers, host = {}, None
    try:
        for beat in lesson.beats:
            scenario = lesson.scenarios[beat.scenario]
            if beat.starts_scenario or host is None:
                if host is None:
                    host = SessionHost(str(root), shape_of_scenario(scenario))
                host.stage_scenario(scenario, live.steps_before(lesson, beat.index)[1])
            beat_seq = host.cluster.bus.count
            host.queue_steps(scenario, beat.steps(scenario))
            host.run_script_now()
            assert not host.script_pending()
            assert not [n for n in host.take_notices() if not n.get("expected")], beat.id
            result = player.evaluate_beat(beat, live._world(host, beat_seq))
            assert result.problem is None, (beat.id, result.problem)
            if beat.do is not None:
                assert result.check_passed, beat.id
            if beat.question is not None:
                answers[beat.id] = result.answer
    finally:
        if host is not None:
            host.close()
    return answers


@pytest.mark.parametrize("lesson", LESSONS, ids=[f"{lesson.order:02d}-{lesson.slug}" for lesson in LESSONS])
def test_the_lesson_page_and_lessons_check_get_the_same_answers(lesson: Lesson, tmp_path: Path) -> None:
    headless = player.play(lesson, str(tmp_path / "headless")).answers()
    on_a_host = play_on_a_host(lesson, tmp_path / "host")
    assert on_a_host == headless
    assert len(headless) == len(lesson.questions)
