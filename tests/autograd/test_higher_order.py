"""Higher-order gradients: ``create_graph=True`` records the backward pass (the op table's rules run on
tensors), so gradients can be differentiated again; ``autograd.functional.hessian`` and friends build on it.

Parity tests use PyTorch as the oracle (skipped without it); the hypothesis tests hold every
elementwise op's second derivative against a central difference of its first derivative.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradviz
from gradviz.autograd import _backward_grad
from gradviz.ops import OPS

from strategies import SETTINGS

LIBS = {"gradviz": gradviz}


def _torch():
    torch = pytest.importorskip("torch")
    LIBS["torch"] = torch
    return torch


def names(fn):
    """The gradient graph's node names, depth first (leaves' AccumulateGrad left out)."""
    if fn is None:
        return []
    out = [fn.name()]
    for f, _ in fn.next_functions:
        if f is not None and "AccumulateGrad" not in f.name():
            out.append(names(f))
    return out


def as_torch(text):
    return text.replace("gradviz.", "torch.")


# --- the teaching ops, against PyTorch ----------------------------------------------------------

CASES = {
    "mul": lambda L, x, w, M: (x * w).sum(),
    "div": lambda L, x, w, M: (x / w).sum(),
    "pow": lambda L, x, w, M: (x ** 3).sum(),
    "neg_sub_add": lambda L, x, w, M: ((-x) * (x - w) + x * (x + w)).sum(),
    "exp": lambda L, x, w, M: (x.exp() * x).sum(),
    "log": lambda L, x, w, M: (x * x).log().sum(),
    "sin_cos": lambda L, x, w, M: (x.sin() * x.cos()).sum(),
    "tanh": lambda L, x, w, M: x.tanh().sum(),
    "sigmoid": lambda L, x, w, M: L.sigmoid(x * w).sum(),
    "relu": lambda L, x, w, M: (x.relu() * x).sum(),
    "sum_mean": lambda L, x, w, M: (x * x).mean() + (x * x * x).sum(),
    "mm": lambda L, x, w, M: ((M * x) @ (M * x).t()).sum(),
    "mv": lambda L, x, w, M: (M @ x).pow(2).sum(),
    "broadcast": lambda L, x, w, M: ((M * x) ** 2).sum(),
    "mse_loss": lambda L, x, w, M: L.nn.functional.mse_loss(x * x, w),
    "mse_sum": lambda L, x, w, M: L.nn.functional.mse_loss(x.tanh(), w, reduction="sum"),
    "cat_stack": lambda L, x, w, M: (L.cat([x * x, w.sin()]) ** 2).sum() + (L.stack([x, w]) ** 3).sum(),
    "pow_tensor": lambda L, x, w, M: ((x * x + 0.5) ** (w * 0.5)).sum(),
    "index": lambda L, x, w, M: x[0] * x[2] + (x[1:] ** 2).sum() + (M[:, 1] * x[:2]).sum(),
}


def _run(L, case, dtype):
    x = L.tensor([0.5, 1.5, -2.0], dtype=getattr(L, dtype), requires_grad=True)
    w = L.tensor([1.25, -0.75, 2.0], dtype=getattr(L, dtype), requires_grad=True)
    M = L.tensor([[1., 2., 3.], [4., -5., 6.]], dtype=getattr(L, dtype))
    g, = L.autograd.grad(CASES[case](L, x, w, M), x, create_graph=True)
    h = L.autograd.grad((g * L.tensor([1.0, -2.0, 0.5], dtype=getattr(L, dtype))).sum(), (x, w),
                        allow_unused=True)
    return g, h


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_ops_second_derivative_as_torch(case, dtype):
    """The gradient prints as PyTorch's (its top grad_fn), its graph has PyTorch's node names, and
    the second derivative agrees to the last bit."""
    torch = _torch()
    tg, th = _run(torch, case, dtype)
    gg, gh = _run(gradviz, case, dtype)
    assert as_torch(repr(gg)) == repr(tg)
    assert names(gg.grad_fn) == names(tg.grad_fn)
    assert gg.detach().numpy().tobytes() == tg.detach().numpy().tobytes()
    for t, g in zip(th, gh):   # ∂²/∂x² and ∂²/∂x∂w (None where the gradient does not depend on it)
        assert (g is None and t is None) or g.numpy().tobytes() == t.numpy().tobytes()


def _tutorial(L):
    """PyTorch's autograd tutorial: grad with create_graph, then backward of the gradient."""
    x = L.tensor(2., requires_grad=True)
    y = x ** 3
    g, = L.autograd.grad(y, x, create_graph=True)
    out = [repr(g)]
    g.backward()
    out.append(repr(x.grad))
    return out


@pytest.mark.torch
def test_tutorial_prints_as_torch():
    torch = _torch()
    assert [as_torch(s) for s in _tutorial(gradviz)] == _tutorial(torch)
    assert _tutorial(gradviz) == ["tensor(12., grad_fn=<MulBackward0>)", "tensor(12.)"]


def _leaf_accumulation(L):
    """backward(create_graph=True) twice into a leaf, then an ordinary backward of x.grad."""
    x = L.tensor([0.5, 1.5, -2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x ** 3).sum().backward(create_graph=True)
        first = repr(x.grad)
        (x ** 3).sum().backward(create_graph=True)
    second = repr(x.grad)
    x.grad.sum().backward()
    return [first, second, repr(x.grad)]


@pytest.mark.torch
def test_backward_create_graph_into_leaves_as_torch():
    torch = _torch()
    assert [as_torch(s) for s in _leaf_accumulation(gradviz)] == _leaf_accumulation(torch)


def test_backward_create_graph_warns_once_in_pytorchs_words():
    _backward_grad._warned.pop("cycle", None)
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert texts == [_backward_grad.REFERENCE_CYCLE]
    assert texts[0].startswith("Using backward() with create_graph=True will create a reference cycle between "
                               "the parameter and its gradient which can cause a memory leak.")
    assert x.grad.grad_fn.name() == "AddBackward0" and x.grad.tolist() == [4.0, 8.0]


def _retained(L):
    """retain_graph defaults to create_graph: what a graph still allows after each call."""
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    out = []
    for step in (lambda: L.autograd.grad(y, x, create_graph=True)[0],
                 lambda: L.autograd.grad(y, x, retain_graph=True)[0],
                 lambda: L.autograd.grad(y, x)[0],
                 lambda: L.autograd.grad(y, x)[0]):
        try:
            out.append(repr(step()))
        except RuntimeError as e:
            out.append(str(e)[:60])
    return out


@pytest.mark.torch
def test_create_graph_keeps_the_graph_unless_told():
    torch = _torch()
    assert [as_torch(s) for s in _retained(gradviz)] == _retained(torch)
    assert _retained(gradviz)[3].startswith("Trying to backward through the graph a second time")


def test_an_op_whose_rule_cannot_be_recorded_says_so():
    x = gradviz.tensor([2.0, 1.0], requires_grad=True)
    y = x.sort().values                                      # sort's rule scatters with np.add.at
    with pytest.raises(RuntimeError, match=r"gradviz cannot differentiate the backward of SortBackward0 "
                                           r"twice yet \(create_graph=True\)"):
        gradviz.autograd.grad((y * y).sum(), x, create_graph=True)
    g, = gradviz.autograd.grad(x[0] * 3, x, create_graph=True)   # a constant gradient needs no recording
    assert g.tolist() == [3.0, 0.0] and g.grad_fn is None


def test_ordinary_backward_is_unchanged():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    (x.tanh() * x).sum().backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_custom_function_backward_is_recorded():
    class Cube(gradviz.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * 3 * x ** 2

    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    g, = gradviz.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    h, = gradviz.autograd.grad(g.sum(), x)
    assert g.tolist() == [3.0, 12.0] and h.tolist() == [6.0, 12.0]


def test_a_recorded_trace_sees_the_double_backward_and_changes_nothing():
    from gradviz import trace

    def run():
        x = gradviz.tensor([0.5, 1.5], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x.tanh() * x).sum().backward(create_graph=True)
        first = x.grad.tolist()
        x.grad.sum().backward()
        return first, x.grad.tolist()

    plain = run()
    with trace.record() as rec:
        recorded = run()
    assert recorded == plain
    names = [e.name for e in rec.events]
    assert "TanhBackwardBackward0" in names and names.count("AccumulateGrad") == 2


# --- second derivatives of the elementwise ops against finite differences -----------------------

ELEMENTWISE = sorted(k for k, op in OPS.items() if op.inputs == "unary" and not op.params and op.function is True)


def _first(op, values):
    x = gradviz.tensor(values, dtype=gradviz.float64, requires_grad=True)
    y = getattr(gradviz, op.method)(x)
    g, = gradviz.autograd.grad(y.sum(), x, create_graph=True)
    return x, g


@pytest.mark.parametrize("key", ELEMENTWISE)
def test_second_derivative_matches_differences_of_the_first(key):
    op = OPS[key]
    lo, hi = op.domain

    @SETTINGS
    @given(st.lists(st.floats(lo + 0.05, hi - 0.05), min_size=1, max_size=4))
    def check(values):
        x, g = _first(op, values)
        if not g.requires_grad:   # a constant first derivative (neg...): the second is zero
            return
        h, = gradviz.autograd.grad(g.sum(), x, allow_unused=True)
        h = np.zeros(len(values)) if h is None else h.numpy()
        eps = 1e-6
        plus = _first(op, [v + eps for v in values])[1].detach().numpy()
        minus = _first(op, [v - eps for v in values])[1].detach().numpy()
        np.testing.assert_allclose(h, (plus - minus) / (2 * eps), rtol=1e-4, atol=1e-5)

    check()


# --- hessian, vhp, hvp, jvp, vjp ----------------------------------------------------------------

def _hessians(L, dtype):
    F = L.nn.functional
    dt = getattr(L, dtype)
    H = L.autograd.functional.hessian
    x = L.tensor([0.5, -1.25, 2.0], dtype=dt)
    y = L.tensor([1.5, 0.25, -0.75], dtype=dt)
    X = L.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 1.5]], dtype=dt)
    T = L.tensor([[0.25], [-0.5]], dtype=dt)
    W1 = L.tensor([[0.3, -0.2, 0.1], [0.5, 0.4, -0.6]], dtype=dt)
    b1 = L.tensor([0.1, -0.1], dtype=dt)
    W2 = L.tensor([[0.7, -0.3]], dtype=dt)

    def mlp(W1, b1, W2):
        return F.mse_loss(L.tanh(X @ W1.t() + b1) @ W2.t(), T)

    def relu_mlp(W1, b1, W2):
        return ((L.relu(F.linear(X, W1, b1)).sigmoid() @ W2.t() - T) ** 2).mean()

    return [H(lambda x: x.pow(3).sum(), x), H(lambda x, y: (x * y).sum(), (x, y)),
            H(lambda x: L.tanh(x).sum(), x), H(lambda x: x.sigmoid().sum(), x),
            H(lambda x: (x.exp() * x.sin()).sum() / x.cos().sum(), x),
            H(mlp, (W1, b1, W2)), H(relu_mlp, (W1, b1, W2)),
            H(lambda x: x.pow(3).sum(), x, create_graph=True),
            L.autograd.functional.vhp(lambda x: x.pow(3).sum(), x, L.ones_like(x)),
            L.autograd.functional.hvp(lambda x: (x.pow(3) * x.sin()).sum(), x, L.ones_like(x)),
            L.autograd.functional.jvp(lambda x: x.pow(3), x, L.ones_like(x)),
            L.autograd.functional.vjp(lambda x: x.pow(3), x, L.ones_like(x)),
            L.autograd.functional.jacobian(lambda x: x.pow(3), x, create_graph=True)]


def _flat(result):
    if isinstance(result, tuple):
        return [t for r in result for t in _flat(r)]
    return [result]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hessian_and_products_as_torch(dtype):
    """Same structure (tuples of tuples), shapes, reprs and grad_fns; float32 values to the last bit.
    (float64 to 1e-14: gradviz's float64 matrix products can differ from PyTorch's in the last bit,
    and the MLP's Hessian shows it.)"""
    torch = _torch()
    for want, got in zip(_hessians(torch, dtype), _hessians(gradviz, dtype)):
        want, got = _flat(want), _flat(got)
        assert len(want) == len(got)
        for t, g in zip(want, got):
            assert tuple(g.shape) == tuple(t.shape) and (g.grad_fn is None) == (t.grad_fn is None)
            if t.grad_fn is not None:
                assert g.grad_fn.name() == t.grad_fn.name()
            if dtype == "float32":
                assert g.detach().numpy().tobytes() == t.detach().numpy().tobytes()
                assert as_torch(repr(g)) == repr(t)
            else:
                np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-14, atol=1e-15)


def _classifier(L, dtype):
    """A linear classifier's cross-entropy loss: its gradient (recorded), that gradient differentiated, its Hessian."""
    F = L.nn.functional
    dt = getattr(L, dtype)
    X = L.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 1.5], [0.3, 0.1, -0.2]], dtype=dt)
    W = L.tensor([[0.3, -0.2, 0.1], [0.5, 0.4, -0.6]], dtype=dt, requires_grad=True)
    loss = lambda W: F.cross_entropy(X @ W.t(), L.tensor([1, 0, 1]))  # noqa: E731
    g, = L.autograd.grad(loss(W), W, create_graph=True)
    h, = L.autograd.grad((g * g).sum(), W)
    s, = L.autograd.grad((L.softmax(X @ W.t(), dim=1) ** 2).sum(), W, create_graph=True)
    return g, h, L.autograd.functional.hessian(loss, W.detach()), s, L.autograd.grad(s.sum(), W)[0]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_and_softmax_second_derivatives_as_torch(dtype):
    """log_softmax, nll_loss and softmax differentiate twice through their gradients' own ops
    (LogSoftmaxBackwardDataBackward0, NllLossBackwardBackward0, SoftmaxBackwardDataBackward0), with
    PyTorch's graph, to the last bit in float32 (float64 to 1e-14: gradviz's float64 softmax,
    log_softmax and matrix products are numpy's, which can differ from PyTorch's in the last bit)."""
    torch = _torch()
    want, got = _classifier(torch, dtype), _classifier(gradviz, dtype)
    assert names(got[0].grad_fn) == names(want[0].grad_fn) and names(got[3].grad_fn) == names(want[3].grad_fn)
    assert as_torch(repr(got[0])) == repr(want[0])
    for t, g in zip(want, got):
        if dtype == "float32":
            assert g.detach().numpy().tobytes() == t.detach().numpy().tobytes()
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-14, atol=1e-15)


def _bad_calls(L):
    H = L.autograd.functional.hessian
    return [lambda: H(lambda x: x ** 2, L.ones(2)), lambda: H(lambda x: (x, x), L.ones(2)),
            lambda: H(lambda x: x.sum(), [1.0]), lambda: H(lambda x: x.sum(), L.ones(2), strict=True),
            lambda: H(lambda x: x.sum(), L.ones(2), outer_jacobian_strategy="x"),
            lambda: L.autograd.functional.vhp(lambda x: x.pow(3).sum(), L.ones(2), L.ones(3)),
            lambda: L.autograd.functional.vhp(lambda x: x.pow(3).sum(), L.ones(2)),
            lambda: H(lambda x: (x * 2).sum(), L.ones(2), strict=True),
            lambda: L.autograd.functional.hvp(lambda x: x.sum(), (L.ones(2), L.ones(1)), (L.ones(2),))]


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 -- the message is what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.torch
def test_hessian_errors_as_torch():
    torch = _torch()
    for t, g in zip(_bad_calls(torch), _bad_calls(gradviz)):
        want, got = _error(t), _error(g)
        assert got is not None and (got[0], as_torch(got[1]).replace("gradviz", "torch")) == want


def test_hessian_doctest_values_without_torch():
    H = gradviz.autograd.functional.hessian
    h = H(lambda x, y: (2 * x.pow(2) + 3 * y.pow(2)).sum(), (gradviz.ones(2), gradviz.ones(2)))
    assert [[b.tolist() for b in row] for row in h] == [[[[4.0, 0.0], [0.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]],
                                                        [[[0.0, 0.0], [0.0, 0.0]], [[6.0, 0.0], [0.0, 6.0]]]]


# --- random expression graphs: second derivatives agree with PyTorch, or gradviz says it cannot ---

def _second_derivatives(L, program):
    """The random program of tests/test_torch_parity.py; its gradient recorded, then differentiated."""
    from test_torch_parity import build_program
    dtype = program[1]
    leaves, _, loss = build_program(L, program)
    grads = L.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    recorded = [g for g in grads if g is not None and g.requires_grad]
    if not recorded:
        return grads, None
    total = sum(((g * g).sum() for g in recorded), L.zeros((), dtype=getattr(L, dtype)))
    return grads, L.autograd.grad(total, leaves, allow_unused=True)


def _random_programs():
    from test_torch_parity import programs
    return programs()


@pytest.mark.torch
@SETTINGS
@given(st.deferred(_random_programs))
def test_random_graphs_second_derivatives_agree_or_refuse(program):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _second_derivatives(torch, program)
        try:
            got = _second_derivatives(gradviz, program)
        except RuntimeError as e:   # a rule numpy cannot record: said, never a number without a graph
            assert "gradviz cannot differentiate the backward of" in str(e)
            return
    tol = dict(rtol=1e-4, atol=1e-5) if program[1] == "float32" else dict(rtol=1e-9, atol=1e-12)
    for t, g in zip(want[0], got[0]):
        assert (t is None) == (g is None)
        if t is not None:
            assert t.requires_grad == g.requires_grad
            np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(force=True), **tol)
    assert (want[1] is None) == (got[1] is None)
    for t, g in zip(want[1] or (), got[1] or ()):
        assert (t is None) == (g is None)
        if t is not None:   # (PyTorch may answer with a ZeroTensor: force=True reads it)
            np.testing.assert_allclose(g.numpy(), t.numpy(force=True), **tol)
