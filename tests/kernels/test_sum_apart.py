"""Sums over dimensions that are not adjacent (``x.sum((0, 2))``, BatchNorm-style statistics by
hand) add in PyTorch's order: bit for bit against torch on drawn shapes, one thread."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz

pytestmark = pytest.mark.torch


@st.composite
def _case(draw):
    ndim = draw(st.integers(3, 4))
    shape = tuple(draw(st.lists(st.integers(1, 40 if ndim == 3 else 12), min_size=ndim, max_size=ndim)))
    apart = [c for k in range(2, ndim) for c in itertools.combinations(range(ndim), k) if c[-1] - c[0] + 1 != k]
    return shape, draw(st.sampled_from(apart)), draw(st.sampled_from([np.float32, np.float64])), draw(st.booleans())


@settings(max_examples=50, deadline=None)
@given(case=_case(), seed=st.integers(0, 2**32 - 1))
def test_sum_over_dimensions_apart_is_bit_identical(case, seed):
    torch = pytest.importorskip("torch")
    shape, dims, dtype, keepdim = case
    x = (np.random.default_rng(seed).standard_normal(shape) * 10).astype(dtype)
    before, mine = torch.get_num_threads(), gradviz.get_num_threads()
    torch.set_num_threads(1)
    gradviz.set_num_threads(1)
    try:
        want = torch.tensor(x).sum(dim=dims, keepdim=keepdim).numpy()
        got = gradviz.tensor(x).sum(dim=dims, keepdim=keepdim).numpy()
    finally:
        torch.set_num_threads(before)
        gradviz.set_num_threads(mine)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8)), \
        (shape, dims, dtype)


@pytest.mark.parametrize("shape, dims", [((64, 16, 32, 32), (0, 2, 3)), ((64, 16, 32, 32), (0, 2)),
                                         ((8, 300, 100), (0, 2)), ((2000, 7, 5), (0, 2)), ((30, 40, 50, 20), (1, 3))])
def test_long_sums_over_dimensions_apart_are_bit_identical(shape, dims):
    """Longer tensors (past PyTorch's grain of 32768 elements), on one thread."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    before, mine = torch.get_num_threads(), gradviz.get_num_threads()
    torch.set_num_threads(1)
    gradviz.set_num_threads(1)
    try:
        want = torch.tensor(x).sum(dim=dims).numpy()
        got = gradviz.tensor(x).sum(dim=dims).numpy()
    finally:
        torch.set_num_threads(before)
        gradviz.set_num_threads(mine)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
