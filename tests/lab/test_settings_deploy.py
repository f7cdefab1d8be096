"""Production settings are one switch (KAFKA_LAB_PRODUCTION=true) and pass `check --deploy`; the
public development key is refused whenever DEBUG is off; a bad Host header never gets a debug page.

Settings are read once per process, so each case runs `manage.py` or a tiny script in a fresh
interpreter with its own environment and database.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PUBLIC_KEY = "django-insecure-kafka-lab-local-dev-only"
REAL_KEY = "k" * 20 + "9Zq$x!w@7Lm#Vb2Pn&Rt5Yu*Io0As%Df"


def _run(tmp_path: Path, args: list[str], **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_LAB_", "DJANGO_"))}
    base.update(KAFKA_LAB_DB=str(tmp_path / "db.sqlite3"), KAFKA_LAB_DATA_DIR=str(tmp_path / "var" / "labs"),
                KAFKA_LAB_SECRET_KEY_FILE=str(tmp_path / "var" / "secret_key"), DJANGO_SETTINGS_MODULE="lab.settings")
    base.update(env)
    return subprocess.run([sys.executable, *args], cwd=REPO_ROOT, env=base, capture_output=True, text=True,
                          timeout=120)


def test_production_settings_pass_check_deploy_clean(tmp_path: Path) -> None:
    done = _run(tmp_path, ["manage.py", "check", "--deploy", "--fail-level", "DEBUG"], KAFKA_LAB_PRODUCTION="true",
                KAFKA_LAB_SECRET_KEY=REAL_KEY, KAFKA_LAB_ALLOWED_HOSTS="lab.example.org")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def test_production_refuses_to_start_without_a_real_secret_key_or_hosts(tmp_path: Path) -> None:
    no_key = _run(tmp_path, ["manage.py", "check"], KAFKA_LAB_PRODUCTION="true",
                  KAFKA_LAB_ALLOWED_HOSTS="lab.example.org")
    no_hosts = _run(tmp_path, ["manage.py", "check"], KAFKA_LAB_PRODUCTION="true", KAFKA_LAB_SECRET_KEY=REAL_KEY)

    assert no_key.returncode != 0 and "KAFKA_LAB_SECRET_KEY" in no_key.stderr
    assert no_hosts.returncode != 0 and "KAFKA_LAB_ALLOWED_HOSTS" in no_hosts.stderr


def test_the_public_development_key_is_refused_with_debug_off(tmp_path: Path) -> None:
    done = _run(tmp_path, ["manage.py", "check"], KAFKA_LAB_DEBUG="false", KAFKA_LAB_SECRET_KEY=PUBLIC_KEY)

    assert done.returncode != 0 and "public development key" in done.stderr


def test_without_configuration_the_lab_runs_on_its_own_private_key(tmp_path: Path) -> None:
    script = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG, settings.SECRET_KEY)"
    first = _run(tmp_path, ["-c", script])
    second = _run(tmp_path, ["-c", script])

    key_file = tmp_path / "var" / "secret_key"
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and PUBLIC_KEY not in first.stdout
    assert first.stdout.split()[0] == "False"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_a_bad_host_header_gets_a_plain_400_not_a_debug_page(tmp_path: Path) -> None:
    script = ("import django; django.setup(); from django.test import Client; "
              "r = Client(HTTP_HOST='evil.example').get('/'); "
              "print(r.status_code, b'Traceback' in r.content or b'DisallowedHost' in r.content)")
    done = _run(tmp_path, ["-c", script])

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["400", "False"]
