"""Stage two of the sandbox: PID 1 of its PID namespace, running as the sandbox's user.

    python -m spark_exercises.grader.sandbox.inside PLAN.json CONNECTION_FILE

Plays the exercise's scenario into a cluster of its own (the engine is deterministic: the same
records the grader checks against) and serves it with the read API on 127.0.0.1:<plan.port> —
the only thing the notebook can reach — then runs the kernel and waits for it, killing it after
`plan.wall_seconds`. When this process ends, the kernel ends too: every process of a PID namespace
dies with its PID 1. As PID 1 it ignores SIGINT (the grader interrupts the kernel's process group).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

from spark_exercises.grader.sandbox.plan import Plan

KERNEL = [sys.executable, "-m", "ipykernel_launcher", "-f"]


def serve_scenario(plan: Plan) -> None:
    from engine.read_api_server import ReadApiServer
    from engine.scenarios.runner import run_scenario
    with open(plan.scenario, encoding="utf-8") as f:
        scenario = json.load(f)
    cluster, _ = run_scenario(scenario, os.path.join(plan.workdir, "lab-cluster"))
    server = ReadApiServer(cluster, plan.session, port=plan.port)
    threading.Thread(target=server.__enter__, daemon=True).start()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)      # PID 1: SIG_DFL means ignored
    plan = Plan.read(argv[0])
    serve_scenario(plan)
    kernel = subprocess.Popen([*KERNEL, argv[1]], env=plan.env, cwd=plan.env.get("KAFKA_LAB_WORKDIR", plan.workdir))
    try:
        return kernel.wait(timeout=plan.wall_seconds)
    except subprocess.TimeoutExpired:
        print(f"kafka-lab sandbox: the notebook ran for {plan.wall_seconds:.0f} s: stopped", file=sys.stderr)
        kernel.kill()
        return 124


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
