"""Chinese renders on a machine without CJK fonts (this test machine has none): the pages load the
lab's own cut-down Noto Sans CJK SC (static/fonts, lab/tools/cjk_font.py) before they paint. The
session page is in Chinese once the visitor switches the lab to 简体中文 (the header's switch)."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import create_topic, new_session

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


def switch_to_chinese(page: Page) -> None:
    """The header's language switch: back on the same page, now in Chinese, its socket connected."""
    url = page.url
    page.click("[data-language-switch] [data-language=zh-hans]")
    page.wait_for_function("() => document.documentElement.lang === 'zh-hans'")
    assert page.url == url
    expect(page.locator("[data-conn-text]")).to_have_text("已连接")


def test_chinese_text_has_its_font_on_a_session_page(page: Page) -> None:
    new_session(page, name="中文")
    switch_to_chinese(page)
    chinese, faces, covered = faces_loaded_for(page)
    assert "速度" in chinese and covered
    assert len(faces) == 2 and all(f[2] == "loaded" for f in faces)


# Every element showing Chinese in its own text asks for a font stack with the lab's CJK face in it:
# a stack without it (a monospace one, plotly's own) shows boxes on a machine without CJK fonts.
ELEMENTS_WITHOUT_THE_FACE = """() => {
  const cjk = /[\\u3000-\\u303f\\u4e00-\\u9fff\\uff00-\\uffef]/;
  const bad = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let checked = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!cjk.test(node.data) || !el || !el.getClientRects().length) continue;
    checked++;
    const family = getComputedStyle(el).fontFamily;
    if (!family.includes("Noto Sans CJK SC")) bad.add(`${el.tagName.toLowerCase()}.${el.className?.baseVal ?? el.className}: ${family}`);
  }
  return { checked, bad: Array.from(bad) };
}"""


def test_every_chinese_text_has_the_face_in_its_font_stack(page: Page) -> None:
    new_session(page, name="中文")
    switch_to_chinese(page)
    create_topic(page, "t", partitions=1, replication_factor=1)
    page.click("#tab-x-charts")
    page.locator("[data-chart=isr] .main-svg").first.wait_for(state="attached")
    page.wait_for_function("() => document.querySelector('[data-chart=rate] .gtitle')")
    found = page.evaluate(ELEMENTS_WITHOUT_THE_FACE)
    assert found["checked"] > 10, found
    assert found["bad"] == [], found["bad"]
    # Code and the truncation story use a monospace stack: it falls through to the face too.
    mono = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--mono')")
    assert "Noto Sans CJK SC" in mono


def test_chinese_a_visitor_types_has_a_font_too(page: Page) -> None:
    """A session named in everyday Chinese the lab's own text never uses: the second family, GB
    2312's first level (lab-cjk-common.woff2), covers it."""
    from lab.tools.cjk_font import common_characters, used_characters
    typed = "".join(sorted(common_characters() - used_characters())[:4])
    assert len(typed) == 4
    new_session(page, name=f"班 {typed}")
    heading = page.locator("h1", has_text=typed)
    expect(heading).to_be_visible()
    assert "Lab CJK Common" in heading.evaluate("(h) => getComputedStyle(h).fontFamily")
    faces = page.evaluate("""async (text) => (await document.fonts.load('16px "Lab CJK Common"', text))
        .map((f) => [f.family, f.status])""", typed)
    assert faces == [["Lab CJK Common", "loaded"]]
    assert page.evaluate("""(text) => document.fonts.check('16px "Lab CJK Common"', text)""", typed)
    # the lab's own face lacks them: without the second family they would be boxes
    from fontTools.ttLib import TTFont

    from lab.tools.cjk_font import OUTPUTS
    own = {chr(code) for code in TTFont(str(OUTPUTS["regular"]))["cmap"].getBestCmap()}
    assert not set(typed) & own
