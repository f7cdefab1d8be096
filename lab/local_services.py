"""Real PostgreSQL and Redis for the test suite and the benchmarks, on any machine.

    url = postgres_url()          # postgresql://postgres@127.0.0.1:<port>/kafka_lab_<pid>_<hex>: a fresh database
    url = redis_url()             # redis://127.0.0.1:<port>/<db>: a database number no other caller got

Each part is looked for on its standard loopback port first (PostgreSQL 127.0.0.1:5432 accepting
user `postgres` without a password, Redis 127.0.0.1:6379 answering PING). When it is not there, a
private instance is started for this process: the server's binaries from Debian's packages
(`apt-get install -y postgresql` / `redis-server` when they are missing), a temporary directory,
a free loopback port. A private instance stops when this process exits (atexit, and the kernel's
parent-death signal if the process is killed), unless a caller asked to `keep` it. The databases
this process created on the shared server are dropped at exit too, unless kept.

KAFKA_LAB_SERVICES=private skips the standard ports (a machine whose 5432/6379 belong to something
else); `python -m lab.local_services` says what it finds or starts.

Parallel runs on one machine keep apart: every PostgreSQL database is new and uniquely named; every
`redis_url()` names a Redis database number handed out by a counter on the server (1-15, round
robin: db 0 is left to the machine's own use but for that counter's key), and
`channel_layer_prefix()` gives channels_redis a key prefix of its own, for callers that want no
sharing at all even after the numbers wrap.
"""
from __future__ import annotations

import atexit
import ctypes
import glob
import logging
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab.serve import free_port

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
STANDARD_POSTGRES_PORT = 5432
STANDARD_REDIS_PORT = 6379
POSTGRES_USER = "postgres"                # the superuser of both the standard and the private server
PRIVATE_POSTGRES_OS_USER = "postgres"     # PostgreSQL refuses to run as root; Debian's package makes this user
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
REDIS_DB_COUNTER = "kafka-lab:local-services:next-db"
REDIS_FIRST_DB = 1                        # db 0 stays the machine's own
APT_LOCK_TIMEOUT_S = 600                  # another apt-get (a second test run) may hold dpkg's lock
_PR_SET_PDEATHSIG = 1                     # prctl(2)


class ServiceUnavailable(RuntimeError):
    """Neither the standard server nor a private one could be had: the message says what was tried."""


@dataclass
class PostgresServer:
    host: str
    port: int
    private: bool
    directory: Path | None = None           # a private server's temp dir (data/, the socket, postgres.log)
    process: subprocess.Popen | None = None
    keep: bool = False
    created: list[str] = field(default_factory=list)   # databases made here, dropped at exit unless kept

    def url(self, dbname: str) -> str:
        return f"postgresql://{POSTGRES_USER}@{self.host}:{self.port}/{dbname}"

    def describe(self) -> str:
        where = f"a private server (data in {self.directory})" if self.private else "the machine's server"
        return f"PostgreSQL at {self.host}:{self.port}: {where}"


@dataclass
class RedisServer:
    host: str
    port: int
    private: bool
    directory: Path | None = None
    process: subprocess.Popen | None = None
    keep: bool = False
    next_db: int = REDIS_FIRST_DB            # a private server's counter (the shared one counts on the server)
    databases: int = 16

    def url(self, db: int = 0) -> str:
        return f"redis://{self.host}:{self.port}/{db}"

    def describe(self) -> str:
        where = f"a private server (in {self.directory})" if self.private else "the machine's server"
        return f"Redis at {self.host}:{self.port}: {where}"


_lock = threading.Lock()
_postgres: PostgresServer | None = None
_redis: RedisServer | None = None


# -- the public calls ---------------------------------------------------------------------------
def postgres_url(dbname: str | None = None, *, keep: bool = False) -> str:
    """A URL to a database made by this call (named `dbname`, else a unique name) on the standard
    server or this process's private one. `keep`: neither the database nor a private server is
    removed at exit (the caller stops it: `pg_ctl -D <dir>/data stop`)."""
    server = postgres_server(keep=keep)
    name = dbname or unique_name("kafka_lab")
    _create_database(server, name)
    if not keep:
        server.created.append(name)
    log.info("PostgreSQL: database %s on %s", name, server.describe())
    return server.url(name)


def redis_url(*, keep: bool = False) -> str:
    """A URL to the standard or a private Redis, with a database number no earlier call got (they
    wrap after 15: use `channel_layer_prefix()` too when that matters)."""
    server = redis_server(keep=keep)
    url = server.url(_next_redis_db(server))
    log.info("Redis: %s on %s", url, server.describe())
    return url


def channel_layer_prefix() -> str:
    """A key prefix for channels_redis (`CONFIG: {"prefix": ...}`) that no other run uses."""
    return unique_name("kafka-lab") + ":"


def unique_name(prefix: str) -> str:
    """`<prefix>_<pid>_<8 hex>`: unique per call, and which process made it is still legible."""
    return f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"


def postgres_server(*, private: bool | None = None, keep: bool = False) -> PostgresServer:
    """This process's PostgreSQL (found or started once, then the same for every call)."""
    global _postgres
    with _lock:
        if _postgres is None:
            if private is None:
                private = _services_mode() == "private"
            if not private and _postgres_answers(LOOPBACK, STANDARD_POSTGRES_PORT):
                _postgres = PostgresServer(LOOPBACK, STANDARD_POSTGRES_PORT, private=False)
            else:
                if not private:
                    log.info("PostgreSQL: nothing accepts user %s without a password at %s:%d; starting a "
                             "private server", POSTGRES_USER, LOOPBACK, STANDARD_POSTGRES_PORT)
                _postgres = _start_private_postgres(keep)
            atexit.register(_stop_postgres, _postgres)
            log.info("PostgreSQL: using %s", _postgres.describe())
        _postgres.keep = _postgres.keep or keep
        return _postgres


def redis_server(*, private: bool | None = None, keep: bool = False) -> RedisServer:
    """This process's Redis (found or started once, then the same for every call)."""
    global _redis
    with _lock:
        if _redis is None:
            if private is None:
                private = _services_mode() == "private"
            if not private and _redis_answers(LOOPBACK, STANDARD_REDIS_PORT):
                _redis = RedisServer(LOOPBACK, STANDARD_REDIS_PORT, private=False)
            else:
                if not private:
                    log.info("Redis: nothing answers PING at %s:%d; starting a private server",
                             LOOPBACK, STANDARD_REDIS_PORT)
                _redis = _start_private_redis(keep)
            _redis.databases = _redis_database_count(_redis)
            atexit.register(_stop_redis, _redis)
            log.info("Redis: using %s", _redis.describe())
        _redis.keep = _redis.keep or keep
        return _redis


def _services_mode() -> str:
    mode = os.environ.get("KAFKA_LAB_SERVICES", "").strip().lower() or "auto"
    if mode not in ("auto", "private"):
        raise ServiceUnavailable(f"KAFKA_LAB_SERVICES={mode!r}: expected auto (the default) or private")
    return mode


# -- PostgreSQL ---------------------------------------------------------------------------------
def _postgres_connect(host: str, port: int, dbname: str = "postgres", timeout: int = 3):
    import psycopg

    return psycopg.connect(host=host, port=port, user=POSTGRES_USER, dbname=dbname, connect_timeout=timeout,
                           autocommit=True)


def _postgres_answers(host: str, port: int) -> bool:
    try:
        _postgres_connect(host, port).close()
        return True
    except Exception as error:  # noqa: BLE001 (refused, needs a password, no such user: all mean "not usable")
        log.debug("PostgreSQL at %s:%d: %s", host, port, error)
        return False


def _create_database(server: PostgresServer, name: str) -> None:
    from psycopg import sql

    with _postgres_connect(server.host, server.port) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {} ENCODING 'UTF8' TEMPLATE template0")
                           .format(sql.Identifier(name)))


def _postgres_binaries() -> Path:
    """The directory holding initdb and postgres (the newest Debian version), installing them if needed."""
    def found() -> Path | None:
        dirs = glob.glob("/usr/lib/postgresql/*/bin")
        dirs.sort(key=lambda d: int(Path(d).parent.name) if Path(d).parent.name.isdigit() else 0)
        for directory in reversed(dirs):
            if os.access(os.path.join(directory, "initdb"), os.X_OK):
                return Path(directory)
        initdb = shutil.which("initdb")
        return Path(os.path.realpath(initdb)).parent if initdb else None

    directory = found()
    if directory is None:
        _apt_install("postgresql", "PostgreSQL")
        directory = found()
    if directory is None:
        raise ServiceUnavailable("PostgreSQL: apt-get installed postgresql but no initdb is in "
                                 "/usr/lib/postgresql/*/bin")
    return directory


def _start_private_postgres(keep: bool) -> PostgresServer:
    binaries = _postgres_binaries()
    as_user = _os_user_for_postgres()
    directory = Path(tempfile.mkdtemp(prefix="kafka-lab-postgres-"))
    data, log_path = directory / "data", directory / "postgres.log"
    if as_user is not None:
        os.chown(directory, as_user.pw_uid, as_user.pw_gid)
    run_as = _run_as(as_user)
    initdb = subprocess.run([str(binaries / "initdb"), "-D", str(data), "-U", POSTGRES_USER, "--auth=trust",
                             "-E", "UTF8", "--locale=C", "--no-sync"], cwd=directory, capture_output=True,
                            text=True, **run_as)
    if initdb.returncode != 0:
        raise ServiceUnavailable(f"PostgreSQL: initdb in {data} failed ({initdb.returncode}): "
                                 f"{(initdb.stderr or initdb.stdout).strip()[-2000:]}")
    port = free_port()
    # A throwaway server: no fsync (a crash loses a test run, nothing else), the socket in its own dir.
    command = [str(binaries / "postgres"), "-D", str(data), "-p", str(port), "-k", str(directory),
               "-c", f"listen_addresses={LOOPBACK}", "-c", "fsync=off", "-c", "synchronous_commit=off",
               "-c", "full_page_writes=off", "-c", "max_connections=300"]
    with log_path.open("ab") as out:
        process = subprocess.Popen(command, cwd=directory, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=_parent_death_signal(signal.SIGINT, keep), **run_as)
    server = PostgresServer(LOOPBACK, port, private=True, directory=directory, process=process, keep=keep)
    _wait_until(lambda: _postgres_answers(LOOPBACK, port), process, "PostgreSQL", log_path)
    log.info("PostgreSQL: started a private server at %s:%d (pid %d, data in %s, as %s)", LOOPBACK, port,
             process.pid, data, as_user.pw_name if as_user else "this user")
    return server


def _os_user_for_postgres() -> pwd.struct_passwd | None:
    """Who runs a private PostgreSQL: this user, or (as root, which PostgreSQL refuses) `postgres`."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(PRIVATE_POSTGRES_OS_USER)
    except KeyError:
        pass
    made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                           PRIVATE_POSTGRES_OS_USER], capture_output=True, text=True)
    if made.returncode != 0:
        raise ServiceUnavailable(f"PostgreSQL refuses to run as root and there is no user "
                                 f"{PRIVATE_POSTGRES_OS_USER!r}; useradd failed: {made.stderr.strip()}")
    return pwd.getpwnam(PRIVATE_POSTGRES_OS_USER)


def _run_as(user: pwd.struct_passwd | None) -> dict:
    """subprocess arguments that run a command as `user` (what runuser does, without a PAM session)."""
    if user is None:
        return {}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": user.pw_dir}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [], "env": env}


def _stop_postgres(server: PostgresServer) -> None:
    if server.keep:
        if server.private:
            log.info("PostgreSQL: kept running at %s:%d (stop it: pg_ctl -D %s stop)", server.host, server.port,
                     server.directory / "data")
        return
    if not server.private:
        _drop_databases(server)
        return
    _stop_process(server.process, signal.SIGINT)        # SIGINT: PostgreSQL's fast shutdown
    shutil.rmtree(server.directory, ignore_errors=True)


def _drop_databases(server: PostgresServer) -> None:
    if not server.created:
        return
    from psycopg import sql

    try:
        with _postgres_connect(server.host, server.port) as connection:
            for name in server.created:
                connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    except Exception as error:  # noqa: BLE001 (at exit: say so, never raise)
        log.warning("PostgreSQL: could not drop the databases %s: %s", ", ".join(server.created), error)
    server.created.clear()


# -- Redis --------------------------------------------------------------------------------------
def _redis_client(host: str, port: int):
    import redis

    return redis.Redis(host=host, port=port, socket_timeout=3, socket_connect_timeout=3)


def _redis_answers(host: str, port: int) -> bool:
    try:
        with _redis_client(host, port) as client:
            return bool(client.ping())
    except Exception as error:  # noqa: BLE001 (refused, needs a password, not Redis: "not usable")
        log.debug("Redis at %s:%d: %s", host, port, error)
        return False


def _redis_database_count(server: RedisServer) -> int:
    try:
        with _redis_client(server.host, server.port) as client:
            return int(client.config_get("databases").get("databases", 16))
    except Exception:  # noqa: BLE001 (CONFIG may be renamed away on a shared server: Redis's default)
        return 16


def _next_redis_db(server: RedisServer) -> int:
    span = max(1, server.databases - REDIS_FIRST_DB)
    if server.private:
        with _lock:
            number, server.next_db = server.next_db, server.next_db + 1
        return REDIS_FIRST_DB + (number - REDIS_FIRST_DB) % span
    # The machine's server is shared by every run on it: the count lives on the server.
    with _redis_client(server.host, server.port) as client:
        return REDIS_FIRST_DB + (int(client.incr(REDIS_DB_COUNTER)) - 1) % span


def _start_private_redis(keep: bool) -> RedisServer:
    binary = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/bin:/usr/sbin")
    if binary is None:
        _apt_install("redis-server", "Redis")
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    directory = Path(tempfile.mkdtemp(prefix="kafka-lab-redis-"))
    log_path = directory / "redis.log"
    port = free_port()
    command = [binary, "--port", str(port), "--bind", LOOPBACK, "--save", "", "--appendonly", "no",
               "--dir", str(directory), "--daemonize", "no", "--logfile", ""]
    with log_path.open("ab") as out:
        process = subprocess.Popen(command, cwd=directory, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=_parent_death_signal(signal.SIGTERM, keep))
    server = RedisServer(LOOPBACK, port, private=True, directory=directory, process=process, keep=keep)
    _wait_until(lambda: _redis_answers(LOOPBACK, port), process, "Redis", log_path)
    log.info("Redis: started a private server at %s:%d (pid %d, in %s)", LOOPBACK, port, process.pid, directory)
    return server


def _stop_redis(server: RedisServer) -> None:
    if not server.private:
        return
    if server.keep:
        log.info("Redis: kept running at %s:%d (pid %d)", server.host, server.port, server.process.pid)
        return
    _stop_process(server.process, signal.SIGTERM)
    shutil.rmtree(server.directory, ignore_errors=True)


# -- processes and packages ---------------------------------------------------------------------
def _parent_death_signal(signum: int, keep: bool):
    """A preexec_fn: the server gets `signum` when the thread that started it dies (this process,
    when started from the main thread), so a killed test run leaves no server behind. Not for a
    kept server, nor one started from another thread (that thread's end would stop it)."""
    if keep or threading.current_thread() is not threading.main_thread():
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)   # after subprocess's setuid, which clears it
    return preexec


def _wait_until(ready, process: subprocess.Popen, what: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServiceUnavailable(f"{what}: the private server exited with {process.returncode}; its log "
                                     f"({log_path}):\n{_tail(log_path)}")
        if ready():
            return
        time.sleep(0.1)
    _stop_process(process, signal.SIGTERM)
    raise ServiceUnavailable(f"{what}: the private server did not answer within {START_TIMEOUT_S:.0f} s; its log "
                             f"({log_path}):\n{_tail(log_path)}")


def _stop_process(process: subprocess.Popen | None, signum: int) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signum)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"(unreadable: {error})"


def _apt_install(package: str, what: str) -> None:
    """Install Debian's `package` (refreshing the package lists once if the first try fails)."""
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if sudo and not shutil.which("sudo"):
        raise ServiceUnavailable(f"{what}: nothing answers on its standard port, the server is not installed, "
                                 f"and `apt-get install {package}` needs root (not root, no sudo)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = [*sudo, "apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_TIMEOUT_S}", "install", "-y",
               "--no-install-recommends", package]
    log.warning("%s: not installed; running %s", what, " ".join(install))
    result = subprocess.run(install, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        subprocess.run([*sudo, "apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_TIMEOUT_S}", "update"], env=env,
                       capture_output=True, text=True)
        result = subprocess.run(install, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise ServiceUnavailable(f"{what}: nothing answers on its standard port and `{' '.join(install)}` failed "
                                 f"({result.returncode}): {(result.stderr or result.stdout).strip()[-2000:]}")


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    urls = postgres_url(), redis_url()
    print(f"lab.local_services: {urls[0]} and {urls[1]} work (the database is dropped, and any "
          "private server stopped, as this command exits)")


if __name__ == "__main__":
    main()
