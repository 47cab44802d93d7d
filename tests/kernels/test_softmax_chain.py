"""softmax's gradient across a dim that is not the last: Σ_j g_j·y_j down each column, one fused
multiply-add a step (PyTorch's kernel).  gradviz sums each step in float64 and rounds it to float32,
and redoes the rare columns where that rounded twice: it must equal the chain of single roundings."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradviz.kernels._numerics import fma32
from gradviz.kernels._softmax import _fma_chain32

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
    assert _fma_chain32(g, y)[0] == F(1 + 2**-23)
    assert same_bits(_fma_chain32(g, y), fused_chain(g, y))


def test_exact_midpoints_stay_rounded_to_even():
    """Products that are float32 numbers (g = 1, a softmax's usual seed) make sums that float64 holds
    exactly, often on a midpoint: those are right as they are (and need no column summed again)."""
    y = np.random.default_rng(0).random((300, 40)).astype(F)
    g = np.ones_like(y)
    assert same_bits(_fma_chain32(g, y), fused_chain(g, y))


floats = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(F, hnp.array_shapes(min_dims=2, max_dims=3, max_side=12), elements=floats),
       st.integers(0, 2**32 - 1))
def test_the_chain_is_one_fused_multiply_add_a_step(g, seed):
    y = np.random.default_rng(seed).standard_normal(g.shape).astype(F)
    assert same_bits(_fma_chain32(g, y), fused_chain(g, y))


def test_columns_of_a_moved_axis_and_a_redone_one():
    """g and y read across a dim moved first (not laid out by rows), one column with a double rounding."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal((5, 7, 3)).astype(F)
    y = rng.standard_normal((5, 7, 3)).astype(F)
    g[:2, 4, 1], y[:2, 4, 1] = [1.0, 1 + 2**-23], [1 + 2**-23, 2**-24 * (1 - 2**-23)]
    g[2:, 4, 1] = 0
    for a, b in ((g, y), (np.moveaxis(g, 1, 0), np.moveaxis(y, 1, 0)), (np.moveaxis(g, 2, 0), np.moveaxis(y, 2, 0))):
        assert same_bits(_fma_chain32(a, b), fused_chain(a, b))
    assert _fma_chain32(g, y)[4, 1] == F(1 + 2**-23)
