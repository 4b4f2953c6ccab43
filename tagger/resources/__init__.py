"""The models that ship inside the package, by name: ``tagger tag`` without ``--model``,
``--model en``, ``tagger.load()``, ``tagger.load("en")`` and ``tagger info en``.

A name is resolved only where no file of that name exists (``--model en`` with a file ``./en``
reads the file). A name that looks like a language code (two or three lowercase letters) but has
no model here is refused in one line that says how to train one. Torch-free and small: every
layer may use it.

The shipped files and their licences lie beside this module (``tagger/resources/``); each is
rebuilt by ``python bench/build_default_model.py`` (docs/default-model.md).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tagger.errors import TaggerError

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Shipped:
    """A model in the package: its file and licence (beside this module) and what it is."""

    file: str
    licence: str
    language: str
    description: str


#: The shipped models by name; :data:`DEFAULT` is the one ``tagger tag`` uses without ``--model``.
SHIPPED: dict[str, Shipped] = {
    "en": Shipped("en.model", "en.LICENSE.txt", "English",
                  "tokenizer, tagger of UPOS, XPOS and FEATS, and dependency parser, trained on UD English EWT"),
}
DEFAULT = "en"
#: What a language code looks like (ISO 639-1 or 639-3): a name that has no model is told how to train one.
LANGUAGE = re.compile(r"[a-z]{2,3}")


def is_name(name: str | os.PathLike) -> bool:
    """Whether ``name`` is read as a shipped model's name (or a language code without one) rather
    than as a file: no file of that name exists and it is one or looks like one."""
    text = os.fspath(name)
    return not os.path.exists(text) and (text in SHIPPED or LANGUAGE.fullmatch(text) is not None)


def model_path(name: str | os.PathLike) -> str:
    """The file a ``--model`` value names: a shipped model's file for its name, else ``name`` as
    given (a path; the readers word a missing one). A language code without a shipped model, or a
    shipped model whose file is not installed, is a :class:`TaggerError`."""
    text = os.fspath(name)
    if not is_name(text):
        return text
    shipped = SHIPPED.get(text)
    if shipped is None:
        raise TaggerError(f"no model for {text!r} ships with tagger (only {', '.join(sorted(SHIPPED))}): train one on a "
                          f"UD treebank of the language with `tagger train --task pipeline --train TRAIN.conllu --dev "
                          f"DEV.conllu --out {text}.model`, then `tagger tag --model {text}.model`", text)
    path = HERE / shipped.file
    if not path.is_file():
        raise TaggerError(f"the shipped model {text!r} is not installed ({path} is missing): reinstall tagger, or "
                          f"rebuild it with `python bench/build_default_model.py --install`", text)
    return str(path)


def default_note() -> str:
    """The note ``tagger tag`` writes on stderr when it runs :data:`DEFAULT` because no ``--model``
    was given (``--quiet`` drops it)."""
    shipped = SHIPPED[DEFAULT]
    return (f"tagger: no --model given: using the shipped {shipped.language} model '{DEFAULT}' ({shipped.description}; "
            f"tagger info {DEFAULT}; --quiet drops this note)")


def shipped_name(path: str | os.PathLike) -> str | None:
    """The name of the shipped model at ``path`` (None for any other file)."""
    try:
        resolved = Path(path).resolve()
    except OSError:
        return None
    return next((name for name, s in SHIPPED.items() if (HERE / s.file) == resolved), None)
