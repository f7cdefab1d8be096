"""Kafka Lab's Django project and lab app: settings, ASGI routing, views and the lab's web pages."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kafka-lab")
except PackageNotFoundError:  # running from a checkout that was never pip-installed
    __version__ = "0+unknown"
