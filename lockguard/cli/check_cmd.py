import click

from lockguard.cli.common import not_implemented


@click.command()
def check() -> None:
    """Static drift check: intent vs lock, hand edits, contradicting files (not implemented yet)."""
    not_implemented("check")
