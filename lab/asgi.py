"""ASGI entry point: `daphne lab.asgi:application`.

HTTP goes to Django (with /static/ served here too, see KAFKA_LAB_SERVE_STATIC in settings);
WebSockets go through Channels' auth stack to the routes in `lab.routing`.
"""

from __future__ import annotations

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
django_asgi_app = get_asgi_application()  # sets Django up; import consumers and routes after it

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from lab.routing import websocket_urlpatterns  # noqa: E402

_serve_static = settings.DEBUG or settings.KAFKA_LAB_SERVE_STATIC

# The server's heap is every live session's cluster: many long-lived objects, and a stream of
# short-lived ones (messages, events, timers). With CPython's default threshold (a young
# collection every 700 allocations) a busy server spent a fifth of its CPU in the collector;
# collect young objects less often — but not too seldom: every collection stops all sessions,
# and at 50,000 a young collection took up to 100 ms — and leave what start-up made out of
# every collection.
if settings.KAFKA_LAB_GC_THRESHOLD0 > 0:
    gc.set_threshold(settings.KAFKA_LAB_GC_THRESHOLD0, *gc.get_threshold()[1:])
gc.freeze()

application = ProtocolTypeRouter(
    {
        "http": ASGIStaticFilesHandler(django_asgi_app) if _serve_static else django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
