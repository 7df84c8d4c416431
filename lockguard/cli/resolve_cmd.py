import click

from lockguard.cli.common import not_implemented


@click.command()
def resolve() -> None:
    """Resolve the intent into fully pinned, hashed lock files (not implemented yet)."""
    not_implemented("resolve")
