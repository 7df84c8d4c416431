import click

from lockguard.cli.common import not_implemented


@click.command()
def restore() -> None:
    """Put back every file a clean-install quarantined (not implemented yet)."""
    not_implemented("restore")
