"""gradviz.kernels' exact limit (issue 16): SLEEF's exp/log/log1p/powf re-derived bit for bit up to
``get_exact_limit()`` elements per call, a fast function in their place above it (within 1 ulp of
SLEEF's; every other step still PyTorch's), and ``set_exact_limit(None)`` /
``GRADVIZ_EXACT_LIMIT=none`` for PyTorch's bits at every size.  No timing here: speed is measured
in benchmarks/core.py."""

import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest

from gradviz import kernels
from gradviz.kernels import _exact

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@contextlib.contextmanager
def limit(n):
    previous = kernels.set_exact_limit(n)
    try:
        yield
    finally:
        kernels.set_exact_limit(previous)


def ulps(a, b):
    """How many floats apart a and b are, elementwise (nan = nan, -0 = +0)."""
    a, b = np.asarray(a), np.asarray(b)
    it, mask = (np.int32, 0x7FFFFFFF) if a.dtype == np.float32 else (np.int64, 0x7FFFFFFFFFFFFFFF)
    ai, bi = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    ai, bi = np.where(ai < 0, -(ai & mask), ai), np.where(bi < 0, -(bi & mask), bi)
    return np.where(np.isnan(a) & np.isnan(b), 0, np.abs(ai - bi))


def both(f, *args):
    """f(*args) computed bit for bit (no limit) and above the limit (limit 0)."""
    with limit(None):
        exact = f(*args)
    with limit(0):
        fast = f(*args)
    return exact, fast


def wide(dtype, n=60_000, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * np.exp(rng.uniform(-3, 3, n))).astype(dtype)


def test_default_limit_and_info():
    assert kernels.get_exact_limit() == _exact.DEFAULT_LIMIT == 2 ** 18
    assert f"{2 ** 18:,} elements" in kernels.info()["sleef"]
    with limit(None):
        assert "every size" in kernels.info()["sleef"]


def test_set_exact_limit_returns_the_previous_and_checks():
    previous = kernels.set_exact_limit(10)
    try:
        assert kernels.get_exact_limit() == 10 and _exact.exact(10) and not _exact.exact(11)
        assert kernels.set_exact_limit(None) == 10 and _exact.exact(10 ** 12)
    finally:
        kernels.set_exact_limit(previous)
    for bad in (-1, 1.5, "10", True):
        with pytest.raises(ValueError, match="set_exact_limit expects"):
            kernels.set_exact_limit(bad)


@pytest.mark.parametrize("text, want", [("none", None), ("ALL", None), ("1000", 1000), ("1_000_000", 10 ** 6)])
def test_environment_variable(text, want):
    out = subprocess.run([sys.executable, "-c", "import gradviz; print(gradviz.kernels.get_exact_limit())"],
                         capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, GRADVIZ_EXACT_LIMIT=text, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(want)


def test_environment_variable_refuses_nonsense():
    with pytest.raises(ValueError, match="GRADVIZ_EXACT_LIMIT='lots'"):
        _exact._parse("lots")
    with pytest.raises(ValueError, match=">= 0"):
        _exact._parse("-5")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_functions_above_the_limit_within_one_ulp_of_sleefs(dtype):
    """exp, log, log1p (and float32 powf) above the limit: within 1 ulp of SLEEF's, same specials."""
    x = wide(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0], dtype)
    for f, arg in ((kernels.sleef_exp, np.clip(x, -80, 80)), (kernels.sleef_log, np.abs(x)),
                   (kernels.sleef_log1p, np.abs(x)), (kernels.sleef_log, specials),
                   (kernels.sleef_log1p, specials)):
        exact, fast = both(f, arg)
        assert fast.dtype == exact.dtype == dtype
        assert ulps(exact, fast).max() <= 1, f.__name__
    if dtype == np.float32:
        exact, fast = both(kernels.pow, np.abs(x), 2.7)
        assert fast.dtype == np.float32 and ulps(exact, fast).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_above_the_limit_within_their_documented_bounds(dtype):
    """The bounds docs/performance.md states: sigmoid and softmax within 4 ulp of the exact
    kernel; log_softmax and the gradients (sums that cancel) within 64 ulp of their largest value."""
    x = wide(dtype)
    rows = x.reshape(-1, 300)
    g = np.random.default_rng(1).standard_normal(rows.shape).astype(dtype)
    eps = np.finfo(dtype).eps
    for name, f in (("sigmoid", lambda: kernels.sigmoid(x)), ("softmax 1", lambda: kernels.softmax(rows, 1)),
                    ("softmax 0", lambda: kernels.softmax(rows, 0))):
        exact, fast = both(f)
        assert ulps(exact, fast).max() <= 4, name
    for name, f in (("log_softmax 1", lambda: kernels.log_softmax(rows, 1)),
                    ("log_softmax 0", lambda: kernels.log_softmax(rows, 0)),
                    ("softmax backward", lambda: kernels.softmax_backward(g, kernels.softmax(rows, 1), 1)),
                    ("log_softmax backward", lambda: kernels.log_softmax_backward(g, kernels.log_softmax(rows, 1), 1))):
        exact, fast = both(f)
        assert np.abs(exact - fast).max() <= 64 * eps * np.abs(exact).max(), name


def test_below_the_limit_nothing_changes():
    """Up to the limit the kernels are the exact ones, whatever the limit is above."""
    x = wide(np.float32, 5000)
    with limit(5000):
        a = kernels.sigmoid(x), kernels.softmax(x.reshape(50, 100), 1), kernels.sleef_log(np.abs(x))
    with limit(None):
        b = kernels.sigmoid(x), kernels.softmax(x.reshape(50, 100), 1), kernels.sleef_log(np.abs(x))
    assert all(np.array_equal(p, q) for p, q in zip(a, b))


@pytest.mark.torch
def test_forced_exact_is_torchs_above_the_default_limit():
    """set_exact_limit(None): a sigmoid and a softmax of 300,000 elements print PyTorch's bits."""
    torch = pytest.importorskip("torch")
    x = wide(np.float32, 300_000, seed=3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    previous = kernels.get_num_threads()
    kernels.set_num_threads(1)
    try:
        with limit(None):
            assert np.array_equal(kernels.sigmoid(x), torch.sigmoid(torch.from_numpy(x)).numpy())
            rows = x.reshape(-1, 600)
            assert np.array_equal(kernels.softmax(rows, 1), torch.softmax(torch.from_numpy(rows), 1).numpy())
        fast = kernels.sigmoid(x)     # the default limit: within the bound, not (always) the bits
        assert ulps(fast, torch.sigmoid(torch.from_numpy(x)).numpy()).max() <= 4
    finally:
        torch.set_num_threads(threads)
        kernels.set_num_threads(previous)
