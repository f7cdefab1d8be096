"""The grade report: points and one feedback line per question, the notebook's error if any.

Text (what `manage.py grade` prints and the web page shows), last line `score: X/Y`:

    exercise 01-partition-routing · notebook mine.ipynb · 41.2 s
    error: code cell 4 raised KeyError: 'partition'
    [2/2] partition-counts  Records per partition: correct
    [0/3] misrouted  Records on the wrong partition: `misrouted` is not defined ...
    score: 2/5

JSON (`to_dict`): {"exercise", "notebook", "score", "max_score", "questions": [{"id", "title",
"points", "max_points", "ok", "feedback"}], "error": null | {"kind", "cell", "message", "headline",
"detail"}, "lab": {"url", "session", "served_by"}, "seconds", "cell_seconds": [per code cell run]}.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class QuestionResult:
    id: str
    title: str
    points: int
    max_points: int
    ok: bool
    feedback: str

    def line(self) -> str:
        return f"[{self.points}/{self.max_points}] {self.id}  {self.title}: {self.feedback}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "points": self.points, "max_points": self.max_points,
                "ok": self.ok, "feedback": self.feedback}


@dataclass
class Report:
    exercise: str
    notebook: str
    questions: list[QuestionResult] = field(default_factory=list)
    error: dict | None = None          # NotebookError.to_dict(), or {"kind": "invalid-notebook", ...}
    lab: dict = field(default_factory=dict)
    seconds: float = 0.0
    cell_seconds: list[float] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(q.points for q in self.questions)

    @property
    def max_score(self) -> int:
        return sum(q.max_points for q in self.questions)

    def to_text(self, *, with_detail: bool = False) -> str:
        lines = [f"exercise {self.exercise} · notebook {self.notebook} · {self.seconds:.1f} s"]
        if self.error:
            lines.append(f"error: {self.error['headline']}")
            if with_detail and self.error.get("detail"):
                lines += ["    " + line for line in self.error["detail"].splitlines()]
        lines += [q.line() for q in self.questions]
        lines.append(f"score: {self.score}/{self.max_score}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"exercise": self.exercise, "notebook": self.notebook, "score": self.score,
                "max_score": self.max_score, "questions": [q.to_dict() for q in self.questions],
                "error": self.error, "lab": self.lab, "seconds": self.seconds, "cell_seconds": self.cell_seconds}
