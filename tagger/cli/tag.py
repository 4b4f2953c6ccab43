"""``tagger tag``: thin over :meth:`tagger.api.Model.tag_file` (the Python API's ``tag_file``)."""

from __future__ import annotations

import os
import sys

import click

from tagger.formats.supertags import SUPERTAG_IN
from tagger.options import CHUNK_SIZE, ON_ERROR, OUTPUT_FORMATS, PRECISIONS


@click.command("tag")
@click.option("--model", "model_paths", required=True, multiple=True, type=click.Path(),
              help="A model file from `tagger train`. Repeat it to chain models in one process: each reads the "
                   "columns the ones before it filled (--model pos.tagger --model dep.model).")
@click.argument("inputs", nargs=-1, type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Output file (default: stdout; missing parent folders are created). Written to a "
                   "temporary file that replaces it at the end: a run that fails before any output leaves it as it was.")
@click.option("--format", "-f", "input_format", default="auto", show_default=True, help="Input format: text, conllu, tagged, auto, ... (auto detects).")
@click.option("--input-format", "input_format_alias", hidden=True, help="Old name of --format.")
@click.option("--columns", help="For --format columns: NAME=N pairs, e.g. form=1.")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS),
              help="Default: conllu (jsonl with --top-k/--beta; a constituency parser's: trees, one per line). "
                   "A tagger of several columns (upos,xpos,feats) fills each in conllu/conllx and jsonl; tagged and "
                   "pipe show its first.")
@click.option("--supertag-in", type=click.Choice(SUPERTAG_IN), default="misc", show_default=True,
              help="Where CoNLL output carries a CCG model's supertags: MISC 'supertag=CAT', or XPOS (the "
                   "POS tag then moves to MISC 'xpos=TAG'), as in `tagger convert`.")
@click.option("--top-k", type=click.IntRange(1), help="Multi-tagging: at most K tags per word, with probabilities.")
@click.option("--beta", type=click.FloatRange(0, 1), help="Multi-tagging: every tag with p >= BETA * p_best.")
@click.option("--beam", type=click.IntRange(1), help="A constituency parser's beam width (1: greedy) [default: the model's, 10].")
@click.option("--constrained/--unconstrained", default=None,
              help="A constituency parser: decode only well-formed trees, or any output and repair it (Vinyals et "
                   "al.) [default: the model's].")
@click.option("--show-attention", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="A constituency parser: draw the attention matrix of the first sentence into this picture "
                   "(needs matplotlib: pip install 'tagger[plot]').")
@click.option("--chunk-size", type=click.IntRange(1), default=CHUNK_SIZE, show_default=True, help="Sentences read, tagged and written at a time (bounds memory).")
@click.option("--device", default="auto", show_default=True, help="auto (GPU if present), cpu, cuda, cuda:N, or mps where torch has it.")
@click.option("--threads", type=click.IntRange(min=1), help="CPU threads: a tagger runs this many batches at once (with or without "
                                         "torch; default: one a core); other models use them for torch's operations.")
@click.option("--precision", type=click.Choice(PRECISIONS), default="auto", show_default=True,
              help="Inference matrix products: bf16 (inputs rounded to bfloat16, sums in float32) or fp32; "
                   "auto: bf16 where the CPU multiplies it natively (avx512_bf16/amx), else fp32.")
@click.option("--on-error", type=click.Choice(ON_ERROR), default="fail", show_default=True,
              help="Malformed input sentence: fail (stop after writing what came before), or skip it "
                   "(its line numbers go to stderr) and go on. skip works for conllu, conllx, columns, dp, "
                   "text, tagged and pipe input.")
@click.option("--allow-missing-columns", is_flag=True,
              help="Run a model on input that lacks a column it reads (a parser's UPOS or FEATS: plain text, or "
                   "'_' there) instead of refusing it; its output will be poor.")
def command(model_paths, inputs, output, input_format, input_format_alias, columns, output_format, supertag_in, top_k,
            beta, beam, constrained, show_attention, chunk_size, device, threads, precision, on_error, allow_missing_columns) -> None:
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

    \b
    Examples:
      tagger tag --model pos.tagger < input.txt > output.conllu
      tagger tag --model pos.tagger corpus.conllu -o tagged.conllu
      tagger tag --model ccg.tagger --beta 0.01 --output-format jsonl < sentences.txt
      tagger tag --model pos.tagger --model dep.model < raw.txt > parsed.conllu
      tagger tag --model en.model < raw.txt > parsed.conllu          (a --task pipeline model)
      tagger tag --model pos.tagger < raw.txt | tagger tag --model const.model --beam 10 > parsed.trees
    """
    if input_format_alias is not None:
        input_format = input_format_alias
    inputs = _stdin_dash(inputs)
    from tagger.cli.progress import tagging_progress

    with tagging_progress(inputs, to_terminal=output in (None, "-") and sys.stdout.isatty()):
        if (len(model_paths) <= 2 and device in ("auto", "cpu") and top_k is None and beta is None and beam is None
                and constrained is None and show_attention is None):
            # Before numpy is imported (its BLAS reads them once). Without --threads its BLAS gets one
            # thread: more made the numpy passes' small products wait for each other (on a busy 2-core
            # machine, EWT dev through the tagger 2.6 s at one thread, 6.4 s at two, 44 s by default;
            # its text through the tokenizer 0.85 s at one, 9.7 s by default).
            # numpy's BLAS always gets one (torch, if it is needed, gets --threads; it reads OMP_NUM_THREADS).
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
            if threads:
                os.environ["OMP_NUM_THREADS"] = str(threads)
            if len(model_paths) == 1 and input_format in ("auto", "text") and not columns:
                from tagger.tokenization.runtime import tag_file  # a tokenizer alone runs without torch

                if tag_file(model_paths[0], inputs, output, output_format or "conllu", chunk_size, threads) is not None:
                    return
            # Without torch where it can (tagger.runtime.skip_lstm.products): auto is float32 on a small
            # input (the first line at once) and bf16 by our AMX kernels on a large one where they run.
            if on_error == "fail" and precision in ("fp32", "auto", "bf16"):
                from tagger.runtime.skip_lstm import tag_file as tag_small  # a tagger (after a tokenizer) on a small input

                if tag_small(model_paths, inputs, output, input_format, columns, output_format, supertag_in, chunk_size,
                             device, threads, precision) is not None:
                    return
        from tagger.api import load
        from tagger.tagging import input_stream

        model = load(model_paths, device, threads, precision, beam, constrained)
        model.tag_file(input_stream(inputs), output, output_format, input_format, columns=columns, supertag_in=supertag_in,
                       top_k=top_k, beta=beta, chunk_size=chunk_size, on_error=on_error,
                       allow_missing_columns=allow_missing_columns, show_attention=show_attention)


def _stdin_dash(inputs: tuple[str, ...]) -> tuple[str, ...]:
    """The input files, none for stdin: ``-`` means stdin (as for ``tagger convert`` and
    ``evaluate``); with other files it is refused (``./-`` names a file called ``-``)."""
    if "-" not in inputs:
        return inputs
    if len(inputs) > 1:
        raise click.UsageError("'-' (stdin) is the only input or none: give files, or '-' alone")
    return ()
