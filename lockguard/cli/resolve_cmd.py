import click

from lockguard.cli.common import intent_option, load_project_intent, not_implemented


@click.command()
@intent_option
def resolve(intent_path) -> None:
    """Resolve the intent into fully pinned, hashed lock files (not implemented yet)."""
    load_project_intent(intent_path)
    not_implemented("resolve")
