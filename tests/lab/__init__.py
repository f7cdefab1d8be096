"""Tests of the web lab: pages, health check and the ASGI server."""
