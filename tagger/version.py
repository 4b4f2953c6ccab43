"""The package's version, in a module of its own that imports nothing: the model file stamps it
(``tagger_version``) and ``tagger --version`` prints it. ``tagger.__version__`` is this one;
modules inside the package import it from here, never from ``tagger`` itself (whose
``__getattr__`` leads to :mod:`tagger.api`, the top of the layers: docs/architecture.md)."""

__version__ = "0.1.0"
