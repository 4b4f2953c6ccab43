"""One UDPipe 1 process as the benches time it: raw text on stdin, CoNLL-U on stdout. It imports
nothing but ``sys`` and UDPipe's Python binding (``ufal.udpipe``), so that the process's start-up
is UDPipe's own and not the bench's (importing the bench scripts cost it 10-14 ms).

    python bench/udpipe_run.py tokenize MODEL                 # its tokenizer alone
    python bench/udpipe_run.py tokenize MODEL TAGGER_PARSER   # that tokenizer, then another model's tagger and parser
    python bench/udpipe_run.py pipeline MODEL                 # one model's tokenizer, tagger and parser
"""

import sys

from ufal import udpipe as u  # type: ignore[import-not-found]


def load(path: str):
    model = u.Model.load(path)
    if model is None:
        raise SystemExit(f"cannot load UDPipe model {path}")
    return model


def main(mode: str, first: str, *then: str) -> None:
    text = sys.stdin.read()
    error = u.ProcessingError()
    steps = u.Pipeline.DEFAULT if mode == "pipeline" else u.Pipeline.NONE
    models = [load(first)]  # (kept: a pipeline holds its model by a plain pointer)
    output = u.Pipeline(models[0], "tokenize", steps, steps, "conllu").process(text, error)
    if then and not error.occurred():
        models.append(load(then[0]))
        output = u.Pipeline(models[1], "conllu", u.Pipeline.DEFAULT, u.Pipeline.DEFAULT, "conllu").process(output, error)
    if error.occurred():
        raise SystemExit(f"UDPipe: {error.message}")
    sys.stdout.write(output)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("tokenize", "pipeline"):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
