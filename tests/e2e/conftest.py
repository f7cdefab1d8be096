"""Fixtures for the browser tests: Debian's chromium driven by Playwright, one page per test at
1280×800, against the real Daphne of `daphne_server` (tests/conftest.py).

Screenshots: `shoot(name)` saves `<name>.png` under $KAFKA_LAB_SCREENSHOTS_DIR when it is set
(`KAFKA_LAB_SCREENSHOTS_DIR=docs/screenshots make test PYTEST_ARGS="tests/e2e"` refreshes the
README's pictures), else under the test's tmp dir, so a normal run never touches the repo.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
SHOT_HEIGHT = 2000   # the window's height while a panel (not the whole page) is shot


# Package scope: closed (and Playwright's event loop with it) once this worker leaves tests/e2e, so the
# tests it runs next see no running loop in their thread (asgiref refuses async_to_sync under one).
@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip(f"{CHROMIUM} is missing: `make chromium` installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class PageErrors(list):
    """Uncaught exceptions and console errors of a page, as text."""


@pytest.fixture
def page(browser, daphne_server: str) -> Iterator[object]:
    context = browser.new_context(viewport=VIEWPORT, base_url=daphne_server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors = PageErrors()
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.on("console", lambda message: errors.append(f"console: {message.text}") if message.type == "error" else None)
    page.errors = errors
    # The lab asks before it replaces a session or cuts off the timeline's future (confirm()):
    # accepted unless a test says otherwise (`page.answer_dialogs = False`); `page.dialogs` keeps what was asked.
    page.dialogs, page.answer_dialogs = [], True

    def answer(dialog) -> None:
        page.dialogs.append(dialog.message)
        dialog.accept() if page.answer_dialogs else dialog.dismiss()
    page.on("dialog", answer)
    yield page
    context.close()


@pytest.fixture
def shoot(page, tmp_path: Path) -> Callable[..., Path]:
    target = Path(os.environ.get("KAFKA_LAB_SCREENSHOTS_DIR") or tmp_path / "screenshots")
    target.mkdir(parents=True, exist_ok=True)

    def save(name: str, locator=None, from_top: bool = False, **options) -> Path:
        path = target / f"{name}.png"
        if locator is None:
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(400)   # let transitions and entry animations settle
            page.screenshot(path=str(path), animations="disabled", **options)
            return path
        # A panel of the one-screen layout scrolls inside a box sized to the window: shot at
        # 1280×800 it shows a slice under its sticky tabs. A taller window lets it show whole.
        size = page.viewport_size
        page.set_viewport_size({"width": VIEWPORT["width"], "height": SHOT_HEIGHT})
        try:
            if from_top:   # the panel's own scroll box back at its start
                locator.evaluate("el => el.querySelectorAll('*').forEach((c) => { if (c.scrollTop) c.scrollTop = 0; })")
            page.wait_for_timeout(400)
            locator.screenshot(path=str(path), animations="disabled", **options)
        finally:
            page.set_viewport_size(size)
        return path

    return save
