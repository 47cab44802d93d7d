"""gradviz.kernels (products, softmax, _sleef, _libm): float32 and float64 rounded as PyTorch's CPU kernels round them.

The exactness figures (share of results bit-identical to torch 2.13 on this machine) are computed
once by :func:`exactness` and asserted per function, dtype and dimension and per matrix-product
shape class; ``benchmarks/core.py`` prints the same table.
"""

import contextlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradviz import kernels
from gradviz.kernels import _libm, _mkl, _numerics, _sleef
from gradviz.kernels._numerics import fma32, fma64

f32 = np.float32


def test_fma_rounds_once():
    """fma(a, b, c) is the exact a·b + c rounded once, including sums that land on float32 ties."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(2000).astype(f32)
    b = rng.standard_normal(2000).astype(f32)
    c = (rng.standard_normal(2000) * 2.0 ** rng.integers(-30, 30, 2000)).astype(f32)
    # ties by construction: c = -(a·b rounded to float32) + half an ulp of it, pushed by a tiny b
    one = f32(1 + 2 ** -23)
    tie_a, tie_b, tie_c = f32(1), one, f32(2 ** -24) * f32(-1)
    got = fma32(np.append(a, tie_a), np.append(b, tie_b), np.append(c, tie_c))
    want = [np.float32(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))))
            for x, y, z in zip(np.append(a, tie_a), np.append(b, tie_b), np.append(c, tie_c))]
    # float(Fraction) rounds once to double; the double is then exact here or far from a float32 tie
    assert np.array_equal(got, np.array(want, f32))


def test_fma_of_large_arrays_as_of_small_ones():
    """fma32 of a large array (done in place) gives each element what it gives that element alone,
    ties by construction included (the rare path, worked out again)."""
    rng = np.random.default_rng(1)
    n = 40000
    a, b = rng.standard_normal(n).astype(f32), rng.standard_normal(n).astype(f32)
    c = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(f32)
    # ties: a·b = 1 + 2⁻²⁴ exactly (97/64 · 172961/2¹⁸), a float32 midpoint, and c = 2⁻⁸⁰ just above it:
    # float64 rounds the sum onto the midpoint, which float32 would round down; the fma rounds up
    a[::997], b[::997], c[::997] = f32(97 / 64), f32(172961 / 2 ** 18), f32(2.0 ** -80)
    for x, y, z in [(a, b, c), (a, f32(-0.05), c), (a.reshape(200, 200), b.reshape(200, 200), c.reshape(200, 200))]:
        got = fma32(x, y, z)
        ys = y.ravel() if np.ndim(y) else np.full(n, y)
        small = np.concatenate([fma32(x.ravel()[i:i + 1000], ys[i:i + 1000], z.ravel()[i:i + 1000])
                                for i in range(0, n, 1000)])
        assert got.dtype == f32 and got.shape == z.shape and np.array_equal(got.ravel(), small)
    assert (fma32(a, b, c)[::997] == f32(1 + 2 ** -23)).all()


def test_fma_of_large_arrays_with_exact_ties_and_a_row_broadcast():
    """log_softmax's gradient across dim 0 with g of ones, g − e·Σg: sums float64 holds exactly fall
    on float32 midpoints by the hundred, and stay; the planted ties of one column are settled; the
    row of sums comes broadcast.  Each element as fma32 gives it alone."""
    rng = np.random.default_rng(2)
    e = rng.random((300, 200)).astype(f32)
    total = np.full((1, 200), -300, f32)
    total[0, 5] = f32(172961 / 2 ** 18)
    ones = np.ones((300, 200), f32)
    e[::7, 5], ones[::7, 5] = f32(97 / 64), f32(2.0 ** -80)      # a·b = 1 + 2⁻²⁴, c just above: rounds up
    got = fma32(e, np.broadcast_to(total, e.shape), ones)
    low = (np.multiply(e, total, dtype=np.float64) + ones).view(np.uint64) & np.uint64(2 ** 29 - 1)
    assert (low == 2 ** 28).sum() > 500                             # (the exact ties are there)
    rows = np.stack([fma32(e[i], total[0], ones[i]) for i in range(300)])
    assert np.array_equal(got.view(np.uint32), rows.view(np.uint32))
    assert (got[::7, 5] == f32(1 + 2 ** -23)).all()


def _c_fma(dtype):
    """The C library's ``fmaf``/``fma`` (correctly rounded, one element a call), or None."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("m")
    if name is None:
        return None
    fn = ctypes.CDLL(name)["fmaf" if dtype == f32 else "fma"]
    scalar = ctypes.c_float if dtype == f32 else ctypes.c_double
    fn.restype, fn.argtypes = scalar, [scalar] * 3
    return fn


def _large_fma_cases(dtype):
    """(a, b, c) of 20,000 elements or more: wide random magnitudes, cancelling sums, every triple of
    special values, -0 sums, float32 ties and products too small for a float32."""
    rng = np.random.default_rng(11)
    n = 20000
    a = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(dtype)
    b = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(dtype)
    c = (rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)).astype(dtype)
    c[::5] = -(a[::5] * b[::5])                         # exact zeros (+0) and what the product rounded away
    if dtype == f32:   # products below the smallest float32, -0 with c of either sign (fma64's emulation,
        a[1::5], b[1::5] = f32(2.0 ** -80), f32(-2.0 ** -80)    # which MKL's zeros fall back on, holds
        c[1::10], c[6::10] = -0.0, 0.0                          # in the normal range only)
    a[2::5], c[2::5] = -0.0, -0.0                       # -0·b + -0 = -0 where b > 0
    if dtype == f32:   # a·b = 1 + 2⁻²⁴ (a float32 midpoint), c just above: float64 would tie, the fma rounds up
        a[3::997], b[3::997], c[3::997] = f32(97 / 64), f32(172961 / 2 ** 18), f32(2.0 ** -80)
    sa, sb, sc = (x.ravel().astype(dtype) for x in np.meshgrid(SPECIAL, SPECIAL, SPECIAL))
    return np.concatenate((a, sa)), np.concatenate((b, sb)), np.concatenate((c, sc))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # (the emulation's own ∞ - ∞ on the way to nan)
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_fma_of_large_arrays_is_the_c_librarys(dtype, monkeypatch):
    """fma32/fma64 of large arrays: MKL's fused multiply-adds where MKL is installed (sbmv's +0 added
    last taken back: exact -0 sums, negative products too small for a float32; axpy for a factor of
    one number: a scalar, a row of one number, expanded or not, but not of ±0, which BLAS would
    skip), the emulation otherwise (its in-place path for large float32 arrays also with c broadcast);
    both the C library's ``fmaf``/``fma`` bit for bit, as whole arrays, broadcast rows and scalars."""
    c_fma = _c_fma(dtype)
    if c_fma is None:
        pytest.skip("no C maths library to compare with")
    fma = fma32 if dtype == f32 else fma64

    def by_c(x, y, z):
        x, y, z = np.broadcast_arrays(x, y, z)
        return np.array([c_fma(*v) for v in zip(x.ravel().tolist(), y.ravel().tolist(), z.ravel().tolist())],
                        dtype).reshape(x.shape)

    a, b, c = _large_fma_cases(dtype)
    x, z = a[:20000].reshape(100, 200), c[:20000].reshape(100, 200)
    scalar, minus_zero = dtype(-0.05), np.full(200, -0.0, dtype)
    cases = [((a, b, c), "fma_into"), ((x, b[:200], z), "fma_into"), ((a, scalar, c), "axpy"),
             ((scalar, a, c), "axpy"), ((x, np.full(200, scalar), z), "axpy"),
             ((np.broadcast_to(scalar, (100, 1)), x, z), "axpy"), ((x, minus_zero, z), "fma_into"),
             ((x, z, c[:200]), "fma_into"), ((a, b, dtype(1.5)), "fma_into")]    # (c a row, a number)
    wants = [by_c(*args) for args, _ in cases]
    calls, installed = [], _mkl.library() is not None
    monkeypatch.setitem(_numerics._MKL_FROM, dtype, 2 ** 14)     # (MKL from 16,384 elements: these)
    if installed:     # (which routine took each case: the ones that did it; MKL's own check made first)
        assert _numerics._fuses(dtype, _numerics._fma32 if dtype == f32 else _numerics._fma64)
        for name in ("fma_into", "axpy"):
            monkeypatch.setattr(_mkl, name, lambda *args, f=getattr(_mkl, name), name=name: f(*args)
                                and not calls.append(name))
    for mkl in (True, False):
        if not mkl:
            monkeypatch.setattr(_mkl, "library", lambda: None)
        for (args, _), expected in zip(cases, wants):
            got = fma(*args)
            assert got.dtype == dtype and got.shape == expected.shape
            nan = np.isnan(expected)
            assert np.array_equal(np.isnan(got), nan)
            assert np.array_equal(got[~nan].view(np.uint8), expected[~nan].view(np.uint8)), mkl
    assert calls == ([name for _, name in cases] if installed else [])


@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_a_blas_that_does_not_fuse_is_not_used_for_fma(dtype, monkeypatch):
    """Where MKL's sbmv would multiply and add with two roundings (a processor without FMA), the check
    made once refuses it and fma32/fma64 stay the emulation's, rounded once."""
    if _mkl.library() is None:
        pytest.skip("MKL is not installed: the emulation computes every fma")
    def unfused(a, x, y):
        y += a * x
        return True
    monkeypatch.setattr(_numerics, "_FUSES", {})
    monkeypatch.setattr(_mkl, "fma_into", unfused)
    monkeypatch.setitem(_numerics._MKL_FROM, dtype, 2 ** 10)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(4096).astype(dtype) for _ in range(2))
    c = -(a * b)                                   # fused: the product's rounding error; unfused: 0
    emulated = _numerics._fma32 if dtype == f32 else _numerics._fma64
    got = (fma32 if dtype == f32 else fma64)(a, b, c)
    assert got.any() and np.array_equal(got, emulated(a, b, c))
    assert _numerics._FUSES == {np.dtype(dtype): False}


def test_fma_settles_double_rounding():
    """A sum that float64 rounds onto a float32 midpoint is decided by what float64 dropped."""
    a, b = f32(1 + 2 ** -23), f32(1 + 2 ** -22)       # exact product 1 + 3·2⁻²³ + 2⁻⁴⁵
    c = f32(2 ** -24) - f32(3 * 2 ** -23)             # moves it to 1 + 2⁻²⁴ + 2⁻⁴⁵: just above a tie
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    assert exact > 1 + Fraction(1, 2 ** 24)
    assert fma32(a, b, c) == f32(1 + 2 ** -23)  # rounds up, where (a*b + c) in float64 ties to 1


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 1.0, -1.0, 2.0 ** -24]


def _add_cases(dtype):
    """(a, b, alpha): wide random magnitudes (a fused and an unfused a + αb differ on about 12% of
    them), every pair of special values, sizes that leave every vector tail, two layouts."""
    rng = np.random.default_rng(3)
    n = 4099
    a = (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)).astype(dtype)
    b = (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)).astype(dtype)
    sa, sb = (x.ravel().astype(dtype) for x in np.meshgrid(SPECIAL, SPECIAL))
    for alpha in (-0.05, -0.1, 1e-30, -3.0, 1e30, 2.0, np.inf, -0.0, 0.0):
        yield sa, sb, alpha
        for size in (1, 7, 8, 9, 31, 1000, n):
            yield a[:size], b[:size], alpha
    yield a[:4096].reshape(64, 64).T, b[:4096].reshape(64, 64).T, -0.01       # by columns, both


@pytest.mark.filterwarnings("ignore::RuntimeWarning")    # (the emulation's own ∞ - ∞ on the way to nan)
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_add_with_alpha_is_one_fused_multiply_add(dtype):
    """``a + α·b`` (``p.add_(g, alpha=-lr)``, every SGD step): MKL's axpy where it is installed,
    each element fma(b, α, a) rounded once, equal bit for bit to the fused multiply-add emulated
    in numpy, special values included (α = 0 never goes to BLAS, which would skip 0·∞ = nan);
    ``out=a`` writes the same bits in place."""
    fma = fma32 if dtype == f32 else fma64
    for a, b, alpha in _add_cases(dtype):
        want = np.asarray(fma(b, dtype(alpha), a), dtype)
        got = kernels.add(a, b, alpha)
        assert got.dtype == dtype and got.shape == a.shape and got.strides == a.strides
        assert np.array_equal(got, want, equal_nan=True), (alpha, len(a))
        same_nan = np.isnan(got) == np.isnan(want)
        assert np.array_equal(np.signbit(got)[~np.isnan(got)], np.signbit(want)[~np.isnan(want)]) and same_nan.all()
        inplace = a.copy(order="K")
        assert kernels.add(inplace, b, alpha, out=inplace) is inplace
        assert np.array_equal(inplace, want, equal_nan=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_log_softmax_gradient_by_mkls_batched_axpy_is_numpys_fused_multiply_add(dtype, monkeypatch):
    """log_softmax's gradient along the last dim, g − e^y·Σg, one fused multiply-add per element:
    by MKL's batched axpy (one row per group; one axpy where every Σg is one number, g of ones)
    where MKL is installed, by numpy's emulation
    otherwise; the same bits, every leftover of a vector, rows whose Σg is ±0 (BLAS skips them),
    ∞ and nan included."""
    from gradviz.kernels import _mkl
    if _mkl.library() is None:
        pytest.skip("MKL (the exact extra) is not installed: only the numpy path runs")
    rng = np.random.default_rng(7)
    for n in list(range(1, 40)) + [63, 64, 65, 300, 1000, 1029]:
        y = -np.abs(rng.standard_normal((9, n)) * 4).astype(dtype)
        g = rng.standard_normal((9, n)).astype(dtype)
        g[0], g[1], y[2, 0], y[3, -1], g[4, 0], g[5, -1] = 0.0, -0.0, np.nan, -np.inf, np.inf, np.nan
        g[6] = -0.0
        y[6, 0] = np.nan
        # (g of ones: every row's Σg one number, one axpy for all; of -0s: a Σg of -0, which axpy skips)
        for seed in (g, np.ones_like(g), np.full_like(g, -0.0)):
            fast = kernels.log_softmax_backward(seed, y, 1)
            with monkeypatch.context() as patch:
                patch.setattr(_mkl, "axpy_rows", lambda alpha, x, out: False)
                patch.setattr(_mkl, "axpy", lambda alpha, x, out: False)
                slow = kernels.log_softmax_backward(seed, y, 1)
            assert fast.dtype == slow.dtype == dtype
            nan = np.isnan(slow)
            assert np.array_equal(np.isnan(fast), nan), n
            assert np.array_equal(fast[~nan].view(np.uint8), slow[~nan].view(np.uint8)), n
    assert _mkl.axpy_rows(np.ones(2, dtype), np.ones((2, 3), dtype), np.ones((3, 2), dtype)) is False


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_add_with_alpha_identical_to_torch(dtype):
    torch = pytest.importorskip("torch")
    with threads(torch, 1):
        for a, b, alpha in _add_cases(dtype):
            t = torch.tensor(a)
            t.add_(torch.tensor(b), alpha=alpha)
            with np.errstate(all="ignore"):   # (inf and nan cases: the op table calls kernels so, quietly)
                got = kernels.add(a, b, alpha)
            assert np.array_equal(got, t.numpy(), equal_nan=True), (alpha, len(a))
            assert np.array_equal(np.signbit(got), np.signbit(t.numpy())) or np.isnan(got).any()


def test_libm_exp_is_the_c_librarys():
    """_libm.exp repeats the C library's expf bit for bit (it is not always correctly rounded)."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C maths library to compare with")
    expf = ctypes.CDLL(name).expf
    expf.restype, expf.argtypes = ctypes.c_float, [ctypes.c_float]
    rng = np.random.default_rng(4)
    x = np.concatenate((rng.uniform(-110, 95, 20000), [0, -0.0, np.inf, -np.inf, np.nan])).astype(f32)
    want = np.array([expf(float(v)) for v in x], f32)
    got = _libm.exp(x)
    assert np.array_equal(got.view(np.int32)[:-1], want.view(np.int32)[:-1]) and np.isnan(got[-1])


def test_sleef_exp_special_values():
    x = np.array([0, -0.0, 1, -104.5, 100.5, np.inf, -np.inf, np.nan, 88.7, -87.3], f32)
    got = _sleef.exp(x)
    assert got[0] == 1 and got[1] == 1 and got[2] == f32(np.e)
    assert got[3] == 0 and got[4] == np.inf and got[5] == np.inf and got[6] == 0
    assert np.isnan(got[7])
    assert np.allclose(got[8:], np.exp(x[8:].astype(float)), rtol=2e-7)


def test_fma64_rounds_once():
    """fma64(a, b, c) is the C library's fma (the processor's, rounded once), ties and near-ties too."""
    c_fma = _c_fma(np.float64)
    if c_fma is None:
        pytest.skip("no C maths library to compare with")
    rng = np.random.default_rng(6)
    n = 20000
    a = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    b = rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    c = -(a * b) * (1 + rng.standard_normal(n) * 2.0 ** rng.integers(-60, 0, n))   # cancelling sums
    # products just off a double, plus half an ulp or so: the sums land on or next to ties
    a2 = 1 + rng.integers(1, 2 ** 26, n) * 2.0 ** -26
    b2 = 1 + rng.integers(0, 2 ** 26, n) * 2.0 ** -52
    c2 = rng.choice([-1.0, 1.0], n) * 2.0 ** -53 * rng.integers(0, 4, n)
    for x, y, z in ((a, b, c), (a2, b2, c2)):
        want = np.array([c_fma(*v) for v in zip(x.tolist(), y.tolist(), z.tolist())])
        assert np.array_equal(fma64(x, y, z).view(np.int64), want.view(np.int64))


def test_sleef_float64_and_log1p_special_values():
    """exp, log, log1p of SLEEF at the edges of their ranges, and within an ulp of numpy inside
    (bit-identity with SLEEF itself is what the torch comparisons below show)."""
    d = np.float64
    e = _sleef.exp(np.array([0, -0.0, 1, -1000.5, 709.79, np.inf, -np.inf, np.nan, -740.0], d))
    assert e[0] == 1 and e[1] == 1 and e[2] == np.e and e[3] == 0 and e[4] == np.inf
    assert e[5] == np.inf and e[6] == 0 and np.isnan(e[7]) and 0 < e[8] < 1e-320
    lg = _sleef.log(np.array([1, 0, -0.0, -1, np.inf, np.nan, 5e-324, 2.0], d))
    assert lg[0] == 0 and lg[1] == -np.inf and lg[2] == -np.inf and np.isnan(lg[3])
    assert lg[4] == np.inf and np.isnan(lg[5]) and lg[6] == np.log(5e-324) and lg[7] == np.log(2.0)
    for t in (d, f32):
        l1 = _sleef.log1p(np.array([0, -0.0, -1, -2, np.inf, np.nan, 1e-30, 1e38], t))
        assert l1[0] == 0 and not np.signbit(l1[0]) and l1[1] == 0 and np.signbit(l1[1])
        assert l1[2] == -np.inf and np.isnan(l1[3]) and l1[4] == np.inf and np.isnan(l1[5])
        assert l1[6] == t(1e-30) and np.isclose(l1[7], np.log(1e38), rtol=1e-6)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(5000) * np.exp(rng.uniform(-8, 4, 5000))
    for ours, ref, arg in ((_sleef.exp, np.exp, x), (_sleef.log, np.log, np.abs(x)),
                           (_sleef.log1p, np.log1p, np.abs(x))):
        for t in (d, f32):   # float32 compared with the float64 result rounded once
            with np.errstate(over="ignore"):
                got, want = ours(arg.astype(t)), ref(arg.astype(t).astype(d)).astype(t)
            it = np.int64 if t == d else np.int32
            assert np.abs(got.view(it).astype(np.int64) - want.view(it).astype(np.int64)).max() <= 1


def test_products_match_numpy_closely_and_keep_dtypes():
    rng = np.random.default_rng(1)
    for m, k, n in [(2, 2, 2), (32, 16, 16), (5, 3, 1), (1, 7, 1), (4, 0, 3)]:
        a, b = rng.standard_normal((m, k)).astype(f32), rng.standard_normal((k, n)).astype(f32)
        got = kernels.mm(a, b)
        assert got.dtype == f32 and got.shape == (m, n)
        assert np.allclose(got, a.astype(float) @ b.astype(float), rtol=1e-5, atol=1e-5)
    a64 = rng.standard_normal((3, 4))
    got = kernels.mm(a64, a64.T)
    assert got.dtype == np.float64 and np.allclose(got, a64 @ a64.T, rtol=1e-14, atol=1e-14)


# --- exactness against torch -------------------------------------------------------------------

# functions whose PyTorch kernel gradviz follows step by step, float32 and float64: the aim is 100%.
# ("x.grad" rows: the gradient through the function, from a fixed upstream gradient; "(0)": along
# the first dimension of a (16, 1250) table, PyTorch's other kernel; "float64": Vectorized<double>,
# SLEEF's double exp and log.)
_SOFTMAXES = ["softmax", "softmax x.grad", "log_softmax", "log_softmax x.grad",
              "softmax(0)", "softmax(0) x.grad", "log_softmax(0)", "log_softmax(0) x.grad"]
EXACT_FUNCTIONS = (["sigmoid", "sigmoid x.grad", "log x.grad"] + _SOFTMAXES
                   + ["float64 " + name for name in ["sigmoid", "sigmoid x.grad"] + _SOFTMAXES])
# PyTorch runs these through Intel MKL's vector maths (closed algorithms): with MKL 2024.2 installed
# (the `exact` extra) gradviz calls the same functions, 100% identical; without it, the correctly
# rounded result, never more than 1 ulp from MKL's.  Lowest share measured without MKL, in %.
MKL_FUNCTIONS = {"exp": 98.5, "log": 90.0, "sin": 92.0, "cos": 92.0, "tanh": 99.0, "sqrt": 80.0, "tan": 80.0,
                 "atan": 90.0, "asin": 92.0, "acos": 90.0, "erf": 95.0, "log2": 99.5, "log10": 99.5}
# matrix-product shape classes (rows, inner, columns) with their layout; the aim is 100%
EXACT_PRODUCTS = {
    "mm 2x2 @ 2x2": ("mm", 2, 2, 2),
    "mm 4x2 @ 2x4": ("mm", 4, 2, 4),
    "mm 32x16 @ 16x16 (vectorised kernel)": ("mm", 32, 16, 16),
    "mm 32x2 @ 2x16 (vectorised kernel)": ("mm", 32, 2, 16),
    "mm 3x17 @ 17x1": ("mm", 3, 17, 1),
    "mm 32x16 @ 16x8": ("mm", 32, 16, 8),
    "mm 8x10 @ 10x5": ("mm", 8, 10, 5),
    "mm 32x16 @ 16x10": ("mm", 32, 16, 10),
    "mm 4x4 @ 4x8 (x @ W.t() shapes)": ("linear", 4, 4, 8),
    "addmm Linear(2, 4), batch 4": ("linear", 4, 2, 4),
    "addmm Linear(3, 1), batch 100": ("linear", 100, 3, 1),
    "addmm Linear(16, 1), batch 32": ("linear", 32, 16, 1),
    "addmm Linear(8, 5), batch 32": ("linear", 32, 8, 5),
    "addmm Linear(13, 3), batch 2": ("linear", 2, 13, 3),
    "addmm Linear(16, 16), batch 32": ("linear", 32, 16, 16),
    "addmm Linear(30, 1), one row": ("linear", 1, 30, 1),
    "addmm Linear(8, 5), one row": ("linear", 1, 8, 5),
    "Linear(3, 2) weight gradient, batch 32": ("wgrad", 32, 3, 2),
    "Linear(16, 1) weight gradient, batch 32": ("wgrad", 32, 16, 1),
    "mv 4x4 @ 4": ("mv", 4, 4, 1),
    "mv 32x16 @ 16": ("mv", 32, 16, 1),
    "mv 1x40 @ 40": ("mv", 1, 40, 1),
    "dot of 3": ("dot", 1, 3, 1),
    "dot of 31": ("dot", 1, 31, 1),
    "dot of 100": ("dot", 1, 100, 1),
    "bmm 2 x (3x5 @ 5x4)": ("bmm", 3, 5, 4),
    "bmm 2 x (4x8 @ 8x1)": ("bmm", 4, 8, 1),
    "bmm 2 x (16x16 @ 16x12)": ("bmm", 16, 16, 12),
    "addmm Linear(33, 2), one row": ("linear", 1, 33, 2),
    "mm 2x33 @ 33x1": ("mm", 2, 33, 1),
    "mv 7x64 @ 64": ("mv", 7, 64, 1),
    # a vector of stride 0 (sum's gradient, expanded): PyTorch's own gemv loop; MKL's dot at stride 0
    "w.grad of (X @ w).sum(), X 32x16": ("vgrad", 32, 16, 1),
    "w.grad of (X @ w).sum(), X 100x40 a transposed view": ("vgradT", 100, 40, 1),
    "dot of 100, one operand expanded": ("dotx", 1, 100, 1),
    # one size up: inner dimensions past 192, where MKL cuts the sum into blocks (200 -> 100 + 100)
    "mm 8x193 @ 193x8": ("mm", 8, 193, 8),
    "mm 32x200 @ 200x64": ("mm", 32, 200, 64),
    "mm 16x1000 @ 1000x10": ("mm", 16, 1000, 10),
    "mm 4x4096 @ 4096x3": ("mm", 4, 4096, 3),
    "mm 1x200 @ 200x1": ("mm", 1, 200, 1),
    "addmm Linear(200, 64), batch 32": ("linear", 32, 200, 64),
    "addmm Linear(1000, 10), batch 16": ("linear", 16, 1000, 10),
    "addmm Linear(784, 256), batch 64": ("linear", 64, 784, 256, f32, 4),
    "Linear(200, 64) weight gradient, batch 32": ("wgrad", 32, 200, 64),
    "addmm beta=0.5, alpha=2, 8x200 @ 200x16": ("scaled", 8, 200, 16),
    "mv 64x1000 @ 1000": ("mv", 64, 1000, 1),
    "dot of 4096": ("dot", 1, 4096, 1),
    "bmm 2 x (16x200 @ 200x32)": ("bmm", 16, 200, 32),
    "bmm 2 x (8x64 @ 64x8), second operand transposed": ("bmmT", 8, 64, 8),
    # float64: MKL's dgemm, dgemv, ddot
    "float64 mm 32x16 @ 16x16": ("mm", 32, 16, 16, np.float64),
    "float64 mm 16x1000 @ 1000x10": ("mm", 16, 1000, 10, np.float64),
    "float64 addmm Linear(200, 64), batch 32": ("linear", 32, 200, 64, np.float64),
    "float64 Linear(16, 1) weight gradient, batch 32": ("wgrad", 32, 16, 1, np.float64),
    "float64 addmm Linear(3, 1), batch 100": ("linear", 100, 3, 1, np.float64),
    "float64 mv 32x16 @ 16": ("mv", 32, 16, 1, np.float64),
    "float64 dot of 100": ("dot", 1, 100, 1, np.float64),
    "float64 w.grad of (X @ w).sum(), X 100x40": ("vgrad", 100, 40, 1, np.float64),
    "float64 bmm 2 x (3x5 @ 5x4)": ("bmm", 3, 5, 4, np.float64),
    "float64 bmm 2 x (16x200 @ 200x32)": ("bmm", 16, 200, 32, np.float64),
}
# classes still computed in a different order than PyTorch's kernels use: none measured so far
# (a random sweep of shapes 1..40 in all four layouts, mm and addmm, agreed everywhere)
OPEN_PRODUCTS = {}


def _inputs(name, wide, rng, n=20000, dtype=f32):
    if name in ("log", "sqrt", "log2", "log10"):
        x = rng.uniform(0.01, 10, n) if not wide else np.exp(rng.uniform(-80, 80, n))
    elif name in ("asin", "acos"):
        x = rng.uniform(-0.99, 0.99, n) if not wide else rng.uniform(-1, 1, n)
    elif "softmax" in name:
        x = rng.standard_normal(n) * (3 if not wide else np.exp(rng.uniform(-5, 5, n)))
    else:
        x = rng.uniform(-5, 5, n) if not wide else rng.standard_normal(n) * np.exp(rng.uniform(-10, 4, n))
    return x.astype(dtype)


def _run(lib, name, x, upstream):
    """The function of ``lib`` on x (rows of 10 for softmax, a (16, 1250) table for "(0)"), or
    x's gradient through it."""
    fn, _, grad = name.removeprefix("float64 ").partition(" ")
    fn, dim = (fn[:-3], 0) if fn.endswith("(0)") else (fn, -1)
    if "softmax" in fn:
        x, upstream = (v.reshape((16, -1) if dim == 0 else (-1, 10)) for v in (x, upstream))
    t = lib.tensor(x, requires_grad=bool(grad))
    y = getattr(lib, fn)(t, dim) if "softmax" in fn else getattr(lib, fn)(t)
    if not grad:
        return y.detach().numpy().reshape(-1)
    (y * lib.tensor(upstream.reshape(y.shape))).sum().backward()
    return t.grad.numpy().reshape(-1)


def _identical(want, got):
    """(share of bit-identical results in %, largest distance in ulps), nan equal to nan."""
    it = np.int64 if want.dtype == np.float64 else np.int32
    same = (want.view(it) == got.view(it)) | (np.isnan(want) & np.isnan(got))
    ulps = np.abs(want.view(it).astype(np.int64) - got.view(it).astype(np.int64))
    return 100 * same.mean(), int(ulps[~np.isnan(want)].max(initial=0))


def _function_share(torch, name, wide):
    import gradviz
    rng = np.random.default_rng(2 if wide else 3)
    dtype = np.float64 if name.startswith("float64") else f32
    base = name.removeprefix("float64 ").split()[0]
    x = _inputs(base, wide, rng, dtype=dtype)
    upstream = rng.standard_normal(x.size).astype(dtype)
    return _identical(_run(torch, name, x, upstream), _run(gradviz, name, x, upstream))


def _product_share(torch, kind, m, k, n, dtype=f32, trials=40):
    import gradviz
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    same = total = 0
    for _ in range(trials):
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        bias = rng.standard_normal(n).astype(dtype)
        results = []
        for lib in (torch, gradviz):
            A, B, C = lib.tensor(a), lib.tensor(b), lib.tensor(bias)
            if kind == "mm":
                out = lib.mm(A, B)
            elif kind == "linear":   # nn.Linear's addmm(bias, x, Wᵀ) with W stored (out, in)
                # (b.T.copy(): row-major strides even for a dimension of 1, as a module's weight has)
                W = lib.tensor(b.T.copy())
                out = lib.addmm(C, A, W.t())
            elif kind == "scaled":
                out = lib.addmm(C, A, B, beta=0.5, alpha=2.0)
            elif kind == "wgrad":    # the weight's gradient of a Linear(k, n) on a batch of m
                W = lib.tensor(b.T.copy(), requires_grad=True)
                (lib.addmm(C, A, W.t()) * lib.tensor(rng_fixed(m, n).astype(dtype))).sum().backward()
                out = W.grad
            elif kind == "mv":
                out = lib.mv(A, B[:, 0])
            elif kind == "dot":
                out = lib.dot(A[0], B[:, 0]).reshape(1)
            elif kind == "dotx":
                out = lib.dot(A[0], B[:1, 0].expand(k)).reshape(1)
            elif kind in ("vgrad", "vgradT"):   # mv(Xᵀ, g) with g sum's gradient, expanded (stride 0)
                X = lib.tensor(a) if kind == "vgrad" else lib.tensor(a.T.copy()).t()
                w = lib.tensor(b[:, 0], requires_grad=True)
                (X @ w).sum().backward()
                out = w.grad
            elif kind == "bmmT":     # the second operand as a transposed view
                out = lib.bmm(lib.stack([A, A * 2]), lib.stack([B.t(), B.t() - 1]).transpose(1, 2))
            else:
                out = lib.bmm(lib.stack([A, A * 2]), lib.stack([B, B - 1]))
            results.append(out.detach().numpy())
        same += int(np.sum(results[0] == results[1]))
        total += results[0].size
    return 100 * same / total


def rng_fixed(m, n):
    return np.linspace(-1, 1, m * n, dtype=f32).reshape(m, n)


# losses built on those kernels, over batch sizes that leave every remainder of a vector: the loss
# and every element of the input's and the target's gradients, float32 and float64.  The aim is 100%.
LOSSES = {
    "BCE with logits": lambda F, L, x, t, w: F.binary_cross_entropy_with_logits(x, t),
    "BCE with logits, weight, pos_weight": lambda F, L, x, t, w: F.binary_cross_entropy_with_logits(
        x, t, weight=L.tensor(w), pos_weight=L.tensor(w[::-1].copy() * 2)),
    "BCE of sigmoid": lambda F, L, x, t, w: F.binary_cross_entropy(x.sigmoid(), t),
    "cross_entropy, 3 classes": lambda F, L, x, t, w: F.cross_entropy(x, t),
    "cross_entropy, 10 classes, sum": lambda F, L, x, t, w: F.cross_entropy(x, t, reduction="sum"),
}
BATCHES = (1, 2, 3, 5, 8, 16, 31, 32, 33, 64, 100, 257)


def _loss_share(torch, name, dtype):
    import gradviz
    rng = np.random.default_rng(8)
    classes = 10 if "10 classes" in name else 3 if "classes" in name else None
    want, got = [], []
    for n in BATCHES:
        x = (rng.standard_normal((n, classes) if classes else n) * 2).astype(dtype)
        t = rng.integers(0, classes, n) if classes else rng.uniform(0, 1, n).astype(dtype)
        w = rng.uniform(0.5, 2, n).astype(dtype)
        for lib, out in ((torch, want), (gradviz, got)):
            X, T = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=not classes)
            loss = LOSSES[name](lib.nn.functional, lib, X, T, w)
            loss.backward()
            out += [loss.detach().numpy().reshape(-1), X.grad.numpy().reshape(-1)]
            out += [] if classes else [T.grad.numpy()]
    return _identical(np.concatenate(want), np.concatenate(got))


# every dimension of tensors of many shapes (rows of 1 to 300, every leftover of a vector): softmax
# and log_softmax, forward and gradient, lesson and wide ranges
SHAPES = ([(n,) for n in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 300)]
          + [(r, c) for r in (1, 2, 3, 7, 16) for c in (1, 2, 3, 4, 5, 8, 9, 10, 17, 33)]
          + [(2, 3, 4), (3, 5, 7), (2, 17, 3, 5), (10, 3, 33)])


def _shapes_share(torch, dtype):
    import gradviz
    rng = np.random.default_rng(9)
    want, got = [], []
    for shape in SHAPES:
        for scale in (3, np.exp(rng.uniform(-5, 5, shape))):
            x = (rng.standard_normal(shape) * scale).astype(dtype)
            g = rng.standard_normal(shape).astype(dtype)
            for fn in ("softmax", "log_softmax", "sigmoid"):
                for dim in range(len(shape)) if fn != "sigmoid" else [None]:
                    for lib, out in ((torch, want), (gradviz, got)):
                        t = lib.tensor(x, requires_grad=True)
                        y = t.sigmoid() if dim is None else getattr(t, fn)(dim)
                        (y * lib.tensor(g)).sum().backward()
                        out += [y.detach().numpy().reshape(-1), t.grad.numpy().reshape(-1)]
    return _identical(np.concatenate(want), np.concatenate(got))


@contextlib.contextmanager
def threads(torch, n):
    """torch and gradviz both on ``n`` threads for the block, then back to what they had."""
    import gradviz
    before = torch.get_num_threads(), gradviz.get_num_threads()
    torch.set_num_threads(n)
    gradviz.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before[0])
        gradviz.set_num_threads(before[1])


def exactness(torch):
    """{label: (percent identical, largest distance in ulps)} over lesson and wide ranges, on one
    thread (and the shapes sweep on 2 and 3 too: some kernels cut their work by thread)."""
    table = {}
    with threads(torch, 1):
        for name in EXACT_FUNCTIONS + list(MKL_FUNCTIONS):
            for wide in (False, True):
                table[f"{name} ({'wide' if wide else 'lesson'} range)"] = _function_share(torch, name, wide)
        for dtype in (f32, np.float64):
            for name in LOSSES:
                table[f"{name} ({dtype.__name__})"] = _loss_share(torch, name, dtype)
        for label, case in {**EXACT_PRODUCTS, **OPEN_PRODUCTS}.items():
            table[label] = (_product_share(torch, *case), 0)
    for n in (1, 2, 3):
        with threads(torch, n):
            for dtype in (f32, np.float64):
                table[_shapes_label(dtype.__name__, n)] = _shapes_share(torch, dtype)
    return table


def _shapes_label(dtype, n):
    return f"softmax, log_softmax, sigmoid: {len(SHAPES)} shapes, every dim ({dtype}, {n} thread{'s' * (n > 1)})"


@pytest.fixture(scope="module")
def figures():
    torch = pytest.importorskip("torch")
    return exactness(torch)


@pytest.fixture(scope="module")
def figures_without_mkl():
    """The MKL functions' figures as gradviz computes them where MKL 2024.2 is not installed."""
    torch = pytest.importorskip("torch")
    real, _mkl.library = _mkl.library, lambda: None
    try:
        with threads(torch, 1):
            return {(name, wide): _function_share(torch, name, wide) for name in MKL_FUNCTIONS for wide in (False, True)}
    finally:
        _mkl.library = real


@pytest.mark.torch
@pytest.mark.parametrize("name", EXACT_FUNCTIONS)
@pytest.mark.parametrize("wide", [False, True], ids=["lesson", "wide"])
def test_functions_identical_to_torch(figures, name, wide):
    share, ulps = figures[f"{name} ({'wide' if wide else 'lesson'} range)"]
    assert share == 100.0 and ulps == 0


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 3], ids=["1 thread", "2 threads", "3 threads"])
def test_every_shape_and_dimension_identical_to_torch(figures, dtype, n):
    """softmax and log_softmax along every dimension (the last, or PyTorch's kernel across the
    inner dimensions), their gradients and sigmoid's, on tensors of many shapes, with torch and
    gradviz on 1, 2 or 3 threads (softmax across an inner dimension and float32 softmax's gradient
    depend on it)."""
    assert figures[_shapes_label(dtype, n)] == (100.0, 0)


@pytest.mark.torch
@pytest.mark.parametrize("n", [1, 2, 3])
def test_long_sigmoid_cut_by_thread(n):
    """Over 32,768 elements PyTorch shares sigmoid between threads, each finishing its own range
    with the C library's exp: gradviz cuts the same ranges."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(10)
    with threads(torch, n):
        for size in (32768, 32769, 50003, 100003):
            for dtype in (f32, np.float64):
                x = rng.standard_normal(size).astype(dtype)
                want, got = torch.tensor(x).sigmoid().numpy(), gradviz.tensor(x).sigmoid().numpy()
                assert _identical(want, got) == (100.0, 0), (size, dtype)


def test_set_num_threads_as_torch():
    """gradviz.set_num_threads takes what torch's takes, and refuses the rest in its words."""
    import gradviz
    before = gradviz.get_num_threads()
    try:
        gradviz.set_num_threads(3)
        assert gradviz.get_num_threads() == 3
        for bad, message in ((0, "expects a positive integer"), (-1, "expects a positive integer"),
                             (2.5, "expects an int, but got float"), ("2", "expects an int, but got str")):
            with pytest.raises(RuntimeError, match=f"set_num_threads {message}"):
                gradviz.set_num_threads(bad)
        assert gradviz.get_num_threads() == 3
    finally:
        gradviz.set_num_threads(before)


@pytest.mark.torch
@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_losses_identical_to_torch(figures, name, dtype):
    """The losses and both gradients, batches of 1 to 257 (BCE with logits: log σ from SLEEF's exp and
    log1p; its gradient σ(x) − t; cross entropy: log_softmax and its gradient)."""
    assert figures[f"{name} ({dtype})"] == (100.0, 0)


@pytest.mark.torch
@pytest.mark.parametrize("name", MKL_FUNCTIONS)
@pytest.mark.parametrize("wide", [False, True], ids=["lesson", "wide"])
def test_mkl_functions_identical_to_torch(figures, name, wide):
    """exp, log, sin, cos, tanh, sqrt...: PyTorch's values come from MKL 2024.2, and so do gradviz's."""
    if _mkl.library() is None:
        pytest.skip('MKL 2024.2 is not installed (from the clone: pip install -e ".[exact]")')
    share, ulps = figures[f"{name} ({'wide' if wide else 'lesson'} range)"]
    assert share == 100.0 and ulps == 0


@pytest.mark.torch
@pytest.mark.parametrize("name", MKL_FUNCTIONS)
@pytest.mark.parametrize("wide", [False, True], ids=["lesson", "wide"])
def test_mkl_functions_without_mkl_within_one_ulp(figures_without_mkl, name, wide):
    """Without MKL, never more than one ulp away and equal on the measured share (a drop would
    mean a regression)."""
    share, ulps = figures_without_mkl[(name, wide)]
    assert ulps <= 1
    assert share >= MKL_FUNCTIONS[name]


@pytest.mark.torch
@pytest.mark.parametrize("label", EXACT_PRODUCTS)
def test_products_identical_to_torch(figures, label):
    assert figures[label][0] == 100.0


@pytest.mark.torch
def test_training_loop_prints_torchs_losses():
    """A seeded linear regression (nn.Linear, MSELoss, SGD) prints PyTorch's losses to the last digit
    (before exact products, the 100th loss was 6447356.0 instead of 6447359.5)."""
    torch = pytest.importorskip("torch")
    import gradviz

    def losses(lib, in_features, batch, out_features, hidden=None, lr=0.01):
        lib.manual_seed(0)
        x = lib.randn(batch, in_features) * 10
        y = x @ lib.randn(in_features, out_features) + 0.5 * lib.randn(batch, out_features)
        if hidden:   # a small MLP with a sigmoid layer
            model = lib.nn.Sequential(lib.nn.Linear(in_features, hidden), lib.nn.Sigmoid(),
                                      lib.nn.Linear(hidden, out_features))
        else:
            model = lib.nn.Linear(in_features, out_features)
        loss_fn, opt = lib.nn.MSELoss(), lib.optim.SGD(model.parameters(), lr=lr)
        out = []
        for _ in range(100):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            out.append(repr(loss.item()))
        return out

    for case in [(3, 100, 1), (1, 100, 1), (3, 32, 2), (2, 32, 1, 16, 0.001), (2, 4, 1, 4, 0.001)]:
        assert losses(gradviz, *case) == losses(torch, *case)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_random_shapes_in_every_layout(dtype):
    """mm and addmm of random shapes (1 to 40 each way), each operand by rows, by columns (a
    transposed view), a slice of a wider matrix or expanded, writable or read-only, with and without a bias,
    beta and alpha, agree with torch to the bit: the kernel choice follows shapes and layouts."""
    torch = pytest.importorskip("torch")
    with threads(torch, 1):
        _random_shapes_in_every_layout(torch, dtype)


def _random_shapes_in_every_layout(torch, dtype):
    rng = np.random.default_rng(21)
    for trial in range(240):
        m, k, n = (int(v) for v in rng.integers(1, 41, 3))
        if trial % 5 == 0:      # a single column or row: the cases PyTorch's dispatch treats apart
            n, m = (1, m) if trial % 10 else (n, 1)
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        bias = rng.standard_normal(n).astype(dtype) if trial % 2 else None
        ta, tb, na, nb = torch.tensor(a), torch.tensor(b), a, b
        if trial % 4 >= 2:      # a as a transposed view, as a saved input's .t()
            ta, na = torch.tensor(a.T.copy()).t(), a.T.copy().T
        if trial % 8 >= 4:      # b as a transposed view, as nn.Linear's W.t()
            tb, nb = torch.tensor(b.T.copy()).t(), b.T.copy().T
        if trial % 3 == 0:      # a as a slice of a wider matrix (leading dimension > its columns)
            wide = rng.standard_normal((m + 2, k + 3)).astype(dtype)
            ta, na = torch.tensor(wide)[1:m + 1, 2:k + 2], wide[1:m + 1, 2:k + 2]
        if trial % 7 == 0:      # read-only views, same layouts (MKL gets their addresses another way)
            na, nb = na.view(), nb.view()
            na.flags.writeable = nb.flags.writeable = False
        if trial % 11 == 0:     # expanded (sum's gradient): a row of a, a column of b (copied by rows)
            ta, na = torch.tensor(a[:1]).expand(m, k), np.broadcast_to(a[:1], (m, k))
            tb, nb = torch.tensor(b[:, :1]).expand(k, n), np.broadcast_to(b[:, :1], (k, n))
        scales = [{"beta": 0.5, "alpha": 2.0}, {"beta": 0.0}, {}][trial % 3]
        want = (torch.mm(ta, tb) if bias is None else torch.addmm(torch.tensor(bias), ta, tb, **scales)).numpy()
        got = kernels.mm(na, nb) if bias is None else kernels.addmm(bias, na, nb, **scales)
        assert got.dtype == want.dtype and np.array_equal(got, want), (m, k, n, trial % 8, scales)


@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_products_of_arrays_no_tensor_lies_like(dtype):
    """numpy's flips (negative strides) and views whose strides are not whole elements (a field
    of a record array) multiply as their copies by rows do, bit for bit; so do empty products."""
    def by_rows(x):      # the copy PyTorch could hold (torch.tensor of it is laid out by rows)
        return np.ascontiguousarray(x) if any(st < 0 or st % x.itemsize for st in x.strides) else x

    rng = np.random.default_rng(8)
    for m, k, n in [(5, 7, 3), (1, 6, 4), (6, 1, 5), (4, 9, 1), (17, 33, 12)]:
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
        bias = rng.standard_normal(n).astype(dtype)
        records = np.zeros((k, n), [("x", dtype), ("pad", np.int8)])
        records["x"] = b
        for x, y in [(a[::-1], b), (a, b[:, ::-1]), (a[::-1, ::-1].T.copy().T, b[::-1]), (a, records["x"]),
                     (a.T.copy().T[::-1], records["x"][::-1])]:
            assert np.array_equal(kernels.mm(x, y), kernels.mm(by_rows(x), by_rows(y)))
            assert np.array_equal(kernels.addmm(bias, x, y), kernels.addmm(bias, by_rows(x), by_rows(y)))
    for shape_a, shape_b in [((0, 3), (3, 2)), ((2, 0), (0, 3)), ((2, 3), (3, 0))]:
        got = kernels.mm(np.ones(shape_a, dtype), np.ones(shape_b, dtype))
        assert got.dtype == dtype and got.shape == (shape_a[0], shape_b[1]) and not got.any()


def test_products_without_mkl_fall_back_to_numpy(monkeypatch):
    """Where MKL is missing, products stay within rounding of the exact result: PyTorch's order at
    lesson sizes (float32, inner dimension up to 192), numpy's matmul beyond, never a slow path."""
    monkeypatch.setattr(_mkl, "library", lambda: None)
    rng = np.random.default_rng(5)
    for dtype in (f32, np.float64):
        for m, k, n in [(4, 3, 5), (32, 16, 16), (1, 7, 1), (8, 193, 8), (16, 1000, 10), (256, 64, 256)]:
            a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
            bias = rng.standard_normal(n).astype(dtype)
            exact = a.astype(np.float64) @ b.astype(np.float64)
            bound = k * np.finfo(dtype).eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
            tiny = np.finfo(dtype).eps * 2
            for got, want, err in ((kernels.mm(a, b), exact, bound), (kernels.mm(a, b.T.copy().T), exact, bound),
                                   (kernels.addmm(bias, a, b), exact + bias, bound + np.abs(exact + bias) * tiny),
                                   (kernels.addmm(bias, a, b, beta=0.5, alpha=2.0), 2 * exact + bias / 2,
                                    2 * bound + np.abs(2 * exact + bias / 2) * tiny),
                                   (kernels.mv(a, b[:, 0].copy()), exact[:, 0], bound[:, 0])):
                assert got.dtype == dtype and got.shape == want.shape
                assert np.all(np.abs(got - want) <= 2 * err + np.abs(want) * tiny)
            if dtype == np.float64 or k > 192:
                assert np.array_equal(kernels.mm(a, b), np.matmul(a, b))
        x, y = rng.standard_normal(500).astype(dtype), rng.standard_normal(500).astype(dtype)
        assert np.isclose(kernels.dot(x, y), np.dot(x.astype(float), y.astype(float)), rtol=1e-4)
        batch = rng.standard_normal((3, 20, 30)).astype(dtype), rng.standard_normal((3, 30, 20)).astype(dtype)
        assert np.allclose(kernels.bmm(*batch), np.matmul(*batch), rtol=1e-4, atol=1e-4)


def test_kernels_info_names_each_backend(monkeypatch):
    info = kernels.info()
    assert info["vector_floats"] in (8, 16) and info["threads"] >= 1
    assert ("MKL" in info["blas"]) == (_mkl.library() is not None)
    monkeypatch.setattr(_mkl, "library", lambda: None)
    assert "numpy" in kernels.info()["blas"] and "numpy" in kernels.info()["vml"]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_long_sums_identical_to_torch(dtype):
    """sum over lengths that fill several levels of PyTorch's cascade (every group at once, no loop
    over rows), along each kind of dimension, and nll_loss's cascade over a long batch with ignored
    rows (one of them a row where a level is flushed)."""
    torch = pytest.importorskip("torch")
    import gradviz
    from gradviz.kernels import _reduce
    rng = np.random.default_rng(8)
    with threads(torch, 1):
        for shape, axis in [((70000,), None), ((1000, 1000), None), ((1000, 1000), 0), ((1000, 1000), 1),
                            ((300000, 3), 0), ((3, 300000), 1), ((64, 300, 7), 1)]:
            x = (rng.standard_normal(shape) * np.exp(rng.uniform(-3, 3, shape))).astype(dtype)
            want = torch.from_numpy(x).sum() if axis is None else torch.from_numpy(x).sum(axis)
            assert np.array_equal(_reduce.torch_sum(x, axis=axis), want.numpy()), (shape, axis)
        x = rng.standard_normal((70000, 5)).astype(dtype)
        t = rng.integers(0, 5, 70000)
        t[rng.random(70000) < 0.1] = -100
        t[4096] = -100
        w = rng.uniform(0.5, 2, 5).astype(dtype)
        for kw in ({}, {"weight": w}):
            got, want = (lib.nn.functional.cross_entropy(lib.tensor(x), lib.tensor(t),
                                                         **{k: lib.tensor(v) for k, v in kw.items()})
                         for lib in (gradviz, torch))
            assert repr(got.item()) == repr(want.item())


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(st.sampled_from([1, 2, 3, 7, 16, 17, 33, 64]), min_size=1, max_size=4),
       dtype=st.sampled_from([f32, np.float64]), data=st.data())
def test_whole_array_ordered_sums_add_in_order(shape, dtype, data):
    """The ordered sums' np.einsum path adds along an axis exactly as a running sum does (numpy's
    accumulate, one element after the other): any axis of any layout (axes permuted, every other
    element, reversed), values over a wide range of magnitudes (so that any other order rounds
    differently), rows of -0. _in_order is the sum from 0, in_order the sum from the first element."""
    from gradviz.kernels import _reduce
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-30, 30, shape))).astype(dtype)
    x[rng.random(shape) < 0.1] = -0.0
    if x.ndim > 1:
        x[0] = -0.0
    order = data.draw(st.permutations(range(len(shape))))
    steps = tuple(data.draw(st.sampled_from([1, 1, 2, -1])) for _ in shape)
    view = x.transpose(order)[tuple(slice(None, None, k) for k in steps)]
    for axis in range(view.ndim):
        running = np.add.accumulate(view, axis=axis).take(-1, axis=axis)
        for got, want in ((_reduce._in_order(view, axis), running + dtype(0)), (_reduce.in_order(view, axis), running)):
            got, want = (np.ascontiguousarray(np.atleast_1d(a)).view(np.uint8) for a in (got, want))
            assert np.array_equal(got, want), (view.shape, axis)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_batch_norm_bias_gradient_identical_to_torch(dtype):
    """BatchNorm1d's bias gradient is the Σ g of PyTorch's backward kernel (each thread's run of
    rows from 0), not a sum in double: batches of rows, training and eval, one thread."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(5)
    with threads(torch, 1):
        for shape in [(7, 1), (33, 4), (256, 10), (5, 64), (1000, 3)]:
            x, g = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
            for train in (True, False):
                grads = []
                for lib in (gradviz, torch):
                    bn = lib.nn.BatchNorm1d(shape[1], dtype=getattr(lib, np.dtype(dtype).name))
                    bn.train(train)
                    bn(lib.tensor(x)).backward(lib.tensor(g))
                    grads.append(np.asarray(bn.bias.grad.numpy()))
                assert np.array_equal(grads[0].view(np.uint8), grads[1].view(np.uint8)), (shape, train)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_zero_sums_have_torchs_sign(dtype):
    """The sign of a zero sum is PyTorch's (its accumulators start at +0, as np.einsum's whole-array
    sums do): rows of -0 and +0 among rows of numbers, along each kind of dimension, compared bit
    for bit (np.array_equal takes -0 for 0)."""
    torch = pytest.importorskip("torch")
    from gradviz.kernels import _reduce
    rng = np.random.default_rng(3)
    with threads(torch, 1):
        for shape, axis in [((70000,), None), ((1000, 300), 0), ((300, 1000), 1), ((64, 300, 7), 1), ((600, 3), 0),
                            ((70, 40, 50), (0, 1))]:
            x = np.full(shape, -0.0, dtype)
            x[::2] = rng.standard_normal(x[::2].shape)
            x[1::4] = 0.0
            if x.ndim > 1:
                x[:, ::3] = -0.0
            for a in (x, -np.abs(x) * 0):
                want = torch.from_numpy(a).sum() if axis is None else torch.from_numpy(a).sum(axis)
                got = np.asarray(_reduce.torch_sum(a, axis=axis))
                assert np.array_equal(got, want.numpy()) and np.array_equal(np.signbit(got), np.signbit(want.numpy())), \
                    (shape, axis)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_softmax_gradients_of_zero_rows_have_torchs_sign(dtype):
    """Along the last dimension PyTorch's softmax kernels sum from the first vector (a row of -0
    sums to -0), across the inner dimensions from 0 (to +0): the gradients of rows whose incoming
    gradient is all -0 then differ in the sign of zero.  Compared bit for bit, for rows of up to
    64 vectors and more, and across short and long dimensions."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(4)
    with threads(torch, 1):
        for shape, dim in [((6, 40), 1), ((5, 1000), 1), ((3, 2000), 1), ((50, 30), 0), ((4, 6, 5), 1),
                           ((4, 20, 3000), 1), ((200, 300), 0), ((7, 1), 0)]:
            x = rng.standard_normal(shape).astype(dtype)
            g = np.moveaxis(rng.standard_normal(shape).astype(dtype), dim, -1)
            g[rng.random(g.shape[:-1]) < 0.3] = -0.0
            g = np.ascontiguousarray(np.moveaxis(g, -1, dim))
            for name in ("softmax", "log_softmax"):
                grads = []
                for lib in (gradviz, torch):
                    xt = lib.tensor(x, requires_grad=True)
                    getattr(xt, name)(dim).backward(lib.tensor(g))
                    grads.append(np.asarray(xt.grad.numpy()))
                assert np.array_equal(grads[0].view(np.uint8), grads[1].view(np.uint8)), (shape, dim, name)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_softmax_gradient_of_ones_along_the_last_dim_is_the_general_one(dtype):
    """softmax's gradient with g of ones along the last dim, (1 − Σ_j y_j)·y_i in one pass, is what
    the general kernel gives, (g_i − Σ_j g_j y_j)·y_i with the sum of products by lanes: rows shorter
    than a vector, of whole vectors and with leftovers, ∞, nan and -0 among y, one row and none;
    g of ones but for one element takes the general kernel."""
    from gradviz.kernels import _softmax
    rng = np.random.default_rng(8)
    for shape in [(5, 3), (4, 8), (4, 16), (3, 17), (6, 40), (2, 1000), (1, 1029), (0, 7), (3, 4, 33)]:
        y = rng.random(shape).astype(dtype)
        if y.size:
            y.reshape(-1, shape[-1])[0, 0] = np.inf
            y.reshape(-1, shape[-1])[-1, -1] = np.nan
            y.reshape(-1, shape[-1])[-1, 0] = -0.0
        g = np.ones(shape, dtype)
        rows_g, rows_y = g.reshape(-1, shape[-1]), y.reshape(-1, shape[-1])
        want = ((rows_g - _softmax._lanes_dot(rows_g, rows_y)[:, None]) * rows_y).reshape(shape)
        for seed in (g, np.broadcast_to(dtype(1), shape)):
            got = kernels.softmax_backward(seed, y, -1)
            assert got.dtype == dtype and got.shape == shape
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), shape
        if y.size:
            g.reshape(-1)[-1] = dtype(1) + np.finfo(dtype).eps
            want = ((rows_g - _softmax._lanes_dot(rows_g, rows_y)[:, None]) * rows_y).reshape(shape)
            assert np.array_equal(kernels.softmax_backward(g, y, -1).view(np.uint8), want.view(np.uint8))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_softmax_gradient_of_ones_identical_to_torch(dtype):
    """y.backward(ones) and y.sum().backward() of softmax along the last dim, bit for bit."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(9)
    with threads(torch, 1):
        for shape in [(5, 3), (4, 16), (3, 17), (6, 40), (2, 1000), (3, 4, 33)]:
            x = (rng.standard_normal(shape) * 3).astype(dtype)
            x.reshape(-1, shape[-1])[0, 0] = -np.inf
            for seeded in (True, False):
                grads = []
                for lib in (gradviz, torch):
                    xt = lib.tensor(x, requires_grad=True)
                    y = xt.softmax(-1)
                    y.backward(lib.ones_like(y)) if seeded else y.sum().backward()
                    grads.append(np.asarray(xt.grad.numpy()))
                assert np.array_equal(grads[0].view(np.uint8), grads[1].view(np.uint8)), (shape, seeded)


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.sampled_from([1, 1, 2, 3, 7, 11, 33, 40]), min_size=1, max_size=4),
       dtype=st.sampled_from([f32, np.float64]), data=st.data())
def test_sums_with_size_one_dimensions_identical_to_torch(shape, dtype, data):
    """A dimension of size 1 changes no order (PyTorch's TensorIterator drops it): a sum over the
    middle of (6, 11, 1) is a sum over the rows of (6, 11). cumprod's gradient with zeros sums this
    way, and was one ulp off before."""
    torch = pytest.importorskip("torch")
    from gradviz.kernels import _reduce
    first = data.draw(st.integers(0, len(shape) - 1), label="first")
    axes = list(range(first, data.draw(st.integers(first, len(shape) - 1), label="last") + 1))   # adjacent
    keepdim = data.draw(st.booleans(), label="keepdim")
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    with threads(torch, 1):     # (both: a sum of 32,768 items or more is cut by thread)
        want = torch.from_numpy(x).sum(tuple(axes), keepdim=keepdim).numpy()
        got = _reduce.torch_sum(x, axis=tuple(axes), keepdims=keepdim)
    assert got.shape == want.shape and np.array_equal(got, want), (shape, axes)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_norms_identical_to_torch(dtype):
    """torch.norm / linalg.vector_norm add in the order of PyTorch's norm kernel (issue 20: one ulp
    off before; rows that leave 4 to 7 elements after the last whole vector square 4 at a time)."""
    torch = pytest.importorskip("torch")
    import gradviz
    rng = np.random.default_rng(4)
    with threads(torch, 1):
        for shape in [(3,), (16,), (17,), (1001,), (100000,), (20, 8), (20, 17), (5, 6, 33), (40, 1), (1, 40)]:
            x = rng.standard_normal(shape).astype(dtype)
            for p in (2, 1, float("inf")):
                for dim in [None] + list(range(len(shape))):
                    want = torch.linalg.vector_norm(torch.tensor(x), p, dim=dim)
                    got = gradviz.linalg.vector_norm(gradviz.tensor(x), p, dim=dim)
                    assert np.array_equal(got.numpy(), want.numpy()), (shape, p, dim)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [f32, np.float64])
def test_large_products_on_several_threads(dtype):
    """On 2 threads PyTorch's MKL splits a large product's work between them; gradviz's MKL runs on
    the same threading (GNU OpenMP) and thread count, so the bits still agree (on one thread only,
    they did not for 2 of these 6 shapes)."""
    torch = pytest.importorskip("torch")
    if _mkl.library() is None or _mkl._threading_layer() != _mkl._GNU:
        pytest.skip("needs MKL 2024.2 and libgomp (PyTorch's threading)")
    rng = np.random.default_rng(3)
    with threads(torch, 2):
        for m, k, n in [(256, 256, 256), (512, 2000, 300), (37, 4096, 129), (2048, 64, 2048), (100, 10000, 100)]:
            a, b = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n)))
            want = (torch.tensor(a) @ torch.tensor(b)).numpy()
            assert np.array_equal(kernels.mm(a, b), want), (m, k, n)


@pytest.mark.torch
def test_torch_imported_after_gradvizs_mkl_keeps_its_threads():
    """PyTorch's MKL symbols resolve to an MKL loaded before torch (they are exported): loaded on
    one thread (MKL's sequential layer), it made a later ``import torch`` report and take 1 thread."""
    pytest.importorskip("torch")
    if _mkl.library() is None:
        pytest.skip('MKL 2024.2 is not installed (from the clone: pip install -e ".[exact]")')
    import subprocess
    import sys
    code = ("import sys, gradviz; gradviz.tensor([1.0]).exp(); assert 'torch' not in sys.modules; import torch; "
            "print(torch.get_num_threads())")
    alone = "import torch; print(torch.get_num_threads())"
    after, want = (subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, check=True).stdout.strip()
                   for c in (code, alone))
    assert after == want


def test_mkl_runs_on_one_thread_without_libgomp(monkeypatch):
    """Without GNU OpenMP (no libgomp on the machine) MKL is set to its sequential layer, never to a
    threading layer whose runtime is missing."""
    import ctypes

    def cdll(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(ctypes, "CDLL", cdll)
    assert _mkl._threading_layer() == _mkl._SEQUENTIAL
