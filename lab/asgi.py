"""ASGI entry point: `daphne lab.asgi:application`.

HTTP goes to Django (with /static/ served here too, see KAFKA_LAB_SERVE_STATIC in settings, and
`..` a 404: lab.static_files); WebSockets from the page's own origin only (lab.origin_check) go
through Channels' auth stack to the routes in `lab.routing`. At start-up the grader recovers the
submissions a restart interrupted (spark_exercises.startup).

Several worker processes (a shared channel layer, docs/placement.md): lab.tunnel.PlacementRouter
sits between the origin check and the auth stack — a socket whose session lives on another worker
is relayed there raw, and that worker runs the same auth stack and routes for it. The start-up
checks the database and the channel layer and says in one log line which is unreachable and where
(no traceback: /healthz answers 503 naming it until it is back).
"""

from __future__ import annotations

import gc
import logging
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
django_asgi_app = get_asgi_application()  # sets Django up; import consumers and routes after it

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from lab import health  # noqa: E402
from lab.origin_check import SameOriginValidator  # noqa: E402
from lab.routing import websocket_urlpatterns  # noqa: E402
from lab.static_files import StaticFilesHandler  # noqa: E402
from lab.tunnel import PlacementRouter, StartsWorker  # noqa: E402
from spark_exercises.startup import recover_interrupted_submissions  # noqa: E402

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
logger = logging.getLogger("lab.asgi")


def _parts_reachable() -> bool:
    """One log line per part that is down, naming it and its address."""
    reachable = True
    database = health.check_database()
    if database != "ok":
        logger.error("Kafka Lab: the database (%s) is unreachable: %s", health.where_database(), database[7:])
        reachable = False
    layer = health.check_channel_layer()
    if layer.startswith("error"):
        logger.error("Kafka Lab: the channel layer (%s) is unreachable: %s", health.where_redis(), layer[7:])
    return reachable


if _parts_reachable():
    recover_interrupted_submissions()

# What a worker runs for a request relayed to it (lab.tunnel): the same apps, after the origin check.
_apps = {"http": django_asgi_app, "websocket": AuthMiddlewareStack(URLRouter(websocket_urlpatterns))}
_http = PlacementRouter(django_asgi_app, _apps)
application = StartsWorker(ProtocolTypeRouter(
    {
        "http": StaticFilesHandler(_http) if _serve_static else _http,
        "websocket": SameOriginValidator(PlacementRouter(_apps["websocket"], _apps)),
    }
), _apps)
