"""``tagger tag`` in its plainest form without click: ``tagger tag [--model FILE ...] [--threads N]
[--quiet] [-o OUT] [INPUT ...]`` (no ``--model``: the shipped model, with the click command's
note unless ``--quiet``).

Importing click and building the command takes about 15 ms of a process whose model (a
tokenizer alone, :mod:`tagger.runtime.c_tokenizer`) may take 30 ms to label a 60 kB text: for
small texts, start-up is what a user waits for. :func:`parse` takes the arguments only where
they are all of that form and valid (anything else, ``--help`` and every error included, is
click's: :func:`tagger.cli.main`), and :func:`run` does what the click command does with them
(:mod:`tagger.cli.tag`, the same defaults for every other option: tested), under the same
guard (:func:`tagger.cli.guard.guarded`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Sequence

#: The options taken here, by spelling: the name of the value they give (None: a flag).
OPTIONS = {"--model": "models", "--threads": "threads", "-o": "output", "--output": "output", "--quiet": None,
           "-q": None}


@dataclass
class Plain:
    """The arguments of a plain ``tagger tag`` call."""

    models: list[str] = field(default_factory=list)
    threads: int | None = None
    output: str | None = None
    inputs: list[str] = field(default_factory=list)
    quiet: bool = False


def parse(argv: Sequence[str]) -> Plain | None:
    """The arguments of ``argv`` (after the program's name) where they are a plain ``tagger tag``
    call; None for anything else."""
    if not argv or argv[0] != "tag":
        return None
    plain, seen = Plain(), set()
    args = iter(argv[1:])
    for arg in args:
        if arg == "-" or not arg.startswith("-"):
            plain.inputs.append(arg)
            continue
        name, equals, value = arg.partition("=")
        if name not in OPTIONS or (equals and (name == "-o" or OPTIONS[name] is None)):
            return None
        if OPTIONS[name] is None:
            plain.quiet = True
            continue
        if not equals:
            value = next(args, None)
            if value is None:
                return None
        if not _take(plain, OPTIONS[name], value, seen):
            return None
    return None if "-" in plain.inputs and len(plain.inputs) > 1 else plain


def _take(plain: Plain, name: str, value: str, seen: set[str]) -> bool:
    """Record an option's value; False where click should see it (a repeated single option, a
    number of threads that is not a positive integer, an output that is a folder)."""
    if name == "models":
        plain.models.append(value)
        return True
    if name in seen:
        return False
    seen.add(name)
    if name == "threads":
        if not value.isascii() or not value.isdigit() or int(value) < 1:
            return False
        plain.threads = int(value)
        return True
    plain.output = value
    return value != "" and not os.path.isdir(value)


def run(argv: Sequence[str]) -> bool:
    """Run a plain ``tagger tag`` call as the click command does; False, having done nothing, for
    any other arguments."""
    plain = parse(argv)
    if plain is None:
        return False
    from tagger.api import load  # chooses the engine (tagger.engines)
    from tagger.cli.guard import guarded
    from tagger.progress import tagging_progress

    inputs = [] if plain.inputs == ["-"] else plain.inputs
    if not plain.models:
        from tagger import resources

        plain.models = [resources.DEFAULT]
        if not plain.quiet:
            print(resources.default_note(), file=sys.stderr, flush=True)
    with guarded():
        with tagging_progress(inputs, to_terminal=plain.output in (None, "-") and sys.stdout.isatty()):
            model = load(plain.models, "auto", plain.threads, "auto", None, None)
            model.tag_file(inputs or None, plain.output, None, "auto")
    return True
