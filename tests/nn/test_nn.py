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


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_gradient_identical_to_torch(dtype):
    """ReLU's gradient (threshold_backward) is g where the output is > 0 or nan, +0 elsewhere, bit
    for bit with PyTorch: nan and ∞ gradients, -0 outputs, inputs by rows and by columns."""
    real = pytest.importorskip("torch")
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40]
    x, g = (np.array(v, dtype) for v in np.meshgrid(special, special + [-2.5, 3.5]))
    rng = np.random.default_rng(4)
    wide = rng.standard_normal((70, 33)).astype(dtype)
    for xs, gs in [(x, g), (wide, rng.standard_normal(wide.shape).astype(dtype)), (x.T, g.T), (x, g.T.copy().T)]:
        got = torch.tensor(xs, requires_grad=True)
        want = real.tensor(xs, requires_grad=True)
        got.relu().backward(torch.tensor(gs))
        want.relu().backward(real.tensor(gs))
        assert got.grad.numpy().tobytes() == want.grad.numpy().tobytes()
        assert got.relu().detach().numpy().tobytes() == want.relu().detach().numpy().tobytes()


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


# --- the next tier, without PyTorch (tests/test_torch_parity.py compares each with PyTorch) ----------

def test_cross_entropy_is_nll_of_log_softmax_by_hand():
    x = torch.tensor([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([0, 1])
    loss = F.cross_entropy(x, t)
    a = x.detach().numpy()
    logp = a - np.log(np.exp(a).sum(1, keepdims=True))
    assert loss.item() == pytest.approx(-(logp[0, 0] + logp[1, 1]) / 2, rel=1e-12)
    assert names(loss.grad_fn) == ("NllLossBackward0", ["LogSoftmaxBackward0"])
    loss.backward()
    expected = (np.exp(logp) - np.eye(3)[[0, 1]]) / 2        # (softmax − one-hot) / batch
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    # ignore_index: that row counts for nothing, not even in the mean's denominator
    assert F.cross_entropy(x, torch.tensor([0, -100])).item() == pytest.approx(-logp[0, 0], rel=1e-12)
    w = torch.tensor([2.0, 1.0, 1.0], dtype=torch.float64)
    assert F.nll_loss(torch.tensor(logp), t, weight=w).item() == pytest.approx(
        -(2 * logp[0, 0] + logp[1, 1]) / 3, rel=1e-12)


def test_binary_cross_entropy_by_hand():
    p = torch.tensor([0.9, 0.2], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.0, 0.0], dtype=torch.float64)
    loss = nn.BCELoss()(p, y)
    assert loss.item() == pytest.approx(-(np.log(0.9) + np.log(0.8)) / 2, rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(p.grad.numpy(), [(0.9 - 1) / (0.9 * 0.1) / 2, 0.2 / (0.2 * 0.8) / 2], rtol=1e-12)
    z = torch.tensor([2.0, -1.0], dtype=torch.float64, requires_grad=True)
    loss = nn.BCEWithLogitsLoss()(z, y)
    sig = 1 / (1 + np.exp(-np.array([2.0, -1.0])))
    assert loss.item() == pytest.approx(-(np.log(sig[0]) + np.log(1 - sig[1])) / 2, rel=1e-12)
    assert loss.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    loss.backward()
    np.testing.assert_allclose(z.grad.numpy(), (sig - [1.0, 0.0]) / 2, rtol=1e-12)
    assert F.binary_cross_entropy_with_logits(torch.tensor([100.0]), torch.tensor([1.0])).item() < 1e-40   # no overflow


def test_dropout_masks_are_seeded_and_scale_the_kept():
    torch.manual_seed(0)
    a = nn.Dropout(0.25)(torch.ones(1000))
    torch.manual_seed(0)
    b = nn.Dropout(0.25)(torch.ones(1000))
    assert torch.equal(a, b)
    kept = a[a > 0]
    assert set(kept.tolist()) == {float(np.float32(1) / np.float32(0.75))}
    assert 0.2 < 1 - kept.numel() / 1000 < 0.3
    d = nn.Dropout(0.5).eval()
    x = torch.ones(3)
    assert d(x) is x


def test_module_list_registers_its_modules():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 1)])
    ml.append(nn.ReLU())
    assert len(ml) == 3 and isinstance(ml[-1], nn.ReLU)
    assert [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU()])) == "ModuleList(\n  (0-1): 2 x ReLU()\n)"


def test_embedding_adds_the_gradients_of_repeated_rows():
    e = nn.Embedding(4, 2, padding_idx=0)
    assert e.weight[0].tolist() == [0.0, 0.0]
    out = e(torch.tensor([1, 3, 1, 0]))
    assert out.grad_fn.name() == "EmbeddingBackward0"
    out.sum().backward()
    assert e.weight.grad.tolist() == [[0, 0], [2, 2], [0, 0], [1, 1]]


def test_batch_norm_normalises_each_feature_and_tracks_running_stats():
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    x = torch.randn(50, 3, dtype=torch.float64) * 4 + 2
    bn.double()
    y = bn(x)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    np.testing.assert_allclose(y.detach().numpy().mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(y.detach().numpy().var(0), 1, rtol=1e-3)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * x.numpy().mean(0), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    z = bn(x)
    expected = (x.numpy() - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(z.detach().numpy(), expected, rtol=1e-12)


def test_one_hot_multinomial_keepdims_jacobian():
    assert F.one_hot(torch.tensor([2, 0])).tolist() == [[0, 0, 1], [1, 0, 0]]
    torch.manual_seed(1)
    a = torch.multinomial(torch.tensor([0.0, 1.0, 3.0]), 2)
    assert sorted(a.tolist()) == [1, 2]                 # never the class of weight 0
    g = torch.Generator().manual_seed(5)
    draws = torch.multinomial(torch.tensor([1.0, 3.0]), 4000, replacement=True, generator=g)
    assert 0.7 < draws.float().mean().item() < 0.8      # P(class 1) = 3/4
    x = torch.arange(6.0).view(2, 3)
    assert x.sum(1, keepdims=True).shape == (2, 1) and torch.max(x, 0, keepdims=True).values.shape == (1, 3)
    J = torch.autograd.functional.jacobian(lambda v: v ** 2, torch.tensor([1.0, 2.0]))
    assert J.tolist() == [[2.0, 0.0], [0.0, 4.0]]


def test_saved_tensors_and_one_node_for_split():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x ** 2
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_exponent == 2
    e = x.exp()
    assert e.grad_fn._saved_result is not e and torch.equal(e.grad_fn._saved_result, e)
    e.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        e.grad_fn._saved_result
    a, b = x.split(2)
    assert a.grad_fn is b.grad_fn and a.grad_fn.name() == "SplitBackward0"
    z = a * 2 + b
    assert z.grad_fn.next_functions[1] == (b.grad_fn, 1)
    x.grad = None
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 1.0, 1.0]


def test_adam_first_step_is_lr_times_the_sign():
    w = nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [0.9, -1.9], rtol=1e-6)   # m̂/√v̂ = sign(g) at step 1
    assert opt.state[w]["step"].item() == 1.0
