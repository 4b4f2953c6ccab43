"""`tagger convert` (not yet implemented)."""

import click


@click.command("convert")
def command() -> None:
    """Not yet implemented."""
    raise click.ClickException("not implemented yet")
