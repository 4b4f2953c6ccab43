"""The layers of docs/architecture.md hold (issue 32, item 7): the layers contract in
pyproject.toml (``[tool.importlinter]``, checked by import-linter: ``lint-imports`` from the
repository root says the same), no declared upward import, every module in a layer,
and no import circle but type-only ones (imports under ``if TYPE_CHECKING:``; imports inside
functions count).

``python -m pytest tests/test_layers.py`` shows the circles and upward arrows where there are any.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

importlinter = pytest.importorskip("importlinter")
grimp = pytest.importorskip("grimp")

from importlinter.api import read_configuration  # noqa: E402
from importlinter.cli import lint_imports  # noqa: E402
from importlinter.contracts.layers import LayersContract  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "pyproject.toml")
#: Modules in no layer: the package itself (``tagger/__init__.py`` re-exports the API, lazily:
#: nothing inside the package imports it, see below) and ``tagger/tokenization/__init__.py``
#: (a docstring; its modules are in two layers).
OUTSIDE = {"tagger", "tagger.tokenization"}


def _contract_options() -> dict:
    config = read_configuration(CONFIG)
    (layers,) = [c for c in config["contracts_options"] if c["type"] == "layers"]
    return layers


def _layer_modules(options: dict) -> list[list[str]]:
    layers = options["layers"]
    layers = [layers] if isinstance(layers, str) else layers
    return [[m.strip() for m in layer.replace(":", "|").split("|")] for layer in layers]


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("tagger", exclude_type_checking_imports=True, cache_dir=None)


def test_the_layer_contract_is_kept(capsys):
    """import-linter's own run of the contract (what ``lint-imports`` prints on failure, shown here)."""
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        code = lint_imports(config_filename=CONFIG, no_cache=True, no_logo=True)
    finally:
        os.chdir(cwd)
    assert code == 0, capsys.readouterr().out


def test_no_upward_import_is_declared():
    """The issue allowed one; the last (tagging -> cli.progress) went with the move of the progress
    helpers to tagger/progress.py. A new one needs a reason written beside it, and this test changed."""
    ignored = _contract_options().get("ignore_imports", [])
    assert not ignored


def test_every_module_is_in_a_layer(graph):
    """A new package or root module must be given its place in the contract (else nothing checks it)."""
    declared = [m for layer in _layer_modules(_contract_options()) for m in layer]
    outside = sorted(m for m in graph.modules
                     if m not in OUTSIDE and not any(m == d or m.startswith(d + ".") for d in declared))
    assert not outside, f"modules in no layer of pyproject.toml's [tool.importlinter]: {outside}"


def test_nothing_inside_imports_the_package_itself(graph):
    """``tagger/__init__.py`` imports the API (lazily, on ``tagger.load`` etc.): a module that did
    ``from tagger import __version__`` would reach the top layer through it (the version is in
    :mod:`tagger.version`)."""
    importers = sorted(m for m in graph.find_modules_that_directly_import("tagger") if m != "tagger.__main__")
    assert not importers


def _circles(graph) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_circles_but_type_only_ones(graph):
    circles = _circles(graph)
    assert not circles, "import circles (module -> ... -> module): " + "; ".join(
        " -> ".join(graph.find_shortest_chain(c[0], c[1]) + graph.find_shortest_chain(c[1], c[0])[1:]) for c in circles)


def test_circle_finder_and_contract_catch_what_they_should():
    """The checks above are not vacuous: an import from a low layer up to the API, added to the
    graph, breaks the contract and closes a circle."""
    build = lambda: grimp.build_graph("tagger", exclude_type_checking_imports=True, cache_dir=None)  # noqa: E731
    upward = build()
    upward.add_import(importer="tagger.corpus.records", imported="tagger.api")
    assert _circles(upward)
    options = _contract_options()
    contract = LayersContract(name="copy", session_options={"root_packages": ["tagger"]},
                              contract_options={k: v for k, v in options.items() if k not in ("name", "type")})
    assert contract.check(build(), verbose=False).kept
    assert not contract.check(upward, verbose=False).kept
