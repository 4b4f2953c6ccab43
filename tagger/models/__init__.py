"""The model zoo: a plain registry from model name to class.

Every model class has ``name``, ``kind`` (``"tagger"`` or ``"parser"``), ``Config`` (a dataclass),
``PRESETS``, ``default_preset``, ``vocabs_from(config, sentences)``, ``training_meta(config,
sentences)``, ``required_columns(config)``, ``input_columns`` (what it reads besides the words),
``collate(sentences, with_gold)``,
``forward``, ``loss``, ``decode``, ``annotate``, ``output_columns`` and ``metric``; the trainer and
the CLI use nothing else.
"""

from tagger.models.skip_lstm import SkipLSTMTagger
from tagger.models.transition_parser import TransitionParser
from tagger.tasks import TASKS

MODELS = {cls.name: cls for cls in (SkipLSTMTagger, TransitionParser)}

#: Which model a ``--task`` trains by default (from :data:`tagger.tasks.TASKS`).
TASK_MODELS = {name: task.model for name, task in TASKS.items()}
