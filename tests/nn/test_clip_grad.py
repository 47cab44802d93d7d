"""gradviz.nn.utils.clip_grad against PyTorch 2.13: the total norm returned (value, dtype, no grad),
the clipped gradients to the last bit for each norm type, clip_grad_value_, the empty and
non-finite cases with PyTorch's warning and error, mixed dtypes, and a clipped training loop."""

import pytest

import gradviz
from parity import printed


def test_clip_grad_norm_scales_down_only():
    w = gradviz.nn.Parameter(gradviz.tensor([3.0, 4.0], dtype=gradviz.float64))
    w.grad = gradviz.tensor([3.0, 4.0], dtype=gradviz.float64)
    total = gradviz.nn.utils.clip_grad_norm_(w, 10.0)
    assert total.item() == 5.0 and not total.requires_grad and w.grad.tolist() == [3.0, 4.0]
    gradviz.nn.utils.clip_grad_value_([w], 3.5)
    assert w.grad.tolist() == [3.0, 3.5]


def test_error_if_nonfinite():
    w = gradviz.nn.Parameter(gradviz.ones(2))
    w.grad = gradviz.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        gradviz.nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)


CLIPPING = r"""
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
x = torch.randn(5, 3)
for max_norm, nt in [(0.5, 2), (10.0, 2), (0.3, 1), (0.2, float('inf')), (0.1, 3.0), (0.5, 'inf')]:
    m.zero_grad()
    (m(x) ** 2).sum().backward()
    r = torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm, norm_type=nt)
    print(max_norm, nt, r, r.dtype, r.requires_grad, [p.grad for p in m.parameters()])
m.zero_grad(); (m(x) ** 2).sum().backward()
torch.nn.utils.clip_grad_value_(m.parameters(), 0.1)
print([p.grad for p in m.parameters()])
print(torch.nn.utils.clip_grad_norm_(m[0].weight, 0.01), m[0].weight.grad)
print(torch.nn.utils.clip_grad_norm_([], 1.0))
print(torch.nn.utils.clip_grad_norm_((p for p in []), 1.0))
w = torch.nn.Parameter(torch.ones(2)); w.grad = torch.tensor([float('inf'), 1.0])
print(torch.nn.utils.clip_grad_norm_([w], 1.0), w.grad)
w.grad = torch.tensor([float('nan'), 1.0])
try:
    torch.nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print(e)
print(torch.nn.utils.clip_grad_norm([w], 1.0))
d = torch.nn.Parameter(torch.ones(2, dtype=torch.float64)); d.grad = torch.tensor([3.0, 4.0], dtype=torch.float64)
w.grad = torch.tensor([1.0, 2.0])
print(torch.nn.utils.clip_grad_norm_([w, d], 2.0, foreach=False), w.grad, d.grad)
print(torch.nn.utils.get_total_norm([torch.ones(3), torch.ones(2)]))
from torch.nn.utils import clip_grad_norm_
from torch.nn.utils.clip_grad import clip_grad_value_
print(clip_grad_norm_, clip_grad_value_.__name__)
"""

TRAINING = """
torch.manual_seed(3)
m = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
x, y = torch.randn(32, 4), torch.randn(32, 1)
for step in range(15):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(m(x), y)
    loss.backward()
    n = torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.25)
    opt.step()
    print(step, loss.item(), n.item())
print(m[0].weight.sum().item())
"""


@pytest.mark.torch
@pytest.mark.parametrize("code", [CLIPPING, TRAINING], ids=["clipping", "a clipped training loop"])
def test_prints_what_torch_prints(code):
    torch = pytest.importorskip("torch")
    assert printed(gradviz, code) == printed(torch, code)
