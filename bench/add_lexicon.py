"""A tag dictionary added to a skip-LSTM tagger trained without one (before session 22, or with
``--set lexicon=0``), to measure what it gives the same weights (docs/benchmarks.md).

    python bench/add_lexicon.py --model old.tagger --train train.conllu --out new.tagger --lexicon auto --dev dev.conllu
    tagger evaluate --model new.tagger test.conllu

``--train`` must be the model's training data (the dictionary is its words' labels there);
``--lexicon`` a count (a word seen that often keeps its labels) or ``auto`` (chosen on ``--dev``, as
``tagger train`` does). Prints the choice as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter

from tagger import formats, model_file
from tagger.corpus.features import normalize
from tagger.corpus.lexicon import LEXICON, build
from tagger.models.skip_lstm import SkipLSTMTagger
from tagger.models.skip_lstm.model import column_key, column_values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--lexicon", default="auto")
    parser.add_argument("--dev")
    args = parser.parse_args()
    model, meta = model_file.load(args.model)
    if model.name != "skip_lstm":
        raise SystemExit(f"error: {args.model}: a skip-LSTM tagger is needed, not a {model.name} model")
    config = dataclasses.replace(model.config, lexicon=args.lexicon)
    sentences = list(formats.read(args.train))
    vocabs = dict(model.vocabs)
    for head in model.heads:
        if head.output and head.feature is None:
            pairs: Counter = Counter()
            for sentence in sentences:
                pairs.update(zip(map(normalize, sentence.words), column_values(sentence, head.column)))
            vocabs[LEXICON + head.key] = build(pairs, model.word_vocab, model.labels[head.key])
    new = SkipLSTMTagger(config, vocabs)
    new.load_state_dict(model.state_dict())
    new.eval()
    chosen = new.tune_decoding(list(formats.read(args.dev))) if args.dev and args.lexicon == "auto" else {}
    model_file.save(args.out, new, {**meta, **({"decoding": chosen} if chosen else {})})
    print(json.dumps(chosen))


if __name__ == "__main__":
    main()
