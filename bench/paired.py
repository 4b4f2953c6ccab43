"""Two builds or settings of `tagger tag` in paired runs: each pair runs A and B back to back (the
order alternating), and the medians of the pairs' own ratios B/A are reported (session 27: on a
shared VM whose speed drifted 25% within minutes, medians taken minutes apart could not tell a 10%
change; the ratio within a pair could).

    python bench/paired.py --pairs 6 --a-path ../before --b-path . --env TAGGER_CPU=avx2 -- --model fast.tagger --threads 2
    python bench/paired.py --pairs 6 --b-env TAGGER_I8_KERNEL=none -- --model fast.tagger --threads 1

A side's ``--*-path`` is put first on PYTHONPATH (a worktree of another commit, its C steps built in
place); ``--*-env`` sets variables for that side only, ``--env`` for both. Whole processes
(`python -m tagger tag ARGS -q < FILE > /dev/null`, start-up included); wall and CPU seconds (the
process and its threads). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

EWT = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud-english-ewt"


def pairs_of(values: list[str]) -> dict[str, str]:
    """``VAR=VALUE`` items as a dict."""
    return dict(value.split("=", 1) for value in values)


def run(path: str | None, env: dict[str, str], args: list[str], source: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `tagger tag` process."""
    variables = {**os.environ, **env}
    if path:
        variables["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(path).resolve()), variables.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(source, "rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "tagger", "tag", *args, "-q"], stdin=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=variables, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"tagger tag failed:\n{done.stderr.decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--file", default=str(EWT / "en_ewt-ud-train.conllu"), help="What is tagged.")
    parser.add_argument("--a-path", help="A's tree (put first on PYTHONPATH); default: as installed.")
    parser.add_argument("--b-path", help="B's tree.")
    parser.add_argument("--env", action="append", default=[], metavar="VAR=VALUE", help="For both sides.")
    parser.add_argument("--a-env", action="append", default=[], metavar="VAR=VALUE")
    parser.add_argument("--b-env", action="append", default=[], metavar="VAR=VALUE")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="`tagger tag`'s arguments, after --.")
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    common = pairs_of(options.env)
    sides = {"a": (options.a_path, {**common, **pairs_of(options.a_env)}),
             "b": (options.b_path, {**common, **pairs_of(options.b_env)})}
    rows = []
    for i in range(options.pairs):
        order = ("a", "b") if i % 2 == 0 else ("b", "a")
        got = {side: run(*sides[side], args, Path(options.file)) for side in order}
        rows.append({"a_wall": got["a"][0], "a_cpu": got["a"][1], "b_wall": got["b"][0], "b_cpu": got["b"][1]})
    walls = [row["b_wall"] / row["a_wall"] for row in rows]
    cpus = [row["b_cpu"] / row["a_cpu"] for row in rows]
    print(json.dumps({
        "bench": "paired", "args": args, "file": options.file, "sides": {k: {"path": p, "env": e} for k, (p, e) in sides.items()},
        "pairs": [{k: round(v, 3) for k, v in row.items()} for row in rows],
        "b_over_a_wall": round(statistics.median(walls), 3), "b_over_a_cpu": round(statistics.median(cpus), 3),
        "b_faster_in": sum(ratio < 1 for ratio in walls), "load": [round(x, 2) for x in os.getloadavg()],
    }), flush=True)


if __name__ == "__main__":
    main()
