"""The activations after ReLU against PyTorch: values and gradients to the bit in float32 and float64 on
random inputs with 0, −0, ±inf, nan and large numbers among them; node names, saved values, reprs,
in-place forms and PyTorch's errors.

Bit for bit at every size, float32 and float64 (float32 gelu: oneDNN's kernel,
:mod:`gradviz.kernels._onednn`; SLEEF's tanh and expm1, :mod:`gradviz.kernels._sleef_hyperbolic`), but
float64 gelu(approximate='none'): bit for bit on fewer elements than PyTorch's kernels take in a pair of
vectors (every lesson's tensors), within a few ulp of the input's scale above (SLEEF's double erf, for
which MKL's stands in).
"""

import numpy as np
import pytest

import gradviz
from gradviz.kernels._threads import LANES

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")
pytestmark = pytest.mark.torch

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 88.7, -88.7, 700.0, -700.0, 20.0, -3.0, 3.0, 6.0, -1.0, 1.0]
SELU = (1.6732632423543772, 1.0507009873554805)


def _f(lib):
    return lib.nn.functional


# name: (the call, both libraries alike; the dtypes in which it is exact at every size)
BOTH = (np.float32, np.float64)
OPS = {
    "leaky_relu": (lambda lib, t: _f(lib).leaky_relu(t), BOTH),
    "leaky_relu(0.2)": (lambda lib, t: _f(lib).leaky_relu(t, 0.2), BOTH),
    "leaky_relu(-0.5)": (lambda lib, t: _f(lib).leaky_relu(t, -0.5), BOTH),
    "hardtanh": (lambda lib, t: _f(lib).hardtanh(t), BOTH),
    "hardtanh(-2, 3)": (lambda lib, t: _f(lib).hardtanh(t, -2.0, 3.0), BOTH),
    "relu6": (lambda lib, t: _f(lib).relu6(t), BOTH),
    "hardsigmoid": (lambda lib, t: _f(lib).hardsigmoid(t), BOTH),
    "softplus": (lambda lib, t: _f(lib).softplus(t), BOTH),
    "softplus(2, 5)": (lambda lib, t: _f(lib).softplus(t, 2, 5), BOTH),
    "softplus(0.5, 3)": (lambda lib, t: _f(lib).softplus(t, beta=0.5, threshold=3.0), BOTH),
    "silu": (lambda lib, t: _f(lib).silu(t), BOTH),
    "logsigmoid": (lambda lib, t: _f(lib).logsigmoid(t), BOTH),
    "elu": (lambda lib, t: _f(lib).elu(t), BOTH),
    "elu(0.5)": (lambda lib, t: _f(lib).elu(t, 0.5), BOTH),
    "selu": (lambda lib, t: _f(lib).selu(t), BOTH),
    "torch.selu": (lambda lib, t: lib.selu(t), BOTH),
    "celu(0.7)": (lambda lib, t: lib.celu(t, 0.7), BOTH),
    "celu": (lambda lib, t: _f(lib).celu(t), BOTH),
    "gelu": (lambda lib, t: _f(lib).gelu(t), (np.float32,)),
    "gelu(tanh)": (lambda lib, t: _f(lib).gelu(t, approximate="tanh"), BOTH),
    "mish": (lambda lib, t: _f(lib).mish(t), BOTH),
}


def _inputs(n, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * rng.choice([0.1, 1.0, 5.0, 30.0], n)).astype(dtype)
    k = min(n, len(SPECIAL))
    x[rng.choice(n, k, replace=False)] = np.array(SPECIAL[:k], dtype)
    return x, rng.standard_normal(n).astype(dtype)


def _run(lib, call, x, g):
    t = lib.tensor(x, requires_grad=True)
    y = call(lib, t)
    y.backward(lib.tensor(g))
    return y, t.grad


def _bits(a):
    return np.ascontiguousarray(a.detach().numpy() if hasattr(a, "detach") else a)


def _same(ours, theirs, what):
    a, b = _bits(ours), _bits(theirs)
    same = (a.view(np.uint8).reshape(a.shape + (-1,)) == b.view(np.uint8).reshape(b.shape + (-1,))).all(-1)
    same |= np.isnan(a) & np.isnan(b)
    assert same.all(), (what, np.nonzero(~same)[0][:8], a[~same][:8], b[~same][:8])


def _close(ours, theirs, x, what, ulps=4):
    """Equal where not finite; elsewhere within ``ulps`` units of the input's scale (max(|x|, 1))."""
    a, b = _bits(ours).astype(np.float64), _bits(theirs).astype(np.float64)
    finite = np.isfinite(a) & np.isfinite(b)
    assert ((a == b) | (np.isnan(a) & np.isnan(b)) | finite).all(), what
    scale = np.finfo(x.dtype).eps * np.maximum(np.abs(x.astype(np.float64)), 1)
    with np.errstate(invalid="ignore"):
        err = np.where(finite & np.isfinite(x), np.abs(a - b) / scale, 0)
    assert err.max() <= ulps, (what, err.max())


def _small_sizes(dtype):
    """Sizes PyTorch's loop runs through the scalar formula alone: below a pair of vectors."""
    pair = 2 * (LANES if dtype == np.float32 else LANES // 2)
    return [1, 2, 5, pair - 1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(OPS))
def test_values_and_gradients_to_the_bit(name, dtype):
    call, everywhere = OPS[name]
    sizes = _small_sizes(dtype) + ([31, 33, 100, 1000, 40000] if dtype in everywhere else [])
    for seed, n in enumerate(sizes):
        x, g = _inputs(n, dtype, seed)
        y, gx = _run(gradviz, call, x, g)
        yt, gt = _run(torch, call, x, g)
        assert y.grad_fn.name() == yt.grad_fn.name()
        _same(y, yt, (name, n, "value"))
        _same(gx, gt, (name, n, "gradient"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [k for k, (_, everywhere) in OPS.items() if everywhere != BOTH])
def test_long_tensors_within_a_few_ulp(name, dtype):
    call, everywhere = OPS[name]
    if dtype in everywhere:
        pytest.skip("bit for bit at every size (test_values_and_gradients_to_the_bit)")
    for seed, n in enumerate([100, 1000, 40000]):
        x, g = _inputs(n, dtype, seed)
        y, gx = _run(gradviz, call, x, g)
        yt, gt = _run(torch, call, x, g)
        _close(y, yt, x, (name, n, "value"))
        # (gelu's tanh form: 1 − tanh² cancels, so an ulp of tanh moves its gradient by a few of the input's)
        _close(gx, gt, x, (name, n, "gradient"), ulps=8 if name == "gelu(tanh)" else 4)


def test_gelu_of_a_non_contiguous_tensor_is_atens():
    """Not contiguous: PyTorch does not call oneDNN, and neither does gradviz (ATen's formula, the C
    library's erff)."""
    x = np.random.default_rng(3).standard_normal((5, 5)).astype(np.float32)
    ours = gradviz.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y, yt = gradviz.nn.functional.gelu(ours.t()), torch.nn.functional.gelu(theirs.t())
    _same(y, yt, "value")
    y.sum().backward()
    yt.sum().backward()
    _same(ours.grad, theirs.grad, "gradient")


def test_gradients_of_elu_selu_celu_are_exact_at_every_size():
    for dtype in (np.float32, np.float64):
        for name in ("elu", "elu(0.5)", "selu", "celu(0.7)"):
            x, g = _inputs(1000, dtype, 7)
            _same(_run(gradviz, OPS[name][0], x, g)[1], _run(torch, OPS[name][0], x, g)[1], name)


def test_printed_like_pytorch():
    """Nodes, saved numbers, in-place forms, modules: the same program prints the same."""
    from parity import printed
    code = '''
F = torch.nn.functional
x = torch.tensor([-2., -0.0, 0.5, 3., 25.], requires_grad=True)
for f in [lambda t: F.leaky_relu(t, 0.2), lambda t: F.elu(t, 0.5), lambda t: torch.selu(t), lambda t: torch.celu(t, 0.7),
          lambda t: F.gelu(t), lambda t: F.gelu(t, approximate='tanh'), lambda t: F.silu(t), lambda t: F.softplus(t, 2, 5),
          lambda t: F.hardtanh(t, -2., 2.), lambda t: F.relu6(t), lambda t: F.mish(t), lambda t: F.logsigmoid(t),
          lambda t: F.softsign(t), lambda t: F.hardsigmoid(t),
          lambda t: F.leaky_relu(t * 1, 0.3, inplace=True), lambda t: F.elu(t * 1, inplace=True),
          lambda t: F.celu(t * 1, 2.0, inplace=True), lambda t: F.hardtanh(t * 1, inplace=True),
          lambda t: F.relu6(t * 1, inplace=True), lambda t: F.silu(t * 1, inplace=True), lambda t: F.mish(t * 1, inplace=True),
          lambda t: F.hardsigmoid(t * 1, inplace=True), lambda t: torch.selu_(t * 1), lambda t: torch.celu_(t * 1)]:
    y = f(x)
    y.backward(torch.ones_like(y) * 0.5)
    fn = y.grad_fn
    print(y, x.grad, sorted((k, getattr(fn, k)) for k in dir(fn) if k.startswith('_saved_') and not isinstance(getattr(fn, k), torch.Tensor)))
    x.grad = None
print(torch.nn.Sequential(torch.nn.LeakyReLU(), torch.nn.ELU(), torch.nn.SELU(), torch.nn.CELU(), torch.nn.GELU(), torch.nn.SiLU(),
                          torch.nn.Softplus(), torch.nn.Hardtanh(), torch.nn.ReLU6(), torch.nn.Mish(), torch.nn.LogSigmoid(),
                          torch.nn.Softsign(), torch.nn.Hardsigmoid()))
print(torch.nn.LeakyReLU(0.2, True), torch.nn.ELU(0.5, True), torch.nn.CELU(2.0), torch.nn.SELU(True), torch.nn.GELU('tanh'),
      torch.nn.SiLU(True), torch.nn.Mish(True), torch.nn.Softplus(2, 5), torch.nn.Hardtanh(-2, 2, True), torch.nn.ReLU6(True),
      torch.nn.Hardsigmoid(True), torch.nn.Softplus(beta=2.0))
print(F.hardtanh(torch.tensor([1, -2, 5])), F.relu6(torch.tensor([7, -1, 3])))
'''
    assert printed(gradviz, code) == printed(torch, code)


ERRORS = [
    "F.leaky_relu(torch.tensor([1, -2]))", "F.elu(torch.tensor([1, -2]))", "F.gelu(torch.tensor([1, -2]))",
    "F.softplus(torch.tensor([1, 2]))", "F.silu(torch.tensor([True]))", "F.hardtanh(torch.tensor([True]))",
    "torch.celu(torch.tensor([1., -2.]), 0.)", "F.gelu(torch.tensor([1.]), approximate='foo')",
    "F.gelu(torch.tensor([1.]), 'tanh')", "F.hardtanh(torch.tensor([1.]), 2., 1.)", "torch.nn.Hardtanh(2., 1.)",
    "F.leaky_relu(torch.tensor([1.]), 'a')",
    "x = torch.tensor([1., -2.], requires_grad=True); F.leaky_relu(x * 1, -0.2, inplace=True).sum().backward()",
    "x = torch.tensor([1., -2.], requires_grad=True); F.elu(x * 1, -0.2, inplace=True).sum().backward()",
    "x = torch.tensor([1., -2.], requires_grad=True); F.leaky_relu(x, inplace=True)",
]


@pytest.mark.parametrize("code", ERRORS)
def test_errors_as_pytorch(code):
    from parity import printed
    program = "F = torch.nn.functional\n" + code
    out = printed(gradviz, program)
    assert out.startswith("ERROR") and out == printed(torch, program)


def test_second_derivatives_of_the_piecewise_linear_ones_as_pytorch():
    """create_graph=True: leaky_relu's and hardtanh's gradients are nodes of their own
    (LeakyReluBackwardBackward0, HardtanhBackwardBackward0) whose own gradient in x is 0; hardsigmoid's
    has none in PyTorch, and backward through it fails with PyTorch's message."""
    from parity import printed
    code = '''
F = torch.nn.functional
for f in [lambda t: F.leaky_relu(t, 0.2), lambda t: F.hardtanh(t, -0.5, 0.5), F.relu6, lambda t: F.leaky_relu(t * 1, 0.2, inplace=True),
          F.hardsigmoid]:
    x = torch.tensor([-1., 0.25, 2.], requires_grad=True)
    g, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    print(g)
    g.sum().backward()
    print(x.grad)
'''
    assert printed(gradviz, code) == printed(torch, code)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["silu", "softplus", "elu", "logsigmoid", "hardtanh", "gelu"])
def test_gradients_expanded_along_rows(name, dtype):
    """y.sum(0) sends back a gradient expanded along the rows (strides (0, 1)): PyTorch's loop then runs
    each row's first pairs of vectors through the vector formula, the rest of the row through the scalar one."""
    if name == "gelu" and dtype == np.float64:
        pytest.skip("float64 gelu's vector part calls SLEEF's erf, within an ulp here")
    call = OPS[name][0]
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 70)) * 3).astype(dtype)
    w70, w3 = rng.standard_normal(70).astype(dtype), rng.standard_normal(3).astype(dtype)
    for reduce in (lambda lib, y: y.sum(0) * lib.tensor(w70), lambda lib, y: y.sum(1) * lib.tensor(w3),
                   lambda lib, y: y.mean()):
        grads = []
        for lib in (gradviz, torch):
            t = lib.tensor(x, requires_grad=True)
            reduce(lib, call(lib, t)).sum().backward()
            grads.append(t.grad)
        _same(grads[0], grads[1], name)
