"""numpy's keyword names PyTorch accepts (``axis=``, ``keepdims=``, ``x=``/``a=``/``x1=``, ``x2=``), and
torch.cat/stack's type promotion, against PyTorch 2.13."""

import pytest

import gradviz
from parity import printed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROGRAMS = {
    "reductions": """x = torch.tensor([[1., 5., 3.], [7., 2., 2.]])
print(x.argmax(axis=1), x.argmin(axis=0, keepdims=True), x.sum(axis=0), x.sum(axis=1, keepdims=True))
print(x.mean(axis=0, keepdims=True), x.std(axis=0), x.var(axis=1, keepdims=True), x.prod(axis=0))
print(x.max(axis=0, keepdims=True), x.min(axis=1), x.amax(axis=1), x.amin(axis=(0, 1)), x.logsumexp(axis=1))
print(x.all(axis=0), x.any(axis=1, keepdims=True), x.median(axis=1), x.cumsum(axis=1), x.softmax(axis=0))
print(torch.sum(x, axis=1), torch.argmax(x, axis=0), torch.mean(x, axis=(0, 1)), torch.max(x, axis=1, keepdims=True))
print(torch.softmax(x, axis=1), torch.log_softmax(x, axis=0), torch.cumsum(x, axis=0), torch.std(x, axis=1, keepdims=True))
""",
    "shapes and binary ops": """x = torch.tensor([[1., 5., 3.], [7., 2., 2.]])
print(x.unsqueeze(axis=0).shape, x.squeeze(axis=0).shape, x.size(axis=1), x.chunk(3, axis=1), x.unbind(axis=1))
print(torch.cat([x, x], axis=1), torch.stack([x, x], axis=2).shape, x.index_select(axis=1, index=torch.tensor([0, 2])))
print(torch.sum(a=x), torch.add(x1=x, x2=x), x.add(x2=x), x.mul(x2=2), torch.exp(x=x), torch.maximum(x, x2=x - 3))
y = x.clone(); y.cumsum_(axis=0); print(y); y.unsqueeze_(axis=1); print(y.shape)
""",
    "refused": """x = torch.tensor([[1., 5., 3.], [7., 2., 2.]])
for f in [lambda: x.norm(axis=0), lambda: x.split(1, axis=0), lambda: x.sum(dim=0, axis=0)]:
    try:
        print(f())
    except TypeError as e:
        print("TypeError", e)
""",
    "torch functions": """x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]])
tests = [lambda: torch.max(x, axis=1), lambda: torch.min(x, axis=0, keepdims=True), lambda: torch.squeeze(x[:1], axis=0),
         lambda: torch.unsqueeze(x, axis=1).shape, lambda: torch.sort(x, axis=0), 
         lambda: torch.logsumexp(x, axis=1), lambda: torch.var(x, axis=0, keepdims=True), lambda: torch.median(x, axis=0),
         lambda: torch.all(x > 1, axis=0), lambda: torch.any(x > 3, axis=1), lambda: torch.prod(x, axis=1),
         lambda: torch.nn.functional.softmax(x, axis=1), lambda: torch.nn.functional.log_softmax(x, dim=1),
         lambda: torch.std(x, axis=1), lambda: torch.argmin(x, axis=1, keepdims=True), lambda: torch.amax(x, axis=0),
         lambda: torch.mean(x, axis=0), lambda: torch.sum(x, axis=(0, 1), keepdims=True), lambda: torch.flip(x, dims=[0]),
         lambda: torch.gather(x, axis=1, index=torch.tensor([[0], [1]])), lambda: x.gather(axis=1, index=torch.tensor([[0], [1]])),
         lambda: torch.index_select(x, axis=0, index=torch.tensor([1])), lambda: x.softmax(axis=0), lambda: x.log_softmax(axis=1),
         lambda: torch.where(x > 2, x, torch.zeros(1)), lambda: torch.chunk(x, 3, axis=1),
         lambda: x.std(axis=0, keepdims=True, unbiased=False), lambda: torch.cumsum(x, axis=0), lambda: x.cumsum(axis=0),
         lambda: torch.maximum(x, other=x.t()[:2]), lambda: torch.mul(x, x2=2.0), lambda: torch.sub(input=x, other=1),
         lambda: torch.stack((x, x), axis=-1).shape, lambda: torch.cat((x, x), axis=-1).shape, lambda: torch.hstack([x, x]).shape]
for t in tests:
    try:
        print(t())
    except Exception as e:
        print(type(e).__name__, e)
""",
    "cat and stack promote": """a, b = torch.ones(2), torch.arange(2)
print(torch.cat([a, b]), torch.cat([b, a]), torch.stack([b, a]), torch.cat([b, b]).dtype)
print(torch.stack([torch.tensor(1, dtype=torch.int8), torch.tensor(2., dtype=torch.float64)]))
print(torch.cat([torch.tensor([True]), torch.tensor([2], dtype=torch.uint8)]), torch.stack([a.half(), b]).dtype)
x = torch.ones(2, requires_grad=True)
y = torch.cat([x, torch.zeros(2, dtype=torch.float64)]); print(y)
(y * torch.arange(4.)).sum().backward(); print(x.grad, x.grad.dtype)
z = torch.stack([x, torch.tensor([3, 4])], axis=1); print(z); z.sum().backward(); print(x.grad)
""",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_as_torch(name):
    assert printed(gradviz, PROGRAMS[name]) == printed(torch, PROGRAMS[name])
