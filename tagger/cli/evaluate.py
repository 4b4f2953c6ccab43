"""`tagger evaluate` (not yet implemented)."""

import click


@click.command("evaluate")
def command() -> None:
    """Not yet implemented."""
    raise click.ClickException("not implemented yet")
