"""Text for the gradebook's CSV export that a spreadsheet shows as text, never runs as a formula.

Excel, LibreOffice and Google Sheets treat a cell starting with = + - @ (and, after trimming, a
tab or carriage return) as a formula: `=HYPERLINK(...)` as a learner name would be a live link
in the teacher's sheet. Such a cell gets a leading apostrophe, the spreadsheets' own "this is
text" mark (OWASP's advice for CSV injection).
"""
from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text
