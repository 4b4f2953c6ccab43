"""Pictures, with matplotlib (the optional ``plot`` extra: ``pip install 'tagger[plot]'``): the attention
matrix of ``tagger tag --show-attention`` and the ablation tables of ``tagger ablate --plot``."""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any, Callable

import torch

from tagger.errors import TaggerError

Attention = tuple[list[str], list[str], torch.Tensor]


#: Picture formats matplotlib writes without extra packages (the file name's suffix picks one).
PICTURE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff")


def check_picture_path(path: str | os.PathLike, option: str) -> None:
    """A one-line error now, before any work, for a picture that could not be written later: an
    unknown suffix or an unwritable folder. Missing folders are created (as for ``--out``)."""
    name = os.fspath(path)
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in PICTURE_SUFFIXES:
        raise TaggerError(f"{option}: the file name must end in one of {', '.join(PICTURE_SUFFIXES)}", name)
    folder = os.path.dirname(os.path.abspath(name))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise TaggerError(f"{option}: cannot make the folder: {e.strerror}", folder) from None
    if not os.access(folder, os.W_OK):
        raise TaggerError(f"{option}: the folder is not writable", folder)


def attention_drawer(model: Any, path: str | os.PathLike) -> Callable[[Attention, str | os.PathLike], None]:
    """:func:`draw_attention`, once it is known that ``model`` has attention, matplotlib is
    installed and ``path`` can be written (a one-line error otherwise, before anything is tagged)."""
    if not model.has_attention:
        raise TaggerError(f"--show-attention: the {model.name} model has no attention to show")
    if importlib.util.find_spec("matplotlib") is None:
        raise TaggerError("--show-attention needs matplotlib: pip install 'tagger[plot]'")
    check_picture_path(path, "--show-attention")
    return draw_attention


def draw_attention(attention: Attention, path: str | os.PathLike) -> None:
    """Draw the attention matrix (one column per emitted symbol, one row per input word, as in
    Vinyals et al.'s Figure 4) into the picture file ``path`` (its extension picks the format)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    words, symbols, matrix = attention
    weights = matrix.float().numpy().T  # [words, symbols]
    width = max(4.0, 0.28 * len(symbols) + 1.5)
    height = max(3.0, 0.28 * len(words) + 1.5)
    figure, axes = plt.subplots(figsize=(width, height))
    axes.imshow(weights, cmap="Greys", aspect="auto", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(symbols)), symbols, rotation=90, fontsize=8)
    axes.set_yticks(range(len(words)), words, fontsize=8)
    axes.set_xlabel("output symbol")
    axes.set_ylabel("input word (as the encoder reads it)")
    figure.tight_layout()
    _save(plt, figure, path)


def ablation_drawer(path: str | os.PathLike) -> Callable[[dict[str, Any], str | os.PathLike], None]:
    """:func:`draw_ablation`, once it is known that matplotlib is installed and ``path`` can be
    written (a one-line error otherwise, before anything is trained)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise TaggerError("--plot needs matplotlib: pip install 'tagger[plot]'")
    check_picture_path(path, "--plot")
    return draw_ablation


def _label(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


#: "(case 2)" in a table's Case column: dropped from the plot's row labels.
CASE_NUMBER = re.compile(r"\s*\(case \d+\)")


def draw_ablation(report: dict[str, Any], path: str | os.PathLike) -> None:
    """Draw an ablation table (:func:`tagger.ablation.table_report`) into the picture file
    ``path``: one line per row, the paper's dev and test figures on the left, ours on the right,
    each on its own scale (the data differ); rows without figures (not run yet) are left empty."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    rows = report["rows"]
    labels = [_label(f"{CASE_NUMBER.sub('', row['case']).strip()} · {row['row']}" if row["case"] else row["row"])
              for row in rows]
    height = max(2.5, 0.32 * len(rows) + 1.6)
    figure, axes = plt.subplots(1, 2, figsize=(11, height), sharey=True)
    positions = list(range(len(rows)))
    for ax, (title, dev_key, test_key) in zip(axes, (("paper", "paper_dev", "paper_test"), ("ours", "dev", "test"))):
        for key, marker, colour, offset, name in ((dev_key, "o", "tab:blue", -0.12, "dev"),
                                                   (test_key, "D", "tab:orange", 0.12, "test")):
            points = [(row[key], y + offset) for row, y in zip(rows, positions) if row[key] is not None]
            if points:
                ax.scatter([x for x, _ in points], [y for _, y in points], marker=marker, color=colour, label=name,
                           zorder=3)
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
        ax.margins(x=0.12, y=0.3 / max(1, len(rows)) + 0.05)
        ax.set_xlabel("accuracy (%)")
        if not ax.has_data():
            ax.text(0.5, 0.5, "not run yet", ha="center", va="center", transform=ax.transAxes, color="grey")
    axes[0].set_yticks(positions, labels, fontsize=8)
    axes[0].invert_yaxis()
    handles, names = axes[0].get_legend_handles_labels() if axes[0].has_data() else axes[1].get_legend_handles_labels()
    if handles:
        figure.legend(handles, names, loc="upper right", ncol=2, fontsize=8, frameon=False)
    figure.suptitle(f"{report.get('paper')}, Table {report.get('number')}: {report.get('title')}", fontsize=10)
    figure.tight_layout()
    _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: str | os.PathLike) -> None:
    """Write ``figure`` to ``path`` (its format from the suffix) and close it; a one-line error."""
    try:
        figure.savefig(path, dpi=120)
    except (OSError, ValueError) as e:
        raise TaggerError(f"cannot write the picture: {e}", os.fspath(path)) from None
    finally:
        plt.close(figure)
