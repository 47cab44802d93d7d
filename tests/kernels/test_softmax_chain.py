"""softmax's gradient across a dim that is not the last: Σ_j g_j·y_j down each column, one fused
multiply-add a step (PyTorch's kernel; BatchNorm's channels-last loop adds so too):
``kernels._reduce.fused_running_sum``.  In float32 gradviz sums each step in float64 and rounds it
to float32, and redoes the rare columns where that rounded twice; in float64 it adds each exact
product (a pair) rounding once; where the products need no rounding, a running sum.  It must equal
the chain of single roundings."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradviz.kernels._numerics import fma32, fma64
from gradviz.kernels._reduce import _fused_chain32, fused_running_sum

F = np.float32


def fused_chain(g, y):
    """The definition: a = fl(g_j·y_j + a), one rounding a step, row after row."""
    acc = np.zeros(g.shape[1:], F)
    for gj, yj in zip(g, y):
        acc = fma32(gj, yj, acc)
    return acc


def same_bits(a, b):
    return np.array_equal(np.asarray(a, F).view(np.uint32), np.asarray(b, F).view(np.uint32))


def test_a_sum_float64_rounds_onto_a_midpoint_is_rounded_once():
    """1 + 2⁻²³ (last bit odd), plus 2⁻²⁴ − 2⁻⁷⁰: float64 rounds the sum onto the midpoint 1 + 2⁻²³ + 2⁻²⁴,
    and float32 then to the even 1 + 2⁻²² (up); rounded once, the sum is below the midpoint: 1 + 2⁻²³."""
    g = np.array([[1.0, 1.0], [1 + 2**-23, 1.0]], F)
    y = np.array([[1 + 2**-23, 0.5], [2**-24 * (1 - 2**-23), 0.25]], F)
    twice = F(np.float64(1 + 2**-23) + np.float64(g[1, 0]) * np.float64(y[1, 0]))
    assert twice == F(1 + 2**-22)                        # what rounding twice gives (the case is real)
    assert _fused_chain32(g, y)[0] == F(1 + 2**-23)
    assert same_bits(_fused_chain32(g, y), fused_chain(g, y))


def test_exact_midpoints_stay_rounded_to_even():
    """Products that are float32 numbers (g = 1, a softmax's usual seed) make sums that float64 holds
    exactly, often on a midpoint: those are right as they are (and need no column summed again)."""
    y = np.random.default_rng(0).random((300, 40)).astype(F)
    g = np.ones_like(y)
    assert same_bits(_fused_chain32(g, y), fused_chain(g, y))


floats = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(F, hnp.array_shapes(min_dims=2, max_dims=3, max_side=12), elements=floats),
       st.integers(0, 2**32 - 1))
def test_the_chain_is_one_fused_multiply_add_a_step(g, seed):
    y = np.random.default_rng(seed).standard_normal(g.shape).astype(F)
    assert same_bits(_fused_chain32(g, y), fused_chain(g, y))


def test_columns_of_a_moved_axis_and_a_redone_one():
    """g and y read across a dim moved first (not laid out by rows), one column with a double rounding."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal((5, 7, 3)).astype(F)
    y = rng.standard_normal((5, 7, 3)).astype(F)
    g[:2, 4, 1], y[:2, 4, 1] = [1.0, 1 + 2**-23], [1 + 2**-23, 2**-24 * (1 - 2**-23)]
    g[2:, 4, 1] = 0
    for a, b in ((g, y), (np.moveaxis(g, 1, 0), np.moveaxis(y, 1, 0)), (np.moveaxis(g, 2, 0), np.moveaxis(y, 2, 0))):
        assert same_bits(_fused_chain32(a, b), fused_chain(a, b))
    assert _fused_chain32(g, y)[4, 1] == F(1 + 2**-23)


# --- a block of rows at a time -----------------------------------------------------------------
# The chain runs a block of rows at a time (_reduce._BLOCK numbers): a block whose products are all
# float32 numbers as one float32 running sum, the others row by row; the sum so far, and the sum
# before a tie, carried from one block to the next.

def small_blocks(monkeypatch, numbers):
    from gradviz.kernels import _reduce
    monkeypatch.setattr(_reduce, "_BLOCK", numbers)


exact_g = st.sampled_from([1.0, -1.0, 0.5, 2.0, 0.0, -0.25])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(1, 12), st.integers(0, 2**32 - 1), st.data())
def test_blocks_of_float32_products_and_others_carry_the_sum(n, m, block, seed, data):
    """Rows of exact products (g of ones, halves...) and rows of others in any order, blocks of 1 to
    12 numbers (a row or more each), against one fused multiply-add a step."""
    from gradviz.kernels import _reduce
    rng = np.random.default_rng(seed)
    y = (rng.standard_normal((n, m)) * np.exp2(rng.integers(-30, 30, (n, m)))).astype(F)
    g = rng.standard_normal((n, m)).astype(F)
    exact_rows = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    g[exact_rows] = data.draw(exact_g)
    with mock.patch.object(_reduce, "_BLOCK", block):     # (hypothesis takes no monkeypatch)
        assert same_bits(_fused_chain32(g, y), fused_chain(g, y))


def test_g_of_ones_then_others_and_special_values(monkeypatch):
    """g of ones (its products, y itself, not computed) in the first blocks, then a block with other
    products, then ones again; -0, ∞ and nan among y; g expanded from one number (strides of 0)."""
    small_blocks(monkeypatch, 8)
    rng = np.random.default_rng(5)
    y = rng.standard_normal((12, 4)).astype(F)
    y[0, 0], y[1, 1], y[3, 2], y[5, 3] = -0.0, np.inf, np.nan, -np.inf
    g = np.ones_like(y)
    g[4:6] = rng.standard_normal((2, 4))
    g[5, 1] = 1 + 2**-23
    ones = np.broadcast_to(F(1), y.shape)
    with np.errstate(invalid="ignore"):
        for a in (g, ones, np.ones_like(y)):
            got, want = _fused_chain32(a, y), fused_chain(a, y)
            assert np.array_equal(np.isnan(got), np.isnan(want))
            assert same_bits(got[~np.isnan(got)], want[~np.isnan(want)])
    zeros = np.full((12, 1), -0.0, F)      # -0s added to the chain's +0: +0
    assert same_bits(_fused_chain32(np.ones_like(zeros), zeros), fused_chain(np.ones_like(zeros), zeros))
    assert not np.signbit(_fused_chain32(np.ones_like(zeros), zeros)[0])


def test_a_tie_in_the_first_row_of_a_block_sums_from_the_block_before(monkeypatch):
    """One row a block: the double rounding of row 1 is found from the sum row 0's block left (an
    exact block), and redone; row 2's block starts from the redone column's float32 sum."""
    small_blocks(monkeypatch, 2)
    g = np.array([[1.0, 1.0], [1 + 2**-23, 1.0], [1.0, 3.0]], F)
    y = np.array([[1 + 2**-23, 0.5], [2**-24 * (1 - 2**-23), 0.25], [0.0, 1 / 3]], F)
    assert _fused_chain32(g, y)[0] == F(1 + 2**-23)
    assert same_bits(_fused_chain32(g, y), fused_chain(g, y))


def test_products_outside_float32s_range_are_not_float32_numbers(monkeypatch):
    """A product below float32's smallest number, or above its largest, is not one: such a block is
    summed row by row (overflow to inf, as the fused step rounds)."""
    small_blocks(monkeypatch, 4)
    g = np.array([[1.0, 1.0], [2.0**-100, 2.0**100], [1.0, 1.0]], F)
    y = np.array([[1.0, 1.0], [(1 + 2**-23) * 2.0**-40, 2.0**100], [0.5, -1.0]], F)
    with np.errstate(over="ignore"):
        got, want = _fused_chain32(g, y), fused_chain(g, y)
    assert same_bits(got, want) and np.isinf(got[1])


@pytest.mark.parametrize("shape", [(1, 5), (0, 4), (3, 0), (7, 1), (1, 1), (4, 0, 3)])
def test_one_row_no_rows_and_empty_columns(shape):
    rng = np.random.default_rng(3)
    g, y = rng.standard_normal(shape).astype(F), rng.standard_normal(shape).astype(F)
    got = _fused_chain32(g, y)
    assert got.shape == shape[1:] and same_bits(got, fused_chain(g, y))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_across_a_dim_of_many_blocks_identical_to_torch(dtype):
    """softmax's and log_softmax's gradients along dim 0 and 1 of tables of several blocks of rows,
    for an upstream gradient of ones (float32 products), a random one, one mixing both by rows, and
    sum()'s (ones expanded: strides of 0), on a tensor and on a transposed view of one; bit for bit
    against PyTorch."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(11)
    # (blocks of 32,768 products in float32, of 8,192 in float64: several a table, many of one row or of 9)
    tables = (((64, 2000), 0), ((40, 3, 700), 0), ((3, 40, 700), 1)) if dtype == np.float32 else \
        (((40, 1000), 0), ((30, 3, 300), 0), ((3, 30, 300), 1))
    for shape, dim in tables + (((1, 3000), 0), ((500, 9), 0)):
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        mixed = rng.standard_normal(shape).astype(dtype)
        mixed[rng.random(shape[0]) < 0.5] = 1
        for g in (np.ones(shape, dtype), rng.standard_normal(shape).astype(dtype), mixed, None):
            for fn in ("softmax", "log_softmax"):
                for transposed in (False, True):
                    grads = []
                    for lib in (torch, gradviz):
                        t = lib.tensor(np.swapaxes(x, 0, -1).copy() if transposed else x, requires_grad=True)
                        y = getattr(t.transpose(0, -1) if transposed else t, fn)(dim)
                        y.sum().backward() if g is None else y.backward(lib.tensor(g))     # (None: ones expanded, no memory)
                        grads.append(t.grad.numpy())
                    assert np.array_equal(grads[0], grads[1]), (shape, dim, fn, transposed)


# --- float64 -------------------------------------------------------------------------------------

def fused_chain64(g, y):
    acc = np.zeros(g.shape[1:])
    for gj, yj in zip(g, y):
        acc = fma64(gj, yj, acc)
    return acc


def same_bits64(a, b):
    return np.array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 20), st.integers(1, 5), st.integers(1, 12), st.integers(0, 2**32 - 1), st.data())
def test_float64_chain_is_one_fused_multiply_add_a_step(n, m, block, seed, data):
    """Products rounded (a random g: each added as an exact pair) or not (g of ones, halves, zeros:
    a running sum), by rows in any order, -0 among them, blocks of 1 to 12 numbers."""
    from gradviz.kernels import _reduce
    rng = np.random.default_rng(seed)
    y = rng.standard_normal((n, m)) * np.exp2(rng.integers(-60, 60, (n, m)))
    y[rng.random((n, m)) < 0.2] = -0.0
    g = rng.standard_normal((n, m))
    g[data.draw(st.lists(st.booleans(), min_size=n, max_size=n))] = data.draw(exact_g)
    with mock.patch.object(_reduce, "_BLOCK64", block):
        assert same_bits64(fused_running_sum(g, y), fused_chain64(g, y))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # (∞ − ∞ on the way to nan)
def test_float64_chain_with_infinities_and_nan():
    """g of ones (products that need no rounding) with ∞, −∞ and nan among them: as the fused steps."""
    y = np.array([[1.0, np.inf, 2.0, np.nan], [-np.inf, 1.0, 3.0, 1.0], [1.0, 1.0, -np.inf, 0.5]])
    for g in (np.ones_like(y), np.full_like(y, 0.1)):
        got, want = fused_running_sum(g, y), fused_chain64(g, y)
        assert np.array_equal(got, want, equal_nan=True) and same_bits64(got[~np.isnan(got)], want[~np.isnan(want)])


@pytest.mark.parametrize("shape", [(1, 5), (0, 4), (3, 0), (7, 1), (4, 0, 3), (5, 2, 3)])
def test_float64_one_row_no_rows_and_empty_columns(shape):
    rng = np.random.default_rng(4)
    g, y = rng.standard_normal(shape), rng.standard_normal(shape)
    got = fused_running_sum(g, y)
    assert got.shape == shape[1:] and same_bits64(got, fused_chain64(g, y))
