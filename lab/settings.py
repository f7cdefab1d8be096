"""Django settings for Kafka Lab.

Defaults suit the local, self-hosted lab: `make run` needs no configuration (DEBUG off, a secret
key generated once into var/secret_key, mode 0600). KAFKA_LAB_PRODUCTION=true is the one switch
for a server others reach: DEBUG stays off, a real KAFKA_LAB_SECRET_KEY and KAFKA_LAB_ALLOWED_HOSTS
are required, cookies are secure, HTTPS is enforced (HSTS); `manage.py check --deploy` is clean.
Every knob below that reads the environment is listed in README.md ("Configuration").
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from lab.private_files import generated_key, private_dir, private_file

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


def _env_int_early(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r}: expected a whole number") from None


PUBLIC_DEVELOPMENT_KEY = "django-insecure-kafka-lab-local-dev-only"   # once the default: refused now

# One switch for a server others reach (README: "Running it for others").
PRODUCTION = _env_bool("KAFKA_LAB_PRODUCTION", False)
# DEBUG shows settings and tracebacks to whoever gets an error page (a bad Host header is enough):
# on only when asked for, never in production.
DEBUG = _env_bool("KAFKA_LAB_DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("KAFKA_LAB_PRODUCTION=true and KAFKA_LAB_DEBUG=true: production runs without DEBUG")
KAFKA_LAB_SECRET_KEY_FILE = Path(os.environ.get("KAFKA_LAB_SECRET_KEY_FILE", BASE_DIR / "var" / "secret_key"))


def _secret_key() -> str:
    key = (os.environ.get("KAFKA_LAB_SECRET_KEY", "").strip()
           or os.environ.get("DJANGO_SECRET_KEY", "").strip())   # the common name, as a fallback
    if key == PUBLIC_DEVELOPMENT_KEY and not DEBUG:
        raise ImproperlyConfigured("KAFKA_LAB_SECRET_KEY is the public development key: with DEBUG off, "
                                   "set a secret one (or unset it: the lab then generates its own)")
    if PRODUCTION and (len(key) < 50 or key.startswith("django-insecure")):
        raise ImproperlyConfigured("KAFKA_LAB_PRODUCTION=true needs KAFKA_LAB_SECRET_KEY: at least 50 random "
                                   "characters, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'")
    return key or generated_key(KAFKA_LAB_SECRET_KEY_FILE)


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = [*([] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]"]), *_env_list("KAFKA_LAB_ALLOWED_HOSTS"),
                 *_env_list("DJANGO_ALLOWED_HOSTS")]   # the common name too: both lists count
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("KAFKA_LAB_PRODUCTION=true needs KAFKA_LAB_ALLOWED_HOSTS (the server's host names)")
# Origins besides the page's own that may post forms and open WebSockets (a proxy's https origin).
CSRF_TRUSTED_ORIGINS = _env_list("KAFKA_LAB_TRUSTED_ORIGINS")

if PRODUCTION:
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = LANGUAGE_COOKIE_SECURE = True
    SESSION_COOKIE_HTTPONLY = True
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]            # a supervisor's probe over plain HTTP on loopback
    SECURE_HSTS_SECONDS = _env_int_early("KAFKA_LAB_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = True
    X_FRAME_OPTIONS = "DENY"
    if _env_bool("KAFKA_LAB_BEHIND_TLS_PROXY", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "daphne",  # first, so that `manage.py runserver` serves ASGI (WebSockets included)
    "django.contrib.admin",  # admins manage accounts, roles (groups) and cohorts
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "lab",
    "spark_exercises",  # the graded PySpark exercises: gradebook models, `manage.py grade`
    "lessons",  # the course that follows the notes: `manage.py lessons check|list`, the lesson player
    "classroom",  # accounts, roles, cohorts, the instructor's broadcast, progress (classroom.models)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After the session (it may read the language there), before CommonMiddleware (which may
    # redirect, and its redirect should be in the visitor's language too).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
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
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# The database: SQLite in a file unless DATABASE_URL names another (PostgreSQL for several worker
# processes: docs/deployment.md), e.g. postgres://kafka_lab:secret@127.0.0.1:5432/kafka_lab.
DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if DATABASE_URL:
    import dj_database_url

    try:
        DATABASES = {"default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=_env_int_early("KAFKA_LAB_DB_CONN_MAX_AGE_S", 60), conn_health_checks=True)}
    except ValueError as exc:   # an unknown scheme, a malformed URL: say which setting, not a traceback
        raise ImproperlyConfigured(f"DATABASE_URL: {exc}") from None
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # A server that does not answer: fail in seconds, not at the OS's TCP timeout (minutes).
        DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
    if os.environ.get("KAFKA_LAB_TEST_DB"):
        DATABASES["default"]["TEST"] = {"NAME": Path(os.environ["KAFKA_LAB_TEST_DB"]).stem}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": private_file(Path(os.environ.get("KAFKA_LAB_DB", BASE_DIR / "db.sqlite3"))),
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

# Channels: the in-memory layer works inside one process, which is all `make run` needs. REDIS_URL
# (or its older name KAFKA_LAB_REDIS_URL), e.g. redis://127.0.0.1:6379/0, shares a Redis layer
# between several worker processes — and turns placement on (docs/placement.md): a lab session's
# engine lives in one worker, sockets that reach another are tunnelled to it over the layer.
REDIS_URL = (os.environ.get("REDIS_URL", "").strip() or os.environ.get("KAFKA_LAB_REDIS_URL", "").strip())
KAFKA_LAB_REDIS_URL = REDIS_URL   # the older name, kept for code and configs that read it
if REDIS_URL:
    try:
        import channels_redis  # noqa: F401
    except ImportError as exc:
        raise ImproperlyConfigured(
            "REDIS_URL is set but channels_redis is not installed: "
            "pip install channels-redis, or unset REDIS_URL"
        ) from exc
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # capacity: messages one channel holds before a send raises ChannelFull (a tunnel's
            # relay that stopped reading: lab.tunnel counts it as a slow tab).
            # socket_timeout over channels_redis's 5 s blocking read: redis-py 8's default (5 s)
            # made every idle receive fail with "Timeout reading from …".
            # max_connections: redis-py's pool holds 100 by default, and every tunnelled socket's
            # relay keeps one waiting on its own channel (docs/placement.md): a class of watchers on
            # other workers ran one worker out of connections (MaxConnectionsError) at ~100.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15,
                                  "max_connections": _env_int_early("KAFKA_LAB_REDIS_MAX_CONNECTIONS", 2000)}],
                       "capacity": _env_int_early("KAFKA_LAB_CHANNEL_CAPACITY", 100),
                       "expiry": 60},
        }
    }
    # The cache holds counts every worker must share: failed sign-ins and join-code guesses
    # (classroom.throttle); in one process's memory each worker would allow its own share.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": "kafka-lab", "TIMEOUT": 3600}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# Placement (lab.workers, lab.placement, lab.tunnel): on with a shared layer, off with the in-memory one.
KAFKA_LAB_PLACEMENT = _env_bool("KAFKA_LAB_PLACEMENT", bool(REDIS_URL))
if KAFKA_LAB_PLACEMENT and not REDIS_URL:
    raise ImproperlyConfigured("KAFKA_LAB_PLACEMENT=true needs a shared channel layer: set REDIS_URL")
KAFKA_LAB_WORKER_NAME = os.environ.get("KAFKA_LAB_WORKER_NAME", "").strip()   # default: host-pid-random
KAFKA_LAB_WORKER_HEARTBEAT_S = float(_env_int_early("KAFKA_LAB_WORKER_HEARTBEAT_MS", 1000)) / 1000
KAFKA_LAB_WORKER_DEAD_AFTER_S = float(_env_int_early("KAFKA_LAB_WORKER_DEAD_AFTER_MS", 3000)) / 1000
# A command's `ack` waits for its journal row to commit (lab.registry), so a worker's crash loses
# nothing acknowledged; on by default with placement (another worker rebuilds from the journal).
KAFKA_LAB_DURABLE_ACKS = _env_bool("KAFKA_LAB_DURABLE_ACKS", KAFKA_LAB_PLACEMENT)

# Accounts (classroom/): anonymous use stays (make run needs no account); signing in or up keeps
# what the visitor made anonymously (lab.owners.adopt). Self-sign-up may be turned off: then only
# an invitation link (made by an instructor or admin, shown to them: no e-mail server is assumed)
# opens an account.
KAFKA_LAB_SELF_SIGNUP = _env_bool("KAFKA_LAB_SELF_SIGNUP", True)
LOGIN_URL = "classroom:login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The UI in two languages (README: "Two languages"): the visitor's choice (the header's switch,
# Django's set_language, kept in a cookie for a year), else the browser's Accept-Language, else
# English. The catalogues are locale/<lang>/LC_MESSAGES/{django,djangojs}.po, compiled to .mo
# files at install (`make install`: python -m lab.tools.compile_messages); the .mo files are not
# committed.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Daphne alone serves no static files. The lab is self-hosted, usually with no web server in
# front, so lab.asgi serves /static/ itself unless KAFKA_LAB_SERVE_STATIC=false (then put a
# web server in front that serves STATIC_ROOT after `manage.py collectstatic`).
KAFKA_LAB_SERVE_STATIC = _env_bool("KAFKA_LAB_SERVE_STATIC", True)

# Where lab sessions keep their clusters' data: one directory per session, one per broker inside.
KAFKA_LAB_DATA_DIR = private_dir(Path(os.environ.get("KAFKA_LAB_DATA_DIR", BASE_DIR / "var" / "labs")))


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

# The grader's time limits for uploaded notebooks (manage.py grade has its own, longer ones).
SPARK_EXERCISES_CELL_TIMEOUT_S = _env_int("KAFKA_LAB_GRADE_CELL_TIMEOUT_S", 120)
SPARK_EXERCISES_NOTEBOOK_TIMEOUT_S = _env_int("KAFKA_LAB_GRADE_NOTEBOOK_TIMEOUT_S", 600)
