"""``tagger tag``: thin over :meth:`tagger.api.Model.tag_file` (the Python API's ``tag_file``)."""

from __future__ import annotations

import sys
from typing import Any, Callable

import click

from tagger import resources
from tagger.formats.supertags import SUPERTAG_IN
from tagger.options import CHUNK_SIZE, ON_ERROR, OUTPUT_FORMATS, PRECISIONS


#: The options of ``tagger tag`` (the arguments of :func:`tagger.load` and of
#: :meth:`tagger.api.Model.tag_file`).
OPTIONS = (
    click.option("--model", "model_paths", multiple=True, type=click.Path(),
                 help="A model file from `tagger train`, or a shipped model's name (en). Repeat it to chain models in "
                      "one process: each reads the columns the ones before it filled (--model pos.tagger --model "
                      "dep.model). Default: en, the shipped English pipeline, which reads raw text."),
    click.option("--quiet", "-q", is_flag=True, help="Say nothing on stderr but errors and warnings (no note of the "
                                                     "default model)."),
    click.argument("inputs", nargs=-1, type=click.Path()),
    click.option("-o", "--output", type=click.Path(dir_okay=False), help="Output file (default: stdout; missing parent folders are created). Written to a "
                      "temporary file that replaces it at the end: a run that fails before any output leaves it as it was."),
    click.option("--format", "-f", "input_format", default="auto", show_default=True, help="Input format: text, conllu, tagged, auto, ... (auto detects)."),
    click.option("--input-format", "input_format_alias", hidden=True, help="Old name of --format."),
    click.option("--columns", help="For --format columns: NAME=N pairs, e.g. form=1."),
    click.option("--output-format", type=click.Choice(OUTPUT_FORMATS),
                 help="Default: conllu (jsonl with --top-k/--beta; a constituency parser's: trees, one per line). "
                      "A tagger of several columns (upos,xpos,feats) fills each in conllu/conllx and jsonl; tagged and "
                      "pipe show its first."),
    click.option("--supertag-in", type=click.Choice(SUPERTAG_IN), default="misc", show_default=True,
                 help="Where CoNLL output carries a CCG model's supertags: MISC 'supertag=CAT', or XPOS (the "
                      "POS tag then moves to MISC 'xpos=TAG'), as in `tagger convert`."),
    click.option("--top-k", type=click.IntRange(1), help="Multi-tagging: at most K tags per word, with probabilities."),
    click.option("--beta", type=click.FloatRange(0, 1), help="Multi-tagging: every tag with p >= BETA * p_best."),
    click.option("--beam", type=click.IntRange(1), help="A constituency parser's beam width (1: greedy) [default: the model's, 10]."),
    click.option("--constrained/--unconstrained", default=None,
                 help="A constituency parser: decode only well-formed trees, or any output and repair it (Vinyals et "
                      "al.) [default: the model's]."),
    click.option("--show-attention", type=click.Path(dir_okay=False), metavar="FILE.png",
                 help="A constituency parser: draw the attention matrix of the first sentence into this picture "
                      "(needs matplotlib: pip install 'tagger[plot]')."),
    click.option("--chunk-size", type=click.IntRange(1), default=CHUNK_SIZE, show_default=True, help="Sentences read, tagged and written at a time (bounds memory)."),
    click.option("--device", default="auto", show_default=True, help="auto (GPU if present), cpu, cuda, cuda:N, or mps where torch has it."),
    click.option("--threads", type=click.IntRange(min=1), help="CPU threads: a tagger runs this many batches at once (with or without "
                                            "torch; default: one a core); other models use them for torch's operations."),
    click.option("--precision", type=click.Choice(PRECISIONS), default="auto", show_default=True,
                 help="Inference matrix products: bf16 (inputs rounded to bfloat16, sums in float32) or fp32; "
                      "auto: bf16 where the CPU multiplies it natively (avx512_bf16/amx), else fp32, and a "
                      "tagger's (or parser's encoder's) products on a large input in int8 on an x86 CPU without "
                      "AMX that has VNNI, or AVX2 and no native bf16."),
    click.option("--on-error", type=click.Choice(ON_ERROR), default="fail", show_default=True,
                 help="Malformed input sentence: fail (stop after writing what came before), or skip it "
                      "(its line numbers go to stderr) and go on. skip works for conllu, conllx, columns, dp, "
                      "text, tagged and pipe input (raw text through a tokenizer stops at a byte that is not UTF-8, "
                      "after writing the sentences before it)."),
    click.option("--presegmented", is_flag=True,
                 help="Raw text through a tokenizer holds one sentence a line, as UDPipe's presegmented input: "
                      "the tokenizer splits each line into tokens, and a sentence is a line (a long one is cut "
                      "at 1,000 tokens)."),
    click.option("--allow-missing-columns", is_flag=True,
                 help="Run a model on input that lacks a column it reads (a parser's UPOS or FEATS: plain text, or "
                      "'_' there) instead of refusing it; its output will be poor."),
)


def _options(command: Callable) -> Callable:
    """The command's options, in the order ``--help`` lists them."""
    for option in reversed(OPTIONS):
        command = option(command)
    return command


@click.command("tag")
@_options
def command(model_paths: tuple[str, ...], quiet: bool, inputs: tuple[str, ...], output: str | None, input_format: str,
            input_format_alias: str | None, device: str, threads: int | None, precision: str, beam: int | None,
            constrained: bool | None, **options: Any) -> None:
    """Tag (or parse) text: stdin or files in, stdout or -o out, streaming.

    Plain text is read as one sentence per line, split at whitespace ONLY: it is not tokenised
    ('Smith?' stays one token; a warning says so). Give tokenised text, or put a tokenizer model
    first (--model tok.model: tagger train --task tokenize, docs/tokenizer.md). CoNLL-U input
    comes back byte for byte with only the predicted columns filled in. The prediction goes
    where each output format shows it: supertags in MISC 'supertag=' (or XPOS), a generic
    column (--columns form=1,tag=2) in XPOS; in tagged and pipe output the tag is the predicted
    one. A format that cannot hold the prediction (a tree as tagged text) is refused. A parser
    refuses input without the POS (or FEATS) it reads: pipe it through a tagger first, as below.
    Where stderr is a terminal (and the output goes elsewhere), a bar there shows how much of the
    input has been read and how many sentences are tagged.

    Without --model, the shipped English pipeline (en: tokenizer, UPOS/XPOS/FEATS tagger and
    parser, trained on UD English EWT; `tagger info en`) reads raw text, and a note on stderr
    says so (--quiet drops it).

    \b
    Examples:
      echo "The cat sat on the mat. It purred." | tagger tag
      tagger tag --model pos.tagger < input.txt > output.conllu
      tagger tag --model pos.tagger corpus.conllu -o tagged.conllu
      tagger tag --model ccg.tagger --beta 0.01 --output-format jsonl < sentences.txt
      tagger tag --model pos.tagger --model dep.model < raw.txt > parsed.conllu
      tagger tag --model en.model < raw.txt > parsed.conllu          (a --task pipeline model)
      tagger tag --model pos.tagger < raw.txt | tagger tag --model const.model --beam 10 > parsed.trees
    """
    from tagger.api import load  # chooses the engine (tagger.engines): torch only where needed
    from tagger.progress import tagging_progress

    inputs = _stdin_dash(inputs)
    if not model_paths:
        model_paths = (resources.DEFAULT,)
        if not quiet:
            click.echo(resources.default_note(), err=True)
    with tagging_progress(inputs, to_terminal=output in (None, "-") and sys.stdout.isatty()):
        model = load(model_paths, device, threads, precision, beam, constrained)
        model.tag_file(list(inputs) or None, output, options.pop("output_format"),
                       input_format_alias if input_format_alias is not None else input_format, **options)


def _stdin_dash(inputs: tuple[str, ...]) -> tuple[str, ...]:
    """The input files, none for stdin: ``-`` means stdin (as for ``tagger convert`` and
    ``evaluate``); with other files it is refused (``./-`` names a file called ``-``)."""
    if "-" not in inputs:
        return inputs
    if len(inputs) > 1:
        raise click.UsageError("'-' (stdin) is the only input or none: give files, or '-' alone")
    return ()
