"""`tagger tag` (not yet implemented)."""

import click


@click.command("tag")
def command() -> None:
    """Not yet implemented."""
    raise click.ClickException("not implemented yet")
