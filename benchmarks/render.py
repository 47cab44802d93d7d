"""Drawing cost: graph build + DOT + layout, beside the Graphviz layout alone on the same DOT.

    .venv/bin/python benchmarks/render.py          # graphs of about 10, 100 and 1000 nodes

For each size and each renderer (graphviz-pure; the system ``dot`` only if installed) it prints
the time of gradviz's whole pipeline (build_graph, summarize, to_dot, render to SVG, decorate the
SVG) next to the time of running the Graphviz command alone on the same DOT text, and their
ratio: what gradviz adds on top of the layout.  Graphs beyond 200 nodes are drawn summarized
(that is what draw() does), so the 1000-node row times the summary's layout; the last column
gives the full graph's layout time (bounded by a timeout) for comparison.
"""

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradviz as torch  # noqa: E402
from gradviz.drawing import render  # noqa: E402
from gradviz.drawing.picture import Drawing  # noqa: E402
from gradviz.drawing.dot_text import to_dot  # noqa: E402
from gradviz.drawing.picture import build_graph  # noqa: E402

FULL_TIMEOUT = 60.0


def mlp_chain(layers):
    """A chain of ``tanh(h * w_i + b)`` layers, each with its own weight: ~7 nodes a layer."""
    torch.manual_seed(0)
    h = torch.randn(4, requires_grad=True)
    for _ in range(layers):
        w = torch.randn(4, requires_grad=True)
        h = (h * w + 0.1).tanh()
    return h.sum()


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def layout_alone(renderer, source, timeout=render.TIMEOUT):
    subprocess.run([renderer.path, "-Tsvg"], input=source.encode(), capture_output=True, check=True,
                   timeout=timeout)


def row(label, layers, renderer, repeat):
    root = mlp_chain(layers)

    def pipeline():
        graph = build_graph(root, namespace=False)
        drawing = Drawing(graph, renderer=renderer)
        drawing.svg()
        return drawing

    drawing = pipeline()
    total = best(pipeline, repeat)
    alone = best(lambda: layout_alone(renderer, drawing.source), repeat)
    full = "-"
    if drawing.graph.summarized:
        source = to_dot(drawing.full_graph)
        try:
            full = f"{best(lambda: layout_alone(renderer, source, FULL_TIMEOUT), 1):.3f} s"
        except subprocess.TimeoutExpired:
            full = f"> {FULL_TIMEOUT:g} s"
    nodes = f"{len(drawing.full_graph.nodes)}" + (f" -> {len(drawing.graph.nodes)}" if drawing.graph.summarized else "")
    print(f"{label:<8} {nodes:>12} {total:>10.3f} s {alone:>10.3f} s {total / alone:>7.2f}x   {full}")


def main():
    sizes = [("~10", 1), ("~100", 14), ("~1000", 140)]
    renderers = [("graphviz-pure", "pure"), ("system dot", "system")]
    for title, choice in renderers:
        try:
            renderer = render.find_renderer(choice)
        except render.RendererNotFound:
            print(f"\n{title}: not installed")
            continue
        print(f"\n{title}: {renderer.version()}  ({renderer.path})")
        print(f"{'graph':<8} {'nodes':>12} {'gradviz':>12} {'layout only':>12} {'ratio':>8}   full-graph layout")
        for label, layers in sizes:
            row(label, layers, renderer, repeat=3 if layers < 100 else 1)


if __name__ == "__main__":
    main()
