"""`python -m engine.scenarios`: run, list, --json, --trace, errors."""
from __future__ import annotations

import json
import subprocess
import sys


def cli(*args, check=False):
    return subprocess.run([sys.executable, "-m", "engine.scenarios", *args], capture_output=True, text=True,
                          check=check)


def write(tmp_path, steps, **cluster):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "s", "cluster": {"brokers": 3, "seed": 1, **cluster}, "steps": steps}))
    return str(path)


def test_run_json_prints_the_final_state_with_the_documented_fields(tmp_path):
    path = write(tmp_path, [
        {"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 3}},
        {"produce": {"topic": "t", "key": "k", "value": "m1", "acks": "all"}},
        {"run_until_idle": {}}])
    result = json.loads(cli("run", path, "--json", check=True).stdout)
    p = result["partitions"][0]
    assert {"topic", "partition", "leader", "leader_epoch", "replicas", "isr", "high_watermark",
            "log_start_offset", "replica_states"} <= set(p)
    state = p["replica_states"][str(p["leader"])]
    assert state["log_end_offset"] == 1 and state["high_watermark"] == 1
    assert state["records"] == [{"offset": 0, "key": "k", "value": "m1"}]
    assert result["produced"][0] | {"request_id": 0} == {
        "step": 1, "request_id": 0, "topic": "t", "partition": 0, "key": "k", "value": "m1", "acks": -1,
        "acked": True, "offset": 0, "error": None}
    assert len(result["brokers"]) == 3 and sum(b["controller"] for b in result["brokers"]) == 1
    assert result["events"] > 0


def test_a_failing_step_exits_non_zero_with_one_line_naming_the_step(tmp_path):
    path = write(tmp_path, [{"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 4}}])
    done = cli("run", path, "--json")
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0
    assert "step 0 (create_topic)" in done.stderr and "larger than available brokers" in done.stderr


def test_expect_error_records_the_failure_and_goes_on(tmp_path):
    path = write(tmp_path, [
        {"create_topic": {"topic": "bad name!"}, "expect_error": True},
        {"create_topic": {"topic": "t"}}])
    result = json.loads(cli("run", path, "--json", check=True).stdout)
    assert result["step_errors"][0]["kafka_error"] == "INVALID_TOPIC_EXCEPTION"
    assert [p["topic"] for p in result["partitions"]] == ["t"]


def test_unknown_commands_and_bad_json_are_refused(tmp_path):
    assert "unknown command 'explode'" in cli("run", write(tmp_path, [{"explode": {}}])).stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    assert "not valid JSON" in cli("run", str(bad)).stderr


def test_trace_prints_one_event_per_line(tmp_path):
    path = write(tmp_path, [{"create_topic": {"topic": "t"}}])
    lines = cli("run", path, "--trace", check=True).stdout.splitlines()
    events = [line for line in lines if line.startswith("[")]
    assert any("controller_elected" in line for line in events)
    assert any("topic_created" in line for line in events)


def test_list_names_the_builtin_scenarios():
    out = cli("list", check=True).stdout
    for name in ("hw-truncation-story", "kip101-data-loss", "kip101-divergence", "isr-shrink-expand",
                 "unclean-election-loss", "acks-compared"):
        assert name in out


def test_a_builtin_runs_by_name():
    result = json.loads(cli("run", "kip101-divergence", "--json", check=True).stdout)
    states = result["partitions"][0]["replica_states"]
    assert [r["value"] for r in states["1"]["records"]] != [r["value"] for r in states["2"]["records"]]
