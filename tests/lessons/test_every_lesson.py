"""Every lesson folder, played headless from a fresh cluster: `lessons check` has nothing to say,
and what the lesson shows has not moved since its golden trace was written.

The golden trace (tests/lessons/golden/<slug>.json) is a digest of the whole event sequence the
lesson's beats produce, and the engine's answer to each question. When an engine change alters
what a lesson shows, the failure names the lesson and the first question whose answer moved — or
says that no answer moved, so only the evidence and the animation changed. After checking the
lesson still reads right: `KAFKA_LAB_WRITE_GOLDEN=1 pytest tests/lessons/test_every_lesson.py`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lessons import catalog
from lessons.schema import lesson_folders

GOLDEN = Path(__file__).parent / "golden"
FOLDERS = lesson_folders()


def test_there_is_a_lesson_for_every_lesson_the_map_proposes() -> None:
    assert len(FOLDERS) >= 19


@pytest.mark.parametrize("folder", FOLDERS, ids=[os.path.basename(f) for f in FOLDERS])
def test_the_lesson_agrees_with_the_engine_and_its_golden_trace(folder: str) -> None:
    verdict = catalog.check_folder(folder)
    assert not verdict.problems, "\n".join(str(p) for p in verdict.problems)
    run = verdict.run
    assert run is not None
    now = {"digest": run.digest, "events": run.events, "answers": run.answers()}
    path = GOLDEN / f"{verdict.lesson}.json"
    if os.environ.get("KAFKA_LAB_WRITE_GOLDEN") == "1":
        path.write_text(json.dumps(now, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert path.exists(), f"{verdict.lesson}: no golden trace yet: run with KAFKA_LAB_WRITE_GOLDEN=1 to write it"
    golden = json.loads(path.read_text(encoding="utf-8"))
    if golden["digest"] == now["digest"]:
        assert golden["answers"] == now["answers"]
        return
    moved = [(beat, golden["answers"].get(beat), answer) for beat, answer in now["answers"].items()
             if golden["answers"].get(beat) != answer]
    moved += [(beat, answer, None) for beat, answer in golden["answers"].items() if beat not in now["answers"]]
    order = [b.id for b in run.lesson.beats]
    moved.sort(key=lambda m: order.index(m[0]) if m[0] in order else len(order))
    if moved:
        beat, before, after = moved[0]
        pytest.fail(f"lesson {verdict.lesson}: what it shows changed ({golden['events']} → {now['events']} events); "
                    f"the first question whose answer moved is beat {beat!r}: {before!r} → {after!r}")
    pytest.fail(f"lesson {verdict.lesson}: its events changed ({golden['events']} → {now['events']} events) but no "
                f"question's answer moved: check the lesson still reads right, then rewrite its golden trace")
