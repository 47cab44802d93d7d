"""BatchNorm on batches of sequences (N, C, L) and images (N, C, H, W), bit for bit against torch.

PyTorch's CPU kernel takes its contiguous path for them (``batch_norm_cpu_*_contiguous_impl``):
statistics per channel in double, and in the backward each (sample, channel) plane summed a
vector at a time, the planes' sums added in double.  Each channel is one thread's work there, so
the bits do not depend on the thread count; the tests still run torch and gradviz on one thread.
A batch of rows (N, C) takes the channels-last path, whose sums depend on the thread count: the
tests at the end run both on several threads (``same_threads`` sets both back afterwards).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz
from parity import same_threads

pytestmark = pytest.mark.torch


def _run(lib, x, g, w, b, rm, rv, training):
    """(y, running mean, running var, dx, dw, db) of F.batch_norm in ``lib``, as numpy arrays."""
    rm, rv = lib.tensor(rm.copy()), lib.tensor(rv.copy())
    xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    y = lib.nn.functional.batch_norm(xt, rm, rv, wt, bt, training=training)
    y.backward(lib.tensor(g))
    return [np.array(t.detach().numpy()) for t in (y, rm, rv, xt.grad, wt.grad, bt.grad)]


def _check(torch, shape, seed, training, threads=1, dtype=np.float32):
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w, b, rm = (rng.standard_normal(c).astype(dtype) for _ in range(3))
    rv = (rng.random(c) + 0.5).astype(dtype)
    with same_threads(torch, threads):
        want = _run(torch, x, g, w, b, rm, rv, training)
        got = _run(gradviz, x, g, w, b, rm, rv, training)
    for name, a, e in zip(("output", "running_mean", "running_var", "input grad", "weight grad", "bias grad"),
                          got, want):
        assert a.dtype == e.dtype and a.tobytes() == e.tobytes(), (name, shape, training, threads, a.dtype)


_shapes = st.tuples(st.integers(1, 9), st.integers(1, 6), st.lists(st.integers(1, 45), min_size=1, max_size=2)) \
    .map(lambda t: (t[0], t[1], *t[2])).filter(lambda s: s[0] * int(np.prod(s[2:])) > 1)


@settings(max_examples=40, deadline=None)
@given(shape=_shapes, seed=st.integers(0, 2**32 - 1), training=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_batch_norm_of_sequences_and_images_is_bit_identical(shape, seed, training, dtype):
    """Outputs, running statistics and the three gradients, on drawn (N, C, L) and (N, C, H, W)
    shapes (planes shorter than a vector, whole vectors, part vectors; images of one pixel go
    PyTorch's channels-last way), in float32 and float64 (vectors of 4 doubles)."""
    torch = pytest.importorskip("torch")
    _check(torch, shape, seed, training, dtype=dtype)


@pytest.mark.parametrize("shape", [(2, 3, 8), (4, 2, 7), (3, 5, 17), (8, 4, 300), (16, 3, 33),
                                   (2, 3, 5, 7), (4, 8, 16, 16), (5, 2, 1, 1), (1, 4, 64), (32, 2, 1)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_fixed_shapes_are_bit_identical(shape, training):
    """The same on fixed shapes, longer planes among them (many whole vectors a plane)."""
    torch = pytest.importorskip("torch")
    _check(torch, shape, sum(shape), training)


def test_batch_norm_of_images_of_one_pixel_runs():
    """(N, C, 1, W>1) and (N, C, H, 1) are images; (N, C, 1, 1) is a batch of rows (this crashed)."""
    for shape in [(3, 2, 1, 5), (3, 2, 5, 1), (3, 2, 1, 1)]:
        x = gradviz.randn(*shape, requires_grad=True)
        gradviz.nn.functional.batch_norm(x, None, None, training=True).sum().backward()
        assert x.grad.shape == shape


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("shape", [(4, 3), (66, 33), (142, 36), (43, 11), (200, 8), (7, 2, 1)])
def test_batch_norm_of_rows_on_several_threads_is_bit_identical(threads, shape):
    """A batch of rows (more rows than threads): each thread's run summed on its own, the runs'
    sums added in double (as the kernel's accumulators), so three runs round as PyTorch's do."""
    torch = pytest.importorskip("torch")
    for training in (True, False):
        _check(torch, shape, sum(shape) + threads, training, threads)


@pytest.mark.parametrize("threads", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("n", range(1, 10))
def test_small_batch_of_rows_on_many_threads_is_bit_identical(n, threads):
    """A batch of rows (N, C) with few rows for the thread count (a laptop's 4-16 threads and a
    batch of 8 or fewer): more rows than threads, a run per thread; no more rows than threads,
    16 channels or fewer summed as one run, 17 or more each channel on its own in double.  Both
    dtypes, training and eval mode; one row while training raises, as in PyTorch."""
    torch = pytest.importorskip("torch")
    for dtype in (np.float32, np.float64):
        for c in (1, 3, 8, 16, 17):
            for training in (True, False):
                if n == 1 and training:
                    for lib in (torch, gradviz):
                        with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when "
                                                             r"training, got input size \w+\.Size\(\[1, " + str(c)):
                            lib.nn.functional.batch_norm(lib.ones(1, c), None, None, training=True)
                    continue
                _check(torch, (n, c), 100 * n + c, training, threads, dtype)
