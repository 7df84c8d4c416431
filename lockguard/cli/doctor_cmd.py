import click

from lockguard.cli.common import not_implemented


@click.command()
def doctor() -> None:
    """Probe the machine and the target environment against the lock (not implemented yet)."""
    not_implemented("doctor")
