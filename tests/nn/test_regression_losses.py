"""smooth_l1_loss / SmoothL1Loss and huber_loss / HuberLoss: bit for bit against torch 2.13 (the loss
and both gradients, float32 and float64, every reduction, β and δ other than 1 where the vector and
scalar formulas of PyTorch's gradient kernels differ), their graphs, errors, warnings and reprs,
and their gradients against finite differences for any β, δ."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz
from gradviz.gradcheck import gradcheck

F = gradviz.nn.functional


def _run(lib, fn, a, b, reduction, w, **kw):
    x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
    loss = getattr(lib.nn.functional, fn)(x, y, reduction=reduction, **kw)
    (loss if reduction != "none" else (loss * lib.tensor(w)).sum()).backward()
    return [np.array(t.detach().numpy()) for t in (loss, x.grad, y.grad)]


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(fn=st.sampled_from(["smooth_l1_loss", "huber_loss"]), dtype=st.sampled_from([np.float32, np.float64]),
       n=st.sampled_from([1, 3, 7, 8, 15, 16, 17, 31, 33, 40]), rows=st.integers(1, 2),
       reduction=st.sampled_from(["mean", "sum", "none"]), p=st.sampled_from([1.0, 0.5, 0.1, 0.3, 1.7, 2.0]),
       seed=st.integers(0, 2**16))
def test_bit_identical_to_torch(fn, dtype, n, rows, reduction, p, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    shape = (rows, n)
    a, b = ((rng.standard_normal(shape) * rng.choice([0.3, 1, 3])).astype(dtype) for _ in range(2))
    w = rng.uniform(0.5, 2, shape).astype(dtype)
    kw = {"beta": p} if fn == "smooth_l1_loss" else {"delta": p}
    want, got = _run(torch, fn, a, b, reduction, w, **kw), _run(gradviz, fn, a, b, reduction, w, **kw)
    for name, x, y in zip(("loss", "input.grad", "target.grad"), want, got):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), (name, x, y)


@settings(max_examples=40, deadline=None)
@given(fn=st.sampled_from(["smooth_l1_loss", "huber_loss"]), p=st.sampled_from([0.25, 0.5, 1.0, 2.0]),
       reduction=st.sampled_from(["mean", "sum", "none"]), seed=st.integers(0, 2**16))
def test_gradients_match_finite_differences(fn, p, reduction, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-3, 3, (2, 3)), rng.uniform(-3, 3, (2, 3))
    # (away from the kink |x − t| = p, where the second derivative jumps)
    b = np.where(np.abs(np.abs(a - b) - p) < 0.05, a + p + 0.2, b)
    kw = {"beta": p} if fn == "smooth_l1_loss" else {"delta": p}
    x = gradviz.tensor(a, requires_grad=True)
    y = gradviz.tensor(b, requires_grad=True)
    assert gradcheck(lambda x, y: getattr(F, fn)(x, y, reduction=reduction, **kw), (x, y))


def test_graphs_as_pytorch_records_them():
    x, t = gradviz.tensor([1.0, 2.0, -3.0], requires_grad=True), gradviz.tensor([0.5, 2.0, 1.0])
    assert F.smooth_l1_loss(x, t).grad_fn.name() == "SmoothL1LossBackward0"
    assert F.huber_loss(x, t).grad_fn.name() == "HuberLossBackward0"
    # beta=0 is l1_loss, which PyTorch writes out of other ops
    loss = F.smooth_l1_loss(x, t, beta=0.0)
    assert loss.grad_fn.name() == "MeanBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "AbsBackward0"
    assert str(loss) == "tensor(1.5000, grad_fn=<MeanBackward0>)"
    assert F.smooth_l1_loss(x, t, beta=0.5).grad_fn._saved_beta == 0.5
    assert F.huber_loss(x, t, delta=2.0).grad_fn._saved_delta == 2.0
    assert str(F.huber_loss(x, t, weight=gradviz.tensor([1.0, 2.0, 3.0]))) == \
        "tensor(3.5417, grad_fn=<MeanBackward0>)"


def test_modules_print_and_compute_as_pytorch():
    assert repr(gradviz.nn.SmoothL1Loss()) == "SmoothL1Loss()"
    assert repr(gradviz.nn.HuberLoss(reduction="sum", delta=2.0)) == "HuberLoss()"
    x, t = gradviz.tensor([0.5, 3.0]), gradviz.tensor([0.0, 0.0])
    assert str(gradviz.nn.SmoothL1Loss(beta=0.5)(x, t)) == "tensor(1.5000)"
    assert str(gradviz.nn.HuberLoss(reduction="none", delta=2.0)(x, t)) == "tensor([0.1250, 4.0000])"


def test_errors_and_warnings_as_pytorch():
    x, t = gradviz.tensor([1.0, 2.0, -3.0], requires_grad=True), gradviz.tensor([0.5, 2.0, 1.0])
    with pytest.raises(RuntimeError, match=r"^smooth_l1_loss does not support negative values for beta\.$"):
        F.smooth_l1_loss(x, t, beta=-1)
    for delta in (0, -1):
        with pytest.raises(RuntimeError, match=r"^huber_loss does not support non-positive values for delta\.$"):
            F.huber_loss(x, t, delta=delta)
    for fn in (F.smooth_l1_loss, F.huber_loss):
        with pytest.raises(ValueError, match="^x is not a valid value for reduction$"):
            fn(x, t, reduction="x")
        with pytest.raises(RuntimeError, match=r"must match the size of tensor b \(2\)"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(x, gradviz.ones(2))
        with pytest.warns(UserWarning, match=r"Using a target size \(.*Size\(\[1\]\)\) that is different"):
            fn(x, gradviz.ones(1))
    with pytest.raises(ValueError, match="^Weights and input must have the same size.$"):
        F.huber_loss(x, t, weight=gradviz.ones(2))
