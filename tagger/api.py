"""The Python API: what ``tagger tag``, ``train`` and ``evaluate`` do, as plain calls.

::

    import tagger

    model = tagger.load("pos.tagger")                  # device="cpu", threads=None, precision="auto"
    model.tag([["The", "cat", "sat"]])                 # [{"words": [...], "upos": [...]}]
    model.tag_file("in.txt", "out.conllu")             # what `tagger tag` writes (see docs/api.md)
    tagger.train(task="pos", train="train.conllu", dev="dev.conllu", out="pos.tagger")
    tagger.evaluate(model, "test.conllu")              # {"score": 97.1, "tagging": {...}, ...}

``tagger tag`` is :func:`load` and :meth:`Model.tag_file`. :func:`load` chooses the engine
(:mod:`tagger.engines`): a skip-LSTM tagger or a tokenizer on the CPU is read without torch, and
``tag_file`` runs it by the torch-free runtimes (numpy, or the bf16 kernels) where they apply, as
fast as ``tagger tag`` and byte for byte its output; torch is imported, and the model loaded for
it, only when something needs it. This module imports neither at its own import. Called from a
worker process (a ``multiprocessing`` child, a Ray worker) a model gets one thread unless
``threads=`` says otherwise: an engine runs one worker per core, and torch's default of one
thread per core in each of them oversubscribes the machine. See docs/api.md.
"""

from __future__ import annotations

import io
import os
import sys
from collections import abc
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, Union

from tagger import engines, formats, resources
from tagger.corpus.batching import chunks
from tagger.corpus.records import STANDARD_COLUMNS, TREE, Sentence
from tagger.errors import TaggerError
from tagger.formats.base import read_once
from tagger.formats.placement import output_value
from tagger.options import CHUNK_SIZE, MAX_TOKENS, PRECISIONS, TagRequest, in_worker_process  # noqa: F401 (tagger.in_worker_process)

if TYPE_CHECKING:
    import torch

#: What :meth:`Model.tag` takes for one sentence: its tokens, or a record from a reader.
SentenceLike = Union[Sequence[str], Sentence, Mapping[str, Any]]
#: Where :meth:`Model.tag_file` reads: a path, several, or a binary stream (None: stdin).
Inputs = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]], IO[bytes], None]


def set_threads(threads: int | None) -> int:
    """Set torch's CPU threads (process-wide): ``threads`` if given, else 1 in a worker process
    (:func:`in_worker_process`), else torch's own default is left. Returns the number in use
    (:func:`tagger.inference.set_threads`; imports torch)."""
    from tagger.inference import set_threads as set_torch_threads

    return set_torch_threads(threads)


def load(path: str | os.PathLike | Sequence[str | os.PathLike] = resources.DEFAULT, device: str = "cpu",
         threads: int | None = None, precision: str = "auto", beam: int | None = None,
         constrained: bool | None = None, engine: str = "auto") -> "Model":
    """The model in the file at ``path``, ready to tag; several paths: their models chained in
    that order (:class:`tagger.pipeline.Pipeline`: each reads the columns the ones before it
    filled, as ``tagger tag --model pos.tagger --model dep.model`` runs them). A shipped model's
    name (:mod:`tagger.resources`: ``"en"``, the default) stands for its file: ``tagger.load()``
    is the default English pipeline, which reads raw text.

    ``device``: cpu, cuda, cuda:N, mps or auto (GPU if present). ``threads``: the CPU threads
    (torch's: default 1 in a worker process, else torch's default, see :func:`set_threads`; the
    runtimes': default 1 in a worker process, else one a core). ``precision``: auto, fp32 or
    bf16 inference products, as ``tagger tag --precision``. ``beam``, ``constrained``: a
    constituency parser's beam width (1: greedy) and whether it decodes only well-formed trees
    (default: as its model file says). ``engine``: ``auto`` chooses it here
    (:func:`tagger.engines.choose`; a model the torch-free runtimes run is loaded for torch on
    first need, ``model.module``), ``torch`` runs torch on every input."""
    paths = _model_paths(path)
    if precision not in PRECISIONS:
        raise TaggerError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise TaggerError(f"threads must be a whole number of at least 1 (or None: one a core), not {threads!r}")
    chosen = engines.choose(paths, device, threads, precision, beam, constrained, engine)
    name = " + ".join(chosen.paths)
    if chosen.runtime:
        if "torch" in sys.modules:  # torch's threads as if it were loaded now (it is, on first need)
            set_threads(threads)
        return Model(None, None, name, engine=chosen)
    from tagger.inference import load_module

    module, meta = load_module(paths, device, threads, precision, beam, constrained)
    return Model(module, meta, name)


def _model_paths(path: Any) -> list[str]:
    """The files of :func:`load`'s ``path`` (a shipped model's name stands for its file); a
    :class:`TaggerError` for anything but a path or a list of them."""
    if isinstance(path, (str, os.PathLike)):
        path = [path]
    if not isinstance(path, (list, tuple)) or not all(isinstance(p, (str, os.PathLike)) for p in path):
        raise TaggerError(f"load takes a model file's path, a shipped model's name or a list of paths, not {path!r:.60}")
    if not path:
        raise TaggerError("no model file given")
    return [resources.model_path(p) for p in path]


#: How the API's callers turn off the check of a parser's input columns (errors name it).
ALLOW = "allow_missing_columns=True"


def _sentence(item: SentenceLike, index: int) -> Sentence:
    """A fresh record for one input of :meth:`Model.tag` (the caller's record is not changed):
    a list of tokens, a :class:`Sentence`, or a record :meth:`Model.tag` gives (``{"words":
    [...], "upos": [...], ...}``: its columns are the input's, so a tagger's records feed a parser)."""
    if isinstance(item, Sentence):
        return Sentence(list(item.words), dict(item.columns), item.source, item.line, item.raw)
    if isinstance(item, abc.Mapping):
        return _from_record(item, index)
    if isinstance(item, str) or not isinstance(item, abc.Iterable) or not all(isinstance(token, str) for token in item):
        raise TaggerError(f"sentence {index + 1}: model.tag takes a list of sentences, each a list of token strings "
                          f"(e.g. [line.split() for line in lines]), not {type(item).__name__} {str(item)[:40]!r}")
    bad = next((t for t, token in enumerate(item) if not token or any(c in token for c in "\t\n\r")), None)
    if bad is not None:  # no format holds such a word (a space inside one is kept: Vietnamese words have them)
        raise TaggerError(f"sentence {index + 1}, token {bad + 1}: {item[bad]!r} is not a word (empty, or with a tab "
                          "or line break in it)")
    return Sentence(list(item), {}, source="<tag>", line=index + 1)


def _from_record(item: abc.Mapping, index: int) -> Sentence:
    """A :class:`Sentence` of a record as :meth:`Model.tag` gives them: ``words``, and its
    columns of one value a word (``upos``, ``xpos``, ``feats``, ``lemma``, ``head``, ``deprel``,
    ...); the rest (``multitags``, ``tree``, ``text``) is output, not input, and left out."""
    words = item.get("words")
    if words is None:
        raise TaggerError(f"sentence {index + 1}: a record given to model.tag needs its 'words' (as model.tag gives "
                          f"them), not only {', '.join(map(str, item)) or 'nothing'}")
    sentence = _sentence(words, index)
    for name in STANDARD_COLUMNS:
        values = item.get(name)
        if values is None:
            continue
        if isinstance(values, str) or len(values) != len(sentence.words):
            raise TaggerError(f"sentence {index + 1}: its '{name}' holds {len(values)} values for "
                              f"{len(sentence.words)} words")
        sentence.columns[name] = list(values)
    return sentence


def _source(path_in: Inputs) -> Any:
    """What :func:`tagger.formats.read` reads for ``path_in`` (None: stdin's bytes)."""
    if path_in is None:
        return sys.stdin.buffer
    return list(path_in) if isinstance(path_in, (list, tuple)) else path_in


class Model:
    """A loaded model (:func:`load`): ``module`` (the torch model, in eval mode), the model
    file's ``meta`` and ``path``. One per process: each worker of an engine loads its own.
    ``engine`` (:class:`tagger.engines.Engine`), where :func:`load` chose the torch-free
    runtimes: ``module`` and ``meta`` are then loaded on first use."""

    def __init__(self, module: torch.nn.Module | None, meta: dict[str, Any] | None, path: str | None = None, *,
                 engine: engines.Engine | None = None):
        if module is None and engine is None:
            raise TaggerError("a Model needs its torch module, or the engine to load it by")
        self._module, self._meta, self.path, self.engine = module, meta, path, engine
        self._torch: dict[tuple, Any] = {}  # torch models the runtimes fell back on, by their arguments

    def __repr__(self) -> str:
        return f"<tagger.Model {self.name} ({self.kind}: {', '.join(self.output_columns)}) from {self.path}>"

    @property
    def module(self) -> torch.nn.Module:
        """The torch model (loaded now, where :func:`load` did not)."""
        if self._module is None:
            from tagger.inference import load_module

            engine = self.engine
            self._module, self._meta = load_module(engine.paths, engine.device, engine.threads, engine.precision)
        return self._module

    @module.setter
    def module(self, module: torch.nn.Module) -> None:
        self._module = module

    @property
    def meta(self) -> dict[str, Any]:
        """The model file's ``meta`` (several files: the last one's, every file's under ``stages``)."""
        if self._meta is None:
            self.module  # noqa: B018 - loads both
        return self._meta if self._meta is not None else {}

    @meta.setter
    def meta(self, meta: dict[str, Any]) -> None:
        self._meta = meta

    @property
    def name(self) -> str:
        """The model family: ``skip_lstm``, ``transition_parser``."""
        return self.module.name

    @property
    def kind(self) -> str:
        """``tagger`` or ``parser``."""
        return self.module.kind

    @property
    def output_columns(self) -> list[str]:
        """The columns the model fills: e.g. ``["upos"]``, ``["upos", "xpos", "feats"]`` (a tagger
        of several columns), or ``["head", "deprel"]``."""
        return list(self.module.output_columns)

    @property
    def input_columns(self) -> list[str]:
        """The columns it reads besides the words (a parser's ``upos``, ``feats``)."""
        return list(self.module.input_columns)

    def tag(self, sentences: Iterable[SentenceLike], *, top_k: int | None = None, beta: float | None = None,
            allow_missing_columns: bool = False) -> list[dict[str, Any]]:
        """One plain record per sentence, in input order: ``{"words": [...], COLUMN: [...]}`` for
        each output column (``upos``; every one of a tagger of several, ``upos``, ``xpos``,
        ``feats``; ``head`` (ints, 0 = root) and ``deprel``), and with ``top_k``/``beta``
        (taggers) ``"multitags"``: per word, ``[tag, probability]`` pairs of the first column.
        The records ``tagger tag --output-format jsonl`` writes. ``sentences``: lists of tokens,
        :class:`Sentence` records, or records as this method gives them (a parser reads their
        UPOS/FEATS, so ``parser.tag(pos.tag(tokens))`` chains a tagger and a parser; refused
        without them unless ``allow_missing_columns``)."""
        from tagger.inference import InputCheck

        self._refuse_raw("model.tag takes tokens")
        if isinstance(sentences, str):
            raise TaggerError("model.tag takes a list of sentences, each a list of token strings (e.g. [line.split() for "
                              "line in lines]), not one string: model.tag_lines takes lines of text")
        if not isinstance(sentences, abc.Iterable):
            raise TaggerError("model.tag takes a list of sentences, each a list of token strings (e.g. [line.split() for "
                              f"line in lines]), not {type(sentences).__name__} {sentences!r:.40}")
        records = [_sentence(item, i) for i, item in enumerate(sentences)]
        filled = [sentence for sentence in records if sentence.words]  # an empty one has nothing to predict
        extra = self._annotate(filled, top_k, beta, InputCheck(self.module, allow_missing_columns, self.meta, allow_option=ALLOW))
        multitags = iter(extra or [])
        out = []
        for sentence in records:
            record: dict[str, Any] = {"words": sentence.words}
            record.update({name: output_value(sentence, name) if sentence.words else None if name == TREE else []
                           for name in self.module.output_columns})
            if extra is not None:
                record["multitags"] = [[list(pair) for pair in token] for token in next(multitags)] if sentence.words else []
            out.append(record)
        return out

    def tag_text(self, text: str, *, allow_missing_columns: bool = False,
                 presegmented: bool = False) -> list[dict[str, Any]]:
        """Raw text through a model whose first stage is a tokenizer (``tagger.load([tok, pos,
        dep])``, or a pipeline model with one): one record per sentence, ``{"text": ..., "words":
        [...], COLUMN: [...]}`` for each column the later stages fill (as :meth:`tag`'s). Words
        are the syntactic words: a multiword token (``du``) comes as its words (``de``, ``le``)."""
        from tagger.inference import InputCheck
        from tagger.pipeline import split_raw
        from tagger.tokenization.stream import raw_sentences

        tokenizer, module = split_raw(self.module)
        if tokenizer is None:
            raise TaggerError("tag_text reads raw text and this model has no tokenizer first (tagger train --task "
                              "tokenize); model.tag takes tokens")
        records = list(raw_sentences(tokenizer, io.BytesIO(text.encode("utf-8")), presegmented))
        if module is not None:
            self._annotate(records, None, None, InputCheck(module, allow_missing_columns, self.meta, allow_option=ALLOW))
        columns = module.output_columns if module is not None else []
        texts = [next((line[len("# text = "):] for line in s.raw["lines"] if line.startswith("# text = ")), "")
                 for s in records]
        return [{"text": t, "words": s.words, **{name: output_value(s, name) for name in columns}}
                for t, s in zip(texts, records)]

    def _refuse_raw(self, what: str) -> None:
        """A one-line error for a tokenizer alone, which reads raw text, where tokens are given (a
        pipeline that begins with one runs its later stages on them)."""
        from tagger.pipeline import split_raw

        if split_raw(self.module)[1] is None:
            raise TaggerError(f"a tokenizer reads raw text, but {what}: use tag_file (tagger tag)")

    def _annotate(self, sentences: list[Sentence], top_k: int | None, beta: float | None,
                  check: Callable[[list[Sentence]], None]) -> list | None:
        """Predict and write the model's columns into ``sentences``, batched as ``tagger tag``
        does; returns the multi-tags (``top_k``/``beta``), else None."""
        from tagger.inference import annotate, multitag_decoder

        multi = top_k is not None or beta is not None
        decode = multitag_decoder(self.module, top_k, beta) if multi else None
        extra: list = []
        for chunk in chunks(sentences, CHUNK_SIZE):
            check(chunk)
            extra.extend(annotate(self.module, chunk, MAX_TOKENS, decode))
        return extra if multi else None

    def tag_lines(self, lines: Iterable[str], format: str | None = None, *, supertag_in: str = "misc",
                  allow_missing_columns: bool = False) -> list[str]:
        """Plain-text lines (one sentence each, tokens split on whitespace) tagged, each as the
        text ``tagger tag`` writes for it in output ``format`` (default: :meth:`tag_file`'s, conllu
        or a constituency parser's trees; a blank line gives ``""``), so that the outputs joined
        are ``tagger tag``'s output for the lines: what a batch of a distributed engine needs
        (:class:`BatchTagger`)."""
        from tagger.formats.placement import check_output, write_chunk
        from tagger.formats.text import MAX_WORDS, pieces
        from tagger.inference import InputCheck
        from tagger.tagging import default_output_format

        self._refuse_raw("tag_lines takes tokenised lines")
        format = format or default_output_format(self.module)
        check_output(self.module.output_columns, format, supertag_in)

        lines = list(lines)  # a line of more than MAX_WORDS tokens is several sentences, as in tagger tag
        sentences = [[Sentence(words, {}, source="<lines>", line=i + 1) for words in pieces(line, MAX_WORDS)]
                     for i, line in enumerate(lines)]
        records = [s for line in sentences for s in line]
        self._annotate(records, None, None, InputCheck(self.module, allow_missing_columns, self.meta, allow_option=ALLOW))
        out = []
        for line in sentences:
            buffer = io.StringIO()
            if line:
                write_chunk(line, None, self.module, buffer, format, supertag_in)
            out.append(buffer.getvalue())
        return out

    def tag_file(self, path_in: Inputs, path_out: str | os.PathLike | IO[str] | None, format: str | None = None,
                 input_format: str = "auto", *, columns: str | None = None, supertag_in: str = "misc",
                 top_k: int | None = None, beta: float | None = None, chunk_size: int = CHUNK_SIZE,
                 on_error: str = "fail", allow_missing_columns: bool = False,
                 show_attention: str | os.PathLike | None = None, presegmented: bool = False) -> dict[str, int]:
        """``tagger tag``: read ``path_in`` (a file, a folder, a list of them, a binary stream;
        None: stdin) in ``input_format`` (auto detects), write ``path_out`` (a path, a text
        stream; None or ``-``: stdout) in output ``format`` (default conllu, jsonl with
        ``top_k``/``beta``), streaming ``chunk_size`` sentences at a time. The options are the
        command's (``columns``: a ``--columns`` spec such as ``form=1``; ``show_attention``: a
        picture file of the attention matrix of the first sentence, for models with attention;
        ``presegmented``: raw text read by a tokenizer holds one sentence a line).
        Returns the counts ``{"sentences", "tokens"}`` and the model's own (``repaired``: trees
        that needed repair), which a note on stderr reports. The engine :func:`load` chose runs
        it (:func:`tagger.engines.tag_file`: the torch-free runtimes, paths in and out), else torch
        (:func:`tagger.tagging.tag_file`): the same bytes either way."""
        request = TagRequest(format, input_format, columns, supertag_in, top_k, beta, chunk_size, on_error,
                             allow_missing_columns, show_attention, presegmented)
        with read_once(path_in) as path_in:
            if self.engine is not None:
                counts = engines.tag_file(self.engine, path_in, path_out, request, self._torch_model)
                if counts is not None:
                    return counts
            from tagger.tagging import tag_file

            return tag_file(self.module, self.meta, _source(path_in), path_out, request)

    def _torch_model(self, paths: Sequence[str], device: str, threads: int | None, precision: str = "fp32") -> Any:
        """The torch model of some of this model's files, for the runtimes to fall back on: this
        model's own where they ask for all of its files as loaded, else one kept for next time."""
        engine, key = self.engine, (tuple(os.fspath(p) for p in paths), device, threads, precision)
        if key == (engine.paths, engine.device, engine.threads, engine.precision):
            return self.module
        if key not in self._torch:
            from tagger.inference import load_module

            self._torch[key] = load_module(*key)[0]
        return self._torch[key]

    def evaluate(self, data: str | os.PathLike | Sequence[Sentence], format: str = "auto",
                 columns: str | None = None, allow_missing_columns: bool = False, beta: float | None = None,
                 train_words: set[str] | None = None, evalb_params: str | os.PathLike | None = None) -> dict[str, Any]:
        """Tag (parse) ``data`` (a file, or :class:`Sentence` records with gold columns) and score
        it against its gold columns as ``tagger evaluate --model`` does: see :func:`evaluate`."""
        from tagger.evaluation.evalb import read_params
        from tagger.inference import InputCheck
        from tagger.pipeline import Pipeline
        from tagger.scoring import score_model

        self._refuse_raw("evaluate scores given tokens (score its output with tagger evaluate --gold G --pred P)")
        gold = _gold(data, format, columns)
        for name in self.module.output_columns:
            if not any(sentence.has(name) for sentence in gold):
                raise TaggerError(f"no gold '{name}' column to score the model's output against", _name(data))
        InputCheck(self.module, allow_missing_columns, self.meta, allow_option=ALLOW)(gold)
        if isinstance(self.module, Pipeline):  # stages in turn, scored as `tagger evaluate --model` scores them
            if beta is not None:
                raise TaggerError("beta: multi-tagging is of one tagger, not of a pipeline", self.path)
            return self._evaluate_pipeline(gold, _name(data))
        result = score_model(self.module, self.meta, self.path or "model", gold, _name(data), beta=beta,
                             train_words=train_words, columns=columns,
                             evalb_params=read_params(evalb_params) if evalb_params else None)
        main = result.metrics[_metric_key(self.kind, self.output_columns)]
        return {"model": self.path, "data": _name(data), "columns": self.output_columns, "sentences": len(gold),
                "score_name": main.score_name, "score": 100.0 * main.score, **result.to_dict()}

    def _evaluate_pipeline(self, gold: list[Sentence], name: str) -> dict[str, Any]:
        """:meth:`evaluate` of a pipeline: its stages fill copies of the gold sentences (nothing
        gold but the words), then every output tag column and the trees are scored
        (:func:`tagger.scoring.evaluate_sentences`); the score is the last stage's (a parser's LAS)."""
        from tagger.inference import annotate
        from tagger.scoring import evaluate_sentences

        outputs = set(self.output_columns)
        pred = [Sentence(list(s.words), {k: v for k, v in s.columns.items() if k not in outputs}, s.source, s.line)
                for s in gold]
        for chunk in chunks(pred, CHUNK_SIZE):
            annotate(self.module, chunk, MAX_TOKENS)
        tags = [c for c in self.output_columns if c not in ("head", "deprel")]
        result = evaluate_sentences(gold, pred, column=",".join(tags) or None, gold_name=name, aligned=False)
        main = result.parsing or result.tagging
        return {"model": self.path, "data": name, "columns": self.output_columns, "sentences": len(gold),
                "score_name": main.score_name, "score": 100.0 * main.score, **result.to_dict()}


def _metric_key(kind: str, columns: list[str]) -> str:
    """Where ``tagger evaluate --json`` puts a model's scores: ``tagging``, ``parsing`` (a
    dependency parser's) or ``const`` (a constituency parser's brackets)."""
    return "tagging" if kind == "tagger" else "const" if TREE in columns else "parsing"


def _name(data: Any) -> str:
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else "<sentences>"


def _gold(data: str | os.PathLike | Sequence[Sentence], fmt: str, columns: str | None) -> list[Sentence]:
    """The gold sentences to score on: read from a file as ``tagger train`` reads them
    (supertags from CoNLL MISC), or the records given; a :class:`TaggerError` if there are none."""
    from tagger.training.request import DataSpec, read_sentences

    if isinstance(data, (str, os.PathLike)):
        gold = read_sentences(DataSpec(os.fspath(data), fmt, columns))
    else:
        gold = [s for s in data if len(s)]
    if not gold:
        raise TaggerError("no sentences to evaluate", _name(data))
    return gold


def evaluate(model: Model | str | os.PathLike, data: str | os.PathLike | Sequence[Sentence], *, format: str = "auto",
             columns: str | None = None, device: str = "cpu", threads: int | None = None, precision: str = "auto",
             allow_missing_columns: bool = False, beta: float | None = None,
             train_words: set[str] | None = None, evalb_params: str | os.PathLike | None = None) -> dict[str, Any]:
    """Score ``model`` (a :class:`Model` or a model file's path) on ``data`` (a gold file in
    ``format``, auto detects; or :class:`Sentence` records). Returns a plain dict: ``score``
    (percent) and ``score_name`` (accuracy, LAS; a tagger of several columns: mean accuracy, the
    mean of the columns'), ``columns`` (those scored), and the metric's counts under ``tagging``
    (taggers; of several columns: ``accuracy`` (the mean), ``columns`` (each one's counts, as a
    one-column tagger's) and ``all_tags`` (words with every column right)) or ``parsing``
    (parsers), as ``tagger evaluate --json``; with ``beta`` also ``multitag`` (``--beta``). Accuracy
    on unseen words counts the words not in ``train_words``, else not in the model's training file
    where that is still where it was. Trees are scored as EVALB with ``evalb_params`` (a parameter
    file; COLLINS.prm's settings unless given), as ``--evalb-params``."""
    if not isinstance(model, Model):
        model = load(model, device, threads, precision)
    return model.evaluate(data, format, columns, allow_missing_columns, beta, train_words, evalb_params)


def score(gold: str | os.PathLike, pred: str | os.PathLike, *, format: str = "auto", pred_format: str | None = None,
          task: str = "auto", column: str | None = None, aligned: bool | None = None, preterminals: str = "auto",
          columns: str | None = None, train: str | os.PathLike | None = None, train_format: str = "auto",
          evalb_params: str | os.PathLike | None = None, supertag_in: str = "misc") -> dict[str, Any]:
    """``tagger evaluate --gold GOLD --pred PRED --json`` without a model: a predicted file scored
    against a gold one, as a plain dict (scores in percent); the keywords are the command's
    options, built into the same :class:`tagger.scoring.ScoreRequest`. Files whose words differ (a
    tokenizer's output) are scored as the CoNLL 2018 shared task scores them, under
    ``"aligned"`` (``aligned`` True/False forces either; :func:`tagger.scoring.evaluate_files`).
    Trees: ``preterminals`` as ``--preterminals`` (auto: the gold tags where the predicted ones
    are not the gold file's tag set, as EVALB deletes punctuation by its tag)."""
    from tagger.scoring import ScoreRequest

    request = ScoreRequest(format=format, pred_format=pred_format, columns=columns, column=column, task=task,
                           aligned=aligned, preterminals=preterminals, train=train, train_format=train_format,
                           evalb_params=evalb_params, supertag_in=supertag_in)
    return request.files(gold, pred).to_dict()


def presets(model: str | None = None, table: str | None = None) -> list[dict[str, Any]]:
    """``tagger presets --json``: every named preset (of model family ``model``, or the rows of
    paper table ``table``), as :func:`tagger.ablation.list_presets` gives them."""
    from tagger.ablation import list_presets  # the zoo's tables: not needed to tag

    return list_presets(model, table)


class _QuietReporter:
    """Training progress for :func:`train`: nothing shown; each epoch's record to ``on_epoch``."""

    def __init__(self, on_epoch: Callable[[dict[str, Any]], None] | None):
        self.on_epoch = on_epoch

    def epoch_start(self, epoch: int, batches: int) -> None:
        pass

    def step(self, loss: float, tokens: int) -> None:
        pass

    def epoch_end(self, record: dict[str, Any]) -> None:
        if self.on_epoch is not None:
            self.on_epoch(record)

    def note(self, message: str) -> None:
        pass  # the notes are in the summary's "notes"


def _settings(values: Mapping[str, Any] | None) -> list[str]:
    """``--set`` values from a dict: ``{"lr_halving": False}`` as ``["lr_halving=false"]``."""
    if values is not None and not isinstance(values, Mapping):
        raise TaggerError(f"settings takes a dict of config keys and values ({{'hidden': 64}}), not {values!r:.60}")
    return [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in (values or {}).items()]


def _warn(line: str) -> None:
    if line.startswith("warning:"):
        print(line, file=sys.stderr, flush=True)


def train(*, train: str | os.PathLike | Sequence[str | os.PathLike], out: str | os.PathLike, task: str = "pos",
          dev: str | os.PathLike | Sequence[str | os.PathLike] | None = None, format: str = "auto",
          columns: str | None = None, column: str | None = None, model: str | None = None, preset: str | None = None,
          config_file: str | None = None, settings: Mapping[str, Any] | None = None, max_epochs: int | None = None,
          batch_size: int | None = None, patience: int | None = None, max_minutes: float | None = None,
          max_sentences: int | None = None, seed: int = 1, device: str = "auto", threads: int | None = None,
          embeddings: str | None = None, bootstrap: str | None = None, gates: str | None = None,
          pos_model: str | None = None, jackknife: int | None = None, pos_preset: str | None = None,
          pos_config: str | None = None, pos_settings: Mapping[str, Any] | None = None,
          jackknife_dir: str | os.PathLike | None = None, jobs: int | None = None, parsers: int = 1,
          checkpoint_dir: str | os.PathLike | None = None, checkpoint_minutes: float | None = None,
          resume: bool = False, on_epoch: Callable[[dict[str, Any]], None] | None = None,
          encoder: str | None = None, tokenizer: bool = True, tokenizer_preset: str | None = None) -> dict[str, Any]:
    """``tagger train``: train a model on ``train`` (a file, a folder, or a list of files),
    keep the epoch that scores best on ``dev`` (default: every 20th training sentence held out)
    and write it to ``out``. The options are the command's; ``settings`` the ``--set`` values
    (``{"hidden": 128, "lr": 0.01}``), ``pos_settings`` the ``--pos-set`` values of the
    ``jackknife`` taggers. Warnings go to stderr, each epoch's record (scores 0-1) to
    ``on_epoch``. Returns the summary ``tagger train --json`` prints (scores in percent)."""
    from tagger.training.dispatch import train as run_train
    from tagger.training.request import build_request

    request = build_request(
        task=task, train=train, out=out, dev=dev, format=format, columns=columns, column=column, model=model,
        preset=preset, config_file=config_file, overrides=_settings(settings), max_epochs=max_epochs,
        batch_size=batch_size, patience=patience, max_minutes=max_minutes, max_sentences=max_sentences, seed=seed,
        device=device, threads=threads, embeddings=embeddings, bootstrap=bootstrap, gates=gates, pos_model=pos_model,
        jackknife=jackknife, pos_preset=pos_preset, pos_config=pos_config, pos_overrides=_settings(pos_settings),
        jackknife_dir=jackknife_dir, jobs=jobs, parsers=parsers, checkpoint_dir=checkpoint_dir,
        checkpoint_minutes=checkpoint_minutes, resume=resume, encoder=encoder, tokenizer=tokenizer,
        tokenizer_preset=tokenizer_preset)
    set_threads(threads)
    return run_train(request, _QuietReporter(on_epoch), _warn)


def ensemble(models: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """``tagger ensemble``: combine trained transition parsers (or pipelines: their parsers) into
    one model that parses with all of them (:func:`tagger.ensembling.combine`); its summary."""
    from tagger.ensembling import combine

    return combine(list(models), out)


def distill(*, teachers: Sequence[str | os.PathLike], train: str | os.PathLike | Sequence[str | os.PathLike],
            out: str | os.PathLike, dev: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
            format: str = "auto", columns: str | None = None, column: str | None = None, preset: str | None = None,
            config_file: str | None = None, settings: Mapping[str, Any] | None = None, temperature: float = 1.0,
            gold_weight: float | None = None,
            top_k: int | None = None, embeddings: str | None = None,
            unlabeled: str | os.PathLike | Sequence[str | os.PathLike] | None = None, max_epochs: int | None = None,
            batch_size: int | None = None, patience: int | None = None, max_minutes: float | None = None,
            max_sentences: int | None = None,
            seed: int = 1, device: str = "auto", threads: int | None = None,
            on_epoch: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """``tagger distill``: train a student tagger (``preset``, default ``small``) on the averaged
    distributions of the trained taggers ``teachers`` over ``train``, keep its best epoch on gold
    ``dev`` and write it to ``out``. ``column``: the columns it learns (``"upos,xpos"``; None:
    every one the teachers all predict). Returns the summary ``tagger distill --json`` prints."""
    from tagger.config import check_options
    from tagger.training.dispatch import distill as run_distill
    from tagger.training.distill import DEFAULT_GOLD_WEIGHT, DEFAULT_TOP_K, DistillRequest
    from tagger.training.request import DataSpec, RunOptions, data_source

    if isinstance(teachers, (str, os.PathLike)):
        raise TaggerError("teachers takes a list of model files, not one path")
    check_options(max_epochs=max_epochs, batch_size=batch_size, patience=patience, max_minutes=max_minutes,
                  max_sentences=max_sentences, threads=threads, seed=seed)
    set_threads(threads)
    request = DistillRequest(
        teachers=tuple(os.fspath(t) for t in teachers), train=DataSpec(data_source(train), format, columns, max_sentences),
        dev=DataSpec(data_source(dev), format, columns) if dev is not None else None, out=os.fspath(out),
        preset=preset, column=column, config_file=config_file, overrides=tuple(_settings(settings)), max_epochs=max_epochs,
        batch_size=batch_size, patience=patience, temperature=temperature,
        gold_weight=DEFAULT_GOLD_WEIGHT if gold_weight is None else gold_weight,
        top_k=DEFAULT_TOP_K if top_k is None else top_k, embeddings=embeddings,
        unlabeled=DataSpec(data_source(unlabeled), format, columns) if unlabeled is not None else None,
        options=RunOptions(seed=seed, device=device, max_minutes=max_minutes),
    )
    return run_distill(request, _QuietReporter(on_epoch), _warn)


class BatchTagger:
    """A callable class for a distributed engine's map over batches of text lines (Ray Data
    ``map_batches``, or any engine that hands a batch as a mapping of column -> values): the
    model is loaded once per worker (in ``__init__``), and each batch's ``column`` of plain-text
    lines becomes an ``output`` column holding, per line, the text ``tagger tag`` writes for it
    (:meth:`Model.tag_lines`): the rows joined in order are ``tagger tag``'s output."""

    def __init__(self, model_path: str, column: str = "text", output: str = "conllu", format: str = "conllu",
                 device: str = "cpu", threads: int | None = None, precision: str = "auto"):
        self.model = load(model_path, device, threads, precision)
        self.column, self.output, self.format = column, output, format

    def __call__(self, batch: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
        return {self.output: self.model.tag_lines([str(line) for line in batch[self.column]], self.format)}
