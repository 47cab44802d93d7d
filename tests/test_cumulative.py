"""cumsum and cumprod against PyTorch 2.13: values to the last bit (PyTorch carries the running
sum or product in double for float32), gradients with and without zeros in the input (cumprod's
three cases), second derivatives and node names, integer inputs and the in-place forms."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz
from parity import printed

CUMULATIVE = r"""
x = torch.tensor([[1.5, -2.0, 0.5, 3.0], [2.0, 0.0, -1.0, 4.0], [0.0, 2.0, 0.0, 5.0]], requires_grad=True)
for dim in [0, 1, -1]:
    for f in ['cumsum', 'cumprod']:
        y = getattr(x, f)(dim)
        print(f, dim, y, y.grad_fn.name(), y.grad_fn._saved_dim)
        w = torch.arange(12.).reshape(3, 4) - 5
        (y * w).sum().backward()
        print(x.grad); x.grad = None
print(torch.cumprod(torch.arange(1, 6), 0), torch.arange(1, 5).cumprod(0, dtype=torch.float32), torch.cumsum(torch.tensor([True, True]), 0))
s = torch.tensor(2., requires_grad=True); y = s.cumprod(0); y.backward(); print(y, s.grad)
z = torch.tensor([1.5, 2.0, 0.5], requires_grad=True)
g, = torch.autograd.grad((z.cumprod(0) ** 2).sum(), z, create_graph=True); print(g, g.grad_fn.name())
h, = torch.autograd.grad(g.sum(), z); print(h)
g, = torch.autograd.grad((z.cumsum(0) ** 2).sum(), z, create_graph=True); print(g, g.grad_fn.name())
v = torch.tensor([1.0, 2.0, 3.0]); v.cumprod_(0); print(v); v.cumsum_(0); print(v)
print(torch.randn(3, 4).cumprod(2))
"""


@pytest.mark.torch
def test_prints_what_torch_prints():
    torch = pytest.importorskip("torch")
    assert printed(gradviz, CUMULATIVE) == printed(torch, CUMULATIVE)


@pytest.mark.torch
@settings(max_examples=80, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3), seed=st.integers(0, 2 ** 32 - 1),
       dtype=st.sampled_from([np.float32, np.float64]), zeros=st.sampled_from([0.0, 0.1, 0.3]), data=st.data())
def test_values_and_gradients_are_torch_to_the_last_bit(shape, seed, dtype, zeros, data):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    a = (1 + 0.3 * rng.standard_normal(shape)).astype(dtype)
    a[rng.random(shape) < zeros] = 0
    w = rng.standard_normal(shape).astype(dtype)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    for name in ("cumsum", "cumprod"):
        results = []
        for lib in (torch, gradviz):
            x = lib.tensor(a, requires_grad=True)
            y = getattr(x, name)(dim)
            (y * lib.tensor(w)).sum().backward()
            results.append((y.detach().numpy().tobytes(), x.grad.numpy().tobytes()))
        assert results[0] == results[1], (name, shape, dim)


def test_cumprod_gradient_with_zeros_matches_finite_differences():
    x = gradviz.tensor([[1.5, 0.0, 2.0, 0.0, 3.0], [0.5, -2.0, 0.0, 1.0, 4.0]], dtype=gradviz.float64,
                       requires_grad=True)
    assert gradviz.autograd.gradcheck(lambda t: t.cumprod(1), (x,))
    assert gradviz.autograd.gradcheck(lambda t: t.cumprod(0), (x,))
