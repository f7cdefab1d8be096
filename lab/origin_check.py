"""WebSockets only from the page's own origin: scheme, host and port.

Channels' AllowedHostsOriginValidator compares the Origin's host name with ALLOWED_HOSTS and
ignores scheme and port, so any page served on another port of an allowed host (or over http
when the lab is https) could open a lab session's socket with the visitor's cookies. Here the
Origin must be the origin the socket was opened on — ws(s)://Host ↔ http(s)://Host, same port —
or be listed in CSRF_TRUSTED_ORIGINS (KAFKA_LAB_TRUSTED_ORIGINS, for a proxy); and the Host must
be an allowed host. A missing or "null" Origin is refused. A request without a Host header (no
browser sends one: WebSockets need HTTP/1.1) has no port to compare: its Origin's host must then
be an allowed host, as Channels checked before.
"""
from __future__ import annotations

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

WEB_SCHEME = {"ws": "http", "wss": "https"}


class SameOriginValidator:
    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not self.allowed(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)

    @staticmethod
    def allowed(scope) -> bool:
        headers = dict(scope.get("headers", []))
        origin = headers.get(b"origin", b"").decode("latin1").strip().lower().rstrip("/")
        host = headers.get(b"host", b"").decode("latin1").strip().lower()
        if not origin or origin == "null":
            return False
        if not host:
            return validate_host(split_domain_port(origin.split("://", 1)[-1])[0], settings.ALLOWED_HOSTS)
        domain, _ = split_domain_port(host)
        if not validate_host(domain, settings.ALLOWED_HOSTS):
            return False
        own = f"{WEB_SCHEME.get(scope.get('scheme', 'ws'), 'http')}://{host}"
        trusted = {o.lower().rstrip("/") for o in settings.CSRF_TRUSTED_ORIGINS}
        return origin == own or origin in trusted
