"""The Ray task that runs the node script on one node. Shipped to the workers by value together
with lockguard.io.run, the one subprocess runner (both use the standard library only), so a node
without lockguard still runs it and says so."""

from __future__ import annotations

from lockguard.io.run import run_bounded


def run_node_script(script: str, env_defaults: dict, timeout: float, files: dict) -> dict:
    # imported inside: the function is shipped to the workers by value (the module note)
    import os
    import socket
    import sys
    import tempfile

    env = dict(os.environ)
    own_name = env.get("LOCKGUARD_NODE")  # a name the node set for itself wins over the engine's
    for key, value in env_defaults.items():
        env.setdefault(key, value)
    env.setdefault("LOCKGUARD_FLEET_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="lockguard-fleet-") as folder:
        for name, text in files.items():  # the project's intent and lock, shipped with the task
            path = os.path.join(folder, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        # its own process group: the doctor and its probe are killed with sh at the deadline
        done = run_bounded(
            ["sh", "-c", script], timeout=timeout, env=env, cwd=folder, what="the node script"
        )
    return {
        "stdout": done.stdout,
        "stderr": done.stderr,
        "returncode": None if done.timed_out else done.returncode,
        "timed_out": done.timed_out,
        "problem": None if done.timed_out else done.problem,  # could not start, or flooded
        "hostname": socket.gethostname(),
        "own_name": own_name,
    }
