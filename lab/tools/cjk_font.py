"""The lab's Chinese text renders on machines without CJK fonts: a small web font of exactly the
characters the lab uses, served from static/ like every other asset.

`python -m lab.tools.cjk_font --regular NotoSansCJK-Regular.ttc --bold NotoSansCJK-Bold.ttc`
collects every Han character and CJK punctuation mark in the lab's text (templates, static JS,
lab/, lessons/, the exercises, the UI's translations, locale/**/*.po, and the built-in scenarios' Chinese notes) and writes static/fonts/lab-cjk-{regular,bold}.woff2: Noto Sans CJK SC (SIL
Open Font License, static/fonts/OFL.txt), cut down to those characters. The source fonts come
from Debian's `fonts-noto-cjk` (/usr/share/fonts/opentype/noto/); only the cut-down fonts are
committed. Run it again whenever new Chinese text is added: tests/lab/test_cjk_font.py fails
while a character the lab uses is missing from the font. static/css/fonts.css declares the font
as "Noto Sans CJK SC", the name lab.css already asks for, after any installed copy (`local()`).

What visitors type — a cohort's, a session's or a playlist's name in Chinese — is not in those
files, so `--common` also writes static/fonts/lab-cjk-common.woff2: the same face (regular only;
bold is synthesized) cut to the 3,755 characters of GB 2312's first level, the ones everyday
Chinese writes with, declared as a second family, "Lab CJK Common", after the first in lab.css.
A browser downloads it only for a page showing a Han character the first family lacks.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FONTS_DIR = REPO_ROOT / "static" / "fonts"
OUTPUTS = {"regular": FONTS_DIR / "lab-cjk-regular.woff2", "bold": FONTS_DIR / "lab-cjk-bold.woff2"}
COMMON_OUTPUT = FONTS_DIR / "lab-cjk-common.woff2"
SOURCES = ("templates", "static/js", "lab", "lessons", "spark_exercises/templates", "spark_exercises/exercises", "locale",
           "engine/scenarios/builtin")
TEXT_SUFFIXES = {".html", ".js", ".py", ".md", ".json", ".yaml", ".yml", ".txt", ".po"}
FACE = "Noto Sans CJK SC"
# Han ideographs, CJK symbols and punctuation, full-width forms: what the lab's font must cover.
CJK_RANGES = ((0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
              (0xFF00, 0xFFEF))


def is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in CJK_RANGES)


def used_characters(root: Path = REPO_ROOT) -> set[str]:
    """Every CJK character in the lab's own text files."""
    chars: set[str] = set()
    for source in SOURCES:
        for path in (root / source).rglob("*"):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "node_modules" not in path.parts:
                chars.update(c for c in path.read_text(encoding="utf-8", errors="ignore") if is_cjk(c))
    return chars


def common_characters() -> set[str]:
    """GB 2312's first level (rows 16–55: 3,755 Han characters, by frequency of use) with the
    full-width punctuation and CJK symbols of rows 1 and 3."""
    chars: set[str] = set()
    for row in [*range(0xB0, 0xD8), 0xA1, 0xA3]:
        for cell in range(0xA1, 0xFF):
            try:
                chars.add(bytes((row, cell)).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return {c for c in chars if is_cjk(c)}


def build(source: Path, output: Path, chars: set[str]) -> int:
    """Cut the collection's Simplified Chinese face down to `chars`; returns the file's size."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont
    font = _face(source, TTCollection, TTFont)
    options = subset.Options()
    options.flavor = "woff2"
    options.hinting = False
    options.desubroutinize = True
    options.name_IDs = ["*"]          # keep the name table: the license and the family's name
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(chars)))
    subsetter.subset(font)
    output.parent.mkdir(parents=True, exist_ok=True)
    font.flavor = "woff2"
    font.save(str(output))
    return output.stat().st_size


def _face(source: Path, collection_class, font_class):
    if source.suffix.lower() == ".ttc":
        for font in collection_class(str(source)).fonts:
            if font["name"].getDebugName(1) == FACE:
                return font
        raise SystemExit(f"{source} holds no {FACE!r} face")
    return font_class(str(source))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.tools.cjk_font", description=__doc__.splitlines()[0])
    parser.add_argument("--regular", type=Path, required=True, help="NotoSansCJK-Regular.ttc (fonts-noto-cjk)")
    parser.add_argument("--bold", type=Path, required=True, help="NotoSansCJK-Bold.ttc")
    parser.add_argument("--common", action="store_true",
                        help="also write lab-cjk-common.woff2 (GB 2312 level 1, for the text visitors type)")
    args = parser.parse_args(argv)
    chars = used_characters()
    for weight, source in (("regular", args.regular), ("bold", args.bold)):
        size = build(source, OUTPUTS[weight], chars)
        print(f"{OUTPUTS[weight].relative_to(REPO_ROOT)}: {len(chars)} characters, {size:,} bytes")
    if args.common:
        common = common_characters()
        size = build(args.regular, COMMON_OUTPUT, common)
        print(f"{COMMON_OUTPUT.relative_to(REPO_ROOT)}: {len(common)} characters, {size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
