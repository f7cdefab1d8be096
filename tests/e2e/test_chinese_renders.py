"""Chinese renders on a machine without CJK fonts (this test machine has none): the pages load the
lab's own cut-down Noto Sans CJK SC (static/fonts, lab/tools/cjk_font.py) before they paint."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.e2e.helpers import new_session

pytestmark = pytest.mark.e2e

CHINESE_ON_PAGE = """() => {
  const text = document.body.innerText;
  return Array.from(new Set(Array.from(text).filter((c) => /[\\u3000-\\u303f\\u4e00-\\u9fff\\uff00-\\uffef]/.test(c)))).join("");
}"""


def faces_loaded_for(page: Page) -> tuple[str, list, bool]:
    """The page's Chinese, the faces that load for it in both weights, and whether they cover it."""
    chinese = page.evaluate(CHINESE_ON_PAGE)
    faces = page.evaluate("""async (text) => {
        const faces = [];
        for (const w of ['400', '700']) faces.push(...await document.fonts.load(`${w} 16px "Noto Sans CJK SC"`, text));
        return faces.map((f) => [f.family, f.weight, f.status]);
    }""", chinese)
    covered = page.evaluate("""(text) => ['400', '700'].every((w) =>
        document.fonts.check(`${w} 16px "Noto Sans CJK SC"`, text))""", chinese)
    return chinese, faces, covered


def test_chinese_text_has_its_font_on_the_landing_page(page: Page) -> None:
    page.goto("/")
    chinese, faces, covered = faces_loaded_for(page)
    assert chinese, "the page shows Chinese"
    assert len(faces) == 2 and all(f[0] == "Noto Sans CJK SC" and f[2] == "loaded" for f in faces), faces
    assert covered


def test_chinese_text_has_its_font_on_a_session_page(page: Page) -> None:
    new_session(page, name="中文")
    chinese, faces, covered = faces_loaded_for(page)
    assert "速度" in chinese and covered
    assert len(faces) == 2 and all(f[2] == "loaded" for f in faces)
