"""Chinese renders without a CJK font installed: the lab's own font covers every character its
text uses (regenerate it with `python -m lab.tools.cjk_font` after adding Chinese)."""
from __future__ import annotations

from fontTools.ttLib import TTFont

from lab.tools.cjk_font import OUTPUTS, used_characters


def test_the_lab_font_covers_every_chinese_character_the_lab_shows() -> None:
    used = used_characters()
    assert len(used) > 100   # the UI is bilingual: there is Chinese to cover
    for path in OUTPUTS.values():
        covered = {chr(code) for code in TTFont(str(path))["cmap"].getBestCmap()}
        missing = "".join(sorted(used - covered))
        assert not missing, f"{path.name} lacks {missing!r}: run python -m lab.tools.cjk_font (see its docstring)"


def test_pages_ask_for_the_font() -> None:
    from lab.tools.cjk_font import REPO_ROOT
    css = (REPO_ROOT / "static" / "css" / "fonts.css").read_text(encoding="utf-8")
    assert css.count('font-family: "Noto Sans CJK SC"') == 2 and "lab-cjk-regular.woff2" in css
    assert "fonts.css" in (REPO_ROOT / "templates" / "base.html").read_text(encoding="utf-8")


def test_the_common_font_covers_what_visitors_type() -> None:
    """Names visitors give (cohorts, sessions, playlists) in everyday Chinese: GB 2312's 3,755
    first-level characters, in a second family every stack lists after the lab's own."""
    from lab.tools.cjk_font import COMMON_OUTPUT, REPO_ROOT, common_characters
    common = common_characters()
    assert len(common) > 3755 and {"春", "季", "周", "班"} <= common
    covered = {chr(code) for code in TTFont(str(COMMON_OUTPUT))["cmap"].getBestCmap()}
    assert not "".join(sorted(common - covered))
    css = (REPO_ROOT / "static" / "css" / "fonts.css").read_text(encoding="utf-8")
    assert 'font-family: "Lab CJK Common"' in css and "lab-cjk-common.woff2" in css
    lab_css = (REPO_ROOT / "static" / "css" / "lab.css").read_text(encoding="utf-8")
    assert lab_css.count('"Noto Sans CJK SC", "Lab CJK Common"') == 1     # --mono
    assert '"PingFang SC", "Lab CJK Common", sans-serif' in lab_css          # the body's stack
