"""The model zoo: a plain registry from model name to class.

Every model class implements :class:`tagger.models.base.Model` (the interface the trainer,
inference, the runner and the CLI use, and nothing else), and lives in its own folder with its
config dataclass (``config.py``) and its presets as plain data (``presets.py``). Which family a
``--task`` trains is in :mod:`tagger.tasks`.

The registry is built on first use (``from tagger.models import MODELS``): a family's config
(``tagger.models.skip_lstm.config``) imports without torch, and so without the model classes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MODELS", "TASK_MODELS"]


def __getattr__(name: str) -> Any:
    if name == "MODELS":
        from tagger.models.seq2seq import Seq2seqParser
        from tagger.models.skip_lstm import SkipLSTMTagger
        from tagger.models.tokenizer import Tokenizer
        from tagger.models.transition_parser import TransitionParser

        value: Any = {cls.name: cls for cls in (SkipLSTMTagger, TransitionParser, Seq2seqParser, Tokenizer)}
    elif name == "TASK_MODELS":  # which model a --task trains by default (from tagger.tasks.TASKS)
        from tagger.tasks import TASKS

        value = {task_name: task.model for task_name, task in TASKS.items()}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
