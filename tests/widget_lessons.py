"""The lessons' graphs, built fresh for each widget test (the seed notebooks' code, verbatim where possible).

Each builder returns ``(root, names, gradient)``: the tensor to animate, ``{name: tensor}`` and the
seed gradient (``None``: the implicit 1).
"""

import gradviz as torch
from gradviz.trace import trace_of

__all__ = ["LESSONS", "traced", "seed", "tutorial", "vector_jacobian", "neuron", "tiny_mlp", "fan_out"]


def seed():
    """notebooks 01, 03, 04: o = 1/2 Σ 5 (x + 1)^2 at x = [1, 1]; x.grad = [10, 10]."""
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * torch.sum(y)
    return o, {"x": x, "y": y, "o": o}, None


def tutorial():
    """notebook 02: out = mean(3 (x + 2)^2) over a 2x2 x of ones; x.grad = 4.5 everywhere."""
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return out, {"x": x, "y": y, "z": z, "out": out}, None


def vector_jacobian():
    """notebook 05: z = 3 y y with y = 2x + 3, backward with a 2x2 gradient."""
    x = torch.ones(2, 2, requires_grad=True)
    y = 2 * x + 3
    z = y * y * 3
    return z, {"x": x, "y": y, "z": z}, torch.Tensor([[0, 1], [1, 0]])


def neuron():
    """notebook 06: tanh(w·x + b) with data x (no grad) and parameters w, b."""
    x = torch.tensor([2.0, 0.0])
    w = torch.tensor([-3.0, 1.0], requires_grad=True)
    b = torch.tensor(6.8813735870195432, requires_grad=True)
    n = (w * x).sum() + b
    out = torch.tanh(n)
    return out, {"x": x, "w": w, "b": b, "n": n, "out": out}, None


def tiny_mlp():
    """notebook 06: a 2-4-1 tanh MLP's mean squared error on XOR."""
    X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    Y = torch.tensor([[0.], [1.], [1.], [0.]])
    torch.manual_seed(0)
    W1 = torch.randn(2, 4, requires_grad=True)
    b1 = torch.zeros(4, requires_grad=True)
    W2 = torch.randn(4, 1, requires_grad=True)
    b2 = torch.zeros(1, requires_grad=True)
    h = torch.tanh(X @ W1 + b1)
    loss = (((h @ W2 + b2) - Y) ** 2).mean()
    return loss, {"X": X, "Y": Y, "W1": W1, "b1": b1, "W2": W2, "b2": b2, "h": h, "loss": loss}, None


def fan_out():
    """a tensor used by three ops, and a leaf reached along two paths: the chain rule's sums."""
    a = torch.tensor([2.0, -1.0], requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    c = a * b
    d = c.exp() + c * c - c / b
    out = d.sum()
    return out, {"a": a, "b": b, "c": c, "d": d, "out": out}, None


LESSONS = {f.__name__: f for f in (seed, tutorial, vector_jacobian, neuron, tiny_mlp, fan_out)}


def traced(root, names=None):
    """The trace of ``root`` with exactly ``names`` (no names looked up in the caller), for a Lesson."""
    return trace_of(root, names=names or {}, namespace=False, cuts=False)
