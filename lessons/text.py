"""A lesson's prose: one Markdown file per language (`en.md`, `zh.md`), cut into keyed sections.

The structure is fixed so that both languages hold the same pieces and a missing translation is
caught by the schema, not by a learner:

    # Title of the lesson
    One or two paragraphs: what the lesson covers (shown in the course index).

    ## beat: <beat id>
    The beat's prose.

    ### question            the question asked before the beat's steps run
    ### choice: <id>        the text of one choice (choice questions)
    ### explain             shown with the engine's answer; `{answer}` is replaced by that answer
    ### hint: <id>          shown after a known wrong answer (lesson.json says which answer)
    ### do                  what the learner must do in the lab (action beats)
    ### notes-say: <id>     a callout: what a note claims, in our words
    ### engine-shows: <id>  the same callout: what the engine does instead, and since when

Keys: "title", "summary", "beat:<id>", and "<beat id>/<kind>" or "<beat id>/<kind>:<id>" for the
sub-sections. Rendering is a deliberately tiny Markdown: paragraphs, "- " lists, `code`,
**bold**, *emphasis* and [text](https://…) links — everything else is escaped, so a lesson file
can never inject markup into the page.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

SUB_KINDS = ("question", "choice", "explain", "hint", "do", "notes-say", "engine-shows")
KEYED_KINDS = ("choice", "hint", "notes-say", "engine-shows")
_ID = r"[a-z0-9][a-z0-9-]{0,60}"
_BEAT = re.compile(rf"^## beat:\s*({_ID})\s*$")
_SUB = re.compile(rf"^### ([a-z-]+)(?::\s*({_ID}))?\s*$")


class ProseError(ValueError):
    """A prose file that does not follow the structure above; `line` is 1-based."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Prose:
    """The sections of one language's file, by key (see the module docstring)."""
    sections: dict[str, str]

    def get(self, key: str) -> str:
        return self.sections.get(key, "")

    def keys(self) -> set[str]:
        return set(self.sections)


def parse(text: str) -> Prose:
    """Cut a prose file into its sections; ProseError names the first line that breaks the form."""
    sections: dict[str, list[str]] = {}
    key: str | None = None
    beat: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not sections and line.strip() and not line.startswith("# "):
            raise ProseError("the file must start with '# <title>'", number)
        if line.startswith("# ") and not sections:
            sections["title"] = [line[2:].strip()]
            key = "summary"
            sections[key] = []
            continue
        if line.startswith("## "):
            match = _BEAT.match(line)
            if not match:
                raise ProseError(f"a level-2 heading must be '## beat: <id>', not {line!r}", number)
            beat = match.group(1)
            key = f"beat:{beat}"
        elif line.startswith("### "):
            match = _SUB.match(line)
            if not match or match.group(1) not in SUB_KINDS:
                raise ProseError(f"unknown sub-section {line!r} (known: {', '.join(SUB_KINDS)})", number)
            if beat is None:
                raise ProseError(f"{line!r} comes before any '## beat:' heading", number)
            kind, ident = match.group(1), match.group(2)
            if (kind in KEYED_KINDS) != bool(ident):
                raise ProseError(f"'### {kind}' {'needs' if kind in KEYED_KINDS else 'takes no'} ': <id>'", number)
            key = f"{beat}/{kind}:{ident}" if ident else f"{beat}/{kind}"
        elif key is None:
            if line.strip():
                raise ProseError("the file must start with '# <title>'", number)
            continue
        else:
            sections[key].append(line)
            continue
        if key in sections:
            raise ProseError(f"section {key!r} appears twice", number)
        sections[key] = []
    if "title" not in sections:
        raise ProseError("the file must start with '# <title>'", 1)
    return Prose({k: "\n".join(v).strip() for k, v in sections.items()})


# -- rendering ---------------------------------------------------------------------------------
_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\((https://[^\s)]+)\)")


def _inline(text: str) -> str:
    out, last = [], 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[last:match.start()]))
        code, bold, em, label, url = match.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif bold is not None:
            out.append(f"<strong>{html.escape(bold)}</strong>")
        elif em is not None:
            out.append(f"<em>{html.escape(em)}</em>")
        else:
            out.append(f'<a href="{html.escape(url)}" rel="noopener" target="_blank">{html.escape(label)}</a>')
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def render(text: str, answer: str | None = None) -> str:
    """Safe HTML for a section: paragraphs and "- " lists; `{answer}` becomes the engine's answer."""
    if answer is not None:
        text = text.replace("{answer}", answer)
    blocks = [b for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    out = []
    for block in blocks:
        lines = block.splitlines()
        if all(line.lstrip().startswith("- ") for line in lines):
            items = "".join(f"<li>{_inline(line.lstrip()[2:].strip())}</li>" for line in lines)
            out.append(f"<ul>{items}</ul>")
        else:
            out.append(f"<p>{_inline(_join(lines))}</p>")
    return "".join(out)


def _join(lines: list[str]) -> str:
    """Lines of one paragraph: a space between them, except between two CJK characters (Chinese
    puts none there)."""
    text = ""
    for line in (line.strip() for line in lines):
        if text and not (_is_cjk(text[-1]) and line and _is_cjk(line[0])):
            text += " "
        text += line
    return text


def _is_cjk(char: str) -> bool:
    return "\u2e80" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef" or "\u3000" <= char <= "\u303f"


def plain(text: str) -> str:
    """The section as one line of text (for `lessons list` and the index)."""
    return re.sub(r"\s+", " ", re.sub(r"[`*]", "", text)).strip()
