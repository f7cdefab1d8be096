"""A WebSocket client on a bare asyncio stream, for tests against a real Daphne: it can stop
reading its socket (`pause`) the way a frozen tab or a hostile client does, and it sees messages
of any size (a browser has no 1 MiB limit; Daphne does, when sending).

Also: a visitor (a cookie jar) that creates lab sessions through the form, as a browser does.
"""
from __future__ import annotations

import asyncio
import base64
import http.cookiejar
import json
import os
import re
import socket
import struct
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

OP_TEXT, OP_CLOSE, OP_PING, OP_PONG = 0x1, 0x8, 0x9, 0xA


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class Visitor:
    """One browser: a cookie jar. `new_session` posts the new-session form (sync)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect())

    def cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    def new_session(self, name: str = "test lab", brokers: int = 3) -> str:
        page = self.opener.open(self.base_url + "/lab/new").read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "name": name, "brokers": brokers, "seed": 1,
                                       "truncation": "leader-epoch", "config": ""}).encode()
        request = urllib.request.Request(self.base_url + "/lab/new", data, headers={"Referer": self.base_url})
        try:
            self.opener.open(request)
        except urllib.error.HTTPError as redirect:
            if redirect.code != 302:
                raise
            return redirect.headers["Location"].strip("/").split("/")[1]
        raise RuntimeError("creating a lab session did not redirect")


def lab_stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url + "/healthz?lab=1", timeout=10) as response:
        return json.loads(response.read())["lab"]


@dataclass
class Message:
    opcode: int
    data: bytes

    def json(self) -> dict[str, Any]:
        return json.loads(self.data)


class RawTab:
    """One WebSocket to /ws/lab/<id>/. Its kernel receive buffer is small, so a paused tab makes
    the server hold what it cannot send at once."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.close_code: int | None = None

    @classmethod
    async def open(cls, base_url: str, session_id: str | None, cookie: str, *, rcvbuf: int = 16 * 1024,
                   path: str | None = None) -> RawTab:
        """A lab session's socket, or the socket at `path` (a lesson's, a watch link's)."""
        host, port = base_url.removeprefix("http://").split(":")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
        reader, writer = await asyncio.open_connection(sock=sock, limit=2**24)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET {path or f'/ws/lab/{session_id}/'} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      f"Origin: {base_url}\r\nCookie: {cookie}\r\n\r\n").encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(head.decode(errors="replace"))
        return cls(reader, writer)

    def pause(self) -> None:
        """Stop reading the socket (what the server sends piles up on its side)."""
        self.writer.transport.pause_reading()

    def resume(self) -> None:
        self.writer.transport.resume_reading()

    def send(self, **message: Any) -> None:
        payload = json.dumps({"v": 2, **message}).encode()
        mask = os.urandom(4)
        length = len(payload)
        head = bytes([0x80 | OP_TEXT]) + (bytes([0x80 | length]) if length < 126 else
                                          bytes([0x80 | 126]) + struct.pack("!H", length) if length < 2**16 else
                                          bytes([0x80 | 127]) + struct.pack("!Q", length))
        self.writer.write(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    async def receive(self, timeout: float = 30) -> Message:
        """The next data or close message (pings are answered, pongs skipped)."""
        while True:
            first, second = await asyncio.wait_for(self.reader.readexactly(2), timeout)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            data = await asyncio.wait_for(self.reader.readexactly(length), timeout)
            opcode = first & 0x0F
            if opcode == OP_PING:
                self.writer.write(bytes([0x80 | OP_PONG, 0x80]) + os.urandom(4))
                continue
            if opcode == OP_PONG:
                continue
            if opcode == OP_CLOSE:
                self.close_code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
            return Message(opcode, data)

    async def receive_json(self, timeout: float = 30) -> dict[str, Any]:
        message = await self.receive(timeout)
        if message.opcode == OP_CLOSE:
            raise ConnectionError(f"closed by the server ({self.close_code})")
        return message.json()

    async def until(self, kind: str, timeout: float = 30) -> dict[str, Any]:
        while True:
            message = await self.receive_json(timeout)
            if message["type"] == kind:
                return message

    def close(self) -> None:
        self.writer.transport.abort()
