"""gradviz.kernels._products: the planned products (gemm's call worked out once per layout) give what
working it out each time gives, bit for bit, and step aside where MKL is missing.

Their agreement with torch is asserted in ``test_vecmath.py`` (every shape class and layout); here
the plan is compared with the long way it short-cuts, so a wrong plan fails even without torch.
"""

import ctypes

import numpy as np
import pytest

from gradviz import kernels
from gradviz.kernels import _mkl, _products

needs_mkl = pytest.mark.skipif(_mkl.library() is None,
                               reason='MKL 2024.2 is not installed (from the clone: pip install -e ".[exact]")')


def _layouts(rng, rows, cols, dtype):
    """A ``rows`` x ``cols`` matrix as PyTorch's tensors could lie: by rows, by columns, a slice of
    a wider one, a single row or column picked out of a larger one, read-only copies of the
    first two (MKL gets their addresses another way); and as gemm cannot read it: expanded (stride
    0, as ``sum``'s gradient), flipped by numpy (negative strides), each copied by rows first."""
    x = rng.standard_normal((rows, cols)).astype(dtype)
    wide = rng.standard_normal((rows + 2, cols + 3)).astype(dtype)
    read_only = [x.copy(), np.asfortranarray(x)]
    for r in read_only:
        r.flags.writeable = False
    return [x, np.asfortranarray(x), wide[1:rows + 1, 2:cols + 2], wide[1:rows + 1, 2:cols + 2].T.copy().T,
            np.asfortranarray(wide)[:rows, 1:cols + 1], *read_only, np.broadcast_to(x[:1, :1], (rows, cols)),
            x[::-1, ::-1]]


def _expanded(x):
    """Is ``x`` expanded along a dimension of more than one element (read-only, copied before gemm)?"""
    return any(stride == 0 and size > 1 for stride, size in zip(x.strides, x.shape))


def _long_way(monkeypatch, product):
    """``product()`` with no plan: gemm's call worked out from the strides (the plans set aside)."""
    with monkeypatch.context() as m:
        m.setattr(_products, "_PLANS", {})
        for name in ("_plan", "_mv_plan", "_dot_plan", "_bmm_plan"):
            m.setattr(_products, name, lambda *operands: None)
        return product()


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_planned_products_as_worked_out(monkeypatch, dtype):
    """mm and addmm by plan, first and later calls, equal the long way bit for bit for every layout
    of both operands, vectors (one row, one column, inner dimension 1) included; all are planned
    (where addresses are lent as buffers, not read from numpy's struct, all but those reading a
    read-only operand as it lies: they take the long way)."""
    rng = np.random.default_rng(3)
    for rows, k, cols in [(2, 2, 2), (32, 2, 16), (32, 16, 1), (1, 16, 16), (5, 1, 4), (1, 1, 1), (7, 33, 9)]:
        bias = rng.standard_normal(cols).astype(dtype)
        for a in _layouts(rng, rows, k, dtype):
            for b in _layouts(rng, k, cols, dtype):
                for product in (lambda: kernels.mm(a, b), lambda: kernels.addmm(bias, a, b),
                                lambda: kernels.addmm(bias, a, b, beta=0.5, alpha=-2.0),
                                lambda: kernels.addmm(bias, a, b, beta=0.0)):
                    want = _long_way(monkeypatch, product)
                    for _ in range(2):      # the first call makes the plan, the second reads it
                        got = product()
                        assert got.dtype == want.dtype and got.flags.c_contiguous
                        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (rows, k, cols)
                if all(x.flags.writeable or _expanded(x) for x in (a, b)):   # (planned indeed: no
                    assert _products._planned(None, a, b, 0, 1) is not None        # quiet long way)


@needs_mkl
def test_plans_step_aside_without_mkl(monkeypatch):
    """A product planned while MKL was there is numpy's once MKL is gone (float64: numpy's matmul)."""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((9, 300)), rng.standard_normal((300, 7))
    kernels.mm(a, b)
    monkeypatch.setattr(_mkl, "library", lambda: None)
    assert np.array_equal(kernels.mm(a, b), np.matmul(a, b))
    assert np.array_equal(kernels.addmm(b[0], a, b), b[0] + np.matmul(a, b))


@needs_mkl
def test_plans_kept_few(monkeypatch):
    """A program multiplying ever new shapes does not grow the plans without end, and is still right."""
    monkeypatch.setattr(_products, "_PLANS", {})
    monkeypatch.setattr(_products, "_MAX_PLANS", 8)
    rng = np.random.default_rng(5)
    for n in range(1, 30):
        a, b = rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
        assert np.array_equal(kernels.mm(a, b), _long_way(monkeypatch, lambda: kernels.mm(a, b)))
        assert len(_products._PLANS) <= 8


def _vectors(rng, n, dtype):
    """A vector of ``n`` as a tensor's could lie: contiguous, every other element of a longer one,
    a column of a matrix, read-only, expanded (stride 0)."""
    v = rng.standard_normal(n).astype(dtype)
    read_only = v.copy()
    read_only.flags.writeable = False
    return [v, rng.standard_normal(2 * n).astype(dtype)[::2], rng.standard_normal((n, 3)).astype(dtype)[:, 1], read_only,
            np.broadcast_to(v[:1], (n,))]


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_planned_vector_products_as_worked_out(monkeypatch, dtype):
    """mv (gemv) and dot by plan equal the long way bit for bit, every layout of matrix and vectors."""
    rng = np.random.default_rng(6)
    for rows, cols in [(2, 2), (32, 3), (3, 32), (1, 5), (5, 1), (1, 1), (17, 40)]:
        for a in _layouts(rng, rows, cols, dtype):
            for v in _vectors(rng, cols, dtype):
                for product in (lambda: kernels.mv(a, v), lambda: kernels.dot(a[0], v)):
                    want = _long_way(monkeypatch, product)
                    for _ in range(2):
                        got = product()
                        assert np.shape(got) == np.shape(want) and got.dtype == want.dtype
                        assert np.array_equal(np.reshape(got, -1).view(np.uint8), np.reshape(want, -1).view(np.uint8))


@pytest.mark.torch
@pytest.mark.parametrize("mkl", [True, False], ids=["MKL", "no MKL"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expanded_vectors_as_torch(monkeypatch, dtype, mkl):
    """A vector of stride 0 (``sum``'s gradient, expanded) times a matrix: PyTorch's gemv hands it
    not to BLAS but to its own loop (products added in order), with or without MKL; ``dot`` hands
    it to MKL's dot, stride 0 and all.  ``(X @ w).sum().backward()`` then gives torch's ``w.grad``."""
    torch = pytest.importorskip("torch")
    import gradviz
    if mkl and _mkl.library() is None:
        pytest.skip('MKL 2024.2 is not installed (from the clone: pip install -e ".[exact]")')
    if not mkl:
        monkeypatch.setattr(_mkl, "library", lambda: None)
    rng = np.random.default_rng(7)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for rows, cols in [(16, 16), (5, 7), (100, 40), (32, 3), (3, 300), (1, 9), (9, 1)]:
            a = (rng.standard_normal((rows, cols)) * 10.0 ** rng.integers(-3, 3, (rows, cols))).astype(dtype)
            g = rng.standard_normal(1).astype(dtype)
            for ta, na in [(torch.tensor(a), a), (torch.tensor(a.T.copy()).t(), np.asfortranarray(a))]:
                want = torch.mv(ta, torch.tensor(g).expand(cols)).numpy()
                got = kernels.mv(na, np.broadcast_to(g, (cols,)))
                assert got.dtype == want.dtype and np.array_equal(got, want), (rows, cols)
            if mkl:
                want = torch.dot(torch.tensor(a[0]), torch.tensor(g).expand(cols)).numpy()
                assert np.array_equal(kernels.dot(a[0], np.broadcast_to(g, (cols,))), want)
            grads = []
            for lib in (torch, gradviz):      # X by rows, then X a transposed view (gemv 'N', then 'T')
                w, v = lib.tensor(a[0], requires_grad=True), lib.tensor(a[0], requires_grad=True)
                (lib.tensor(a) @ w).sum().backward()
                (lib.tensor(a.T.copy()).t() @ v).sum().backward()
                grads.append((w.grad.numpy(), v.grad.numpy()))
            assert all(np.array_equal(t, v) for t, v in zip(*grads)), (rows, cols)
    finally:
        torch.set_num_threads(before)


def _batches(rng, count, rows, cols, dtype):
    """A batch of ``count`` matrices as a tensor's could lie: each by rows, each by columns (a
    transposed view), every other matrix of a longer batch, one matrix expanded (stride 0),
    read-only; and flipped by numpy (copied first)."""
    x = rng.standard_normal((count, rows, cols)).astype(dtype)
    read_only = x.copy()
    read_only.flags.writeable = False
    return [x, x.transpose(0, 2, 1).copy().transpose(0, 2, 1), rng.standard_normal((2 * count, rows, cols)).astype(dtype)[::2],
            np.broadcast_to(x[:1], x.shape), read_only, x[::-1]]


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_planned_batched_products_as_worked_out(monkeypatch, dtype):
    """bmm by plan (MKL's batched gemm, its arguments made once) equals the long way bit for bit,
    first and later calls, every layout of both batches; small products (PyTorch's own loop) too."""
    rng = np.random.default_rng(9)
    for count, rows, k, cols in [(2, 16, 32, 16), (3, 1, 40, 12), (4, 12, 40, 1), (2, 9, 1, 50), (3, 2, 3, 2), (1, 16, 32, 16)]:
        for a in _batches(rng, count, rows, k, dtype):
            for b in _batches(rng, count, k, cols, dtype):
                want = _long_way(monkeypatch, lambda: kernels.bmm(a, b))
                for _ in range(2):
                    got = kernels.bmm(a, b)
                    assert got.dtype == want.dtype and got.shape == want.shape
                    assert np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                                          np.ascontiguousarray(want).view(np.uint8)), (count, rows, k, cols)


def _address(argument):
    """The address a ctypes argument made by a lender hands MKL."""
    return argument.value if isinstance(argument, ctypes.c_void_p) else ctypes.addressof(argument)


@pytest.mark.parametrize("struct", [True, False], ids=["read from numpy's struct", "lent as buffers"])
def test_lenders_hand_mkl_each_arrays_first_element(monkeypatch, struct):
    """Each array's lender hands MKL the address of its first element, as numpy's
    ``__array_interface__`` gives it, for every layout the products meet: read from numpy's array
    struct (any layout, read-only included), or, where that is not checked to hold, lent as a
    buffer (rows, columns; a read-only one refused with TypeError) or by ``__array_interface__``."""
    if not struct:
        monkeypatch.setattr(_mkl, "_READS_THE_STRUCT", False)
    else:
        assert _mkl._READS_THE_STRUCT or pytest.skip("this Python's arrays are not read through their struct")
    rng = np.random.default_rng(8)
    for x in _layouts(rng, 5, 3, np.float32) + [np.full((), 2.0), np.ones(0)[:0]]:
        lend = _mkl.lender(x)
        if not struct and not x.flags.writeable and (x.flags.c_contiguous or x.flags.f_contiguous):
            with pytest.raises(TypeError):
                lend(x)
            continue
        if x.size or struct:
            assert _address(lend(x)) == x.__array_interface__["data"][0], x.strides
