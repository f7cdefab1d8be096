"""Scenarios are data: a JSON file with the cluster's shape and a list of steps.

    {"name": "…", "description": "…",
     "cluster": {"brokers": 3, "seed": 7, "config": {…}, "truncation": "leader-epoch"},
     "steps": [{"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 3}},
               {"produce": {"topic": "t", "key": "k", "value": "m1", "acks": "all"}},
               {"kill_broker": {"leader_of": "t-0"}}, {"run": {"ms": 20000}}, …]}

The same file drives a headless run (`python -m engine.scenarios run FILE --json`), a lesson in
the browser, an instructor's demo and a test. Built-in scenarios live in `builtin/`.
"""
from engine.scenarios.runner import ScenarioError, load_scenario, run_scenario

__all__ = ["ScenarioError", "load_scenario", "run_scenario"]
