"""Record what the engine really did in a backward pass, as plain data for the widget.

>>> import gradviz as torch
>>> from gradviz.trace import record
>>> x = torch.ones(2, requires_grad=True)
>>> o = (3 * x).sum()
>>> with record() as rec:
...     o.backward()
>>> [e.name for e in rec.events]
['SumBackward0', 'MulBackward0', 'AccumulateGrad']

Recording costs nothing when no ``record()`` is active: the engine checks one list.
"""

from dataclasses import dataclass, field

import numpy as np

from . import autograd

__all__ = ["record", "Recording", "BackwardEvent", "forward_nodes"]


@dataclass
class BackwardEvent:
    """One step of a backward pass: a node ran, or a leaf's ``.grad`` was accumulated.

    ``grad_in`` is dL/d(output) arriving at the node (already summed over every use);
    ``grads_out[i]`` is what the node sends to its input ``i`` (``None`` where no grad is needed).
    For ``AccumulateGrad``, ``grad_before``/``grad_after`` are the leaf's ``.grad`` around the add.
    """

    run: int                     # which backward() call (0, 1, ...) within this recording
    step: int                    # position within that call
    name: str                    # PyTorch name: "MulBackward0", "AccumulateGrad"
    node: object = field(repr=False)
    seq: int = 0                 # the node's creation sequence number (forward order)
    grad_in: np.ndarray = None
    grads_out: tuple = ()
    variable: object = field(default=None, repr=False)
    grad_before: np.ndarray = None
    grad_after: np.ndarray = None


@dataclass
class Run:
    """One ``backward()`` call: its roots, seed gradients and ``retain_graph``."""
    roots: list
    seeds: list
    retain_graph: bool
    error: str = None


class Recording:
    """Collects :class:`BackwardEvent` objects while active (a context manager)."""

    def __init__(self):
        self.events, self.runs = [], []

    def __enter__(self):
        autograd._recorders.append(self)
        return self

    def __exit__(self, *exc):
        autograd._recorders.remove(self)

    # called by the engine
    def _begin(self, roots, seeds, retain_graph):
        self.runs.append(Run(list(roots), [np.array(s, copy=True) for s in seeds], retain_graph))

    def _end(self):
        pass

    def _step(self):
        run = len(self.runs) - 1
        self._steps = 0 if not self.events or self.events[-1].run != run else self._steps + 1
        return run, self._steps

    def _node(self, node, g, grads):
        run, step = self._step()
        self.events.append(BackwardEvent(
            run, step, node.name(), node, node._seq, np.array(g, copy=True),
            tuple(None if x is None else np.array(x, copy=True) for x in grads)))

    def _leaf(self, var, g, before, after):
        run, step = self._step()
        acc = var._acc() if var._acc is not None else None
        self.events.append(BackwardEvent(
            run, step, "AccumulateGrad", acc, var._seq, np.array(g, copy=True), (),
            variable=var, grad_before=before, grad_after=after))


def record():
    """``with record() as rec: loss.backward()`` -- then read ``rec.events``."""
    return Recording()


def forward_nodes(*roots):
    """The grad_fn nodes behind ``roots`` in the order the forward pass created them."""
    seen, stack = set(), [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return sorted((n for n in seen if n.op is not None), key=lambda n: n._seq)
