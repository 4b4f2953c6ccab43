"""tagger: neural sequence taggers and dependency parsers for the formats corpora already use."""

__version__ = "0.1.0"
