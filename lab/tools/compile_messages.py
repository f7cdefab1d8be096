"""The UI's translations, compiled at install: locale/<lang>/LC_MESSAGES/<domain>.po → .mo.

`python -m lab.tools.compile_messages [--check] [PO_FILE ...]` (no files: every catalogue under
locale/) checks each catalogue and writes its .mo beside it (`make install` and `make install-test`
run it; the .mo files are not committed). Only the standard library: a fresh machine needs no GNU
gettext (`msgfmt`) and no package beyond Python.

A catalogue is refused — nothing written, exit status 1, each problem named with its file, line
and msgid — when an entry is fuzzy or untranslated (an empty msgstr, or fewer plural forms than
the header's Plural-Forms asks for), or when a translation does not carry its msgid's
placeholders (`%(name)s`, `%s`) or HTML tags, which would break the page or drop a value. `--check`
checks and writes nothing.

The .mo layout is GNU gettext's (the one Python's gettext module reads): a header of seven 32-bit
little-endian words — magic 0x950412de, revision 0, the number of strings N, the offsets of the
original and translated string tables, and an empty hash table (size 0) — then the two tables of
(length, offset) pairs, then the strings, NUL-terminated, originals sorted. A context is stored
as "context\\x04msgid"; plural forms are joined with NUL.
"""
from __future__ import annotations

import argparse
import ast
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCALE_DIR = REPO_ROOT / "locale"
MO_MAGIC = 0x950412DE
MO_HEADER = struct.Struct("<7I")      # magic, revision, N, originals table, translations table, hash size, hash table
MO_PAIR = struct.Struct("<2I")        # length, offset of one string
PLACEHOLDER = re.compile(r"%(?:\((\w+)\))?[#0 +-]*\d*(?:\.\d+)?([sdifr%])")
TAG = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")
NPLURALS = re.compile(r"nplurals\s*=\s*(\d+)")


class CatalogueError(Exception):
    """A catalogue that cannot be compiled; `problems` are "file:line: what" lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Entry:
    line: int
    msgid: str = ""
    msgid_plural: str | None = None
    msgctxt: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        original = self.msgid if self.msgid_plural is None else f"{self.msgid}\0{self.msgid_plural}"
        return original if self.msgctxt is None else f"{self.msgctxt}\x04{original}"

    @property
    def translation(self) -> str:
        return "\0".join(self.msgstr[i] for i in sorted(self.msgstr))


# -- reading ---------------------------------------------------------------------------------
def read_po(path: Path) -> list[Entry]:
    """The entries of a .po file (obsolete "#~" entries left out), in file order."""
    return parse_po(path.read_text(encoding="utf-8"), path)


def parse_po(text: str, path: Path | str = "<po>") -> list[Entry]:
    """The entries of a .po file's text. An entry starts at its first comment, msgctxt or msgid
    after the previous entry's msgid; a string on a line of its own continues the keyword above it."""
    entries: list[Entry] = []
    entry: Entry | None = None
    started = False              # the entry has its msgid: what comes next is a new entry's
    target: tuple[str, int | None] | None = None
    flags: set[str] = set()
    problems: list[str] = []

    def finish() -> None:
        nonlocal entry, started, target, flags
        if entry is not None:
            entries.append(entry)
        entry, started, target, flags = None, False, None, set()

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#"):
            if started:
                finish()
            if line.startswith("#,"):
                flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        if line.startswith('"'):
            if target is None or entry is None:
                problems.append(f"{path}:{number}: a string continued outside an entry")
            else:
                _append(entry, target, _unquote(line, path, number, problems))
            continue
        keyword, _, rest = line.partition(" ")
        plural_form = re.fullmatch(r"msgstr\[(\d+)\]", keyword)
        if keyword in ("msgctxt", "msgid"):
            if started:
                finish()
            if entry is None:
                entry = Entry(line=number, flags=flags)
        elif entry is None or not started:
            problems.append(f"{path}:{number}: {keyword} before its entry's msgid")
            continue
        if keyword == "msgctxt":
            entry.msgctxt, target = "", ("msgctxt", None)
        elif keyword == "msgid":
            entry.msgid, target, started = "", ("msgid", None), True
        elif keyword == "msgid_plural":
            entry.msgid_plural, target = "", ("msgid_plural", None)
        elif keyword == "msgstr" or plural_form:
            index = int(plural_form.group(1)) if plural_form else 0
            entry.msgstr[index], target = "", ("msgstr", index)
        else:
            problems.append(f"{path}:{number}: unknown keyword {keyword!r}")
            continue
        _append(entry, target, _unquote(rest.strip(), path, number, problems))
    finish()
    if problems:
        raise CatalogueError(problems)
    return entries


def _unquote(text: str, path: Path, number: int, problems: list[str]) -> str:
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        problems.append(f"{path}:{number}: expected a quoted string, got {text!r}")
        return ""
    try:
        return ast.literal_eval(text)     # the .po escapes (\", \\, \n, \t) are Python's
    except (SyntaxError, ValueError):
        problems.append(f"{path}:{number}: a string that does not parse: {text}")
        return ""


def _append(entry: Entry, target: tuple[str, int | None], text: str) -> None:
    name, index = target
    if name == "msgstr":
        entry.msgstr[index] += text
    else:
        setattr(entry, name, getattr(entry, name) + text)


# -- checking --------------------------------------------------------------------------------
def check(path: Path, entries: list[Entry]) -> list[str]:
    """What keeps this catalogue from compiling ([] when nothing does)."""
    header = next((e for e in entries if e.msgid == "" and e.msgctxt is None), None)
    if header is None:
        return [f"{path}: no header entry (msgid \"\")"]
    plural_forms = re.search(r"^Plural-Forms:(.*)$", header.msgstr.get(0, ""), re.M)
    nplurals = int(NPLURALS.search(plural_forms.group(1)).group(1)) if plural_forms and NPLURALS.search(plural_forms.group(1)) else None
    problems = []
    if "charset=UTF-8" not in header.msgstr.get(0, ""):
        problems.append(f"{path}:{header.line}: the header must say charset=UTF-8")
    seen: dict[str, int] = {}
    for e in entries:
        if e is header:
            continue
        where = f"{path}:{e.line}: {e.msgid[:60]!r}"
        if e.key in seen:
            problems.append(f"{where}: a duplicate of the entry on line {seen[e.key]}")
        seen[e.key] = e.line
        if "fuzzy" in e.flags:
            problems.append(f"{where}: fuzzy (check the translation, then remove the flag)")
        if e.msgid_plural is not None:
            if nplurals is None:
                problems.append(f"{where}: a plural entry, but the header has no Plural-Forms")
            elif sorted(e.msgstr) != list(range(nplurals)):
                problems.append(f"{where}: {nplurals} plural form(s) wanted, msgstr{sorted(e.msgstr)} given")
        if not e.msgstr or any(not text for text in e.msgstr.values()):
            problems.append(f"{where}: untranslated")
            continue
        problems += [f"{where}: {p}" for p in _mismatches(e)]
    return problems


def _placeholders(text: str) -> list[str]:
    return sorted(f"%({name})s" if name else f"%{kind}" for name, kind in PLACEHOLDER.findall(text) if kind != "%")


def _tags(text: str) -> list[str]:
    return sorted(m.group(0).split()[0].rstrip(">").lower() for m in TAG.finditer(text))


def _mismatches(e: Entry) -> list[str]:
    """A translation must keep its original's values and markup (each plural form its plural's)."""
    out = []
    python_format = "python-format" in e.flags or "javascript-format" in e.flags or PLACEHOLDER.search(e.msgid)
    for index, text in sorted(e.msgstr.items()):
        original = e.msgid if index == 0 and e.msgid_plural is None else (e.msgid_plural or e.msgid)
        if python_format:
            wanted, given = set(_placeholders(original)), set(_placeholders(text))
            if e.msgid_plural is not None:
                # One form may stand for both (Chinese has one): it keeps the plural's values, adds none.
                wanted = set(_placeholders(e.msgid_plural))
                if not wanted <= given <= wanted | set(_placeholders(e.msgid)):
                    out.append(f"msgstr[{index}] has placeholders {sorted(given)}, its msgid_plural {sorted(wanted)}")
            elif given != wanted:
                out.append(f"msgstr[{index}] has placeholders {sorted(given)}, its msgid {sorted(wanted)}")
        if _tags(original) != _tags(text):
            out.append(f"msgstr[{index}] has tags {_tags(text)}, its msgid {_tags(original)}")
    return out


# -- writing ---------------------------------------------------------------------------------
def mo_bytes(entries: list[Entry]) -> bytes:
    """The GNU .mo file of `entries` (checked: every one translated)."""
    pairs = sorted((e.key.encode("utf-8"), e.translation.encode("utf-8")) for e in entries)
    count = len(pairs)
    originals_at = MO_HEADER.size
    translations_at = originals_at + count * MO_PAIR.size
    strings_at = translations_at + count * MO_PAIR.size
    originals, translations, blob = [], [], bytearray()
    for table, index in ((originals, 0), (translations, 1)):
        for pair in pairs:
            table.append(MO_PAIR.pack(len(pair[index]), strings_at + len(blob)))
            blob += pair[index] + b"\0"
    header = MO_HEADER.pack(MO_MAGIC, 0, count, originals_at, translations_at, 0, strings_at)
    return header + b"".join(originals) + b"".join(translations) + bytes(blob)


def compile_catalogue(po: Path, write: bool = True) -> Path:
    """Check `po` and write its .mo beside it; CatalogueError names every problem."""
    entries = read_po(po)
    problems = check(po, entries)
    if problems:
        raise CatalogueError(problems)
    mo = po.with_suffix(".mo")
    if write:
        data = mo_bytes(entries)
        if not mo.exists() or mo.read_bytes() != data:
            temporary = mo.with_suffix(".mo.tmp")
            temporary.write_bytes(data)
            temporary.replace(mo)
    return mo


def catalogues(root: Path = LOCALE_DIR) -> list[Path]:
    return sorted(root.glob("*/LC_MESSAGES/*.po"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.tools.compile_messages", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="the .po files (default: every one under locale/)")
    parser.add_argument("--check", action="store_true", help="check only; write no .mo")
    args = parser.parse_args(argv)
    failed = False
    for po in args.files or catalogues():
        try:
            mo = compile_catalogue(po, write=not args.check)
        except CatalogueError as error:
            failed = True
            print(f"{po}: refused, {len(error.problems)} problem(s):", file=sys.stderr)
            for problem in error.problems:
                print(f"  {problem}", file=sys.stderr)
            continue
        print(f"{po}: ok" if args.check else f"{mo}: compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
