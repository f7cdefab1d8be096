"""Is each part the server needs reachable? For /healthz and the start-up log (lab.asgi).

Each check answers "ok" (or "in-memory" for a layer that needs nothing) or "error: <one line>";
`where_*` name a part's address without its password, for a log line an operator can act on.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import DatabaseError, connection

REDIS_TIMEOUT_S = 2.0


def one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


def check_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except (DatabaseError, RuntimeError) as exc:   # RuntimeError: no database in this test (pytest-django)
        connection.close()   # a broken connection must not be reused by the next check
        return f"error: {one_line(exc)}"
    return "ok"


def check_channel_layer() -> str:
    if not settings.REDIS_URL:
        return "in-memory"
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=REDIS_TIMEOUT_S,
                                  socket_timeout=REDIS_TIMEOUT_S)
    try:
        client.ping()
    except redis.RedisError as exc:
        return f"error: {one_line(exc)}"
    finally:
        client.close()
    return "ok"


def where_database() -> str:
    db: dict[str, Any] = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"SQLite at {db['NAME']}"
    vendor = db["ENGINE"].rsplit(".", 1)[-1]
    return f"{vendor} at {db.get('HOST') or 'localhost'}:{db.get('PORT') or 'default port'}/{db.get('NAME')}"


def where_redis() -> str:
    parts = urlsplit(settings.REDIS_URL)
    return f"Redis at {parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or ''}"
