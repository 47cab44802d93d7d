"""kl_div / KLDivLoss and torch.xlogy: bit for bit against torch 2.13 (the loss, both gradients, the
graph PyTorch writes kl_div as, the 'mean' warning), xlogy's zeros, nans and its gradient's choice at
x = 0, y <= 0, and the gradients against finite differences."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz
from gradviz.gradcheck import gradcheck

F = gradviz.nn.functional


def _chain(t):
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(fn.name())
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


def _run(lib, x, t, reduction, log_target, target_grad):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=target_grad)
        loss = lib.nn.functional.kl_div(a, b, reduction=reduction, log_target=log_target)
        (loss.sum() if reduction == "none" else loss).backward()
    grads = [a.grad.numpy(), b.grad.numpy() if target_grad else np.zeros(0)]
    return [loss.detach().numpy(), *grads], _chain(loss), [str(w.message) for w in caught]


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]), shape=st.sampled_from([(), (3,), (2, 5), (4, 17), (3, 2, 9)]),
       reduction=st.sampled_from(["mean", "batchmean", "sum", "none"]), log_target=st.booleans(),
       target_grad=st.booleans(), zeros=st.booleans(), seed=st.integers(0, 2**16))
def test_bit_identical_to_torch(dtype, shape, reduction, log_target, target_grad, zeros, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    t = rng.uniform(0, 1, shape).astype(dtype)
    if zeros and t.size > 1:               # (a one-hot-like target: xlogy's 0 · log 0 = 0)
        t.reshape(-1)[::3] = 0
    if log_target:
        t = np.log(t + dtype(0.1)).astype(dtype)
    (want, want_graph, want_warn), (got, graph, warn) = (_run(lib, x, t, reduction, log_target, target_grad)
                                                         for lib in (torch, gradviz))
    assert graph == want_graph and warn == want_warn
    for name, a, b in zip(("loss", "input.grad", "target.grad"), want, got):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (name, a, b)


@pytest.mark.torch
def test_xlogy_bit_identical_to_torch_at_zeros_nans_and_negatives():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a = rng.uniform(-1, 3, 400).astype(dtype)
        b = rng.uniform(0.01, 5, 400).astype(dtype)
        a[::7], b[::11], b[::13], b[::17], b[::19], b[::29] = 0, 0, np.nan, np.inf, -1, -np.inf
        g = rng.standard_normal(400).astype(dtype)
        g[::23] = 0
        out = []
        for lib in (torch, gradviz):
            x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            r = lib.xlogy(x, y)
            r.backward(lib.tensor(g))
            out.append([r.detach().numpy(), x.grad.numpy(), y.grad.numpy(), r.grad_fn.name()])
        assert out[0][3] == out[1][3] == "XlogyBackward0"
        for u, v in zip(out[0][:3], out[1][:3]):
            assert u.tobytes() == v.tobytes()


@settings(max_examples=30, deadline=None)
@given(reduction=st.sampled_from(["mean", "batchmean", "sum", "none"]), log_target=st.booleans(),
       seed=st.integers(0, 2**16))
def test_gradients_match_finite_differences(reduction, log_target, seed):
    rng = np.random.default_rng(seed)
    x = gradviz.tensor(rng.uniform(-3, 0, (2, 3)), requires_grad=True)
    t = gradviz.tensor(rng.uniform(0.1, 1, (2, 3)) if not log_target else rng.uniform(-2, 0, (2, 3)),
                       requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target), (x, t))


def test_xlogy_is_zero_where_x_is():
    x = gradviz.tensor([0.0, 0.0, 1.0, 2.0], requires_grad=True)
    y = gradviz.tensor([0.0, float("nan"), float("nan"), 3.0], requires_grad=True)
    r = gradviz.xlogy(x, y)
    assert str(r) == "tensor([0.0000,    nan,    nan, 2.1972], grad_fn=<XlogyBackward0>)"
    r.sum().backward()
    assert x.grad.tolist()[0] == 0.0          # PyTorch's choice at x = 0, y <= 0 (the derivative along x = 0)


def test_modules_errors_and_warnings_as_pytorch():
    assert repr(gradviz.nn.KLDivLoss()) == "KLDivLoss()"
    assert gradviz.nn.KLDivLoss(reduction="batchmean", log_target=True).log_target is True
    x = gradviz.tensor([[-1.0, -2.0], [-0.5, -1.5]])
    t = gradviz.tensor([[0.5, 0.5], [0.0, 1.0]])
    with pytest.warns(UserWarning, match="^reduction: 'mean' divides the total loss by both the batch size"):
        F.kl_div(x, t)
    assert str(gradviz.nn.KLDivLoss(reduction="batchmean")(x, t)) == "tensor(1.1534)"
    with pytest.raises(ValueError, match="^avg is not a valid value for reduction$"):
        F.kl_div(x, t, reduction="avg")
    with pytest.raises(RuntimeError, match="^kl_div: Integral inputs not supported.$"):
        F.kl_div(x, gradviz.ones(2, 2, dtype=gradviz.long), reduction="sum")
