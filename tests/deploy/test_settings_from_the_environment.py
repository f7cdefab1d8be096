"""Production settings come from the environment (docs/deployment.md): each case loads
lab.settings in a fresh interpreter, since settings load once per process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.servers import REPO_ROOT

PRINT_SETTINGS = """
import json, django
django.setup()
from django.conf import settings
db = settings.DATABASES["default"]
print(json.dumps({"engine": db["ENGINE"], "name": str(db["NAME"]), "host": db.get("HOST"), "port": db.get("PORT"),
                  "user": db.get("USER"), "options": db.get("OPTIONS", {}), "layer": settings.CHANNEL_LAYERS["default"],
                  "placement": settings.KAFKA_LAB_PLACEMENT, "durable_acks": settings.KAFKA_LAB_DURABLE_ACKS,
                  "redis_url": settings.REDIS_URL, "secret_key": settings.SECRET_KEY,
                  "allowed_hosts": settings.ALLOWED_HOSTS, "cache": settings.CACHES["default"]}))
"""
CLEARED = ("DATABASE_URL", "REDIS_URL", "KAFKA_LAB_REDIS_URL", "KAFKA_LAB_PLACEMENT", "KAFKA_LAB_DURABLE_ACKS",
           "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "KAFKA_LAB_SECRET_KEY", "KAFKA_LAB_ALLOWED_HOSTS",
           "KAFKA_LAB_TEST_DB", "KAFKA_LAB_PRODUCTION")


def _load(**env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in CLEARED}
    full.update(DJANGO_SETTINGS_MODULE="lab.settings", **env)
    return subprocess.run([sys.executable, "-c", PRINT_SETTINGS], cwd=REPO_ROOT, env=full, capture_output=True,
                          text=True, timeout=60)


def _settings(**env: str) -> dict[str, Any]:
    done = _load(**env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_with_nothing_set_it_is_sqlite_and_the_in_memory_layer(tmp_path) -> None:
    loaded = _settings(KAFKA_LAB_DB=str(tmp_path / "db.sqlite3"))
    assert loaded["engine"] == "django.db.backends.sqlite3" and loaded["name"] == str(tmp_path / "db.sqlite3")
    assert loaded["layer"] == {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    assert loaded["placement"] is False and loaded["durable_acks"] is False


def test_database_url_names_a_postgresql_server() -> None:
    loaded = _settings(DATABASE_URL="postgres://kafka_lab:s3cret@db.example:5433/kafka_lab")
    assert loaded["engine"] == "django.db.backends.postgresql"
    assert (loaded["host"], loaded["port"], loaded["name"], loaded["user"]) == ("db.example", 5433, "kafka_lab",
                                                                                 "kafka_lab")
    assert loaded["options"]["connect_timeout"] == 5


def test_a_database_url_of_an_unknown_kind_is_refused_naming_the_setting() -> None:
    done = _load(DATABASE_URL="nosuchdb://x/y")
    assert done.returncode != 0
    assert "DATABASE_URL" in done.stderr


def test_redis_url_shares_a_redis_layer_and_turns_placement_on() -> None:
    loaded = _settings(REDIS_URL="redis://cache.example:6380/2")
    assert loaded["layer"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert loaded["layer"]["CONFIG"]["hosts"][0]["address"] == "redis://cache.example:6380/2"
    assert loaded["placement"] is True and loaded["durable_acks"] is True
    # sign-in and join-code throttles (classroom.throttle) count in Redis, shared by every worker
    assert loaded["cache"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert loaded["cache"]["LOCATION"] == "redis://cache.example:6380/2"


def test_without_redis_the_cache_is_the_processs_own(tmp_path) -> None:
    loaded = _settings(KAFKA_LAB_DB=str(tmp_path / "db.sqlite3"))
    assert loaded["cache"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_the_older_name_kafka_lab_redis_url_still_works() -> None:
    loaded = _settings(KAFKA_LAB_REDIS_URL="redis://old.example:6379/0")
    assert loaded["redis_url"] == "redis://old.example:6379/0" and loaded["placement"] is True


def test_redis_url_wins_over_the_older_name() -> None:
    loaded = _settings(REDIS_URL="redis://new.example:6379/1", KAFKA_LAB_REDIS_URL="redis://old.example:6379/0")
    assert loaded["redis_url"] == "redis://new.example:6379/1"


def test_placement_may_be_turned_off_and_durable_acks_on_by_hand() -> None:
    loaded = _settings(REDIS_URL="redis://h:6379/0", KAFKA_LAB_PLACEMENT="false", KAFKA_LAB_DURABLE_ACKS="true")
    assert loaded["placement"] is False and loaded["durable_acks"] is True


def test_placement_without_a_shared_layer_is_refused() -> None:
    done = _load(KAFKA_LAB_PLACEMENT="true")
    assert done.returncode != 0 and "REDIS_URL" in done.stderr


def test_the_common_django_names_for_the_key_and_the_hosts_are_read_too() -> None:
    key = "k" * 60
    loaded = _settings(DJANGO_SECRET_KEY=key, DJANGO_ALLOWED_HOSTS="lab.example.org, other.example.org",
                       KAFKA_LAB_ALLOWED_HOSTS="first.example.org")
    assert loaded["secret_key"] == key
    assert loaded["allowed_hosts"][-3:] == ["first.example.org", "lab.example.org", "other.example.org"]


def test_the_kafka_lab_secret_key_wins_over_the_common_name() -> None:
    loaded = _settings(KAFKA_LAB_SECRET_KEY="a" * 60, DJANGO_SECRET_KEY="b" * 60)
    assert loaded["secret_key"] == "a" * 60
