"""The classroom bench's servers: a fresh PostgreSQL database, Redis, and N Daphne workers on
free loopback ports, migrated once — the multi-worker deployment of docs/placement.md, without a
front proxy (the bench spreads its sockets over the workers' ports round robin, as nginx would).

Every worker gets the same secret key (a session cookie made by one is good on all), its own data
dir (as on separate machines: a session's run dir is rebuilt by replay wherever it lands) and the
per-session and per-visitor limits lifted the way `python -m lab.bench` lifts them: one visitor
opens hundreds of sessions here, by design. `Workers.kill(i)` is a `kill -9`.
"""
from __future__ import annotations

import http.cookiejar
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lab.bench import REPO_ROOT, Server, _NoRedirect
from lab.serve import free_port, wait_for_port

# What lab.bench.running_server lifts: the bench is one visitor with many busy sessions.
LIFTED_LIMITS = {"KAFKA_LAB_MAX_RECORDS_PER_S": "1000000", "KAFKA_LAB_MAX_DISK_BYTES": str(2**34),
                 "KAFKA_LAB_IDLE_HOST_TTL_S": "3600", "KAFKA_LAB_MAX_HOSTS": "1000",
                 "KAFKA_LAB_MAX_HOSTS_PER_VISITOR": "0", "KAFKA_LAB_CALLS_IN_FLIGHT_PER_VISITOR": "0",
                 "KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR": "0", "KAFKA_LAB_SESSIONS_CREATED_PER_MIN": "0"}
INSTRUCTOR = "bench-instructor"


# -- PostgreSQL and Redis ------------------------------------------------------------------------
@contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty PostgreSQL database's URL (lab.local_services when it is there), dropped after."""
    try:
        from lab.local_services import postgres_url
    except ImportError:
        postgres_url = None
    if postgres_url is not None:
        yield postgres_url()
        return
    import psycopg
    name = f"lab_bench_{uuid.uuid4().hex[:12]}"
    admin = "postgresql://postgres@127.0.0.1:5432/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_url() -> str:
    try:
        from lab.local_services import redis_url as local_redis_url
    except ImportError:
        return "redis://127.0.0.1:6379/9"
    return local_redis_url()


# -- the workers ---------------------------------------------------------------------------------
@dataclass
class Worker:
    index: int
    port: int
    proc: subprocess.Popen
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except FileNotFoundError:
            pass
        return 0.0

    def cpu_s(self) -> float:
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Workers:
    """N workers over one database and one Redis; a visitor is a cookie jar good on all of them."""
    env: dict[str, str]
    workers: list[Worker] = field(default_factory=list)

    def visitor(self, cookies: http.cookiejar.CookieJar | None = None) -> list[Server]:
        """One lab.bench.Server per worker, sharing a cookie jar: the same browser reaching each."""
        cookies = cookies if cookies is not None else http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies), _NoRedirect())
        return [Server(w.base_url, w.proc.pid, opener, cookies) for w in self.workers]

    def alive(self) -> list[Worker]:
        return [w for w in self.workers if w.alive]

    def rss_mb(self) -> float:
        return sum(w.rss_mb() for w in self.alive())

    def cpu_s(self) -> float:
        return sum(w.cpu_s() for w in self.alive())

    def placement(self, session_ids: list[str]) -> dict[str, int]:
        """Which worker (its index) hosts each of these sessions' engines now (lab_sessionplacement;
        a session not placed yet is left out)."""
        import psycopg
        with psycopg.connect(self.env["DATABASE_URL"]) as connection:
            rows = connection.execute("SELECT session_id, worker FROM lab_sessionplacement").fetchall()
        wanted = set(session_ids)
        return {str(sid): int(worker.removeprefix("w")) for sid, worker in rows
                if str(sid) in wanted and worker.removeprefix("w").isdigit()}

    def kill(self, index: int) -> None:
        """`kill -9`: no goodbye to Redis, no last journal flush."""
        worker = self.workers[index]
        os.kill(worker.proc.pid, signal.SIGKILL)
        worker.proc.wait()

    def manage(self, *args: str, stdin: str | None = None) -> str:
        completed = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO_ROOT, env=self.env, check=True,
                                   input=stdin, capture_output=True, text=True)
        return completed.stdout


def worker_env(work: Path, database_url: str | None, redis: str | None) -> dict[str, str]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lab.settings", KAFKA_LAB_DEBUG="false", PYTHONUNBUFFERED="1",
               KAFKA_LAB_SECRET_KEY=secrets.token_urlsafe(50), KAFKA_LAB_DB=str(work / "db.sqlite3"),
               KAFKA_LAB_DATA_DIR=str(work / "labs"), **LIFTED_LIMITS)
    if database_url:
        env["DATABASE_URL"] = database_url
    if redis:
        env["REDIS_URL"] = env["KAFKA_LAB_REDIS_URL"] = redis
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


@contextmanager
def running_workers(count: int, *, database_url: str | None, redis: str | None,
                    env_overrides: dict[str, str] | None = None) -> Iterator[Workers]:
    """`count` Daphne workers (the database migrated once first); all stopped at the end."""
    work = Path(tempfile.mkdtemp(prefix="lab-bench-classroom-"))
    env = {**worker_env(work, database_url, redis), **(env_overrides or {})}
    workers = Workers(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env,
                   check=True)
    logs = []
    try:
        for index in range(count):
            port = free_port()
            log_path = work / f"worker-{index}.log"
            logs.append(open(log_path, "wb"))
            # Named w<index>: lab_sessionplacement then says which of these ports hosts a session.
            worker_env_i = dict(env, KAFKA_LAB_DATA_DIR=str(work / f"labs-{index}"), KAFKA_LAB_WORKER_NAME=f"w{index}")
            proc = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                     "lab.asgi:application"], cwd=REPO_ROOT, env=worker_env_i,
                                    stdout=logs[-1], stderr=subprocess.STDOUT)
            workers.workers.append(Worker(index, port, proc, log_path))
        for worker in workers.workers:
            wait_for_port(worker.proc, worker.port, worker.log_path)
        yield workers
    except BaseException:
        for worker in workers.workers:   # what the workers said, for whoever reads the failure
            tail = worker.log_path.read_text(errors="replace").splitlines()[-40:]
            print(f"--- worker {worker.index} (port {worker.port}), its log's end:", *tail, sep="\n", file=sys.stderr)
        raise
    finally:
        for worker in workers.workers:
            if worker.alive:
                worker.proc.terminate()
        for worker in workers.workers:
            try:
                worker.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()
        for log in logs:
            log.close()
        if os.environ.get("KAFKA_LAB_BENCH_KEEP"):
            print(f"the workers' logs and data: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


# -- an instructor -------------------------------------------------------------------------------
_SIGN_IN = """
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.models import Permission
user, _ = get_user_model().objects.get_or_create(username=%(name)r)
user.user_permissions.add(Permission.objects.get(content_type__app_label="classroom", codename="broadcast_session"))
store = import_module(settings.SESSION_ENGINE).SessionStore()
store[SESSION_KEY] = user._meta.pk.value_to_string(user)
store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
store[HASH_SESSION_KEY] = user.get_session_auth_hash()
store.save()
print(settings.SESSION_COOKIE_NAME, store.session_key, user.pk)
"""


def instructor_cookies(workers: Workers) -> tuple[http.cookiejar.CookieJar, int]:
    """A signed-in instructor (classroom.broadcast_session), made with the ORM in the workers'
    database and signed in the way Django's test client's force_login does: a session row and
    its cookie. Returns the cookie jar and the user's pk."""
    name, key, pk = workers.manage("shell", "-c", _SIGN_IN % {"name": INSTRUCTOR}).split()[-3:]
    jar = http.cookiejar.CookieJar()
    jar.set_cookie(http.cookiejar.Cookie(0, name, key, None, False, "127.0.0.1", False, False, "/", True, False,
                                         None, False, None, None, {}))
    return jar, int(pk)
