"""The top of training: one request, the runner it needs.

::

    request (tagger.training.request: TrainRequest, DataSpec, build_request)
       │
    dispatch.train ──┬── --task pipeline ─── pipeline.train: jackknife taggers, members (parsers), tokenizer
                     ├── --jackknife K ───── run.train + jackknife.hooks (taggers in jobs, then their tags)
                     └── one model ───────── run.train (the single-model runner) → trainer.fit (the loop)
    dispatch.distill ─────────────────────── distill.distill (a student on its teachers' distributions)

The ablation's rows (:mod:`tagger.ablation`), ``tagger train`` and :func:`tagger.train` all
train through :func:`train`; ``tagger distill`` and :func:`tagger.distill` through
:func:`distill`. Jobs in processes of their own (jackknife taggers, ensemble members, ablation
rows) follow one protocol, :mod:`tagger.training.jobs`.
"""

from __future__ import annotations

from typing import Any, Callable

from tagger.tasks import get_task
from tagger.training import distill as distillation
from tagger.training import jackknife, pipeline, run
from tagger.training.request import Data, TrainReporter, TrainRequest


def train(request: TrainRequest, reporter: TrainReporter, say: Callable[[str], None] = lambda line: None,
          data: Data | None = None) -> dict[str, Any]:
    """Train what ``request`` asks for and return its summary (scores in percent): a pipeline
    (a tagger, then a parser, jackknifed, in one file: :func:`tagger.training.pipeline.train`),
    a parser on jackknifed tags (the summary then has a ``jackknife`` entry), or one model
    (:func:`tagger.training.run.train`, which says what ``say``, ``reporter`` and ``data`` are)."""
    if get_task(request.task).tagger_columns:
        return pipeline.train(request, reporter, say)
    return run.train(request, reporter, say, data, hooks=jackknife.hooks(request))


def distill(request: distillation.DistillRequest, reporter: TrainReporter,
            say: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Train a student tagger on its teachers' distributions (:func:`tagger.training.distill.distill`)."""
    return distillation.distill(request, reporter, say)
