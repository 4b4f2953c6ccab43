"""The model zoo: a plain registry from model name to class.

Every model class has ``name``, ``Config`` (a dataclass), ``PRESETS``, ``default_preset``,
``vocabs_from(config, sentences)``, ``collate(sentences, with_gold)``, ``forward``, ``loss``,
``decode``, ``annotate`` and ``metric``; the trainer and the CLI use nothing else.
"""

from tagger.models.skip_lstm import SkipLSTMTagger

MODELS = {cls.name: cls for cls in (SkipLSTMTagger,)}

#: Which model a ``--task`` trains by default.
TASK_MODELS = {"pos": "skip_lstm", "ccg": "skip_lstm"}
from tagger.models.transition_parser import TransitionParser; MODELS[TransitionParser.name] = TransitionParser; TASK_MODELS["dep"] = TransitionParser.name  # noqa: E402, E702
