"""Differential fuzzing against PyTorch, nightly-sized: thousands of seeded random graphs built in
gradviz and in torch (tests/torch_fuzz.py), and the figures -- graphs, mismatches by kind, time.

    .venv/bin/python benchmarks/fuzz.py                 # 5,000 graphs (about a minute)
    .venv/bin/python benchmarks/fuzz.py 20000 --from 100000

Exits 1 when any graph disagrees, printing the first seeds of each kind (rerun one with
``tests/torch_fuzz.py``'s ``compare(generate(seed, torch), gradviz, torch)``).

Not compared, because torch has no defined answer: ``median(dim)`` of a tensor with an expanded
dim (stride 0), whose values torch 2.13's CPU kernel reads from uninitialised memory (they change
from run to run); the generator takes the median of all elements there instead (tests/torch_fuzz.py).
"""

import argparse
import collections
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import gradviz  # noqa: E402
from torch_fuzz import compare, generate  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="?", type=int, default=5000)
    parser.add_argument("--from", dest="start", type=int, default=0, help="first seed")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to compare against")
        return 2
    warnings.simplefilter("ignore")
    kinds, first, steps, started = collections.Counter(), {}, 0, time.perf_counter()
    for seed in range(args.start, args.start + args.graphs):
        g = generate(seed, torch)
        steps += len(g.recipe)
        problems = compare(g, gradviz, torch)
        if problems:
            kind = problems[0].split(": ", 1)[-1][:70]
            kinds[kind] += 1
            first.setdefault(kind, seed)
    elapsed = time.perf_counter() - started
    print(f"gradviz {gradviz.__version__} against torch {torch.__version__}")
    print(f"graphs: {args.graphs} (seeds {args.start}..{args.start + args.graphs - 1}), "
          f"{steps} steps, {elapsed:.1f} s")
    print(f"mismatches: {sum(kinds.values())}")
    for kind, n in kinds.most_common():
        print(f"  {n:5d}  {kind}  (first: seed {first[kind]})")
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
