"""kernels.sum and kernels.mean add in PyTorch's order at the sizes lessons and exercises use: bit for bit
(the sign of a zero included) against torch on drawn shapes, dimensions, memory layouts (a tensor's
transposes, slices and broadcast dimensions are summed as PyTorch's TensorIterator orders them) and
values, one thread; and
the one numpy step they are built from adds in order."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gradviz import kernels
from gradviz.kernels import _reduce

_MAX_SIDE = {1: 3000, 2: 80, 3: 16, 4: 8}


@st.composite
def _shape(draw):
    """1 to 4 dimensions of up to 3,000 elements in all, odd sizes and ones included."""
    ndim = draw(st.integers(1, 4))
    shape = []
    for _ in range(ndim):
        room = 3000 // math.prod(shape or [1])
        shape.append(draw(st.integers(1, max(1, min(_MAX_SIDE[ndim], room)))))
    return tuple(shape)


@st.composite
def _dims(draw, ndim):
    """Every kind of dim: None (all), one int (maybe negative), or a tuple: all, leading, trailing,
    middle or apart dimensions, in any order."""
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    dims = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(d - ndim if draw(st.booleans()) else d for d in dims)


def _values(rng, shape, dtype, special):
    """Magnitudes from 2^-20 to 2^20 (so any other order rounds differently), with -0 and +0 here and
    there or everywhere, or infinities, or a nan."""
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))
    if special == "zeros":
        x[rng.random(shape) < 0.5] = -0.0
        x[rng.random(shape) < 0.2] = 0.0
    elif special == "negative zeros":
        x[...] = -0.0
    elif special == "signed zeros":
        x = np.where(rng.random(shape) < 0.5, -0.0, 0.0)
    elif special == "infinities":
        x[rng.random(shape) < 0.03] = np.inf
        x[rng.random(shape) < 0.03] = -np.inf
    elif special == "nan":
        x.flat[rng.integers(0, x.size)] = np.nan
    return x.astype(dtype)


def _laid_out(rng, x, layout):
    """The values of ``x`` in another memory layout, and how torch makes the same tensor: dimensions
    permuted, every other element (as a tensor's transposes and slices lie), broadcast from size 1
    along some dimensions (stride 0, as ``expand`` makes them), or reversed (no tensor lies so: torch
    gets its copy in rows)."""
    if layout == "permuted":
        order = rng.permutation(x.ndim)
        x = np.ascontiguousarray(x.transpose(order)).transpose(np.argsort(order))
    elif layout == "strided":
        wide = np.repeat(x, 2, axis=-1)
        wide[..., 1::2] = np.nan
        x = wide[..., ::2]
    elif layout == "broadcast":
        base = np.ascontiguousarray(x[tuple(slice(0, 1) if rng.random() < 0.5 else slice(None) for _ in x.shape)])
        return np.broadcast_to(base, x.shape), lambda torch: torch.from_numpy(base).expand(x.shape)
    elif layout == "reversed":
        x = np.ascontiguousarray(x[::-1])[::-1]
        return x, lambda torch: torch.from_numpy(x.copy())
    return x, lambda torch: torch.from_numpy(x)   # the same strides


def _same(got, want):
    """Bit for bit, a nan anywhere taken for a nan, and the sign of every zero."""
    got, want = np.asarray(got), np.asarray(want)
    return (got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
            and np.array_equal(np.signbit(got) | np.isnan(got), np.signbit(want) | np.isnan(want)))


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # inf - inf, as np.sum warns
@settings(max_examples=300, deadline=None)
@given(shape=_shape(), data=st.data(), dtype=st.sampled_from([np.float32, np.float64]),
       special=st.sampled_from(["", "", "", "zeros", "negative zeros", "signed zeros", "infinities", "nan"]),
       layout=st.sampled_from(["rows", "rows", "permuted", "strided", "broadcast", "reversed"]), keepdim=st.booleans(),
       seed=st.integers(0, 2 ** 32 - 1))
def test_sum_and_mean_identical_to_torch(shape, data, dtype, special, layout, keepdim, seed):
    torch = pytest.importorskip("torch")
    dims = data.draw(_dims(len(shape)))
    rng = np.random.default_rng(seed)
    x, tensor = _laid_out(rng, _values(rng, shape, dtype, special), layout)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        t = tensor(torch)
        if dims is None:
            want_sum, want_mean = t.sum(), t.mean()
            if keepdim:
                want_sum, want_mean = want_sum.reshape((1,) * x.ndim), want_mean.reshape((1,) * x.ndim)
        else:
            want_sum, want_mean = t.sum(dims, keepdim=keepdim), t.mean(dims, keepdim=keepdim)
    finally:
        torch.set_num_threads(before)
    assert _same(kernels.sum(x, axis=dims, keepdims=keepdim), want_sum.numpy()), (shape, dims, layout)
    assert _same(kernels.mean(x, axis=dims, keepdims=keepdim), want_mean.numpy()), (shape, dims, layout)


@settings(max_examples=150, deadline=None)
@given(batch=st.integers(1, 5), n=st.integers(1, 40), tail=st.lists(st.integers(1, 9), max_size=2),
       axis=st.integers(1, 2), cut=st.integers(0, 3), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_chains_add_in_order_from_zero(batch, n, tail, axis, cut, dtype, seed):
    """_chains, the one numpy step of every ordered sum, adds along its axis one item after the other
    from +0, as a running sum does (numpy's accumulate), on the layouts the sums hand it: rows of a
    C-contiguous array, cut short along the last dimension; rows of -0 sum to +0."""
    shape = (batch, n, *tail)
    axis = min(axis, len(shape) - 1)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))).astype(dtype)
    x[rng.random(shape) < 0.2] = -0.0
    x[0] = -0.0
    x = x[..., :max(1, shape[-1] - cut)]
    running = np.add.accumulate(x, axis=axis).take(-1, axis=axis) + dtype(0)
    got = _reduce._chains(x, axis)
    assert got.shape == running.shape and np.array_equal(got.view(np.uint8), running.view(np.uint8))


_VIEWS = {
    "x.t().sum()": lambda x: x.t().sum(),
    "x.t().sum(0)": lambda x: x.t().sum(0),
    "x.t().sum(1)": lambda x: x.t().sum(1),
    "x[:, ::2].sum()": lambda x: x[:, ::2].sum(),
    "x[::3, 1::2].sum(0)": lambda x: x[::3, 1::2].sum(0),
    "x[::3, 1::2].sum(1)": lambda x: x[::3, 1::2].sum(1),
    "x[:1].expand(45, 37).sum()": lambda x: x[:1].expand(45, 37).sum(),
    "x[:1].expand(45, 37).sum(0)": lambda x: x[:1].expand(45, 37).sum(0),
    "x[:, :1].expand(40, 37).sum()": lambda x: x[:, :1].expand(40, 37).sum(),
    "x[:, :1].expand(40, 37).sum(1)": lambda x: x[:, :1].expand(40, 37).sum(1),
    "x[:1].expand(3, 40, 37).sum((0, 2))": lambda x: x[:1].expand(3, 40, 37).sum((0, 2)),
}


@pytest.mark.torch
@pytest.mark.parametrize("case", list(_VIEWS))
def test_views_summed_in_memory_order(case):
    """A transposed, sliced or expanded tensor is summed in the order PyTorch's TensorIterator reads
    its memory (not as its copy in rows): the same bits as torch, one thread."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(len(case))
    x = (rng.standard_normal((40, 37)) * np.exp2(rng.integers(-10, 10, (40, 37)))).astype(np.float32)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        want = _VIEWS[case](torch.tensor(x)).numpy()
    finally:
        torch.set_num_threads(before)
    assert _same(_VIEWS[case](gradviz.tensor(x)).numpy(), want)


def _fma_loop(a, b, dtype):
    """The running sum one fused multiply-add at a time (kernels' fma, itself checked against exact
    arithmetic in tests/kernels/test_vecmath.py)."""
    total = np.zeros(a.shape[1:], dtype)
    for x, y in zip(a, b):
        total = kernels.fma(x, y, total, dtype)
    return total


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 70), channels=st.integers(1, 9), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_fused_running_sum_is_one_fma_per_row(rows, channels, dtype, seed):
    """BatchNorm's running Σ a·b (channels-last) steps as one fused multiply-add per row, whatever
    the magnitudes and signs (-0 included)."""
    rng = np.random.default_rng(seed)
    a, b = ((rng.standard_normal((rows, channels)) * np.exp2(rng.integers(-30, 30, (rows, channels)))).astype(dtype)
            for _ in range(2))
    a[rng.random(a.shape) < 0.1] = -0.0
    got, want = _reduce._fused_running_sum(a, b, dtype), _fma_loop(a, b, dtype)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_fused_running_sum_settles_a_double_rounding():
    """1 + a·b with a·b = 2^-24 + 2^-70 (8384513 · 8392705 = 2^46 + 1): the float64 sum lands on the
    float32 midpoint 1 + 2^-24, which rounds to even (1.0); the fused sum is above it, 1 + 2^-23."""
    a = np.array([[1.0, 1.0], [8384513 * 2.0 ** -35, 0.5]], np.float32)
    b = np.array([[1.0, 1.0], [8392705 * 2.0 ** -35, 0.5]], np.float32)
    got = _reduce._fused_running_sum(a, b, np.float32)
    assert got.tolist() == [1 + 2 ** -23, 1.25]
    assert np.array_equal(got, _fma_loop(a, b, np.float32))


@pytest.mark.torch
@pytest.mark.parametrize("threads", [2, 3, 8])
def test_long_sums_cut_between_threads_as_torch(threads):
    """A sum of 32,768 items or more into one output is cut between PyTorch's threads (each thread's
    run summed alone, rows cut short at its ends, then the threads' sums): the same bits as torch on
    as many threads, for one run of memory at stride 1 or 2, and for rows apart (a slice, a
    transpose, an expanded first or last dimension), in float32 and float64."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(threads)
    before, mine = torch.get_num_threads(), gradviz.get_num_threads()
    torch.set_num_threads(threads)
    gradviz.set_num_threads(threads)
    try:
        for dtype in (np.float32, np.float64):
            for size in (32768, 40001, 100000):
                x = (rng.standard_normal(size) * np.exp2(rng.integers(-20, 20, size))).astype(dtype)
                for view in (x, x[::2], x[:size - size % 8].reshape(8, -1)):
                    assert _same(kernels.sum(view), torch.from_numpy(view).sum().numpy()), (size, view.shape)
            for shape in ((301, 401), (7, 9001), (33, 7, 301)):
                x = (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))).astype(dtype)
                t = torch.from_numpy(x)
                for view, want in ((x[..., :-1], t[..., :-1]), (x[..., 1::3], t[..., 1::3]),
                                   (x[::2, ..., :-2].swapaxes(0, -1), t[::2, ..., :-2].transpose(0, -1)),
                                   (np.broadcast_to(x[:1], shape), torch.from_numpy(x[:1].copy()).expand(shape)),
                                   (np.broadcast_to(x[..., :1].copy(), shape), torch.from_numpy(x[..., :1].copy()).expand(shape))):
                    assert _same(kernels.sum(view), want.sum().numpy()), (shape, view.strides)
            x = rng.standard_normal((1, 5)).astype(dtype)              # rows of 5, read again and again
            assert _same(kernels.sum(np.broadcast_to(x, (9000, 5))), torch.from_numpy(x).expand(9000, 5).sum().numpy())
    finally:
        torch.set_num_threads(before)
        gradviz.set_num_threads(mine)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_short_sums_add_as_the_general_ones(dtype):
    """The short paths (one output row, no cascade carry: a loss's mean, a bias's gradient) make the
    same additions as the general helpers, bit for bit, at every length they take: one row of
    vectors (_inner) and the columns of up to 63 rows (_row_sum), zeros of both signs included."""
    rng = np.random.default_rng(7)
    lanes = _reduce._LANES[np.dtype(dtype)]

    def values(shape):
        x = (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))).astype(dtype)
        x[rng.random(shape) < 0.1] = -0.0
        return x

    for n in range(lanes, _reduce._CARRY * _reduce._ILP * lanes):
        for x in (values(n), np.full(n, -0.0, dtype)):
            assert np.array_equal(_reduce._short_inner(x).view(np.uint8),
                                  _reduce._inner(x.reshape(1, n, 1)).view(np.uint8)), n
    for n in range(1, _reduce._CARRY * _reduce._ILP):
        for columns in (2, 3, 7, 16, 31):
            for x in (values((n, columns)), np.full((n, columns), -0.0, dtype)):
                assert np.array_equal(_reduce._short_row_sum(x).view(np.uint8),
                                      _reduce._row_sum(x[None])[0].view(np.uint8)), (n, columns)


@st.composite
def _broadcast_pair(draw):
    """A gradient's shape and the smaller shape it broadcast from: leading dimensions dropped, others
    kept or shrunk to 1 (a bias of (16,) against a batch of (32, 16), a (3, 1) against (2, 3, 4))."""
    big = draw(_shape())
    drop = draw(st.integers(0, len(big)))
    small = tuple(n if draw(st.booleans()) else 1 for n in big[drop:])
    assume(small != big)      # (unbroadcast hands such a gradient on as it is, as PyTorch's sum_to)
    return big, small


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(pair=_broadcast_pair(), dtype=st.sampled_from([np.float32, np.float64]),
       special=st.sampled_from(["", "", "zeros", "negative zeros", "infinities"]),
       layout=st.sampled_from(["rows", "rows", "permuted", "strided", "broadcast", "reversed"]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_sum_to_is_the_sum_over_the_broadcast_axes(pair, dtype, special, layout, seed):
    """kernels.sum_to (unbroadcast's sum, planned once per layout and target) adds what kernels.sum
    adds over the axes broadcasting made, bit for bit, on its first call (the plan made) and its
    second (the plan read); and torch's sum_to_size agrees (where torch is installed)."""
    big, small = pair
    rng = np.random.default_rng(seed)
    x, as_torch = _laid_out(rng, _values(rng, big, dtype, special), layout)
    axes = kernels.summed_axes(big, small)
    want = kernels.sum(x, axis=axes, keepdims=True).reshape(small)
    for _ in range(2):
        got = kernels.sum_to(x, small)
        assert got.shape == small and _same(got, want), (big, small, x.strides)
    try:
        import torch
    except ImportError:
        return
    assert _same(got, as_torch(torch).sum_to_size(small).numpy()), (big, small, x.strides)
