import click

from lockguard.cli.common import not_implemented


@click.command("clean-install")
def clean_install() -> None:
    """Quarantine stale shared libraries, apply the lock, verify (not implemented yet)."""
    not_implemented("clean-install")
