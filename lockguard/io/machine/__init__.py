"""The machine: NVML facts and the doctor's probe run in the target interpreter."""
