"""A visitor opens the lab's landing page at /."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from django.conf import settings
from django.test import Client

# Attributes through which a browser fetches something by itself (an <a href> is only a link).
_FETCHING_ATTRIBUTES = {"src", "href", "srcset", "poster", "data", "action", "formaction"}
_REMOTE_PREFIXES = ("http://", "https://", "//")


class _RemoteAssetFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if tag == "a" or name not in _FETCHING_ATTRIBUTES or value is None:
                continue
            if value.strip().lower().startswith(_REMOTE_PREFIXES):
                self.remote.append(f"<{tag} {name}={value!r}>")


def _landing_html(client: Client) -> str:
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def test_it_says_what_the_lab_is(client: Client) -> None:
    html = _landing_html(client)

    assert "<title>Kafka Lab</title>" in html
    assert "build a small Kafka cluster in your browser" in html
    for topic in ("log segments", "high watermark", "ISR", "leader election", "truncating",
                  "Consumer groups", "Lessons", "PySpark"):
        assert topic in html, topic
    assert 'lang="zh"' in html
    assert "coming soon" not in html   # the lessons and the exercises are there


def test_its_first_call_to_action_is_the_lessons(client: Client) -> None:
    html = _landing_html(client)

    first = re.search(r'<a class="button-link[^"]*" href="([^"]+)" data-cta="([a-z-]+)"', html)
    assert first and first.groups() == ("/lessons/", "lessons")


def test_it_links_the_exercises_with_their_count(client: Client) -> None:
    html = _landing_html(client)
    count = len([p for p in (Path(settings.BASE_DIR) / "spark_exercises" / "exercises").iterdir()
                 if p.is_dir() and re.match(r"^\d\d-", p.name)])

    assert count == 6
    link = re.search(r'<a class="badge ready" href="/exercises/" data-link="exercises" data-exercise-count="(\d+)">([^<]+)</a>', html)
    assert link and link.group(1) == str(count) and f"open the {count} exercises" in link.group(2)


def test_it_loads_no_asset_from_the_internet(client: Client) -> None:
    finder = _RemoteAssetFinder()
    finder.feed(_landing_html(client))

    assert finder.remote == []
    stylesheet = (Path(settings.BASE_DIR) / "static" / "css" / "lab.css").read_text()
    assert "http:" not in stylesheet and "https:" not in stylesheet and "@import" not in stylesheet


def test_it_asks_for_no_favicon(client: Client) -> None:
    assert '<link rel="icon" href="data:,">' in _landing_html(client)
