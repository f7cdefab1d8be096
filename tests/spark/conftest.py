"""One SparkSession for the whole test run (about 6 s to start, 0.5 GB): see stack-notes §5."""
from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    from spark_exercises.datasource import register
    session = (SparkSession.builder.master(os.environ.get("SPARK_MASTER", "local[2]"))
               .appName("kafka-lab-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    register(session)
    yield session
    session.stop()
