"""`<id:name>` in the classroom's URLs: a database id — digits that fit a 64-bit primary key.

Django's `<int:…>` takes any number of digits; a 40-digit id then reaches the database, where
SQLite raises OverflowError and PostgreSQL a DataError (a 500). Out of range, the route simply
does not match: a 404, like any id that names no row.
"""
from __future__ import annotations

MAX_ID = 2**63 - 1


class DatabaseId:
    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError(f"{value} is beyond any database id")   # Django: no match, 404
        return number

    def to_url(self, value: int) -> str:
        return str(int(value))
