"""The multiword vocabularies of session 23 (prefix rules, training tokens and their counts:
:mod:`tagger.tokenization.multiword`) added to a tokenizer trained before them, or to a pipeline's
tokenizer stage, to measure what they give the same weights (docs/benchmarks.md), or to bring an
older model up to date.

    python bench/add_multiword.py --model old.model --train train.conllu --out new.model
    tagger tag --model new.model < raw.txt > out.conllu

``--train`` must be the tokenizer's training data: the lexicon and suffix rules it learns from it
must be those the model has (else it refuses). Prints the vocabularies' sizes as JSON.
"""

from __future__ import annotations

import argparse
import json

from tagger import formats, model_file
from tagger.config import config_from_dict
from tagger.models.tokenizer.config import TokenizerConfig
from tagger.models.tokenizer.model import Tokenizer
from tagger.tokenization.multiword import LEXICON, PREFIX_RULES, RULES, TOKENS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    archive = model_file.read_archive(args.model)
    stages = archive["stages"] if isinstance(archive.get("stages"), list) else [archive]
    stage = next((s for s in stages if s.get("name") == "tokenizer"), None)
    if stage is None:
        raise SystemExit(f"error: {args.model}: neither a tokenizer nor a pipeline with one")
    config = config_from_dict(TokenizerConfig, stage["config"], from_file=True)
    vocabs = Tokenizer.vocabs_from(config, Tokenizer.training_units(config, list(formats.read(args.train, "conllu"))))
    for key in (LEXICON, RULES):
        if vocabs[key] != stage["vocabs"].get(key, []):
            raise SystemExit(f"error: {args.train}: not the training data of {args.model}'s tokenizer ({key} differs)")
    stage["vocabs"] = {**stage["vocabs"], PREFIX_RULES: vocabs[PREFIX_RULES], TOKENS: vocabs[TOKENS]}
    model_file.atomic_save(archive, args.out)
    print(json.dumps({key: len(vocabs[key]) for key in (LEXICON, RULES, PREFIX_RULES, TOKENS)}))


if __name__ == "__main__":
    main()
