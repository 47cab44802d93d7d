"""What ``with gradviz.watch():`` costs a real PyTorch training loop: time per step and memory.

    .venv/bin/python benchmarks/watch.py           # about half a minute; needs torch

A batch-64 MLP (32-64-64-10, ReLU, cross-entropy, Adam), one thread: plain steps and watched steps
take turns (so a busy machine slows both alike) and the median ratio is printed (aim: at most
1.5x).  Then 10,000 watched steps, the process's resident memory at 1,000 and at 10,000 (aim: no
growth), and after the block once the graph is dropped.
"""

import gc
import os
import statistics
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("benchmarks/watch.py needs torch (pip install torch)")

import gradviz


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    X, Y = torch.randn(64, 32), torch.randint(0, 10, (64,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        loss = loss_fn(model(X), Y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def timed(n, watched):
        start = time.perf_counter()
        if watched:
            with gradviz.watch():
                for _ in range(n):
                    step()
        else:
            for _ in range(n):
                step()
        return (time.perf_counter() - start) / n

    plain, watched = [], []
    for _ in range(15):
        plain.append(timed(100, False))
        watched.append(timed(100, True))
    ratios = [w / p for p, w in zip(plain, watched)]
    ratio = statistics.median(ratios)
    print(f"step: plain {statistics.median(plain) * 1e6:.0f} us, watched {statistics.median(watched) * 1e6:.0f} us, "
          f"median ratio {ratio:.2f}x (aim <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})")

    with gradviz.watch():
        for i in range(10_000):
            loss = step()
            if i == 999:
                gc.collect()
                at_1000 = rss_mb()
    gc.collect()
    at_10000 = rss_mb()
    del loss
    gc.collect()
    print(f"memory: {at_1000:.0f} MB after 1,000 watched steps, {at_10000:.0f} MB after 10,000 "
          f"({at_10000 - at_1000:+.1f} MB), {rss_mb():.0f} MB once the last graph is dropped")


if __name__ == "__main__":
    main()
