"""A broadcast in Chromium: an anonymous watcher's page, opened by the watch link, shows the same
picture as the instructor's own lab page after a few steps — the same model (the one the engine
gives, /lab/<id>/model.json), no controls — and the instructor's pointer is marked on it."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from tests.classroom.broadcast_server import broadcast_daphne
from tests.e2e.conftest import VIEWPORT
from tests.e2e.test_page_is_exact import summary

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def classroom_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict]]:
    with broadcast_daphne(tmp_path_factory.mktemp("broadcast-daphne")) as served:
        yield served


def open_page(browser, base_url: str, path: str, cookie: str | None) -> Page:
    context = browser.new_context(viewport=VIEWPORT, base_url=base_url)
    if cookie:
        context.add_cookies([{"name": "sessionid", "value": cookie, "url": base_url}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(f"uncaught: {error}"))
    page.goto(path)
    page.wait_for_function("window.kafkaLab && window.kafkaLab.app.view.session")
    return page


def at_step(page: Page, step: int) -> None:
    page.wait_for_function("(s) => window.kafkaLab.app.view.step === s", arg=step)


def test_the_watchers_page_shows_the_instructors_picture(browser, classroom_server) -> None:
    base_url, made = classroom_server
    teacher = open_page(browser, base_url, f"/lab/{made['session']}/", made["cookie"])
    watcher = open_page(browser, base_url, f"/watch/{made['token']}/", None)

    assert teacher.evaluate("""() => window.kafkaLab.socket.command('create_topic',
        {topic: 't', partitions: 2, replication_factor: 3}).then(() => 'ok')""") == "ok"
    assert teacher.evaluate("""() => window.kafkaLab.socket.command('produce',
        {topic: 't', values: ['a', 'b', 'c', 'd', 'e']}).then(() => 'ok')""") == "ok"
    for _ in range(8):
        teacher.evaluate("window.kafkaLab.socket.clock('step')")
    teacher.wait_for_timeout(300)
    response = teacher.request.get(f"/lab/{made['session']}/model.json")
    assert response.ok
    expected = summary(response.json())

    at_step(teacher, expected["step"])
    at_step(watcher, expected["step"])
    assert watcher.evaluate("window.kafkaLab.model()") == teacher.evaluate("window.kafkaLab.model()") == expected
    rows = "() => Array.from(document.querySelectorAll('[data-partition-summary]')).map((r) => r.textContent)"
    watcher.wait_for_function(f"({rows})().length === 2")
    assert watcher.evaluate(rows) == teacher.evaluate(rows)
    assert watcher.locator(".controls").is_hidden() and watcher.locator("[data-clock=play]").is_hidden()
    assert "teacher" in watcher.locator("[data-watch-bar]").inner_text()

    teacher.evaluate("window.kafkaLab.socket.send({type: 'pointer', target: {kind: 'broker', broker: 2}})")
    watcher.wait_for_function("(document.getElementById('lab').dataset.pointer || '').includes('broker')")
    outline = watcher.evaluate("getComputedStyle(document.querySelector('#lab [data-broker-id=\"2\"]')).outlineStyle")
    assert outline == "solid"
    assert watcher.errors == [] and teacher.errors == []
