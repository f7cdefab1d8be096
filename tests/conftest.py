"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os

# Once sync Playwright has started, pytest's main thread has a running event loop and Django's
# async-safety checks would refuse every ORM call. Our tests are sync, so this is safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from xdist.scheduler import LoadScopeScheduling  # noqa: E402

from lab import local_services  # noqa: E402
from tests.servers import running_daphne  # noqa: E402


class KeptTogetherScheduling(LoadScopeScheduling):
    """`make test`'s scheduler (`-n 2 --dist loadscope`): a test module is a unit of work, as with
    loadscope, but all of tests/spark is one unit, run by one worker: two Spark JVMs at once would each
    want both cores and push graders past their time-outs, and the sandbox tests check that no
    sandboxed process is left anywhere on the machine. tests/e2e is one unit too: one browser for
    all of it (its `browser` fixture is package-scoped: while sync Playwright runs, the thread has a
    running event loop, under which asgiref refuses the other tests' async_to_sync calls). xdist's
    own loadgroup cannot do this: it renames items through `Item._nodeid`, which pytest 9 ignores."""

    def _split_scope(self, nodeid: str) -> str:
        for unit in ("tests/spark/", "tests/e2e/"):
            if nodeid.startswith(unit):
                return unit
        return nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
    return KeptTogetherScheduling(config, log) if config.getvalue("dist") == "loadscope" else None


@pytest.fixture(scope="session")
def daphne_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Daphne serving `lab.asgi:application` on a free loopback port; yields its base URL.

    It uses its own migrated SQLite file, not pytest-django's test DB.
    """
    with running_daphne(tmp_path_factory.mktemp("daphne")) as base_url:
        yield base_url


# -- real services (lab.local_services): the machine's PostgreSQL/Redis, else private ones -------
@pytest.fixture(scope="session")
def postgres_url() -> str:
    """A PostgreSQL database of its own for this test session (not pytest-django's test DB), e.g.
    for Daphne workers started with DATABASE_URL; `lab.local_services.postgres_url()` makes more."""
    return local_services.postgres_url()


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A Redis URL whose database number no other caller on the machine got lately; give a channel
    layer `local_services.channel_layer_prefix()` as its prefix to share nothing at all."""
    return local_services.redis_url()
