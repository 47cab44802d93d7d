"""gradviz._vecmath: float32 rounded as PyTorch's CPU kernels round it.

The exactness figures (share of float32 results bit-identical to torch 2.13 on this machine) are
computed once by :func:`exactness` and asserted per function and per matrix-product shape class;
``benchmarks/core.py`` prints the same table.
"""

from fractions import Fraction

import numpy as np
import pytest

from gradviz import _mkl, _vecmath

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
    got = _vecmath.fma(np.append(a, tie_a), np.append(b, tie_b), np.append(c, tie_c))
    want = [np.float32(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))))
            for x, y, z in zip(np.append(a, tie_a), np.append(b, tie_b), np.append(c, tie_c))]
    # float(Fraction) rounds once to double; the double is then exact here or far from a float32 tie
    assert np.array_equal(got, np.array(want, f32))


def test_fma_settles_double_rounding():
    """A sum that float64 rounds onto a float32 midpoint is decided by what float64 dropped."""
    a, b = f32(1 + 2 ** -23), f32(1 + 2 ** -22)       # exact product 1 + 3·2⁻²³ + 2⁻⁴⁵
    c = f32(2 ** -24) - f32(3 * 2 ** -23)             # moves it to 1 + 2⁻²⁴ + 2⁻⁴⁵: just above a tie
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    assert exact > 1 + Fraction(1, 2 ** 24)
    assert _vecmath.fma(a, b, c) == f32(1 + 2 ** -23)  # rounds up, where (a*b + c) in float64 ties to 1


def test_libm_exp_is_the_c_librarys():
    """libm_exp repeats the C library's expf bit for bit (it is not always correctly rounded)."""
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
    got = _vecmath.libm_exp(x)
    assert np.array_equal(got.view(np.int32)[:-1], want.view(np.int32)[:-1]) and np.isnan(got[-1])


def test_sleef_exp_special_values():
    x = np.array([0, -0.0, 1, -104.5, 100.5, np.inf, -np.inf, np.nan, 88.7, -87.3], f32)
    got = _vecmath.sleef_exp(x)
    assert got[0] == 1 and got[1] == 1 and got[2] == f32(np.e)
    assert got[3] == 0 and got[4] == np.inf and got[5] == np.inf and got[6] == 0
    assert np.isnan(got[7])
    assert np.allclose(got[8:], np.exp(x[8:].astype(float)), rtol=2e-7)


def test_products_match_numpy_closely_and_keep_dtypes():
    rng = np.random.default_rng(1)
    for m, k, n in [(2, 2, 2), (32, 16, 16), (5, 3, 1), (1, 7, 1), (4, 0, 3)]:
        a, b = rng.standard_normal((m, k)).astype(f32), rng.standard_normal((k, n)).astype(f32)
        got = _vecmath.mm(a, b)
        assert got.dtype == f32 and got.shape == (m, n)
        assert np.allclose(got, a.astype(float) @ b.astype(float), rtol=1e-5, atol=1e-5)
    a64 = rng.standard_normal((3, 4))
    assert np.array_equal(_vecmath.mm(a64, a64.T), a64 @ a64.T)


# --- exactness against torch -------------------------------------------------------------------

# float32 functions whose PyTorch kernel gradviz follows step by step: the aim is 100%.
# ("x.grad" rows: the gradient through the function, from a fixed upstream gradient.)
EXACT_FUNCTIONS = ["sigmoid", "sigmoid x.grad", "log x.grad",
                   "softmax", "softmax x.grad", "log_softmax", "log_softmax x.grad"]
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
}
# classes still computed in a different order than PyTorch's kernels use: none measured so far
# (a random sweep of shapes 1..40 in all four layouts, mm and addmm, agreed everywhere)
OPEN_PRODUCTS = {}


def _inputs(name, wide, rng, n=20000):
    if name in ("log", "sqrt", "log2", "log10"):
        x = rng.uniform(0.01, 10, n) if not wide else np.exp(rng.uniform(-80, 80, n))
    elif name in ("asin", "acos"):
        x = rng.uniform(-0.99, 0.99, n) if not wide else rng.uniform(-1, 1, n)
    elif name == "softmax" or name == "log_softmax":
        x = rng.standard_normal(n) * (3 if not wide else np.exp(rng.uniform(-5, 5, n)))
    else:
        x = rng.uniform(-5, 5, n) if not wide else rng.standard_normal(n) * np.exp(rng.uniform(-10, 4, n))
    return x.astype(f32)


def _run(lib, name, x, upstream):
    """The function of ``lib`` on x (rows of 10 for softmax), or x's gradient through it."""
    fn, _, grad = name.partition(" ")
    t = lib.tensor(x.reshape(-1, 10) if "softmax" in fn else x, requires_grad=bool(grad))
    y = getattr(lib, fn)(t, -1) if "softmax" in fn else getattr(lib, fn)(t)
    if not grad:
        return y.detach().numpy().reshape(-1)
    (y * lib.tensor(upstream.reshape(y.shape))).sum().backward()
    return t.grad.numpy().reshape(-1)


def _function_share(torch, name, wide):
    import gradviz
    rng = np.random.default_rng(2 if wide else 3)
    x = _inputs(name.split()[0], wide, rng)
    upstream = rng.standard_normal(x.size).astype(f32)
    want, got = _run(torch, name, x, upstream), _run(gradviz, name, x, upstream)
    same = (want.view(np.int32) == got.view(np.int32)) | (np.isnan(want) & np.isnan(got))
    ulps = np.abs(want.view(np.int32).astype(np.int64) - got.view(np.int32).astype(np.int64))
    return 100 * same.mean(), int(ulps[~np.isnan(want)].max())


def _product_share(torch, kind, m, k, n, trials=40):
    import gradviz
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    same = total = 0
    for _ in range(trials):
        a = rng.standard_normal((m, k)).astype(f32)
        b = rng.standard_normal((k, n)).astype(f32)
        bias = rng.standard_normal(n).astype(f32)
        results = []
        for lib in (torch, gradviz):
            A, B, C = lib.tensor(a), lib.tensor(b), lib.tensor(bias)
            if kind == "mm":
                out = lib.mm(A, B)
            elif kind == "linear":   # nn.Linear's addmm(bias, x, Wᵀ) with W stored (out, in)
                # (b.T.copy(): row-major strides even for a dimension of 1, as a module's weight has)
                W = lib.tensor(b.T.copy())
                out = lib.addmm(C, A, W.t())
            elif kind == "wgrad":    # the weight's gradient of a Linear(k, n) on a batch of m
                W = lib.tensor(b.T.copy(), requires_grad=True)
                (lib.addmm(C, A, W.t()) * lib.tensor(rng_fixed(m, n))).sum().backward()
                out = W.grad
            elif kind == "mv":
                out = lib.mv(A, B[:, 0])
            elif kind == "dot":
                out = lib.dot(A[0], B[:, 0]).reshape(1)
            else:
                out = lib.bmm(lib.stack([A, A * 2]), lib.stack([B, B - 1]))
            results.append(out.detach().numpy())
        same += int(np.sum(results[0] == results[1]))
        total += results[0].size
    return 100 * same / total


def rng_fixed(m, n):
    return np.linspace(-1, 1, m * n, dtype=f32).reshape(m, n)


def exactness(torch):
    """{label: percent identical (and max ulps for the MKL functions)} over lesson and wide ranges."""
    table = {}
    for name in EXACT_FUNCTIONS + list(MKL_FUNCTIONS):
        for wide in (False, True):
            table[f"{name} ({'wide' if wide else 'lesson'} range)"] = _function_share(torch, name, wide)
    for label, case in {**EXACT_PRODUCTS, **OPEN_PRODUCTS}.items():
        table[label] = (_product_share(torch, *case), 0)
    return table


@pytest.fixture(scope="module")
def figures():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return exactness(torch)


@pytest.fixture(scope="module")
def figures_without_mkl():
    """The MKL functions' figures as gradviz computes them where MKL 2024.2 is not installed."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    real, _mkl.library = _mkl.library, lambda: None
    try:
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
@pytest.mark.parametrize("name", MKL_FUNCTIONS)
@pytest.mark.parametrize("wide", [False, True], ids=["lesson", "wide"])
def test_mkl_functions_identical_to_torch(figures, name, wide):
    """exp, log, sin, cos, tanh, sqrt...: PyTorch's values come from MKL 2024.2, and so do gradviz's."""
    if _mkl.library() is None:
        pytest.skip('MKL 2024.2 is not installed (pip install "gradviz[exact]")')
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
def test_random_shapes_in_every_layout():
    """mm and addmm of random shapes (1 to 40 each way), each operand by rows or by columns (a
    transposed view), agree with torch to the bit: the kernel choice follows shapes and layouts."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    rng = np.random.default_rng(21)
    for trial in range(160):
        m, k, n = (int(v) for v in rng.integers(1, 41, 3))
        a = rng.standard_normal((m, k)).astype(f32)
        b = rng.standard_normal((k, n)).astype(f32)
        bias = rng.standard_normal(n).astype(f32) if trial % 2 else None
        ta, tb, na, nb = torch.tensor(a), torch.tensor(b), a, b
        if trial % 4 >= 2:      # a as a transposed view, as a saved input's .t()
            ta, na = torch.tensor(a.T.copy()).t(), a.T.copy().T
        if trial % 8 >= 4:      # b as a transposed view, as nn.Linear's W.t()
            tb, nb = torch.tensor(b.T.copy()).t(), b.T.copy().T
        want = (torch.mm(ta, tb) if bias is None else torch.addmm(torch.tensor(bias), ta, tb)).numpy()
        assert np.array_equal(_vecmath.mm(na, nb, bias), want), (m, k, n, trial % 8)
