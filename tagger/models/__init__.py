"""The model zoo: a plain registry from model name to class.

Every model class implements :class:`tagger.models.base.Model` (the interface the trainer,
inference, the runner and the CLI use, and nothing else), and lives in its own folder with its
config dataclass (``config.py``) and its presets as plain data (``presets.py``). Which family a
``--task`` trains is in :mod:`tagger.tasks`.
"""

from tagger.models.seq2seq import Seq2seqParser
from tagger.models.skip_lstm import SkipLSTMTagger
from tagger.models.tokenizer import Tokenizer
from tagger.models.transition_parser import TransitionParser
from tagger.tasks import TASKS

MODELS = {cls.name: cls for cls in (SkipLSTMTagger, TransitionParser, Seq2seqParser, Tokenizer)}

#: Which model a ``--task`` trains by default (from :data:`tagger.tasks.TASKS`).
TASK_MODELS = {name: task.model for name, task in TASKS.items()}
