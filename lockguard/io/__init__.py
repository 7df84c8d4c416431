"""The only package that touches the outside world: HTTP, NVML, rattler, subprocesses, files."""
