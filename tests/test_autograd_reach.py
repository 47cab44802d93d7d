"""The autograd API a course meets next, against PyTorch 2.13: torch.autograd.functional with
create_graph=True (grad_fn names of the results), hooks of every kind and their order, custom
Functions with several outputs, gradgradcheck."""

import pytest

import gradviz
from parity import printed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FUNCTIONAL = """F = torch.autograd.functional
x = torch.tensor([1., 2.], requires_grad=True)
W = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
for f in [lambda x: (x ** 3).sum(), lambda x: x.mean(), lambda x: (x * x).sum(0), lambda x: x @ x, lambda x: (W @ x).sum(),
          lambda x: x.unsqueeze(0) @ W, lambda x: (x ** 2).prod(), lambda x: x.max(), lambda x: x.norm(),
          lambda x: x.sum(0, keepdim=True), lambda x: torch.stack([x, x]).sum(1), lambda x: x[0] * x[1],
          lambda x: x.unsqueeze(1).unsqueeze(0).sum((0, 2)), lambda x: (x.view(2, 1) * W).sum(1)]:
    o, j = F.jvp(f, x, torch.ones(2), create_graph=True)
    print(o, j)
    o, j = F.vjp(f, x, torch.ones_like(f(x)), create_graph=True)
    print(o, j)
    print(F.hvp(lambda x: f(x).sum(), x, torch.ones(2), create_graph=True))
"""

PROGRAMS = {"functional, create_graph=True": FUNCTIONAL}


@pytest.mark.parametrize("name", PROGRAMS)
def test_as_torch(name):
    out = printed(gradviz, PROGRAMS[name])
    assert "ERROR" not in out
    assert out == printed(torch, PROGRAMS[name])


def test_module_paths():
    from gradviz.autograd.functional import jacobian
    import gradviz.autograd.functional as functional
    assert functional.jacobian is jacobian is gradviz.autograd.functional.jacobian
