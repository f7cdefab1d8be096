"""Django settings for Kafka Lab.

Defaults suit the local, self-hosted lab: `make run` needs no configuration. Every knob below
that reads the environment is listed in README.md ("Configuration").
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    if value.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if value.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r}: expected true/false, 1/0, yes/no or on/off")


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


# The lab is a local learning tool, so DEBUG is on unless KAFKA_LAB_DEBUG=false.
DEBUG = _env_bool("KAFKA_LAB_DEBUG", True)
SECRET_KEY = os.environ.get("KAFKA_LAB_SECRET_KEY", "django-insecure-kafka-lab-local-dev-only")
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", *_env_list("KAFKA_LAB_ALLOWED_HOSTS")]

INSTALLED_APPS = [
    "daphne",  # first, so that `manage.py runserver` serves ASGI (WebSockets included)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "channels",
    "lab",
    "spark_exercises",  # the graded PySpark exercises: gradebook models, `manage.py grade`
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "lab.urls"
ASGI_APPLICATION = "lab.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": Path(os.environ.get("KAFKA_LAB_DB", BASE_DIR / "db.sqlite3")),
        # A file, not :memory:, so that ChannelsLiveServerTestCase's forked Daphne sees the test DB.
        # A file (Channels' live-server tests refuse in-memory SQLite); KAFKA_LAB_TEST_DB lets two
        # test runs on one machine keep apart.
        "TEST": {"NAME": Path(os.environ.get("KAFKA_LAB_TEST_DB", BASE_DIR / "test_db.sqlite3"))},
        # WAL: the journal writer's commits do not block readers (views, the read API), and with
        # synchronous=NORMAL a commit is an append to the WAL, not an fsync of the database; a
        # power cut may lose the last commits, a crash of the process loses nothing committed.
        "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channels: the in-memory layer works inside one process, which is all the embedded lab needs.
# Set KAFKA_LAB_REDIS_URL (e.g. redis://127.0.0.1:6379/0) to share groups between several
# processes; that needs `pip install channels-redis`, which is not a dependency of the lab.
KAFKA_LAB_REDIS_URL = os.environ.get("KAFKA_LAB_REDIS_URL", "")
if KAFKA_LAB_REDIS_URL:
    try:
        import channels_redis  # noqa: F401
    except ImportError as exc:
        raise ImproperlyConfigured(
            "KAFKA_LAB_REDIS_URL is set but channels_redis is not installed: "
            "pip install channels-redis, or unset KAFKA_LAB_REDIS_URL"
        ) from exc
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [KAFKA_LAB_REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Daphne alone serves no static files. The lab is self-hosted, usually with no web server in
# front, so lab.asgi serves /static/ itself unless KAFKA_LAB_SERVE_STATIC=false (then put a
# web server in front that serves STATIC_ROOT after `manage.py collectstatic`).
KAFKA_LAB_SERVE_STATIC = _env_bool("KAFKA_LAB_SERVE_STATIC", True)

# Where lab sessions keep their clusters' data: one directory per session, one per broker inside.
KAFKA_LAB_DATA_DIR = Path(os.environ.get("KAFKA_LAB_DATA_DIR", BASE_DIR / "var" / "labs"))


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r}: expected a whole number") from None


# Per-session limits (lab.limits): commands over them are refused with a clear error.
KAFKA_LAB_MAX_BROKERS = _env_int("KAFKA_LAB_MAX_BROKERS", 9)  # the engine's ceiling is 9 too
KAFKA_LAB_MAX_PARTITIONS = _env_int("KAFKA_LAB_MAX_PARTITIONS", 64)  # over all topics of a session
KAFKA_LAB_MAX_RECORDS_PER_S = _env_int("KAFKA_LAB_MAX_RECORDS_PER_S", 2000)  # produced, wall clock
KAFKA_LAB_MAX_DISK_BYTES = _env_int("KAFKA_LAB_MAX_DISK_BYTES", 256 * 1024 * 1024)  # one session's run dir
KAFKA_LAB_MAX_ACTIONS_PER_CALL = _env_int("KAFKA_LAB_MAX_ACTIONS_PER_CALL", 200_000)  # per clock move
# Sessions served by one process (lab.registry): a session nobody watches is paused at once and
# dropped from memory after this many seconds (its log stays in the DB; opening it replays it).
KAFKA_LAB_IDLE_HOST_TTL_S = _env_int("KAFKA_LAB_IDLE_HOST_TTL_S", 300)
KAFKA_LAB_MAX_HOSTS = _env_int("KAFKA_LAB_MAX_HOSTS", 200)  # sessions in memory; the longest idle go first
# The server's garbage collector: a young collection after this many allocations (lab/asgi.py;
# CPython's default is 700; 0 keeps the default).
KAFKA_LAB_GC_THRESHOLD0 = _env_int("KAFKA_LAB_GC_THRESHOLD0", 10_000)
# Frames to the browser (docs/lab-protocol.md, "Coalescing").
KAFKA_LAB_FRAME_INTERVAL_MS = _env_int("KAFKA_LAB_FRAME_INTERVAL_MS", 50)  # at most ~20 `events` a second
KAFKA_LAB_MAX_EVENTS_PER_FRAME = _env_int("KAFKA_LAB_MAX_EVENTS_PER_FRAME", 2000)  # ~40,000 events a second
KAFKA_LAB_STATE_INTERVAL_MS = _env_int("KAFKA_LAB_STATE_INTERVAL_MS", 1000)  # at most one coalescing `state` a second
