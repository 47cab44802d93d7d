"""gradviz.nn and gradviz.optim: registration, reprs, the nodes Linear records, losses and SGD steps by hand."""

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradviz as torch
from gradviz import nn, optim
from gradviz.nn import functional as F


def names(fn):
    """The node and its inputs' nodes, by name (None for an input that needs no grad)."""
    return type(fn).__name__, [type(f).__name__ if f is not None else None for f, _ in fn.next_functions]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 1)
        self.plain = torch.ones(2)   # a tensor that is not a Parameter: not registered

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# --- Parameter ----------------------------------------------------------------------------------

def test_parameter_is_a_leaf_that_requires_grad_and_shares_storage():
    t = torch.zeros(2)
    p = nn.Parameter(t)
    assert isinstance(p, torch.Tensor) and p.is_leaf and p.requires_grad and p.grad_fn is None
    t[0] = 5.0
    assert p.tolist() == [5.0, 0.0]
    assert repr(p) == "Parameter containing:\ntensor([5., 0.], requires_grad=True)"
    assert repr(nn.Parameter(torch.ones(1), requires_grad=False)) == "Parameter containing:\ntensor([1.])"
    assert type(p * 2) is torch.Tensor and type(p.data) is torch.Tensor and type(p.detach()) is torch.Tensor
    assert f"{nn.Parameter(torch.tensor(2.0))}".startswith("Parameter containing:")


def test_parameter_of_integers_cannot_require_grad():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        nn.Parameter(torch.tensor([1, 2]))


# --- Module -------------------------------------------------------------------------------------

def test_attribute_assignment_registers_parameters_and_modules_in_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert list(net.modules())[0] is net and list(net.children())[0] is net.fc1
    assert sum(p.numel() for p in net.parameters()) == 1 + 12 + 4 + 4 + 1
    assert list(net.state_dict()) == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2 and len(list(seq.modules())) == 3


def test_module_errors_are_pytorchs():
    class NoInit(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"cannot assign module before Module.__init__\(\) call"):
        NoInit()
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(1)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        nn.Linear(1, 1).nothing
    with pytest.raises(TypeError, match=r"cannot assign '(torch|gradviz).FloatTensor' as parameter 'weight'"):
        nn.Linear(1, 1).weight = torch.ones(1, 1)


def test_reprs():
    assert repr(nn.Linear(3, 2)) == "Linear(in_features=3, out_features=2, bias=True)"
    assert repr(nn.Linear(3, 2, bias=False)) == "Linear(in_features=3, out_features=2, bias=False)"
    assert [repr(m) for m in (nn.ReLU(), nn.ReLU(inplace=True), nn.Sigmoid(), nn.MSELoss(), nn.Softmax(dim=1))] == \
        ["ReLU()", "ReLU(inplace=True)", "Sigmoid()", "MSELoss()", "Softmax(dim=1)"]
    seq = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    assert repr(seq) == ("Sequential(\n"
                         "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                         "  (1): Sequential(\n"
                         "    (0): ReLU()\n"
                         "    (1): Linear(in_features=3, out_features=1, bias=True)\n"
                         "  )\n"
                         ")")
    assert repr(nn.Sequential()) == "Sequential()"
    assert repr(type(nn.Linear(1, 1))) == "<class 'gradviz.nn.modules.linear.Linear'>"


def test_sequential_indexing_and_slicing():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[-1], nn.Linear) and len(seq) == 3
    assert [n for n, _ in seq[1:].named_children()] == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]


def test_train_eval_requires_grad_and_zero_grad():
    net = Net()
    assert net.training and net.eval() is net and not net.fc1.training
    assert net.train().fc1.training
    net(torch.ones(2, 3)).sum().backward()
    assert net.fc1.weight.grad is not None
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())      # set to None, as PyTorch 2 does
    net(torch.ones(2, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in net.parameters())
    assert not net.requires_grad_(False).fc2.weight.requires_grad


def test_load_state_dict_copies_values():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    assert repr(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"
    assert b.weight.tolist() == a.weight.tolist() and b.weight is not a.weight


# --- Linear -------------------------------------------------------------------------------------

def test_linear_initial_values_follow_kaiming_uniform_with_sqrt5():
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    torch.manual_seed(0)
    bound = math.sqrt(3.0) * (math.sqrt(2.0 / (1 + 5)) / math.sqrt(3))   # = 1/√3
    w = torch.empty(2, 3).uniform_(-bound, bound)
    b = torch.empty(2).uniform_(-1 / math.sqrt(3), 1 / math.sqrt(3))
    assert lin.weight.tolist() == w.tolist() and lin.bias.tolist() == b.tolist()


@pytest.mark.parametrize("shape, bias, expected", [
    ((4, 3), True, ("AddmmBackward0", ["AccumulateGrad", "AccumulateGrad", "TBackward0"])),
    ((3,), True, ("ViewBackward0", ["AddmmBackward0"])),
    ((2, 4, 3), True, ("ViewBackward0", ["AddmmBackward0"])),
    ((4, 3), False, ("MmBackward0", ["AccumulateGrad", "TBackward0"])),
    ((3,), False, ("SqueezeBackward4", ["MmBackward0"])),
    ((2, 4, 3), False, ("UnsafeViewBackward0", ["MmBackward0"])),
])
def test_linear_records_pytorchs_nodes(shape, bias, expected):
    x = torch.randn(*shape, requires_grad=True)
    lin = nn.Linear(3, 2, bias=bias)
    y = lin(x)
    assert names(y.grad_fn) == expected and y.shape == shape[:-1] + (2,)
    y.sum().backward()
    ones = np.ones(shape[:-1] + (2,), np.float32)
    np.testing.assert_allclose(x.grad.numpy(), ones @ lin.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), ones.reshape(-1, 2).T @ x.detach().numpy().reshape(-1, 3),
                               rtol=1e-5)


def test_linear_shape_error_names_the_matrices():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x5 and 3x2\)"):
        nn.Linear(3, 2)(torch.ones(2, 3, 5))


# --- functional and losses ----------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_value_and_gradient(reduction):
    a = torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    b = torch.tensor([[0.5, 2.0], [1.0, 1.0]])
    loss = nn.MSELoss(reduction=reduction)(a, b)
    sq = (a.detach().numpy() - b.numpy()) ** 2
    want = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), want)
    assert names(loss.grad_fn) == ("MseLossBackward0", ["AccumulateGrad", None])
    loss.sum().backward()
    scale = 2 / 4 if reduction == "mean" else 2
    np.testing.assert_allclose(a.grad.numpy(), scale * (a.detach().numpy() - b.numpy()))


def test_mse_loss_broadcasts_with_pytorchs_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = F.mse_loss(torch.ones(3, 2, requires_grad=True), torch.zeros(3, 1))
    assert loss.item() == 1.0 and "Using a target size (gradviz.Size([3, 1]))" in str(caught[0].message)
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.mse_loss(torch.ones(2), torch.ones(2), reduction="avg")


def test_l1_loss_and_activations():
    a = torch.tensor([1.0, -2.0])
    assert nn.L1Loss()(a, torch.zeros(2)).item() == 1.5
    assert F.relu(a).tolist() == [1.0, 0.0] and nn.ReLU()(a).tolist() == [1.0, 0.0]
    assert nn.Tanh()(a).grad_fn is None and nn.Sigmoid()(a).tolist() == a.sigmoid().tolist()
    np.testing.assert_allclose(F.softmax(a, dim=0).sum().item(), 1.0, rtol=1e-6)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(a)


# --- optim --------------------------------------------------------------------------------------

def test_sgd_step_by_hand():
    w = nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.01)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    # by hand, in double: g = 2w + wd·w, b = g then b = 0.9 b + g, w -= lr·b
    v, buf = np.array([1.0, -2.0]), None
    for _ in range(2):
        g = 2 * v + 0.01 * v
        buf = g if buf is None else 0.9 * buf + g
        v = v - 0.1 * buf
    np.testing.assert_allclose(w.detach().numpy(), v, rtol=1e-6)
    assert set(opt.state[w]) == {"momentum_buffer"}


def test_sgd_skips_parameters_without_grad_and_zero_grad_sets_none():
    a, b = nn.Parameter(torch.ones(1)), nn.Parameter(torch.ones(1))
    opt = optim.SGD([a, b], lr=1.0)
    (a * 3).sum().backward()
    opt.step()
    assert a.tolist() == [-2.0] and b.tolist() == [1.0]
    opt.zero_grad()
    assert a.grad is None


def test_sgd_repr_and_errors():
    opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)
    assert repr(opt).splitlines()[:3] == ["SGD (", "Parameter Group 0", "    dampening: 0"]
    assert "    lr: 0.1" in repr(opt).splitlines() and repr(opt).endswith(")")
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([nn.Parameter(torch.ones(1))], lr=-1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([torch.ones(1, requires_grad=True) * 2], lr=0.1)
    assert optim.SGD([nn.Parameter(torch.ones(1))]).param_groups[0]["lr"] == 0.001   # lr has a default in 2.x


def test_a_linear_model_learns():
    torch.manual_seed(0)
    X = torch.randn(64, 2)
    y = X @ torch.tensor([[2.0], [-1.0]]) + 0.5
    model, loss_fn = nn.Linear(2, 1), nn.MSELoss()
    opt = optim.SGD(model.parameters(), lr=0.1)
    for _ in range(200):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-6
    np.testing.assert_allclose(model.weight.detach().numpy(), [[2.0, -1.0]], atol=1e-3)


# --- the package --------------------------------------------------------------------------------

def test_nn_and_optim_are_submodules_reachable_every_way():
    assert sys.modules["gradviz.nn"] is nn and sys.modules["gradviz.nn.functional"] is F
    assert torch.nn is nn and torch.optim is optim and nn.functional is F
    code = ("import sys; import gradviz as torch; sys.modules['torch'] = torch\n"
            "[sys.modules.__setitem__('torch' + k[7:], v) for k, v in list(sys.modules.items()) if k.startswith('gradviz.')]\n"
            "import torch.nn as nn; import torch.nn.functional as F; from torch import optim\n"
            "assert nn is torch.nn and F is nn.functional and optim is torch.optim\n"
            "assert isinstance(nn.Linear(1, 1).weight, torch.nn.Parameter)")
    subprocess.run([sys.executable, "-c", code], check=True)
