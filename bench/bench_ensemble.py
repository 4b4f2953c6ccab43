"""How far averaging the tag distributions of several trained taggers gets (an analysis, not a
`tagger` feature): accuracy of each model and of their ensemble on one file.

    python bench/bench_ensemble.py ../shared/data/ud-english-ewt/en_ewt-ud-test.conllu a.tagger b.tagger c.tagger

Prints one JSON object. The models must predict the same column with the same tag set.
"""

from __future__ import annotations

import argparse
import json

import torch

from tagger import formats, model_file
from tagger.inference import predict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", help="a gold file in any format `tagger` reads")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    sentences = [s for s in formats.read(args.data) if len(s)]
    models = [model_file.load(path)[0].eval() for path in args.models]
    column, tags = models[0].config.column, models[0].tag_vocab.itos
    if any(m.config.column != column or m.tag_vocab.itos != tags for m in models):
        raise SystemExit("the models must predict the same column with the same tag set")

    def distributions(model) -> list[torch.Tensor]:  # [n, n_tags] per sentence
        return predict(model, sentences, decode=lambda b: [d[:n] for d, n in zip(model.distribution(b), b.lengths.tolist())])

    per_model = [distributions(m) for m in models]

    def accuracy(members: list[int]) -> float:  # the tagger's own metric over the averaged distributions
        predictions = [[tags[b] for b in sum(per_model[k][i] for k in members).argmax(-1).tolist()] for i in range(len(sentences))]
        return round(100 * models[0].metric(sentences, predictions).score, 2)

    print(json.dumps({"data": args.data, "column": column,
                      "models": {path: accuracy([k]) for k, path in enumerate(args.models)},
                      "ensemble": accuracy(list(range(len(models))))}))


if __name__ == "__main__":
    main()
