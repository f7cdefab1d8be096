"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os

# Once sync Playwright has started, pytest's main thread has a running event loop and Django's
# async-safety checks would refuse every ORM call. Our tests are sync, so this is safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from tests.servers import running_daphne  # noqa: E402


@pytest.fixture(scope="session")
def daphne_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Daphne serving `lab.asgi:application` on a free loopback port; yields its base URL.

    It uses its own migrated SQLite file, not pytest-django's test DB.
    """
    with running_daphne(tmp_path_factory.mktemp("daphne")) as base_url:
        yield base_url
