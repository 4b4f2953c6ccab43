"""`tagger info` (not yet implemented)."""

import click


@click.command("info")
def command() -> None:
    """Not yet implemented."""
    raise click.ClickException("not implemented yet")
