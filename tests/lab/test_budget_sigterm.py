"""Issue 11, finding 3: SIGTERM stops a real Daphne promptly, even with a long call in flight.

Python joins asyncio.to_thread's worker threads before it exits, so a host call that did not end
kept the server alive after SIGTERM (only SIGKILL stopped it). At shutdown every call's budget
runs out (engine.sim.budget), so the call ends at its next scheduler action. The server here has
budgets far too big to end the call by themselves: only the shutdown can.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lab.serve import free_port, wait_for_port

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
STOPS_WITHIN_S = 5.0
STORM = {"replica.high.watermark.checkpoint.interval.ms": 1, "log.flush.offset.checkpoint.interval.ms": 1,
         "log.retention.check.interval.ms": 1}


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lab.settings", KAFKA_LAB_DB=str(work / "db.sqlite3"),
               KAFKA_LAB_DATA_DIR=str(work / "labs"), PYTHONUNBUFFERED="1",
               KAFKA_LAB_CALL_WALL_BUDGET_MS="600000", KAFKA_LAB_MAX_ACTIONS_PER_CALL="1000000000")
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


# The tab runs in a process of its own: autobahn's client needs txaio on asyncio, and this
# process may have it on Twisted already.
TAB = """
import asyncio, http.cookiejar, json, sys, urllib.request
from lab.bench import Server, Tab, _NoRedirect

url, pid, storm = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
cookies = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies), _NoRedirect())
server = Server(url, pid, opener, cookies)

async def drive():
    tab = Tab(server, server.new_session("sigterm"))
    await tab.open()
    tab.send(type="reset", brokers=9, config=storm)
    await tab.command("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})  # after the reset
    tab.send(type="clock", action="step_until", kind="broker_crashed")
    await asyncio.sleep(0.5)
    await tab.close()

asyncio.run(drive())
"""


def _start_a_call_that_runs_for_minutes(base_url: str, pid: int) -> None:
    """A 9-broker cluster whose timers fire every millisecond, and a step_until for an event that
    never comes: ten virtual minutes, some sixteen million scheduler actions."""
    subprocess.run([sys.executable, "-c", TAB, base_url, str(pid), json.dumps(STORM)], cwd=REPO_ROOT,
                   check=True, timeout=60)


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_sigterm_stops_daphne_within_seconds_while_a_call_runs(tmp_path: Path) -> None:
    env = _env(tmp_path)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env,
                   check=True)
    port = free_port()
    log_path = tmp_path / "daphne.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                 "lab.asgi:application"], cwd=REPO_ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        wait_for_port(proc, port, log_path)
        _start_a_call_that_runs_for_minutes(f"http://127.0.0.1:{port}", proc.pid)
        cpu = _cpu_s(proc.pid)
        time.sleep(3.0)   # long enough to see the server work even on a machine shared with others
        assert _cpu_s(proc.pid) - cpu > 0.3, "the call should be running (the server busy)"

        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        took = time.monotonic() - started

        assert proc.returncode is not None, f"SIGTERM did not stop the server in 30 s:\n{log_path.read_text()[-3000:]}"
        assert took < STOPS_WITHIN_S, f"SIGTERM took {took:.1f} s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
