"""In-place arithmetic (``add_``, ``sub_``, ``mul_``, ``div_`` and ``+= -= *= /=``) against PyTorch 2.13.

Where nothing is recorded (under no_grad, or no input requires grad) gradviz computes these straight
into the tensor's storage (:func:`gradviz._inplace.arithmetic`); elsewhere it computes the op and
writes it back.  Both must give PyTorch's bits, versions, errors and sharing of storage."""

import numpy as np
import pytest

import gradviz
from parity import printed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

_BITS = """
def bits(t):
    return [float(v).hex() for v in t.detach().reshape(-1).tolist()]
"""

# numpy's overflow warnings, which gradviz's filter hides outside this harness (printed() shows them all)
_QUIET = """
import warnings
warnings.simplefilter("ignore", RuntimeWarning)
"""

PROGRAMS = {
    "sgd steps under no_grad": """
torch.manual_seed(0)
p = torch.randn(4, 3, requires_grad=True)
q = torch.randn(3, dtype=torch.float64, requires_grad=True)
for t in (p, q):
    t.grad = torch.randn(t.shape, dtype=t.dtype) * 3
    with torch.no_grad():
        t.sub_(0.1 * t.grad)
        t -= 0.1 * t.grad
        t.add_(t.grad, alpha=-0.1)
        t.add_(t.grad, alpha=3)
        t.sub_(t.grad, alpha=0.25)
        t.mul_(0.9)
        t *= 3
        t.div_(7)
        t /= t.grad
        t += 2
        t.sub_(1, alpha=2)
        t.add_(torch.tensor(1.5, dtype=t.dtype))
    print(bits(t), t._version, t.requires_grad, t.grad_fn, t.is_leaf)
""",
    "momentum buffer": """
torch.manual_seed(1)
buf = torch.randn(5)
g = torch.randn(5)
for _ in range(3):
    buf.mul_(0.9).add_(g, alpha=0.1)
print(bits(buf), buf._version)
""",
    "the same tensor on both sides": """
x = torch.tensor([1.5, -2.0, 3.0])
x.mul_(x); print(bits(x))
x.add_(x, alpha=0.5); print(bits(x))
x.div_(x); print(bits(x))
x.sub_(x); print(bits(x), x._version)
""",
    "through a view, one version counter": """
p = torch.arange(6.).reshape(2, 3).requires_grad_()
with torch.no_grad():
    row = p[1]
    row.mul_(2)
    col = p[:, 0]
    col += 10
    pt = p.t()
    pt.sub_(torch.ones(3, 2))
print(p, p._version, row._version, col._version)
""",
    "a transposed tensor written in place": """
x = torch.arange(6.).reshape(2, 3).t()
x.mul_(torch.arange(6.).reshape(3, 2))
x.add_(1.5)
print(x, x.is_contiguous(), x._version)
""",
    "data and detach share storage": """
p = torch.ones(3, requires_grad=True)
p.data.sub_(torch.full((3,), 0.25))
d = p.detach()
d.mul_(4)
print(p, p._version, d._version)
""",
    "a leaf that requires grad, outside no_grad": """
p = torch.ones(3, requires_grad=True)
p.sub_(torch.ones(3))
""",
    "a view of a leaf, outside no_grad": """
p = torch.ones(3, requires_grad=True)
p[0:2].mul_(2.0)
""",
    "a saved tensor changed under no_grad": """
w = torch.ones(3, requires_grad=True)
loss = (w * w).sum()
with torch.no_grad():
    w.add_(torch.ones(3))
loss.backward()
""",
    "a saved output changed": """
x = torch.ones(3, requires_grad=True)
y = x.exp()
y.mul_(2)
y.sum().backward()
""",
    "partial overlap": """
x = torch.arange(4.).reshape(2, 2)
with torch.no_grad():
    x.mul_(x.t())
""",
    "an expanded tensor": """
x = torch.zeros(1).expand(3)
x.add_(torch.ones(3))
""",
    "a broadcast other": """
x = torch.ones(2, 3)
x.sub_(torch.tensor([1., 2., 3.]))
x.mul_(torch.tensor([[2.], [3.]]))
print(x)
""",
    "an output shape that does not match": """
x = torch.ones(3)
x.add_(torch.ones(2, 3))
""",
    "promotion: a float64 other": """
x = torch.full((3,), 0.1)
x.add_(torch.full((3,), 0.2, dtype=torch.float64))
x.mul_(torch.tensor(3, dtype=torch.int64))
print(bits(x), x.dtype, x._version)
""",
    "an integer tensor": """
x = torch.arange(3)
x.add_(2); x.mul_(torch.tensor([1, 2, 3])); x.sub_(1, alpha=2)
print(x, x.dtype, x._version)
x.add_(0.5)
""",
    "integer division in place": """
x = torch.arange(3)
x.div_(2)
""",
    "a number that rounds in the tensor's dtype": _QUIET + """
x = torch.full((2,), 1.0)
x.add_(0.1); x.mul_(1e-3); x.div_(3.3); x.sub_(2 ** 40); x.add_(1e39)
print(bits(x))
""",
    "inf and nan quietly": _QUIET + """
x = torch.tensor([1e30, 0.0, -1.0, float('nan')])
x.mul_(1e30); print(bits(x))
x.div_(torch.tensor([0.0, 0.0, 0.0, 1.0])); print(bits(x))
x.sub_(x); print(bits(x))
""",
    "recorded when a gradient flows": """
a = torch.tensor([1., 2., 3.], requires_grad=True)
t = a * 1
t.add_(torch.ones(3), alpha=2); t.mul_(a); t.div_(4); t -= a
print(t.grad_fn, t.grad_fn.next_functions[0][0])
t.sum().backward()
print(a.grad)
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_in_place_arithmetic_as_pytorch(name):
    code = _BITS + PROGRAMS[name]
    assert printed(gradviz, code) == printed(torch, code)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (32, 16), (3, 40, 5)])
def test_no_grad_steps_match_the_recorded_ops_bit_for_bit(dtype, shape):
    """The storage path gives the bits of the op computed and written back (and PyTorch's)."""
    rng = np.random.default_rng(sum(shape) + len(shape))
    p0, g0 = (rng.standard_normal(shape).astype(dtype) * 4 for _ in range(2))
    for alpha in (1, -0.1, 3, 1e-3):
        ours, theirs = gradviz.tensor(p0), torch.tensor(p0)
        for lib, t in ((gradviz, ours), (torch, theirs)):
            g = lib.tensor(g0)
            with lib.no_grad():
                t.add_(g, alpha=alpha)
                t.sub_(g, alpha=alpha)
                t.mul_(g)
                t.div_(g + 5)
                t.mul_(alpha)
        assert np.array_equal(ours.numpy(), theirs.numpy()), alpha
        assert ours._version == theirs._version == 5


def test_no_grad_steps_write_into_storage(monkeypatch):
    """The cases above that record nothing take the storage path (not the op and a copy back)."""
    import gradviz._inplace as inplace

    def general(*args, **kwargs):
        raise AssertionError("the general in-place path ran")

    monkeypatch.setattr(inplace, "_inplace", general)
    p = gradviz.randn(4, 3, requires_grad=True)
    p.grad = gradviz.randn(4, 3)
    storage = p.data_ptr()
    with gradviz.no_grad():
        p -= 0.1 * p.grad
        p.add_(p.grad, alpha=-0.1).mul_(0.9).div_(2.0).sub_(gradviz.tensor(1.0))
        p.t().add_(1)
    buf = gradviz.zeros(3)
    buf.mul_(0.9).add_(gradviz.ones(3), alpha=0.1)
    assert p.data_ptr() == storage and p._version == 6 and buf._version == 2
