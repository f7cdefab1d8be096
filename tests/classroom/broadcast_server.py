"""A real Daphne with a broadcast in its own database: an instructor with the broadcast
permission, signed in (a session row: its cookie), their lab session and a live broadcast of it by
link. For the tests that talk to the server over real sockets and from Chromium."""
from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.raw_websocket import RawTab
from tests.servers import REPO_ROOT, _server_env, running_daphne

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.sessions.backends.db import SessionStore
from classroom.models import Broadcast
from lab.models import LabSession
user = get_user_model().objects.create_user("teacher", password="pw-for-tests-only")
user.user_permissions.add(Permission.objects.get(codename="broadcast_session"))
store = SessionStore()
store["_auth_user_id"] = str(user.pk)
store["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
store["_auth_user_hash"] = user.get_session_auth_hash()
store.save()
session = LabSession.objects.create(owner=f"user:{user.pk}", name="demo", brokers=3, seed=4)
row = Broadcast.objects.create(session=session, instructor=user, link_open=True)
print(json.dumps({"cookie": store.session_key, "session": str(session.id), "token": row.token}))
"""


@contextmanager
def broadcast_daphne(work_dir: Path) -> Iterator[tuple[str, dict]]:
    """Yields the server's base URL and {cookie (the instructor's sessionid), session, token}."""
    env = _server_env(work_dir, {})
    pinned = {"DATABASE_URL": env["DATABASE_URL"]} if env.get("DATABASE_URL") else {}
    with running_daphne(work_dir, **pinned) as base_url:
        made = subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=REPO_ROOT,
                              env={**env, **pinned}, check=True, capture_output=True, text=True)
        yield base_url, json.loads(made.stdout.strip().splitlines()[-1])


async def open_socket(base_url: str, path: str, cookie: str = "") -> RawTab:
    """A RawTab (tests/raw_websocket.py) on any socket path of the server."""
    host, port = base_url.removeprefix("http://").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=2**24)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  f"Origin: {base_url}\r\n" + (f"Cookie: sessionid={cookie}\r\n" if cookie else "") + "\r\n").encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise ConnectionError(head.decode(errors="replace"))
    return RawTab(reader, writer)
