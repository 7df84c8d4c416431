"""The Ray task that runs the node script on one node. Shipped to the workers by value (it uses the
standard library only), so a node without lockguard still runs it and says so."""

from __future__ import annotations


def run_node_script(script: str, env_defaults: dict, timeout: float, files: dict) -> dict:
    # imported inside: the function is shipped to the workers by value (the module note)
    import os
    import signal
    import socket
    import subprocess
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
        proc = subprocess.Popen(
            ["sh", "-c", script],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the doctor and its probe too, not only sh
            stdout, stderr = proc.communicate()
            timed_out = True
    return {
        "stdout": stdout,
        "stderr": stderr,
        "returncode": None if timed_out else proc.returncode,
        "timed_out": timed_out,
        "hostname": socket.gethostname(),
        "own_name": own_name,
    }
