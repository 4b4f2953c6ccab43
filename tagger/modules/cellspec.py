"""The options of one recurrent layer (:class:`CellSpec`) and of a stack's composition, as plain
data without torch: the model configs (``tagger.models.*.config``) and the torch-free runtime
read them; :mod:`tagger.modules.recurrent` computes them (and re-exports these names)."""

from __future__ import annotations

from dataclasses import dataclass

CELLS = ("lstm", "block", "rhn")
# Where k_t enters: "gates" (all pre-activations, LSTM), "internal" (c, or the block's m), "output"
# (h), "both" (c and h: 2017 case 1; the block's default). A block with "none" means "both".
SKIPS = ("none", "gates", "internal", "output", "both")
# The gate γ on the shortcut γ ⊙ map(k) (docs/zoo.md has the equations):
#   none       γ = 1
#   recurrent  γ = σ(W_x,g x + W_h,g h_{t-1} + U K + b_g)   (paper 000, Eq. 49)
#   input      γ = σ(W_g h_t^{l-1})                         (paper 001 default)
#   hidden     γ = σ(W_h,g h_{t-1} + b_g)
#   skip       γ = σ(U K)
#   output     γ = o, the cell's output gate                (001 Table 2 "share gate")
#   linear     γ ⊙ k := w ⊙ k
#   bernoulli  γ ~ Bernoulli(0.5) in training, 0.5 at test
#   bernoulli-learned  γ ~ Bernoulli(σ(W_g h_t^{l-1})) (straight-through), its mean at test
GATES = ("none", "recurrent", "input", "hidden", "skip", "output", "linear", "bernoulli", "bernoulli-learned")
SKIP_MAPS = ("identity", "sigmoid", "tanh")
# What K sums over the source layers: their outputs h^j, their cells c^j (m^j), or c^j into the
# cell and h^j into the output, each with its own gate (001 Table 2 "separate gates").
SOURCES = ("output", "internal", "separate")
MIXES = ("add", "highway")  # v + γ⊙k, or (1-γ)⊙v + γ⊙k
COMPOSITIONS = ("chain", "nested", "adjacent")


@dataclass(frozen=True)
class CellSpec:
    """What one layer computes; see docs/zoo.md for every option's equation."""

    cell: str = "lstm"  # "lstm" (c_t = f⊙c_{t-1} + i⊙s), "block" (m = i⊙s, no self-connection), "rhn"
    skip: str = "none"  # where k_t enters, see SKIPS
    gate: str = "recurrent"
    skip_map: str = "identity"
    forget_bias: float = 0.0
    source: str = "output"
    mix: str = "add"
    ungated: str = ""  # "internal" or "output": no gate at that place (γ = 1 there)
    depth: int = 3  # the RHN's recurrence depth

    def __post_init__(self) -> None:
        for value, allowed, what in (
            (self.cell, CELLS, "cell"),
            (self.skip, SKIPS, "skip"),
            (self.gate, GATES, "gate"),
            (self.skip_map, SKIP_MAPS, "skip_map"),
            (self.source, SOURCES, "skip_source"),
            (self.mix, MIXES, "skip_mix"),
            (self.ungated, ("", "internal", "output"), "skip_ungated"),
        ):
            if value not in allowed:
                shown = ", ".join(repr(a) if not a else a for a in allowed)
                raise ValueError(f"{what} must be one of {shown}, not {value!r}")
        if self.cell == "block" and self.skip == "none":
            object.__setattr__(self, "skip", "both")  # a block is made of its shortcut
        problem = self._combination_problem()
        if problem:
            raise ValueError(problem)

    def _combination_problem(self) -> str:
        if self.cell == "rhn":
            if self.skip != "none":
                return "cell=rhn takes no shortcut: set skip=none"
            if not 1 <= self.depth <= 16:
                return f"rhn_depth must be between 1 and 16, not {self.depth}"
        if self.skip == "gates" and self.cell != "lstm":
            return "skip=gates is an LSTM variant (2016 Eq. 32)"
        if self.source == "separate" and (self.cell, self.skip) != ("lstm", "both"):
            return "skip_source=separate needs cell=lstm and skip=both (c^j into the cell, h^j into the output)"
        if self.source == "separate" and self.gate not in ("none", "input"):
            return "skip_source=separate takes gate=input (one gate per place) or gate=none"
        if self.ungated and self.ungated not in self.places:
            return f"skip_ungated={self.ungated}: no shortcut enters there with skip={self.skip}"
        if self.mix == "highway" and (self.gate in ("none", "linear") or self.ungated):
            return "skip_mix=highway mixes by γ: it needs a gate at every place (not gate=none/linear, no skip_ungated)"
        if self.ungated and self.gate != "none" and self.places == (self.ungated,):
            return f"skip_ungated={self.ungated} leaves no gated place: use gate=none"
        return ""

    @property
    def places(self) -> tuple[str, ...]:
        """Where γ⊙k is added: () for no shortcut or skip=gates."""
        return {"internal": ("internal",), "output": ("output",), "both": ("internal", "output")}.get(self.skip, ())

    @property
    def recurrent_gate(self) -> bool:
        """Whether γ needs h_{t-1}: computed inside the scan as one more sigmoid block."""
        return self.gate in ("recurrent", "hidden")

    @property
    def reads_cells(self) -> bool:
        """Whether k comes (partly) from the source layers' cells rather than their outputs."""
        return self.source in ("internal", "separate")
