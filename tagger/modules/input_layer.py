"""The tagger's input layer (SPEC §3): word, capitalisation and first/last-character features,
combined over a context window with logistic gates.

``f_t = [E_w(w_t); E_a(a_t); E_c(chars_t)]`` (plus, optionally, ``CNN(spelling_t)``, a
character-CNN encoding of the whole word, and ``E_s(units_t)``, the mean embedding of the word's
known subword units, each computed once per distinct word) and, for a window of d=3,
``x_t = [r_{-1} f_{t-1}; r_0 f_t; r_{+1} f_{t+1}]`` with ``r = σ(W_r [f_{t-1}; f_t; f_{t+1}] + b_r)``.
"""

from __future__ import annotations

import threading
from operator import itemgetter

import torch
from torch import nn
from torch.nn import functional as F

from tagger.corpus.features import (CAPS_FIRST, CAPS_LOWER, CAPS_MIXED, CAPS_NONE, CAPS_UPPER, CHAR_BOW,  # noqa: F401
                                    CHAR_EOW, CHAR_PAD_WORD, InputFeaturizer, canonical, caps_class, char_slots,
                                    normalize, spelling)
from tagger.modules import recurrent  # the C steps (_fastscan) and whether to use them (FUSED)
from tagger.modules.init import scaled_normal_
from tagger.modules.precision import ROW_QUANTUM, lowered_matmul


class InputLayer(nn.Module):
    """Embeds word, caps and char features and applies the gated context window.

    Any feature can be switched off by a zero dimension; ``window`` is odd (1 = no context).
    ``cnn_filters`` > 0 adds the character CNN: its own ``cnn_dim``-dim character embeddings, a
    convolution of width ``cnn_width`` and a max over positions, then tanh (:meth:`spelling`).
    ``pretrained`` (rows, dim) adds a frozen table of pretrained vectors (fp16, a buffer) read by
    the same word ids, the first ``n_words`` of them the trained embedding's rows and the rest
    words it does not have (their trained part is UNK's): ``E_w(w) = E(w) + P v(w)``, ``P`` a
    trained projection [dim → word_dim] (:meth:`add_pretrained`). ``subwords`` (units, dim)
    adds the mean embedding of a word's known subword units (:meth:`bag`), last in the features.
    """

    def __init__(self, n_words: int, n_chars: int, word_dim: int, caps_dim: int, char_dim: int, char_length: int, window: int, window_gates: bool, init_scale: float = 0.1,
                 cnn_filters: int = 0, cnn_width: int = 3, cnn_dim: int = 0, pretrained: tuple[int, int] = (0, 0),
                 subwords: tuple[int, int] = (0, 0)):
        super().__init__()
        if window < 1 or window % 2 == 0:
            raise ValueError(f"window must be an odd number ≥ 1, not {window}")
        if cnn_filters and (cnn_width < 1 or cnn_dim < 1):
            raise ValueError("the character CNN needs a width and a character dimension ≥ 1")
        self.word = nn.Embedding(n_words, word_dim, padding_idx=0) if word_dim else None
        self.caps = nn.Embedding(6, caps_dim, padding_idx=0) if caps_dim else None
        self.char = nn.Embedding(n_chars, char_dim, padding_idx=0) if char_dim and char_length else None
        self.feature_size = (word_dim + caps_dim + (char_dim * 2 * char_length if self.char is not None else 0) + cnn_filters
                             + (subwords[1] if subwords[0] else 0))
        if self.feature_size == 0:
            raise ValueError("every input feature is switched off")
        self.window = window
        self.gates = nn.Linear(window * self.feature_size, window) if window > 1 and window_gates else None
        for emb in (self.word, self.caps, self.char):
            if emb is not None:
                nn.init.normal_(emb.weight, 0.0, init_scale)
                emb.weight.data[0].zero_()
        if self.gates is not None:
            scaled_normal_(self.gates.weight, self.gates.in_features, init_scale)
            nn.init.zeros_(self.gates.bias)
        self.word_rows = WordRows()  # evaluation only; plain tensors, never saved
        self._flat: tuple[tuple, torch.Tensor] | None = None  # flat_weight's copy, never saved
        # Created last, and only when used: without the CNN, parameters and random draws are unchanged.
        self.cnn_char = nn.Embedding(n_chars, cnn_dim, padding_idx=0) if cnn_filters else None
        # Full convolution (padding width-1 on both sides): every window holds at least one symbol
        # of the word, so any width ≥ 1 works, even for a one-letter word.
        self.cnn = nn.Conv1d(cnn_dim, cnn_filters, cnn_width, padding=cnn_width - 1) if cnn_filters else None
        if self.cnn is not None:
            nn.init.normal_(self.cnn_char.weight, 0.0, init_scale)
            self.cnn_char.weight.data[0].zero_()
            scaled_normal_(self.cnn.weight, cnn_dim * cnn_width, init_scale)
            nn.init.zeros_(self.cnn.bias)
        self.register_buffer("pretrained", None)  # the frozen table, last too (see add_pretrained)
        self.project: nn.Linear | None = None
        self.init_scale = init_scale
        if pretrained[0]:
            self.add_pretrained(torch.zeros(pretrained, dtype=torch.float16))
        # Last of all, and only when used: without it, parameters and random draws are unchanged.
        self.subword = nn.Embedding(subwords[0], subwords[1], padding_idx=0) if subwords[0] else None
        if self.subword is not None:
            nn.init.normal_(self.subword.weight, 0.0, init_scale)
            self.subword.weight.data[0].zero_()

    @property
    def output_size(self) -> int:
        return self.window * self.feature_size

    def add_pretrained(self, table: torch.Tensor) -> None:
        """Takes ``table`` [R, dim] as the frozen table of pretrained vectors (stored in fp16; its
        first rows those of the trained embedding's words, zero where a word has none), with a
        new projection to ``word_dim`` (N(0, 1/√dim) × the init scale)."""
        assert self.word is not None, "a table of pretrained vectors needs word embeddings"
        device = self.word.weight.device
        self.register_buffer("pretrained", table.to(device=device, dtype=torch.float16).contiguous())
        self.project = nn.Linear(table.shape[1], self.word.embedding_dim, bias=False).to(device)
        scaled_normal_(self.project.weight, table.shape[1], self.init_scale)

    def start_from_pretrained(self, rows: list[int]) -> None:
        """Training starts from the pretrained vectors (Dozat & Manning): the trained embedding
        of the words ``rows`` that have one is zero, and where the sizes are equal the projection
        is the identity, so that ``E_w(w) = v(w)`` at first."""
        assert self.word is not None and self.project is not None
        with torch.no_grad():
            if rows:
                self.word.weight[torch.tensor(rows, device=self.word.weight.device)] = 0.0
            if self.project.weight.shape[0] == self.project.weight.shape[1]:
                self.project.weight.copy_(torch.eye(self.project.weight.shape[0]))

    def word_vectors(self, words: torch.Tensor) -> torch.Tensor:
        """``E_w`` of word ids of any shape: the trained embedding, plus the projected pretrained
        vector where there is a table (ids past the trained rows read UNK's trained row)."""
        assert self.word is not None
        if self.pretrained is None:
            return self.word(words)
        trained = words.masked_fill(words >= self.word.num_embeddings, 1)  # 1: UNK
        return self.word(trained) + self.project(self.pretrained[words].to(self.project.weight.dtype))

    def load_vectors(self, vectors: torch.Tensor, rows: torch.Tensor) -> None:
        """Copy pretrained ``vectors`` [N, word_dim] into the word embedding rows ``rows`` [N]."""
        assert self.word is not None
        with torch.no_grad():
            self.word.weight[rows] = vectors

    def spelling(self, spelled: torch.Tensor) -> torch.Tensor:
        """The character CNN: spelled [N, L] char ids (``<w>`` word ``</w>``, 0-padded; see
        :func:`spelling`) → [N, cnn_filters], ``tanh(max_p (conv(E(spelled)))_p)`` over the
        positions p whose window holds a symbol of the word. A row with no symbols (row 0, the
        padding word) gives the zero vector, as the other features do for padding.

        Run it on a batch's distinct words (``TaggerBatch.spelled``) and gather per token.
        """
        assert self.cnn is not None, "this input layer has no character CNN"
        n, length = spelled.shape
        if length == 0:
            return spelled.new_zeros(n, self.cnn.out_channels, dtype=self.cnn.weight.dtype)
        conv = self.cnn(self.cnn_char(spelled).transpose(1, 2))  # [N, K, L + width - 1]
        symbols = (spelled > 0).sum(1, keepdim=True)  # [N, 1]; ids are left-aligned
        positions = torch.arange(conv.shape[-1], device=spelled.device)
        inside = positions < symbols + (self.cnn.kernel_size[0] - 1)  # [N, P]
        pooled = conv.masked_fill(~inside.unsqueeze(1), float("-inf")).amax(-1)  # [N, K]
        return torch.tanh(pooled.masked_fill(symbols == 0, 0.0))

    def bag(self, units: torch.Tensor) -> torch.Tensor:
        """The subword units' mean embedding: units [N, K] ids of each word's known units,
        0-padded → [N, dim]; the zero vector for a word without any (and row 0, padding).
        Run it on a batch's distinct words (``TaggerBatch.units``) and gather per token."""
        assert self.subword is not None, "this input layer has no subword embedding"
        known = (units > 0).unsqueeze(-1)  # [N, K, 1] (row 0 is zero in training, but need not be)
        rows = self.subword(units).masked_fill(~known, 0.0)
        return rows.sum(1) / known.sum(1).clamp(min=1).to(rows.dtype)

    def forward(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor, spelling: torch.Tensor | None = None,
                bags: torch.Tensor | None = None) -> torch.Tensor:
        """words, caps: [T, B]; chars: [T, B, 2l]; spelling (with the CNN): [T, B, cnn_filters],
        :meth:`spelling` gathered per token (time-major); bags (with subwords): [T, B, dim],
        :meth:`bag` gathered per token → [T, B, window · feature_size]."""
        f = self.features(words, caps, chars, spelling, bags)
        if self.window == 1:
            return f
        half = self.window // 2
        padded = F.pad(f, (0, 0, 0, 0, half, half))  # zero vectors beyond the sentence edges
        steps = f.shape[0]
        context = torch.cat([padded[j : j + steps] for j in range(self.window)], -1)  # [T, B, d·F]
        if self.gates is None:
            return context
        r = torch.sigmoid(self.gates(context))  # [T, B, d]
        return (context.view(*context.shape[:2], self.window, -1) * r.unsqueeze(-1)).flatten(2)

    def project_by_type(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor, types: torch.Tensor,
                        weight: torch.Tensor, bias: torch.Tensor, spelled: torch.Tensor | None = None,
                        forms: list[str] | None = None, units: torch.Tensor | None = None) -> torch.Tensor:
        """``x_t · weight[d] + bias[d]`` for both directions, in scan order, without building x_t.

        With ``x_t = [r_j f_{t+j}]_j``, ``x_t W = Σ_j r_j(t) (f_{t+j} W_j)``, and the gates'
        pre-activation is ``b_r + Σ_j f_{t+j} W_{r,j}``: every product is a function of one word,
        so it is computed once per distinct word and gathered (Chen & Manning's precomputation,
        applied to the tagger's first layer). No dropout: inference only. Given the batch's
        ``forms``, a word's products are also kept for later batches (:class:`WordRows`).

        words, caps: [U+1]; chars: [U+1, 2l]; spelled (with the CNN): [U+1, L]; units (with
        subwords): [U+1, K] for the batch's distinct words (row 0: padding); forms: their U spellings; types: [T, B] rows of each
        token; weight: [2, d·F, G]; bias: [2, 1, G] → [2, T, B, G], direction 1 reversed in time
        (what :class:`~tagger.modules.recurrent.BiLayer` scans).
        """
        def rows(index: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
            pick = lambda t: t if index is None or t is None else t[index]  # noqa: E731
            return self.word_products(pick(words), pick(caps), pick(chars), pick(spelled), weight, pick(units))

        if forms is None or torch.is_grad_enabled():  # kept rows must hold no autograd history
            return self.gather_products(*rows(), types, bias)
        with self.word_rows.lock:  # batches in threads (tagger.inference.predict) share the kept rows
            tables, gate_in, slot_of_row = self.word_rows.lookup(forms, rows, (weight, *self.parameters()))
            return self.gather_products(tables, gate_in, slot_of_row[types], bias)

    def gather_products(self, tables: torch.Tensor, gate_in: torch.Tensor, types: torch.Tensor,
                        bias: torch.Tensor) -> torch.Tensor:
        """:meth:`project_by_type` from the per-word products (:meth:`word_products`) ``tables``
        [2d, N, G] and ``gate_in`` [N, d·d]: types [T, B] rows of each token, bias [2, 1, G] →
        [2, T, B, G]."""
        d, width = self.window, tables.shape[-1]
        steps, batch = types.shape
        if (recurrent.FUSED and not torch.is_grad_enabled() and tables.device.type == "cpu" and d <= 16
                and tables.dtype in (torch.float32, torch.bfloat16) and tables.stride(-1) == 1
                and gate_in.dtype == bias.dtype == torch.float32 and gate_in.is_contiguous() and bias.is_contiguous()):
            return self._gather_fused(tables, gate_in, types.contiguous(), bias)
        half = d // 2
        padded = F.pad(types, (0, 0, half, half))  # beyond the edges: row 0, the zero vector
        slots = [padded[j : j + steps] for j in range(d)]  # [T, B] rows of the word in slot j
        if self.gates is not None:
            gate_in = gate_in.view(-1, d, d)
            r = torch.sigmoid(self.gates.bias + sum(gate_in[slots[j], j] for j in range(d)))  # [T, B, d]
        else:
            r = tables.new_ones(steps, batch, d)
        out = tables.new_empty(2, steps, batch, width, dtype=bias.dtype)  # float32 also from bf16 tables
        for direction in range(2):
            ids = slots if direction == 0 else [slot.flip(0) for slot in slots]
            gates = r if direction == 0 else r.flip(0)
            acc = out[direction]
            acc.copy_(bias[direction].expand(steps, batch, width))
            for j in range(d):
                acc.addcmul_(gates[..., j : j + 1], F.embedding(ids[j], tables[2 * j + direction]))
        return out

    def _gather_fused(self, tables: torch.Tensor, gate_in: torch.Tensor, types: torch.Tensor,
                      bias: torch.Tensor) -> torch.Tensor:
        """:meth:`gather_products` in one C pass (``_fastscan.window_sum``): per token the window
        gates, then both directions' rows, reading each table row once (bf16 tables as they are)."""
        d, width = self.window, tables.shape[-1]
        steps, batch = types.shape
        out = torch.empty(2, steps, batch, width, dtype=torch.float32)
        gated = self.gates is not None
        gate_bias = self.gates.bias.detach().float().contiguous() if gated else None
        recurrent._fastscan.window_sum(steps, batch, width, d, tables.data_ptr(), tables.dtype == torch.bfloat16,
                                       tables.stride(0), tables.stride(1), gate_in.data_ptr() if gated else 0,
                                       gate_in.stride(0), gate_bias.data_ptr() if gated else 0, types.data_ptr(),
                                       bias.data_ptr(), bias.stride(0), out.data_ptr())
        return out

    def word_products(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor, spelled: torch.Tensor | None,
                      weight: torch.Tensor, units: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The per-word products of :meth:`project_by_type` for N words: ``f W_j`` for every
        (slot j, direction) [2d, N, G] (slot-major, each table contiguous) and ``f W_{r,j}``,
        the window gates' pre-activation terms, [N, d·d] (zero without gates)."""
        spelling = self.spelling(spelled) if self.cnn is not None else None
        bags = self.bag(units) if self.subword is not None else None
        f = self.features(words, caps, chars, spelling, bags)  # [N, F]
        d, size, width = self.window, self.feature_size, weight.shape[-1]
        # A weight in a lower dtype (inference, tagger.modules.precision): f is rounded to it, tables are float32.
        w = weight.view(2, d, size, width).transpose(0, 1)
        if torch.is_grad_enabled():
            tables = torch.matmul(f, w).flatten(0, 1)  # [2d, N, G]
        else:  # a word's row must not depend on the words computed with it (WordRows keeps rows across batches)
            flat = self.flat_weight(w)  # [F, 2d·G]: one product for every table
            same = weight.dtype == f.dtype
            # lowered: the products stay in their dtype (bf16 values, as float32 would hold them): half the bytes kept
            products = _in_blocks(f, WORD_BLOCK if same else ROW_QUANTUM,
                                  lambda block: block @ flat if same else lowered_matmul(block, flat, as_float=False))
            tables = products.view(-1, 2 * d, width).transpose(0, 1)  # [2d, N, G], each table strided
        if self.gates is None:
            return tables, f.new_zeros(f.shape[0], d * d)
        gates = self.gates.weight.view(d, d, size).permute(2, 1, 0).reshape(size, d * d)
        if torch.is_grad_enabled():
            return tables, f @ gates
        return tables, _in_blocks(f, WORD_BLOCK, lambda block: block @ gates)

    def flat_weight(self, w: torch.Tensor) -> torch.Tensor:
        """``w`` [2d, F, G] (slot-major tables, as :meth:`word_products` reads them) laid out as one
        matrix [F, 2d·G], kept until the weight changes (its storage or version counter)."""
        stamp = (w.data_ptr(), -1 if w.is_inference() else w._version, w.dtype, torch.is_inference_mode_enabled())
        if self._flat is None or self._flat[0] != stamp:
            self._flat = (stamp, w.flatten(0, -3).permute(1, 0, 2).reshape(w.shape[-2], -1).contiguous())
        return self._flat[1]

    def features(self, words: torch.Tensor, caps: torch.Tensor, chars: torch.Tensor, spelling: torch.Tensor | None = None,
                 bags: torch.Tensor | None = None) -> torch.Tensor:
        """f = [E_w(w); E_a(a); E_c(chars); spelling; bags]: [..., feature_size] for ids of any
        leading shape; ``spelling`` (:meth:`spelling`'s output, same leading shape) only with the
        CNN, ``bags`` (:meth:`bag`'s) only with subwords."""
        parts = []
        if self.word is not None:
            parts.append(self.word_vectors(words))
        if self.caps is not None:
            parts.append(self.caps(caps))
        if self.char is not None:
            parts.append(self.char(chars).flatten(-2))
        if self.cnn is not None:
            if spelling is None:
                raise ValueError("this input layer has a character CNN: pass its spelling vectors")
            parts.append(spelling)
        if self.subword is not None:
            if bags is None:
                raise ValueError("this input layer has a subword embedding: pass its bags")
            parts.append(bags)
        return torch.cat(parts, -1) if len(parts) > 1 else parts[0]


def padded_ids(rows: list[list[int]]) -> torch.Tensor:
    """The id lists ``rows`` as one [N, L] tensor, 0-padded to the longest (L may be 0): the
    per-word ids of the character CNN and of the subword units."""
    longest = max(map(len, rows), default=0)
    return torch.tensor([row + [0] * (longest - len(row)) for row in rows], dtype=torch.long).view(len(rows), longest)


#: Without autograd, the per-word products are computed as one matrix product per this many
#: words (the last block padded with zero rows): a matrix product's row can come out different in its last bits
#: with another number of rows, and kept rows (:class:`WordRows`) are computed with whichever
#: words a batch happens to bring, so this makes the output independent of the batches.
WORD_BLOCK = 64


def _in_blocks(x: torch.Tensor, rows: int, product) -> torch.Tensor:
    """``product(x)`` for ``x`` [N, F], computed ``rows`` rows at a time, each block padded to
    exactly ``rows`` rows: [..., N, M] whatever N."""
    n = x.shape[0]
    padded = x.new_zeros(-(-n // rows) * rows, x.shape[1])
    padded[:n] = x
    return torch.cat([product(block) for block in padded.split(rows)], -2)[..., :n, :]


class WordRows:
    """The first layer's per-word products (:meth:`InputLayer.word_products`), kept across
    batches in evaluation, keyed by spelling: a stream of text repeats its frequent words in
    every batch, and each costs ``2d · F · G`` multiply-adds (1.1 M for ``fast-cnn``) the first
    time only. Rows are valid while the weights they came from are unchanged (checked through
    the tensors' version counters, which every in-place update bumps). Memory stays within
    ``max_bytes`` (or one batch's rows, if larger): when a batch's new words do not fit, the
    half of the kept words used in the most batches stays (moved to the front) and the rest is
    dropped. (Emptying the whole table instead made tagging EWT train compute 47,189 rows for
    its 19,674 distinct words; keeping the most used half, 32,276.)"""

    def __init__(self, max_bytes: int = 48 << 20):
        self.max_bytes = max_bytes
        self.slots: dict[str, int] = {}
        self.uses: dict[str, int] = {}  # per kept word, the batches that looked it up
        self.lock = threading.Lock()  # held by each batch from lookup to the last gather of its rows
        self.tables: torch.Tensor | None = None  # [2d, capacity, G]; slot 0 is the zero row (padding)
        self.gate_in: torch.Tensor | None = None  # [capacity, d·d]
        self.key: tuple = ()

    def lookup(self, forms: list[str], compute, weights: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(tables, gate terms, slot of each batch row [U+1]) with every form of ``forms`` (the
        batch's rows 1..U) present; ``compute(index)`` gives the products of the batch rows
        ``index`` [M] (:meth:`InputLayer.word_products`)."""
        # Inference tensors (a bf16 copy of a weight made under inference_mode) keep no version
        # counter; a new copy has new storage.
        key = tuple((w.data_ptr(), -1 if w.is_inference() else w._version) for w in weights)
        if self.tables is not None and self.tables.is_inference() and not torch.is_inference_mode_enabled():
            self.tables = self.gate_in = None  # made under inference_mode: not writable outside it
        if key != self.key or self.tables is None:
            self.slots.clear()  # stale: start again
            self.uses.clear()
            self.key = key
        elif len(self.slots) + len(forms) >= self.tables.shape[1] >= self.max_rows(self.tables, self.gate_in):
            self.keep_most_used(self.tables.shape[1] - 1 - len(forms))
        slot_of_row = [0] * (len(forms) + 1)
        missing = []
        uses = self.uses
        for row, form in enumerate(forms, 1):
            slot = self.slots.get(form)
            if slot is None:
                missing.append(row)
                uses[form] = 1
            else:
                slot_of_row[row] = slot
                uses[form] += 1
        if missing:
            tables, gate_in = compute(torch.tensor(missing, dtype=torch.long, device=weights[0].device))
            start = len(self.slots) + 1
            if self.tables is None or self.tables.device != tables.device:
                self.allocate(tables, gate_in, start + len(missing), kept=0)
            elif start + len(missing) > self.tables.shape[1]:
                self.allocate(tables, gate_in, start + len(missing), kept=start)
            self.tables[:, start : start + len(missing)] = tables
            self.gate_in[start : start + len(missing)] = gate_in
            for offset, row in enumerate(missing):
                self.slots[forms[row - 1]] = slot_of_row[row] = start + offset
        assert self.tables is not None and self.gate_in is not None
        return self.tables, self.gate_in, torch.tensor(slot_of_row, device=self.tables.device)

    def max_rows(self, tables: torch.Tensor, gate_in: torch.Tensor) -> int:
        """The rows ``max_bytes`` holds, for tables shaped as ``tables`` [2d, ., G] and ``gate_in`` [., d·d]."""
        return self.max_bytes // ((tables.shape[0] * tables.shape[2] + gate_in.shape[1]) * tables.element_size())

    def allocate(self, tables: torch.Tensor, gate_in: torch.Tensor, needed: int, kept: int) -> None:
        """Room for ``needed`` rows shaped as ``tables``/``gate_in``, the first ``kept`` of the old
        ones copied: twice the old room (4,096 rows at first), at most what ``max_bytes`` holds (or
        ``needed``, if more). Growing as the text brings new words spares a short input the cost
        of zeroing the whole ``max_bytes`` (0.1 s of a first line)."""
        old = self.tables.shape[1] if kept and self.tables is not None else 0
        capacity = max(min(max(2 * old, 4096), self.max_rows(tables, gate_in)), needed)
        grown = tables.new_zeros(tables.shape[0], capacity, tables.shape[2])
        grown_gate_in = gate_in.new_zeros(capacity, gate_in.shape[1])
        if kept:
            assert self.tables is not None and self.gate_in is not None
            grown[:, :kept] = self.tables[:, :kept]
            grown_gate_in[:kept] = self.gate_in[:kept]
        self.tables, self.gate_in = grown, grown_gate_in

    def keep_most_used(self, room: int) -> None:
        """Keep at most half of the table's rows, and at most ``room``: those of the words used in
        the most batches (the earlier kept on ties), moved to slots 1, 2, ... in their order."""
        assert self.tables is not None and self.gate_in is not None
        count = max(0, min(room, (self.tables.shape[1] - 1) // 2))
        # uses holds the kept words in slot order, and a stable sort (reverse keeps it stable) breaks ties by slot
        kept = [form for form, _ in sorted(self.uses.items(), key=itemgetter(1), reverse=True)[:count]]
        kept.sort(key=self.slots.__getitem__)
        if kept:
            old = torch.tensor([self.slots[form] for form in kept], device=self.tables.device)
            self.tables[:, 1 : len(kept) + 1] = self.tables[:, old]
            self.gate_in[1 : len(kept) + 1] = self.gate_in[old]
        self.slots = {form: slot for slot, form in enumerate(kept, 1)}
        self.uses = {form: self.uses[form] for form in kept}
