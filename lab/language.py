"""The active language as the lab's content files name it (lessons' `en.md`/`zh.md`, scenarios'
`note`/`note_zh`): "zh" when the page is in Chinese (Django's active language, zh-hans), else "en"."""
from __future__ import annotations

from django.utils.translation import get_language


def content_language() -> str:
    return "zh" if (get_language() or "en").lower().startswith("zh") else "en"


def in_page_language(english: str, chinese: str) -> str:
    """A text given in both languages, in the page's; the English when no Chinese was written."""
    return chinese if chinese and content_language() == "zh" else english
