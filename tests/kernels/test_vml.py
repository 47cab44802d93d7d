"""gradviz.kernels._vml: MKL's vector functions called straight for arrays laid by rows, and the
general path (:func:`gradviz.kernels._mkl.vml`) for every other array, give the same bits; so does
tanh's gradient at every shape, 0-d included."""

import numpy as np
import pytest

from gradviz import kernels
from gradviz.kernels import _mkl, _vml

NAMES = ("exp", "log", "sin", "cos", "tanh", "sqrt", "atan", "erf", "log2", "log10")


def _arrays(dtype):
    """Arrays of one dtype in the layouts a tensor's data can have."""
    rng = np.random.default_rng(7)
    base = (rng.standard_normal((6, 10)) * 2).astype(dtype)
    base[0, :4] = [np.nan, np.inf, -0.0, 0.0]
    readonly = base.copy()
    readonly.flags.writeable = False
    return {"0-d": np.array(dtype(0.75)), "one": base[1, :1].copy(), "rows": base, "columns": base.T,
            "strided": base[:, ::3], "read-only": readonly, "broadcast": np.broadcast_to(base[2], (3, 10)),
            "empty": np.zeros((0, 3), dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_every_layout_gives_the_general_paths_bits(name, dtype):
    if _mkl.library() is None:
        pytest.skip("MKL 2024.2 is not installed: both paths are the fallback")
    f = getattr(kernels, name)
    mkl_name = {"log": "Ln"}.get(name, name.capitalize())
    with np.errstate(all="ignore"):
        for label, a in _arrays(dtype).items():
            expected = _mkl.vml(mkl_name, a)
            got = f(a)
            assert got.shape == a.shape and got.dtype == a.dtype, label
            assert np.array_equal(got, expected, equal_nan=True), label
            assert np.array_equal(np.signbit(got), np.signbit(expected)), label


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_is_written_when_it_fits(dtype):
    a = _arrays(dtype)["rows"]
    with np.errstate(all="ignore"):
        expected = kernels.exp(a)
        x = a.copy()
        assert kernels.exp(x, out=x) is x and np.array_equal(x, expected, equal_nan=True)
        wrong = np.empty((10, 6), dtype)    # another shape: a new array, `wrong` untouched
        got = kernels.exp(a, out=wrong)
        assert got is not wrong and np.array_equal(got, expected, equal_nan=True)


def test_tanh_backward_at_every_shape_as_in_double():
    rng = np.random.default_rng(3)
    for shape in [(), (1,), (7,), (32, 16)]:
        y = np.tanh(rng.standard_normal(shape) * 2).astype(np.float32)
        g = (rng.standard_normal(shape) * 100).astype(np.float32)
        expected = g * _vml.in_double(lambda t: 1 - t * t)(y)
        got = np.asarray(kernels.tanh_backward(g, y))
        assert got.shape == shape and got.dtype == np.float32
        assert np.array_equal(got, expected)


@pytest.mark.torch
def test_tanh_of_a_0d_tensor_and_its_gradient_as_torch():
    torch = pytest.importorskip("torch")
    import gradviz
    results = []
    for lib in (gradviz, torch):
        x = lib.tensor(1.1412807, requires_grad=True)
        y = lib.stack([x.tanh(), x.tanh() * 2])
        y.backward(lib.tensor([0.3, -0.7]))
        results.append((y.detach().numpy(), x.grad.numpy()))
    assert all(np.array_equal(a, b) for a, b in zip(*results))


def test_without_mkl_the_functions_are_computed_in_double(monkeypatch):
    """Once MKL is gone (as where it is not installed), no call reaches it, even after calls that did."""
    a = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32) * 3
    kernels.tanh(a)
    monkeypatch.setattr(_mkl, "library", lambda: None)
    assert np.array_equal(kernels.tanh(a), _vml.in_double(np.tanh)(a))
    assert np.array_equal(kernels.exp(a[:1, :5]), _vml.in_double(np.exp)(a[:1, :5]))
    y = a.copy()
    assert not _mkl.axpy(np.float32(0.5), a, y) and np.array_equal(y, a)
