"""Side-by-side timings of the autograd core: gradviz against PyTorch (CPU) and hand-written numpy.

    .venv/bin/python benchmarks/core.py            # about half a minute

Prints, for each case, the time per iteration in each implementation and gradviz's ratios:
``import`` (in a fresh interpreter), small 2x2 ops with their backward pass, and one training step
of a tiny MLP (2-16-16-1, batch 32, tanh, MSE loss, SGD under no_grad).  The numpy baseline does the
same arithmetic with gradients derived by hand: the floor any numpy autograd is measured against.
Goals: import under 0.15 s; per-op overhead within 2x of PyTorch CPU on 2x2 tensors.
"""

import os
import statistics
import subprocess
import sys
import timeit

import numpy as np

import gradviz

try:
    import torch
    torch.set_num_threads(1)  # small tensors: threads only add overhead
except ImportError:  # the comparison with PyTorch is optional
    torch = None


def per_call(*fns, rounds=7, min_time=0.05):
    """Seconds per call of each function: the best of ``rounds`` timed loops, the implementations
    taking turns so that a busy machine slows them alike."""
    for fn in fns:  # warm up (PyTorch's first backward calls are much slower)
        for _ in range(200):
            fn()
    timers = [timeit.Timer(fn) for fn in fns]
    numbers = [max(1, int(t.autorange()[0] * min_time / 0.2)) for t in timers]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, (timer, number) in enumerate(zip(timers, numbers)):
            best[k] = min(best[k], timer.timeit(number) / number)
    return best


def import_time(module, runs=5):
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        if out.returncode:
            return None
        times.append(float(out.stdout))
    return statistics.median(times)


# --- small ops, forward and backward -------------------------------------------------------------

def op_cases(lib):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    g = lib.ones(2, 2)

    def step(op):
        def run():
            op(a, b).backward(g)
        return run

    return {"2x2 add + backward": step(lambda x, y: x + y),
            "2x2 mul + backward": step(lambda x, y: x * y),
            "2x2 matmul + backward": step(lambda x, y: x @ y),
            "2x2 add, forward only": lambda: a + b}


def numpy_op_cases():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    g = np.ones((2, 2), np.float32)
    ga, gb = np.zeros_like(a), np.zeros_like(b)

    def add():
        a + b
        ga.__iadd__(g)
        gb.__iadd__(g)

    def mul():
        a * b
        ga.__iadd__(g * b)
        gb.__iadd__(g * a)

    def matmul():
        a @ b
        ga.__iadd__(g @ b.T)
        gb.__iadd__(a.T @ g)

    return {"2x2 add + backward": add, "2x2 mul + backward": mul, "2x2 matmul + backward": matmul,
            "2x2 add, forward only": lambda: a + b}


# --- a tiny MLP ----------------------------------------------------------------------------------

def mlp_step(lib):
    """One SGD step of a 2-16-16-1 tanh network on a batch of 32, written as in a tutorial."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((32, 2)), dtype=lib.float32)
    y = lib.tensor(rng.standard_normal((32, 1)), dtype=lib.float32)
    params = [lib.tensor(rng.standard_normal(s) * 0.5, dtype=lib.float32, requires_grad=True)
              for s in ((2, 16), (16,), (16, 16), (16,), (16, 1), (1,))]
    w1, b1, w2, b2, w3, b3 = params

    def step():
        h = (x @ w1 + b1).tanh()
        h = (h @ w2 + b2).tanh()
        loss = ((h @ w3 + b3 - y) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.1 * p.grad
                p.grad.zero_()
        return loss

    return step


def numpy_mlp_step():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 2)).astype(np.float32)
    y = rng.standard_normal((32, 1)).astype(np.float32)
    params = [(rng.standard_normal(s) * 0.5).astype(np.float32)
              for s in ((2, 16), (16,), (16, 16), (16,), (16, 1), (1,))]
    w1, b1, w2, b2, w3, b3 = params

    def step():
        h1 = np.tanh(x @ w1 + b1)
        h2 = np.tanh(h1 @ w2 + b2)
        err = h2 @ w3 + b3 - y
        loss = (err ** 2).mean()
        d = 2 * err / err.size                  # dL/d(out)
        gw3, gb3 = h2.T @ d, d.sum(0)
        d2 = (d @ w3.T) * (1 - h2 * h2)         # through tanh
        gw2, gb2 = h1.T @ d2, d2.sum(0)
        d1 = (d2 @ w2.T) * (1 - h1 * h1)
        gw1, gb1 = x.T @ d1, d1.sum(0)
        for p, gp in zip(params, (gw1, gb1, gw2, gb2, gw3, gb3)):
            p -= 0.1 * gp
        return loss

    return step


def check_same_training():
    """The three implementations train the same network to the same loss (so the timings compare)."""
    steps = {"gradviz": mlp_step(gradviz), "numpy": numpy_mlp_step()}
    if torch is not None:
        steps["torch"] = mlp_step(torch)
    losses = {name: [step().item() for _ in range(20)][-1] for name, step in steps.items()}
    spread = max(losses.values()) - min(losses.values())
    assert spread < 1e-4, f"the implementations disagree: {losses}"


# --- report --------------------------------------------------------------------------------------

def fmt(seconds):
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:8.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:8.1f} µs"


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:6.2f}x"


def main():
    check_same_training()
    rows = []
    gv, tc, npc = op_cases(gradviz), op_cases(torch) if torch else {}, numpy_op_cases()
    for name in gv:
        if tc:
            g, t, n = per_call(gv[name], tc[name], npc[name])
        else:
            (g, n), t = per_call(gv[name], npc[name]), None
        rows.append((name, g, t, n))
    steps = [mlp_step(gradviz), numpy_mlp_step()] + ([mlp_step(torch)] if torch else [])
    g, n, *t = per_call(*steps)
    rows.append(("MLP 2-16-16-1 step, batch 32", g, t[0] if t else None, n))
    # gradviz's import includes numpy's: the numpy column is the floor a numpy library starts from
    rows.insert(0, ("import (fresh interpreter)", import_time("gradviz"),
                    import_time("torch") if torch is not None else None, import_time("numpy")))

    print(f"numpy {np.__version__}, torch {torch.__version__ if torch else 'not installed'}, "
          f"Python {sys.version.split()[0]}")
    print(f"{'case':32} {'gradviz':>11} {'torch':>11} {'numpy':>11}  {'gv/torch':>8} {'gv/numpy':>8}")
    for name, g, t, n in rows:
        print(f"{name:32} {fmt(g):>11} {fmt(t):>11} {fmt(n):>11}  {ratio(g, t):>8} {ratio(g, n):>8}")
    if torch is not None:
        print_exactness()


def print_exactness():
    """The share of results bit-identical to torch, as tests/test_vecmath.py measures it."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from test_vecmath import exactness
    print(f"\nresults identical to torch {torch.__version__} on this machine (float32 unless named; one thread"
          " unless named):")
    for label, (share, ulps) in exactness(torch).items():
        print(f"  {label:45} {share:8.2f}%" + (f"   (max {ulps} ulp apart)" if ulps else ""))


if __name__ == "__main__":
    main()
