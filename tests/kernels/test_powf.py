"""``x ** n`` in float32 as PyTorch's pow kernel computes it (gradviz/_powf.py): SLEEF's powf on
whole pairs of vectors, pow in double on the rest; bit for bit against torch where it is installed."""

import math

import numpy as np
import pytest

import gradviz
from gradviz.kernels import LANES
from gradviz.kernels._powf import pow_kernel, sleef_powf

f32 = np.float32
EXPONENTS = [4, 5, 6, 7, 10, -3, -4, 1.5, 2.5, -1.5, 0.3, 3.7]
SPECIAL_X = np.array([0., -0., np.inf, -np.inf, np.nan, 1., -1., 2., -2., 1e-40, 3e38, 0.5, -0.5,
                      1.0000001, 0.9999999, 100.], f32)
SPECIAL_Y = [2.5, -2.5, 3., -3., 4., 0., np.inf, -np.inf, np.nan, 1e30, -7., 0.5]


def same_bits(a, b):
    return (a.view(np.int32) == b.view(np.int32)) | (np.isnan(a) & np.isnan(b))


def test_close_to_the_exact_power():
    x = np.random.default_rng(0).uniform(0.1, 5, 1000).astype(f32)
    for n in EXPONENTS:
        want = np.power(x.astype(np.float64), n)
        np.testing.assert_allclose(sleef_powf(x, f32(n)), want, rtol=2.5e-7)


def _c_pow(x, y):
    """C99's pow: Python's math.pow, but for ±0 to a negative power (±inf in C, an error in Python)."""
    try:
        return math.pow(x, y)
    except ValueError:
        if x == 0:
            return math.copysign(math.inf, x) if y % 2 == 1 else math.inf
        return math.nan
    except OverflowError:
        return math.copysign(math.inf, x) if y % 2 == 1 else math.inf


def test_c_special_cases():
    """pow's zeros, infinities, nans and signs, as C99 (and SLEEF) define them (numpy's differ)."""
    for y in SPECIAL_Y:
        got = sleef_powf(SPECIAL_X, f32(y))
        with np.errstate(over="ignore"):           # a double beyond float32's range is inf there
            want = np.array([_c_pow(float(v), float(y)) for v in SPECIAL_X]).astype(f32)
        finite_domain = np.isfinite(SPECIAL_X) & (SPECIAL_X != 0) & np.isfinite(y) & (np.abs(SPECIAL_X) != 1)
        assert same_bits(got[~finite_domain], want[~finite_domain]).all(), y


@pytest.mark.torch
@pytest.mark.parametrize("n", EXPONENTS)
@pytest.mark.parametrize("size", [7, 16, 2 * LANES + 5, 2000])
def test_identical_to_torch(n, size):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(size).uniform(-5, 5, size).astype(f32)
    if n != int(n):
        x = np.abs(x)
    want = (torch.from_numpy(x) ** n).numpy()
    assert same_bits(pow_kernel(x, n, LANES), want).all()
    assert same_bits((gradviz.tensor(x) ** n).numpy(), want).all()


@pytest.mark.torch
@pytest.mark.parametrize("y", SPECIAL_Y)
def test_special_cases_identical_to_torch(y):
    torch = pytest.importorskip("torch")
    x = np.tile(SPECIAL_X, 2)                      # 32 elements: two whole vectors of 16 (or four of 8)
    want = (torch.from_numpy(x) ** torch.full(x.shape, float(y))).numpy()[:len(SPECIAL_X)]
    assert same_bits(sleef_powf(SPECIAL_X, f32(y)), want).all()


DYNAMIC_NET = """
import math
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 2000); y = torch.sin(x)
a, b, c, d, e = (torch.nn.Parameter(torch.randn(())) for _ in range(5))
opt = torch.optim.SGD([a, b, c, d, e], lr=1e-8, momentum=0.9)
for t in range(300):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3 + e * x ** 4 + e * x ** 5
    loss = torch.nn.functional.mse_loss(y_pred, y, reduction='sum')
    opt.zero_grad(); loss.backward(); opt.step()
    if t % 100 == 99: print(t, loss.item())
print(a.item(), b.item(), c.item(), d.item(), e.item())
"""


@pytest.mark.torch
def test_the_dynamic_net_tutorial_prints_torchs_numbers():
    """PyTorch's "Learning PyTorch with Examples" fits x⁴ and x⁵ terms: the same losses and weights."""
    torch = pytest.importorskip("torch")

    def printed(lib):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(DYNAMIC_NET, {"torch": lib})
        return out.getvalue()
    assert printed(gradviz) == printed(torch)


@pytest.mark.torch
@pytest.mark.parametrize("n", [5, 37, 100])
@pytest.mark.parametrize("c", [2.0, 0.5, 10.0])
def test_tensor_exponents_and_number_bases_identical_to_torch(n, c):
    """``x ** b`` (tensors of one shape) and ``c ** x``, forward and both gradients, bit for bit."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    xs, bs = rng.uniform(0.2, 3, n).astype(f32), rng.uniform(-2, 3, n).astype(f32)
    results = []
    for lib in (torch, gradviz):
        x, b = lib.tensor(xs, requires_grad=True), lib.tensor(bs, requires_grad=True)
        y = x ** b + c ** x
        (y * lib.tensor(np.linspace(-1, 1, n).astype(f32))).sum().backward()
        results.append([y.detach().numpy(), x.grad.numpy(), b.grad.numpy()])
    for want, got in zip(*results):
        assert same_bits(got, want).all()


@pytest.mark.torch
@pytest.mark.parametrize("shapes", [((37,), ()), ((), (37,)), ((4, 40), (40,)), ((4, 1), (4, 40)),
                                    ((3, 5, 7), (5, 1)), ((2, 33), (2, 1))])
def test_broadcast_exponents_identical_to_torch(shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(shapes[0]))
    a = (np.abs(rng.uniform(-4, 4, shapes[0])) + 0.1).astype(f32)
    b = rng.uniform(-3, 3, shapes[1]).astype(f32)
    want = (torch.from_numpy(np.asarray(a)) ** torch.from_numpy(np.asarray(b))).numpy()
    assert same_bits((gradviz.tensor(a) ** gradviz.tensor(b)).numpy(), want).all()
