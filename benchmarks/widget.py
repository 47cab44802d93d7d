"""How fast the teaching widget gets ready and plays: the seed lesson, a ~200-node graph, a 20,000-op chain.

    .venv/bin/python benchmarks/widget.py            # about a minute (Chromium needed for the last part)

Prints, for each graph:

* ``animate()``: seconds from the call to a widget whose state is complete (backward recorded, graph
  drawn by Graphviz, frames and derivation built) -- the kernel side of "ready"; best of three,
  wall clock and this process's CPU time (a busy machine slows the first, not the second);
* ``page ready``: seconds from opening its saved page in headless Chromium to the widget's ready
  marker (``data-gv-ready="1"``) -- the front end's side;
* sizes: the synced state as JSON, the self-contained page (aim: under 200 KB for the seed lesson,
  under 2 MB for the 20,000-op chain, whose picture folds it into groups that run as one step each);
* ``per step``: the front end's time to show one step (script, style and layout, forced), median and
  95th percentile over every step, going forward one at a time and jumping at random (aim: < 16 ms
  at 200 nodes, one frame of a 60 Hz display).
"""

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gradviz
import gradviz as torch

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def seed_lesson(lib=torch):
    x = lib.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * lib.sum(y)
    return o, {"x": x, "y": y, "o": o}


def big_graph(layers=48, lib=torch):
    """A deep tanh chain sharing one weight: 2 ops and 2 values per layer (~200 nodes), w used 48 times."""
    x = lib.ones(3, requires_grad=True)
    w = lib.tensor(0.9, requires_grad=True)
    h = x
    for _ in range(layers):
        h = (h * w).tanh()
    out = h.sum()
    return out, {"x": x, "w": w, "out": out}


def long_chain(n=20_000):
    """x -> (+0.001, *1.0001) alternately, 20,000 ops: an unrolled loop, 60,000 nodes unfolded."""
    x = torch.tensor(0.5, requires_grad=True)
    h = x
    for k in range(n):
        h = h * 1.0001 if k % 2 else h + 0.001
    return h, {"x": x, "h": h}


def timed_animate(build, repeats=3):
    best, cpu, widget = float("inf"), float("inf"), None
    for _ in range(repeats):
        root, names = build()
        t, c = time.perf_counter(), time.process_time()
        widget = gradviz.animate(root, names=names)
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return best, cpu, widget


STEP_JS = """async (mode) => {
  const w = document.querySelector('.gv-widget');
  const scrub = w.querySelector('[data-gv="scrub"]');
  const n = +scrub.max + 1;
  const times = [];
  const go = (k) => { scrub.value = String(k); scrub.dispatchEvent(new Event('input', {bubbles: true})); };
  go(0);
  if (mode === 'forward') {          // five times through, one step at a time
    for (let r = 0; r < 5; r++) {
      go(0);
      for (let i = 1; i < n; i++) {
        const t0 = performance.now();
        w.querySelector('[data-gv="step"]').click();
        void w.getBoundingClientRect(); void document.body.offsetHeight;   // force style and layout
        times.push(performance.now() - t0);
        if (i % 25 === 0) await new Promise((r) => requestAnimationFrame(() => r()));
      }
    }
    return times;
  }
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 1; i < n; i++) {
    const k = mode === 'forward' ? i : Math.floor(rand() * n);
    const t0 = performance.now();
    if (mode === 'forward') w.querySelector('[data-gv="step"]').click(); else go(k);
    void w.getBoundingClientRect(); void document.body.offsetHeight;   // force style and layout
    times.push(performance.now() - t0);
    if (i % 25 === 0) await new Promise((r) => requestAnimationFrame(() => r()));
  }
  return times;
}"""


def browser_numbers(pages):
    if not Path(CHROMIUM).exists():
        return {name: None for name in pages}
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=ARGS, headless=True,
                                                   viewport={"width": 1200, "height": 900})
        for name, path in pages.items():
            page = ctx.new_page()
            t = time.perf_counter()
            page.goto(Path(path).as_uri())
            page.wait_for_selector('.gv-widget[data-gv-ready="1"]', timeout=60000)
            ready = time.perf_counter() - t
            fwd = page.evaluate(STEP_JS, "forward")
            jump = page.evaluate(STEP_JS, "random")
            nodes = page.evaluate("document.querySelectorAll('svg.gv-svg .gv-node').length")
            out[name] = {"ready": ready, "forward": fwd, "random": jump, "nodes": nodes}
            page.close()
        ctx.close()
    return out


def real_torch_rows(results):
    """animate() on the same graphs built with real PyTorch (its adapter reads the real engine)."""
    try:
        import torch as real
    except ImportError:
        print("real PyTorch: not installed, its row is skipped")
        return
    print(f"\nanimate() with real PyTorch {real.__version__} (same graphs; best of three, CPU in brackets):")
    for name, build in {"seed lesson": seed_lesson, "200-node chain": big_graph}.items():
        seconds, cpu, w = timed_animate(lambda: build(lib=real))
        ours = results[name]
        print(f"{name:16s} torch {seconds:7.3f}s ({cpu:.2f}s)   gradviz {ours['animate']:7.3f}s ({ours['cpu']:.2f}s)   "
              f"torch / gradviz {seconds / ours['animate']:.2f}x   frames {len(w.frames)} vs {ours['frames']}")


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    cases = {"seed lesson": seed_lesson, "200-node chain": big_graph, "20,000-op chain": long_chain}
    results, pages = {}, {}
    tmp = Path(tempfile.mkdtemp(prefix="gv-bench-"))
    for name, build in cases.items():
        seconds, cpu, w = timed_animate(build)
        state = json.dumps(w.state())
        path = tmp / f"{name.replace(' ', '_').replace(',', '')}.html"
        w.save_html(path)
        results[name] = {"animate": seconds, "cpu": cpu, "state": len(state.encode()), "page": os.path.getsize(path),
                         "frames": len(w.frames), "graph nodes": len(w.graph["nodes"])}
        pages[name] = path
    browser = browser_numbers(pages)
    print(f"{'':16s} {'animate()':>10s} {'(CPU)':>7s} {'page ready':>11s} {'nodes':>6s} {'frames':>7s} {'state':>9s} "
          f"{'page':>9s} {'per step: median':>17s} {'p95':>7s} {'random jump p95':>16s}")
    for name, r in results.items():
        b = browser.get(name)
        line = (f"{name:16s} {r['animate']:9.3f}s {r['cpu']:6.2f}s {b['ready'] if b else float('nan'):10.3f}s "
                f"{r['graph nodes']:6d} {r['frames']:7d} {r['state'] / 1024:7.1f}KB {r['page'] / 1024:7.1f}KB ")
        if b:
            line += (f"{statistics.median(b['forward']):15.2f}ms {pct(b['forward'], 0.95):5.2f}ms "
                     f"{pct(b['random'], 0.95):14.2f}ms")
        else:
            line += "  (no Chromium: front-end numbers skipped)"
        print(line)
    seed, big = results["seed lesson"], browser.get("200-node chain")
    long = results["20,000-op chain"]
    print()
    print(f"seed lesson page under 200 KB: {'yes' if seed['page'] < 200 * 1024 else 'NO'}")
    print(f"20,000-op chain: animate() under 2 s: {'yes' if long['animate'] < 2 else 'NO'} "
          f"(CPU {'yes' if long['cpu'] < 2 else 'NO'}), page under 2 MB: {'yes' if long['page'] < 2 * 1024 ** 2 else 'NO'}")
    if big:
        print(f"200 nodes, p95 step under 16 ms: {'yes' if pct(big['forward'], 0.95) < 16 else 'NO'}")
    real_torch_rows(results)


if __name__ == "__main__":
    sys.exit(main())
