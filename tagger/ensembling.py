"""``tagger ensemble``: several trained transition parsers combined into one model file that
parses with all of them at once (:class:`tagger.models.transition_parser.ensemble.ParserEnsemble`).

The inputs are parser files, ensemble files (their parsers are taken one by one) or pipeline
files (``tagger train --task pipeline``): from a pipeline its parser is taken, and the output is
then a pipeline too, with the first pipeline's tokenizer and tagger before the ensemble. The
parsers must share their labels and the POS they read: parsers trained on the same treebank,
with different seeds (``--parsers N`` of ``tagger train --task pipeline`` trains such a set).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from tagger import model_file, resources
from tagger.errors import TaggerError
from tagger.formats.base import file_digest
from tagger.models.transition_parser import TransitionParser
from tagger.models.transition_parser.ensemble import check_members


def member_archives(archive: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The parser archives in one file's ``archive``: itself, an ensemble's members, or the last
    stage of a pipeline (a parser or an ensemble)."""
    kind = archive.get("name")
    if kind == model_file.PIPELINE:
        return member_archives(archive["stages"][-1], name)
    if kind == model_file.ENSEMBLE:
        return list(archive["members"])
    if kind == TransitionParser.name:
        return [archive]
    raise TaggerError(f"a {kind} model is not a transition parser: an ensemble combines parsers", name)


def repeated_files(paths: Sequence[str | os.PathLike]) -> list[str]:
    """A note for each of ``paths`` that repeats an earlier one: the same file given again, or
    another file of the same bytes (:func:`file_digest`). Its parsers would only count twice: a
    parser ensembled with itself parses as it alone, so the members should differ (other seeds)."""
    first: dict[str, str] = {}  # each digest's first file
    notes = []
    for name in map(os.fspath, paths):
        digest = file_digest(name)
        if digest not in first:
            first[digest] = name
            continue
        earlier = first[digest]
        same = (f"{name} is given twice" if name == earlier
                else f"{name} is the same model as {earlier} (the same bytes)")
        notes.append(f"{same}: an ensemble of a model with itself is no better than that model "
                     f"(give parsers trained with other --seed values)")
    return notes


def combine(paths: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """Write the ensemble of the parsers in ``paths`` to ``out`` (a pipeline file when the first
    input is one: its stages before the parser come first) and return a summary: the members'
    files, their dev scores (percent), what was written and ``notes`` (:func:`repeated_files`)."""
    if len(paths) < 2:
        raise TaggerError("give at least two parser (or pipeline) model files to combine")
    paths = [resources.model_path(path) for path in paths]  # a shipped model's name (en): its file, as tag reads it
    archives = [model_file.read_archive(path) for path in paths]
    notes = repeated_files(paths)
    members: list[dict[str, Any]] = []
    sources: list[str] = []
    for path, archive in zip(paths, archives):
        found = member_archives(archive, os.fspath(path))
        members += found
        sources += [os.fspath(path)] * len(found)
    check_members([model_file.model_of(member, source) for member, source in zip(members, sources)],
                  [f"{source} (parser {k + 1} of the ensemble)" for k, source in enumerate(sources)])
    scores = [member.get("meta", {}).get("dev_score") for member in members]
    meta = {"task": "dep", "ensemble_of": [{"model": source, "dev_score": score, "seed": member.get("meta", {}).get("seed")}
                                           for source, score, member in zip(sources, scores, members)]}
    ensemble = model_file.ensemble_archive(members, meta)
    first = archives[0]
    if first.get("name") == model_file.PIPELINE:
        model_file.save_pipeline(out, [*first["stages"][:-1], ensemble], {**first.get("meta", {}), "parsers": len(members)})
        written = "pipeline"
    else:
        model_file.atomic_save(ensemble, out)
        written = model_file.ENSEMBLE
    return {"model": os.fspath(out), "written": written, "parsers": len(members),
            "members": [{"model": source, "dev_score": None if score is None else round(100.0 * score, 2)}
                        for source, score in zip(sources, scores)],
            "bytes": Path(out).stat().st_size, "notes": notes}
