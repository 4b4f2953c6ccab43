"""`tagger train` (not yet implemented)."""

import click


@click.command("train")
def command() -> None:
    """Not yet implemented."""
    raise click.ClickException("not implemented yet")
