"""tagger: neural sequence taggers and dependency parsers for the formats corpora already use.

The Python API (docs/api.md)::

    import tagger
    model = tagger.load("pos.tagger")
    model.tag([["The", "cat", "sat"]])

``load``, ``Model``, ``train``, ``distill``, ``ensemble``, ``evaluate``, ``score``, ``presets`` and ``BatchTagger`` come from :mod:`tagger.api`,
imported on first use: ``import tagger`` alone does not import torch.
"""

from tagger.version import __version__  # a leaf module: the library imports it from there

#: The names :mod:`tagger.api` gives the package, imported when first asked for.
API = ("load", "Model", "train", "distill", "ensemble", "evaluate", "score", "presets", "BatchTagger", "in_worker_process")

__all__ = ["__version__", *API]


def __getattr__(name: str):
    if name in API:
        from tagger import api

        return getattr(api, name)
    raise AttributeError(f"module 'tagger' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(API))
