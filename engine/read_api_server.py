"""A small HTTP server for the read API, over a cluster in this process (stdlib only).

The lab's web server serves the same routes from its sessions (lab/views_api.py); this one
serves a single cluster — what the autograder and the Spark tests start on a free loopback port.
Routes (`<session>` is accepted and must match the server's session id):
    GET /api/v1/sessions/<session>/partitions?topics=a,b | ?pattern=regex   -> JSON
        (`pattern`: a regular expression over whole topic names, at most 1,000 characters, matched
        in linear time by engine.topic_pattern — no back-references or look-arounds; 400 if refused)
    GET /api/v1/sessions/<session>/topics/<topic>/partitions/<p>/records?offset=N&max_bytes=M
        -> raw record batches (application/octet-stream), headers X-Kafka-Lab-High-Watermark,
           X-Kafka-Lab-Log-Start-Offset, X-Kafka-Lab-Next-Offset; errors as JSON with Kafka's name.
The cluster is shared with the caller: every request takes `lock`, so the caller must hold it
too while it drives the cluster.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.read_api import list_partitions, read_committed

PARTITIONS = re.compile(r"^/api/v1/sessions/([^/]+)/partitions$")
RECORDS = re.compile(r"^/api/v1/sessions/([^/]+)/topics/([^/]+)/partitions/(\d+)/records$")
IDLE_CONNECTION_TIMEOUT_S = 60
STATUS = {Errors.UNKNOWN_TOPIC_OR_PARTITION: 404, Errors.OFFSET_OUT_OF_RANGE: 416, Errors.LEADER_NOT_AVAILABLE: 503}


def handle(cluster_for: Callable[[str], Cluster | None], path: str, query: dict[str, list[str]]
           ) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) for one GET — shared by this server and the Django views."""
    try:
        match = PARTITIONS.match(path)
        if match:
            cluster = _cluster(cluster_for, match.group(1))
            topics = [t for t in query.get("topics", [""])[0].split(",") if t] or None
            pattern = query.get("pattern", [None])[0]
            infos = list_partitions(cluster, topics, pattern)
            return _json(200, {"partitions": [i.to_dict() for i in infos]})
        match = RECORDS.match(path)
        if match:
            cluster = _cluster(cluster_for, match.group(1))
            offset = int(query.get("offset", ["0"])[0])
            max_bytes = int(query.get("max_bytes", [str(1024 * 1024)])[0])
            got = read_committed(cluster, unquote(match.group(2)), int(match.group(3)), offset, max_bytes)
            return 200, {"Content-Type": "application/octet-stream",
                         "X-Kafka-Lab-High-Watermark": str(got.high_watermark),
                         "X-Kafka-Lab-Log-Start-Offset": str(got.log_start_offset),
                         "X-Kafka-Lab-Next-Offset": str(got.next_offset)}, got.records
        return _json(404, {"error": "NOT_FOUND", "message": f"No such API route: {path}"})
    except ClusterError as error:
        return _json(STATUS.get(error.error, 400), {"error": error.kafka_name, "message": str(error)})
    except (ValueError, re.error) as error:
        return _json(400, {"error": Errors.INVALID_REQUEST, "message": str(error)})


def _cluster(cluster_for: Callable[[str], Cluster | None], session: str) -> Cluster:
    cluster = cluster_for(session)
    if cluster is None:
        raise ClusterError(f"No lab session {session}", Errors.UNKNOWN_SESSION)
    return cluster


def _json(status: int, body: dict) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


class ReadApiServer:
    """Serves one cluster as lab session `session_id` on 127.0.0.1:<free port>."""

    def __init__(self, cluster: Cluster, session_id: str = "local", *, lock: threading.Lock | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.cluster, self.session_id = cluster, session_id
        self.lock = lock or threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive (every answer has a Content-Length): a Spark task fetches many times in
            # a row on one connection. An idle connection is dropped after `timeout` seconds.
            protocol_version = "HTTP/1.1"
            timeout = IDLE_CONNECTION_TIMEOUT_S

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                url = urlparse(self.path)
                with server.lock:
                    status, headers, body = handle(
                        lambda s: server.cluster if s == server.session_id else None, url.path, parse_qs(url.query))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)   # an AF_INET socket's bound address (typeshed also allows bytes)
        return f"http://{host}:{port}"

    def __enter__(self) -> ReadApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
