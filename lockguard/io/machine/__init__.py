"""The machine: NVML facts, system CUDA facts (toolkits, nvcc, loader-reachable libraries), and the
doctor's probe run in the target interpreter; child processes with deadlines (io/run.py)."""
