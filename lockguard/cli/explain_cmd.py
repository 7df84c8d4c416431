import click

from lockguard.cli.common import not_implemented


@click.command()
@click.argument("package")
def explain(package: str) -> None:
    """Why PACKAGE is pinned at its version: requirement chain and knowledge rules (not implemented yet)."""
    not_implemented("explain")
