"""Side-by-side timings of the autograd core: gradviz against PyTorch (CPU) and hand-written numpy.

    .venv/bin/python benchmarks/core.py            # a few minutes (the exactness table takes most)
    .venv/bin/python benchmarks/core.py --quick    # timings only

Prints, for each case, the time per iteration in each implementation and gradviz's ratios:
``import`` (in a fresh interpreter), small 2x2 ops with their backward pass, and one training step
of a tiny MLP (2-16-16-1, batch 32, tanh, MSE loss, SGD under no_grad).  The numpy baseline does the
same arithmetic with gradients derived by hand: the floor any numpy autograd is measured against.
Then the sizes one step up from the lessons (issue 16), each against torch in the same run, both on
one thread: float32 ``mm`` at 64, 256 and 1,024; one training step of a 2-64-64-1 and of a 784-256-10
MLP on batches of 256; ``sigmoid``, ``softmax``, ``log_softmax``, ``sum``, ``mean`` and ``relu`` of 1M
elements, and the backward pass of softmax and log_softmax along either dim; the losses of the
larger MLPs after 20 steps, printed by both.  Goals (issue 16): 2x2 op +
backward <= 1x torch, forward only <= 1.5x, the small MLP step <= 1.5x; mm and the larger MLP steps
<= 2x; the 1M-element functions <= 3x; every result identical to torch's.
"""

import argparse
import os
import statistics
import time
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
gradviz.set_num_threads(1)    # the same thread count, so that both compute the same bits


# Every timing is this process's CPU time (``time.process_time``), not the wall clock: on a shared
# machine the time spent waiting for a core is then not counted, and the ratios hold under load
# (both libraries run on one thread, so CPU time is the time of the work).
CLOCK = time.process_time


def per_call(*fns, rounds=7, min_time=0.05):
    """CPU seconds per call of each function: the best of ``rounds`` timed loops, the implementations
    taking turns so that a busy machine slows them alike."""
    for fn in fns:  # warm up (PyTorch's first backward calls are much slower)
        for _ in range(200):
            fn()
    timers = [timeit.Timer(fn, timer=CLOCK) for fn in fns]
    numbers = [max(1, int(t.autorange()[0] * min_time / 0.2)) for t in timers]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, (timer, number) in enumerate(zip(timers, numbers)):
            best[k] = min(best[k], timer.timeit(number) / number)
    return best


def import_times(modules, runs=7):
    """{module: (the median CPU seconds of ``import module`` in a fresh interpreter, of the thread that
    imports; the same counting every thread of the process) (None: not importable)}.  The modules take
    turns, round after round, so that a machine busier at one moment slows them alike; a first round,
    not counted, writes the bytecode caches.

    The two differ by the threads numpy's OpenBLAS starts when it loads: they spin, waiting for work,
    on the other cores while the import goes on, so the whole process's CPU time adds up to about
    twice the time taken after numpy's own import (one more core busy) -- time nobody waits for.
    The importing thread's CPU time is the time a student waits on a machine to themselves."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    times = {m: [] for m in modules}
    for round_ in range(runs + 1):
        for module in modules:
            if times[module] is None:
                continue
            code = (f"import time; t, p = time.thread_time(), time.process_time(); import {module}; "
                    "print(time.thread_time() - t, time.process_time() - p)")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
            if out.returncode:
                times[module] = None
            elif round_:
                times[module].append([float(x) for x in out.stdout.split()])
    return {m: None if t is None else tuple(statistics.median(x) for x in zip(*t)) for m, t in times.items()}


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


# --- one size up ----------------------------------------------------------------------------------

def timed(*fns, rounds=5):
    """CPU seconds per call for calls of a millisecond or more: a couple of warm-up calls, then the
    best of ``rounds`` (taking turns, as :func:`per_call`)."""
    for fn in fns:
        fn()
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            start = CLOCK()
            fn()
            best[k] = min(best[k], CLOCK() - start)
    return best


def mm_case(lib, n):
    rng = np.random.default_rng(n)
    a = lib.tensor(rng.standard_normal((n, n)), dtype=lib.float32)
    b = lib.tensor(rng.standard_normal((n, n)), dtype=lib.float32)
    return lambda: a @ b


def mlp(lib, sizes, batch, classes=False, seed=0):
    """A seeded MLP (nn.Linear, ReLU) on one fixed batch: a step function returning the loss."""
    lib.manual_seed(seed)
    layers = []
    for i, (m, n) in enumerate(zip(sizes, sizes[1:])):
        layers += [lib.nn.Linear(m, n)] + ([lib.nn.ReLU()] if i < len(sizes) - 2 else [])
    model = lib.nn.Sequential(*layers)
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((batch, sizes[0])), dtype=lib.float32)
    if classes:
        y, loss_fn = lib.tensor(rng.integers(0, sizes[-1], batch)), lib.nn.CrossEntropyLoss()
    else:
        y, loss_fn = lib.tensor(rng.standard_normal((batch, sizes[-1])), dtype=lib.float32), lib.nn.MSELoss()
    opt = lib.optim.SGD(model.parameters(), lr=0.05)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


MLPS = {"MLP 2-64-64-1 step, batch 256": ((2, 64, 64, 1), 256, False),
        "MLP 784-256-10 step, batch 256": ((784, 256, 10), 256, True)}

MILLION = {"sigmoid, 1M": lambda t: t.sigmoid(),
           "softmax(dim=0), 1000x1000": lambda t: t.softmax(0),
           "softmax(dim=-1), 1000x1000": lambda t: t.softmax(-1),
           "log_softmax(dim=1), 1000x1000": lambda t: t.log_softmax(1),
           "sum, 1M": lambda t: t.sum(),
           "mean, 1M": lambda t: t.mean(),
           "relu, 1M": lambda t: t.relu()}

# the gradients too: the kernels of the backward pass, along the last dim and across the first
# (Σ_j g_j·y_j down a column is one fused multiply-add after another in PyTorch's kernel)
BACKWARD = {"softmax(0) backward, 1000^2": lambda t: t.softmax(0),
            "softmax(-1) backward, 1000^2": lambda t: t.softmax(-1),
            "log_softmax(0) backward, 1000^2": lambda t: t.log_softmax(0),
            "log_softmax(1) backward, 1000^2": lambda t: t.log_softmax(1)}


def scaling_rows():
    rows = []
    for n in (64, 256, 1024):     # (64: microseconds, timed in loops as the lesson sizes)
        g, t = (per_call if n < 256 else timed)(mm_case(gradviz, n), mm_case(torch, n))
        rows.append((f"float32 mm {n}x{n} @ {n}x{n}", g, t, None))
    for label, (sizes, batch, classes) in MLPS.items():
        g, t = timed(mlp(gradviz, sizes, batch, classes), mlp(torch, sizes, batch, classes))
        rows.append((label, g, t, None))
    x = np.random.default_rng(1).standard_normal((1000, 1000)).astype(np.float32)
    gx, tx = gradviz.tensor(x), torch.tensor(x)
    for label, f in MILLION.items():
        g, t = timed(lambda: f(gx), lambda: f(tx), rounds=7)
        rows.append((label, g, t, None))
    for label, f in BACKWARD.items():
        passes = []
        for lib in (gradviz, torch):
            y = f(lib.tensor(x, requires_grad=True))
            g = lib.ones_like(y)
            passes.append(lambda y=y, g=g: y.backward(g, retain_graph=True))
        g, t = timed(*passes, rounds=7)
        rows.append((label, g, t, None))
    return rows


def mlp_losses():
    """(label, identical?, gradviz's 20th loss, torch's) for the larger MLPs, trained from the same seed."""
    out = []
    for label, (sizes, batch, classes) in MLPS.items():
        losses = [[repr(step().item()) for _ in range(20)] for step in
                  (mlp(gradviz, sizes, batch, classes), mlp(torch, sizes, batch, classes))]
        out.append((label.replace(" step", "") + ": 20 losses", losses[0] == losses[1], losses[0][-1], losses[1][-1]))
    return out


# --- report --------------------------------------------------------------------------------------

def fmt(seconds):
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:8.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:8.1f} µs"


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:6.2f}x"


def main():
    parser = argparse.ArgumentParser(description="gradviz against PyTorch, side by side")
    parser.add_argument("--quick", action="store_true", help="timings only, without the exactness table")
    quick = parser.parse_args().quick
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
    imports = import_times(("gradviz", "torch", "numpy") if torch is not None else ("gradviz", "numpy"))
    for k, name in enumerate(("import (fresh interpreter)", "  the same, all threads' CPU")):
        rows.insert(k, (name, *[None if imports.get(m) is None else imports[m][k] for m in ("gradviz", "torch", "numpy")]))

    print(f"numpy {np.__version__}, torch {torch.__version__ if torch else 'not installed'}, "
          f"Python {sys.version.split()[0]}")
    print(f"{'case':32} {'gradviz':>11} {'torch':>11} {'numpy':>11}  {'gv/torch':>8} {'gv/numpy':>8}")
    for name, g, t, n in rows:
        print(f"{name:32} {fmt(g):>11} {fmt(t):>11} {fmt(n):>11}  {ratio(g, t):>8} {ratio(g, n):>8}")
    if torch is None:
        return
    print(f"\none size up (gradviz: {gradviz.kernels.info()['blas']} products;\n"
          f"  sigmoid/softmax/log_softmax: {gradviz.kernels.info()['sleef']})")
    for name, g, t, _ in scaling_rows():
        print(f"{name:32} {fmt(g):>11} {fmt(t):>11} {'':>11}  {ratio(g, t):>8}")
    print()
    for label, same, g, t in mlp_losses():
        print(f"  {label:45} {'identical' if same else 'DIFFERENT'}   (last: gradviz {g}, torch {t})")
    if not quick:
        print_exactness()


def load_exactness():
    """tests/kernels/test_vecmath.py's ``exactness(torch)``: the table its tests assert."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "kernels"))
    from test_vecmath import exactness
    return exactness


def print_exactness():
    """The share of results bit-identical to torch, as tests/kernels/test_vecmath.py measures it."""
    exactness = load_exactness()
    print(f"\nresults identical to torch {torch.__version__} on this machine (float32 unless named; one thread"
          " unless named):")
    for label, (share, ulps) in exactness(torch).items():
        print(f"  {label:45} {share:8.2f}%" + (f"   (max {ulps} ulp apart)" if ulps else ""))


if __name__ == "__main__":
    main()
