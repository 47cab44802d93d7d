"""Parity with real PyTorch: the same programs run in both libraries must agree on everything a
student sees -- values, gradients, reprs, grad_fn names, the next_functions graph, random numbers,
printed tutorial output and error messages.  Skipped when torch is not installed."""

import contextlib
import io
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradviz

from strategies import SETTINGS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

LIBS = {"torch": torch, "gradviz": gradviz}


def as_torch_text(text):
    """gradviz names its own module where PyTorch names torch: read one as the other."""
    return re.sub(r"\bgradviz(?=\.|::)", "torch", text)


# --- random expression graphs -------------------------------------------------------------------

# Each step takes the library and tensors from the pool (all of shape (n, m)) and returns a new
# (n, m) tensor, through the public API only, so the same program runs in both libraries.
UNARY = [
    lambda L, a: -a,
    lambda L, a: a.exp() * 0.1,
    lambda L, a: a.tanh(),
    lambda L, a: a.sigmoid(),
    lambda L, a: L.sin(a) + a.cos(),
    lambda L, a: a.relu(),
    lambda L, a: a.abs(),
    lambda L, a: a * 2.5,
    lambda L, a: 3 - a,
    lambda L, a: a / 4,
    lambda L, a: a ** 2,
    lambda L, a: a ** 3 * 0.1,
    lambda L, a: (a * a + 1).sqrt(),
    lambda L, a: (a * a + 1).log(),
    lambda L, a: 1 / (a * a + 1),
    lambda L, a: 2 ** a,
    lambda L, a: a.clamp(-0.5, 0.5),
    lambda L, a: a.clamp(min=0.1),
    lambda L, a: a + a.sum(1, keepdim=True),
    lambda L, a: a * a.mean(),
    lambda L, a: a - a.mean(dim=0),
    lambda L, a: a.unsqueeze(0).squeeze(0),
    lambda L, a: a.reshape(-1).view(a.shape),
    lambda L, a: a.t().t(),
    lambda L, a: a.max(dim=1, keepdim=True).values * a,
    lambda L, a: a.min(0)[0] + a,
    lambda L, a: a * a.max(),
    lambda L, a: a.transpose(0, 1).transpose(1, 0),
    lambda L, a: a.expand(2, *a.shape).sum(0),
    lambda L, a: L.cat([a[:1], a[1:]], dim=0),
    lambda L, a: a[:, None, :].squeeze(1),
    lambda L, a: a.norm() + a,
    lambda L, a: a.std() * a,
    lambda L, a: a.clone(),
    lambda L, a: (a * 1).add_(2).mul_(a),
    lambda L, a: _setitem(a * 1, 0, 5.0),
    lambda L, a: _setitem(a.clone(), (slice(None), 0), a[:, 0] * 2),
    lambda L, a: a.round() + a.floor() * a.sign() + a,
    lambda L, a: a.norm(p=1) * a + a.norm(dim=1, keepdim=True),
    lambda L, a: a.var(0) + a.std(dim=1, keepdim=True),
    lambda L, a: a[[0, 0]].sum(0) + a,
    lambda L, a: a[a > 0].sum() + a,
    lambda L, a: a.diag().sum() * a if a.shape[0] == a.shape[1] else a.exp(),
    lambda L, a: a.abs().log1p() + a.expm1() * 0.1 + (a.abs() + 1).rsqrt() + a.tanh().tan(),
    lambda L, a: a.sinh() * 0.1 + a.cosh() * 0.1 + (a.abs() + 1).log2() + (a.abs() + 1).log10(),
    lambda L, a: a.cumsum(1) + a.logsumexp(0),
    lambda L, a: a.masked_fill(a > 0, 0.5) + a.flip(0) + a.flip(0, 1),
    lambda L, a: a.tril() + a.triu(1) * 2 if a.shape[0] > 1 else a.tril(),
    lambda L, a: a.gather(1, L.zeros(a.shape[0], 1, dtype=L.int64)) * a + a.index_select(0, L.tensor([0] * a.shape[0])),
    lambda L, a: a.sort(1).values + a.sort(0, descending=True)[0],
    lambda L, a: a.softmax(dim=1),
    lambda L, a: L.log_softmax(a, 0),
    lambda L, a: a * a.prod() if a.numel() < 5 else a.prod(0) * a,
    lambda L, a: a.prod(1, keepdim=True) + a,
    lambda L, a: a.repeat(2, 1)[:a.shape[0]] + a.repeat(1, 1, 2).sum(0)[:, :a.shape[1]],
    lambda L, a: a.double().float() if a.dtype == L.float32 else a * 1,
]
BINARY = [
    lambda L, a, b: a + b,
    lambda L, a, b: a - b,
    lambda L, a, b: a * b,
    lambda L, a, b: a / (b * b + 1),
    lambda L, a, b: L.where(a > b, a, b),
    lambda L, a, b: L.stack([a, b]).sum(0),
    lambda L, a, b: L.cat([a, b], 1)[:, :a.shape[1]] * 2,
    lambda L, a, b: (a @ b.t()) @ a * 0.1,
    lambda L, a, b: a.add(b, alpha=2),
    lambda L, a, b: a * b[0],
    lambda L, a, b: L.maximum(a, b) + L.min(a, b * 2),
    lambda L, a, b: L.outer(b[:, 0], a[0]) * 0.5 + a,
    lambda L, a, b: (a * b).sum(dim=1, keepdim=True) + a,
    lambda L, a, b: a ** (b.abs() * 0.5) if False else (a * a + 1) ** (b * 0.5),
]


def _setitem(t, key, value):
    t[key] = value
    return t


@st.composite
def programs(draw):
    n, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(["float32", "float64"]))
    leaves = draw(st.integers(1, 3))
    values = [draw(st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=n * m, max_size=n * m))
              for _ in range(leaves)]
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, 99)), 0))
        else:
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)), draw(st.integers(0, 99)),
                          draw(st.integers(0, 99))))
    return (n, m), dtype, values, steps


def build_program(L, program):
    """The program's leaves, the tensors its steps made, and a loss weighting the last one (1, 2, 3...)."""
    shape, dtype, values, steps = program
    leaves = [L.tensor(np.array(v).reshape(shape), dtype=getattr(L, dtype), requires_grad=True) for v in values]
    pool = list(leaves)
    for kind, which, i, j in steps:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        pool.append(UNARY[which](L, a) if kind == "u" else BINARY[which](L, a, b))
    loss = (pool[-1] * L.arange(1, pool[-1].numel() + 1, dtype=getattr(L, dtype)).reshape(shape)).sum()
    return leaves, pool[len(leaves):], loss


def run_program(L, program):
    leaves, made, loss = build_program(L, program)
    loss.backward()
    return leaves, made, loss


def structure(root, leaves):
    """The graph behind ``root`` as plain data: node names in DFS order and their edges."""
    ids, out, stack = {}, [], [root]
    leaf_index = {id(t): k for k, t in enumerate(leaves)}
    while stack:
        node = stack.pop()
        if node is None or id(node) in ids:
            continue
        ids[id(node)] = len(ids)
        if type(node).__name__ == "AccumulateGrad":
            out.append(("AccumulateGrad", leaf_index.get(id(node.variable))))
            continue
        out.append((type(node).__name__, [(type(fn).__name__ if fn is not None else None, k)
                                  for fn, k in node.next_functions]))
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return out


@SETTINGS
@given(programs())
def test_random_graphs_agree(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_leaves, t_outs, t_loss = run_program(torch, program)
        g_leaves, g_outs, g_loss = run_program(gradviz, program)
    tol = dict(rtol=1e-4, atol=1e-5) if program[1] == "float32" else dict(rtol=1e-9, atol=1e-12)
    for t, g in zip(t_outs + [t_loss], g_outs + [g_loss]):
        assert as_torch_text(repr(g.dtype)) == repr(t.dtype) and tuple(g.shape) == tuple(t.shape)
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), **tol)
        assert (g.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:  # (CopySlices.name() is "torch::autograd::CopySlices" in PyTorch)
            assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__
    for t, g in zip(t_leaves, g_leaves):
        if t.grad is None:
            assert g.grad is None
        else:
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), **tol)
    assert structure(g_loss.grad_fn, g_leaves) == structure(t_loss.grad_fn, t_leaves)
    if program[1] == "float64":  # float32 can differ in the last bit, which may show at 4 decimals
        assert as_torch_text(repr(g_loss)) == repr(t_loss)


# --- reprs of a fixed table (also recorded in tests/golden/repr) -------------------------------

def test_golden_files_still_match_torch():
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).parent / "golden"))
    from record_repr import parse, run_case
    for path in sorted((pathlib.Path(__file__).parent / "golden" / "repr").glob("*.txt")):
        for code, expected in parse(path):
            assert run_case(torch, code) == expected, code


def test_random_reprs_agree():
    """Reprs of many random tensors: magnitudes from 1e-9 to 1e12, ints, bools, inf and nan, 0-d to 3-d."""
    rng = np.random.default_rng(1)
    for _ in range(400):
        shape = tuple(rng.integers(1, 5, size=rng.integers(0, 4)))
        a = rng.standard_normal(shape) * 10.0 ** rng.integers(-9, 12)
        kind = rng.integers(0, 5)
        if kind == 1:
            a = np.round(a)
        elif kind == 2:
            a = np.round(a).clip(-1e15, 1e15).astype(np.int64)
        elif kind == 3 and a.size:
            a.flat[0] = [np.inf, -np.inf, np.nan, 0.0][rng.integers(0, 4)]
        elif kind == 4:
            a = a > 0
        dtype = rng.choice(["float32", "float64", "float16"]) if a.dtype.kind == "f" else None
        grad = dtype is not None and rng.random() < 0.3
        reprs = []
        for L in (torch, gradviz):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = L.tensor(a, dtype=getattr(L, dtype) if dtype else None)
            reprs.append(repr(t.requires_grad_() if grad else t))
        assert as_torch_text(reprs[1]) == reprs[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_are_bit_identical(dtype):
    """Sums and means in PyTorch's summation order: ``loss.item()`` prints the same digits."""
    rng = np.random.default_rng(2)
    shapes = [(n,) for n in (1, 3, 5, 7, 8, 9, 17, 33, 100, 1000, 4099)] + \
             [(a, b) for a in (1, 3, 16, 33) for b in (1, 3, 8, 9, 33, 64)] + [(2, 3, 4), (3, 5, 40)]
    for shape in shapes:
        x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
        for dim in [None] + list(range(len(shape))):
            results = []
            for L in (torch, gradviz):
                t = L.tensor(x)
                results.append([r.numpy().tobytes() for r in
                                ((t.sum(), t.mean()) if dim is None else (t.sum(dim), t.mean(dim, keepdim=True)))])
            assert results[0] == results[1], (shape, dim)
        grads = []
        for L in (torch, gradviz):  # broadcasting's gradient is a sum too
            b = L.zeros(shape[-1:], dtype=getattr(L, dtype), requires_grad=True)
            (L.tensor(x) * b * L.tensor(x)).backward(L.tensor(x))
            grads.append(b.grad.numpy().tobytes())
        assert grads[0] == grads[1], shape


# --- random numbers -----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 32 + 7])
@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 33, 100, 1000])
def test_random_numbers_are_bit_identical(seed, n):
    for dtype in ("float32", "float64"):
        outs = {}
        for name, L in LIBS.items():
            L.manual_seed(seed)
            dt = getattr(L, dtype)
            outs[name] = [L.rand(n, dtype=dt), L.randn(n, dtype=dt), L.randn(n, dtype=dt),
                          L.empty(n, dtype=dt).uniform_(-2, 3), L.empty(n, dtype=dt).normal_(1, 2),
                          L.randint(-5, 5, (n,)), L.randperm(n), L.rand(2, dtype=dt),
                          L.linspace(-1, 1, n, dtype=dt), L.arange(0, n / 7, 0.1, dtype=dt)]
        for t, g in zip(outs["torch"], outs["gradviz"]):
            assert g.numpy().tobytes() == t.numpy().tobytes()


def test_generator_state_layout_matches():
    torch.manual_seed(3)
    gradviz.manual_seed(3)
    torch.randn(5, dtype=torch.float64)
    gradviz.randn(5, dtype=gradviz.float64)   # leaves a cached second normal sample
    assert gradviz.get_rng_state().numpy().tobytes() == torch.get_rng_state().numpy().tobytes()


# --- tutorial code, printed -----------------------------------------------------------------------

TUTORIALS = [
    """x = torch.ones(2, 2, requires_grad=True)
print(x)
y = x + 2
print(y)
print(y.grad_fn)
z = y * y * 3
out = z.mean()
print(z, out)
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)
out.backward()
print(x.grad)
""",
    """torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad)
with torch.no_grad():
    print((x ** 2).requires_grad)
print(x.detach().requires_grad, x.eq(x.detach()).all())
""",
    """x = Variable(torch.ones(2, 2), requires_grad=True)
print(x, x.data, x.grad, x.grad_fn)
y = x + 2
print(y.grad_fn, y.grad_fn.next_functions)
print(y.grad_fn.next_functions[0][0].variable)
out = (y * y * 3).mean()
out.backward()
print(x.grad)
print(type(x), type(x.data), x.type(), x.data.type(), type(y.grad_fn))
""",
    """x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
print('Gradient function for z =', z.grad_fn)
loss = ((z - y) ** 2).mean()
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad, b.grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nSecond call\\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nCall after zeroing gradients\\n{inp.grad}")
""",
    """w = torch.tensor([1.0], requires_grad=True)
for epoch in range(3):
    for x_val, y_val in zip([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]):
        l = (x_val * w - y_val) ** 2
        l.backward()
        print("\\tgrad: ", x_val, y_val, w.grad.item())
        w.data = w.data - 0.01 * w.grad.data
        w.grad.data.zero_()
    print("progress:", epoch, l.data[0], l.item(), l)
""",
    """import math
a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
b = torch.sin(a)
c = 2 * b
d = c + 1
out = d.sum()
print(a, b, c, d, out, sep="\\n")
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
out.backward()
print(a.grad)
""",
    """torch.manual_seed(1)
x = torch.arange(4.0, requires_grad=True)
y = 2 * torch.dot(x, x)
y.backward()
print(y, x.grad, x.grad == 4 * x)
x.grad.zero_()
u = (x * x).detach()
z = u * x
z.sum().backward()
print(x.grad == u)
a = torch.randn(size=(), requires_grad=True)
d = a * 2
while d.norm() < 1000:
    d = d * 2
d.backward()
print(a.grad == d / a, a, d)
""",
    """class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input

x = torch.tensor([[-1., 2.], [3., -4.]], requires_grad=True)
y = MyReLU.apply(x * 2)
print(y, y.grad_fn, type(y.grad_fn).__name__, y.grad_fn.next_functions)
y.sum().backward()
print(x.grad)
y.sum().backward()
""",
    """torch.manual_seed(42)
X = torch.randn(32, 2)
Y = (X[:, :1] * X[:, 1:]).tanh()
W1 = torch.randn(2, 16, requires_grad=True); b1 = torch.zeros(16, requires_grad=True)
W2 = torch.randn(16, 1, requires_grad=True); b2 = torch.zeros(1, requires_grad=True)
for step in range(3):
    loss = (((X @ W1 + b1).tanh() @ W2 + b2 - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in (W1, b1, W2, b2):
            p -= 0.1 * p.grad
            p.grad.zero_()
    print(step, loss)
print(W2.t())
""",    """nn, optim = torch.nn, torch.optim
torch.manual_seed(0)
X = torch.randn(20, 3)
y = X @ torch.tensor([[2.0], [-3.4], [1.5]]) + 4.2 + 0.01 * torch.randn(20, 1)
model = nn.Linear(3, 1)
print(model, model.weight, model.bias, list(model.parameters()), sep="\\n")
loss_fn = nn.MSELoss()
optimizer = optim.SGD(model.parameters(), lr=0.05)
print(optimizer)
for epoch in range(5):
    optimizer.zero_grad()
    pred = model(X)
    loss = loss_fn(pred, y)
    loss.backward()
    print(epoch, loss, model.weight.grad, model.bias.grad)
    optimizer.step()
print(model.weight, model.bias, pred[:2], sep="\\n")
print(pred.grad_fn, pred.grad_fn.next_functions, pred.grad_fn.next_functions[2][0].next_functions)
print(loss.grad_fn, loss.grad_fn.next_functions)
optimizer.zero_grad()
print(model.weight.grad, model.state_dict())
""",
    """nn, F = torch.nn, torch.nn.functional
torch.manual_seed(42)
X = torch.randn(32, 2)
Y = (X[:, :1] * X[:, 1:] > 0).float()
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
print(model)
print([n for n, _ in model.named_parameters()], sum(p.numel() for p in model.parameters()))
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9, weight_decay=1e-3, nesterov=True)
for step in range(6):
    opt.zero_grad()
    out = model(X)
    loss = F.mse_loss(out, Y)
    loss.backward()
    opt.step()
    print(step, loss)
print(model[4].weight.grad, model[4].bias, out[:3], sep="\\n")
print(out.grad_fn, out.grad_fn.next_functions[0][0], opt.state[model[4].bias])

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.scale = nn.Parameter(torch.ones(2))

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x))) * self.scale

net = Net()
print(net, [(n, tuple(p.shape)) for n, p in net.named_parameters()])
y = net(torch.randn(5, 4))
y.sum().backward()
print(y, net.fc2.weight.grad, net.scale.grad)
net.zero_grad()
print(net.fc2.weight.grad, net(torch.randn(4)), net(torch.randn(2, 3, 4)).grad_fn)
""",
]


# Short programs run line by line, as a notebook would: each block in a fresh scope, an error
# printed (it is part of what is compared) and the next line run.
LINES = {
    'tensor types, .data and .detach': """
x = torch.tensor([[1, 2], [3, 4]])
print(x.type(torch.DoubleTensor))
print(x.type('torch.DoubleTensor'))
print(x.type(torch.float32))
print(x.type())
print(x.double().type())
v = Variable(torch.ones(2), volatile=True)
print(v, v.requires_grad)
y = torch.ones(3, requires_grad=True)
y.data[0] = 5
print(y)
y.data.fill_(2)
print(y, y.data)
print(y.clone().detach(), y.detach().clone())
print(np.array(y.detach()))
print(y.requires_grad_(False), y.requires_grad)
print(x.new_ones(2), x.new_zeros((2, 2)), x.new_tensor([1.5]))
print(torch.ones(2, 3).size()[0], torch.ones(2, 3).shape == (2, 3), torch.Size([2, 3]).numel())
print(torch.ones(2, 2).sum(0).shape, torch.ones(2, 2)[0, 0].item())
print(x.float().mean(), x.float().sum(1), x.max(1), x.argmax(1))
print(x.t(), x.view(4), x.view(-1, 1).shape, x.flatten())
print(torch.arange(6).view(2, 3))
print(torch.zeros(3).uniform_(0, 1).shape)
z = torch.randn(2, 2, requires_grad=True)
print(z.dtype, z.grad, z.is_leaf)
print(torch.tensor(3.0) ** 2, torch.sqrt(torch.tensor(4.0)), torch.tensor([1., 4.]).sqrt())
print(torch.tensor([[1., 2.]]).matmul(torch.tensor([[3.], [4.]])))
print(torch.autograd.Variable)
print(torch.tensor(1.) + 1, 1 + torch.tensor(1.), torch.tensor(2) * 3)
print(x > 2, (x > 2).sum(), (x > 2).float().mean(), x[x > 2])
print(torch.tensor([1, 2, 3]).tolist(), torch.tensor([[1.5]]).tolist())
""",
    'integer, boolean and in-place arithmetic; tensor() from mixed data': """
i = torch.tensor([1, 2, 3]); f = torch.tensor([1.5, -2.0]); m = torch.tensor([True, False])
print(i == None, i != "a", i // 2.5, i % 2.5, f // 2, f % 2, -f % 2, f // 0, f % 0, torch.tensor(-5) // 2)
print(torch.tensor(-5) % 3, torch.tensor(-5.) % 3, 7 // i, torch.remainder(i, 2), torch.fmod(torch.tensor(-5), 3))
print(torch.floor_divide(i, 2), i.div(2, rounding_mode="floor"), (-i).div(2, rounding_mode="trunc"), f.div(4, rounding_mode="trunc"))
print(torch.tensor([1, 2], dtype=torch.int8) * 200, torch.ShortTensor([1]).type(), torch.short, torch.int8)
t = torch.arange(6.); print(t.clamp_(1, 4), t.pow_(2), t.neg_(), t.abs_(), t.sqrt_(), t.floor_(), t.remainder_(3))
s = torch.tensor([1., 4.], requires_grad=True) * 1; s.sqrt_(); s.sum().backward(); print(s)
with torch.inference_mode(): print((s * 2).requires_grad, torch.is_inference_mode_enabled(), torch.is_grad_enabled())
im1, im2 = torch.inference_mode(), torch.inference_mode(False); im1.__enter__(); im2.__enter__(); im2.__exit__(None, None, None); print(torch.is_inference_mode_enabled()); im1.__exit__(None, None, None); print(torch.is_inference_mode_enabled())
z = torch.arange(12.).view(3, 4); print(z.stride(), z.t().stride(1), z[1, 2:].storage_offset(), z.layout, torch.strided)
print(torch.logspace(0, 2, 3), torch.logspace(-1, 1, 5), torch.logspace(0, 3, 4, base=2), torch.logspace(0, 1, 7, dtype=torch.float64))
print(torch.hstack([s, s]), torch.vstack([s, s]), torch.hstack([torch.ones(2, 1), torch.zeros(2, 1)]))
print(torch.tensor(3.).sum(0), torch.tensor(3., requires_grad=True).mean(-1), torch.isfinite(torch.tensor([1., float('inf')])))
print(torch.is_floating_point(s), torch.logical_not(m), torch.logical_and(m, torch.tensor([True, True])))
k = torch.ones(2, 2, requires_grad=True)
print(k.sum(dim=None), k.mean(dim=None), k.sum(()), k.mean(dim=()), k.sum(None, keepdim=True), k.sum(), k.mean())
print(k.select(0, 1), torch.select(k, 1, -1), k.new_empty(2).shape)
print(m ** 2, m * 2, m + m, m & m, m | m, m ^ m, ~m, i & 1, i | 4, i ^ 1, i ** 0.5, i.add(1, alpha=2))
print(torch.tensor(np.float64(2.5)), torch.tensor([np.float64(2.5)]), torch.tensor([np.float32(1.5), 2.0]))
print(torch.tensor([np.int32(1), 2]), torch.tensor(np.int32(2)), torch.tensor([np.float16(1), 2]))
print(torch.tensor([torch.tensor(1), 2.5]), torch.tensor([torch.tensor([1]), torch.tensor([2])]))
print(torch.tensor([True, 2]), torch.tensor([True, 1.5]), torch.tensor(range(3)), torch.tensor([[1, 2], (3, 4)]))
print(torch.tensor([np.array([1., 2.])]), torch.tensor([[1, 2]] * 2, dtype=torch.float64))
""",
    'a first loop, accumulation, retain_grad and small functions': """
w = torch.tensor([0.5], requires_grad=True)
print(w.grad is None)
for i in range(2): loss = (w * 3 - 1) ** 2; loss.backward(); print(i, w.grad, loss)
print(w.data.numpy(), w.grad.numpy())
print(torch.exp(torch.tensor(1.)), torch.log(torch.tensor(10.)), torch.tensor(2.).pow(10))
print(torch.ones(2, 3).numel(), torch.ones(2, 3).element_size(), torch.ones(2, dtype=torch.float64).element_size())
print(torch.tensor([1.0, 2.0]).is_floating_point(), torch.tensor([1]).is_floating_point())
print(torch.get_default_dtype(), torch.ones(1).dtype == torch.float32)
print(torch.tensor([1., 2.]).equal(torch.tensor([1., 2.])), torch.allclose(torch.ones(2), torch.ones(2)))
print(torch.zeros(2, 2).fill_(3.5), torch.empty(2).fill_(1).dtype)
a = torch.ones(2, 2, requires_grad=True); b = a * 2; b.retain_grad(); c = b.sum(); c.backward(); print(b.grad, a.grad)
print(torch.is_tensor(torch.ones(1)), torch.is_tensor([1]))
print(torch.ones(2, 2).unsqueeze(0).shape, torch.ones(1, 2).squeeze(0).shape)
print(torch.stack([torch.ones(2), torch.zeros(2)]), torch.cat((torch.ones(1), torch.zeros(1))))
print(torch.sum(torch.ones(2, 3), dim=1), torch.mean(torch.ones(2, 3), 0), torch.max(torch.tensor([1, 5, 2])))
print(torch.min(torch.tensor([[1, 5], [0, 2]]), dim=1))
""",
    'legacy Variable code': """
loss = (torch.ones(2, requires_grad=True) * 2).sum()
print(loss.data[0])
print(loss[0])
print(loss.creator)
x = Variable(torch.ones(2), requires_grad=True)
print(x.grad.data)
y = x * 2
print(y.grad_fn.next_functions[0][0].variable is x)
print(torch.autograd.Variable(torch.ones(1)).requires_grad)
z = Variable(torch.ones(1), volatile=True)
print(x.size(), x.size(0), x.shape[0])
print(torch.FloatTensor(2, 2).zero_())
print(torch.FloatTensor([[1, 2], [3, 4]]).t())
print(x.grad_fn)
y.backward(torch.FloatTensor([1, 1]))
print(x.grad)
x.grad.data.zero_()
print(x.grad)
print(torch.ones(2).numpy(), torch.ones(2).tolist())
print(torch.mm(torch.ones(2, 3), torch.ones(3, 2)))
print(x.data.norm(), x.norm(), x.norm(p=1) if True else 0)
print(torch.sum(x), torch.mean(x), torch.sum(x, 0))
print(torch.tensor([math.pi]))
print(torch.tensor([1e-3, 1e3]))
print(torch.tensor([100000.]), torch.tensor([1e5, 1.5]))
print(torch.randn(2, 3).shape, torch.rand(4).dtype)
print(x.unsqueeze(0).expand(3, 2).sum(0))
print(torch.max(x, 0))
print(x.dim(), x.nelement(), x.ndimension())
print(torch.ones(2).cuda() if torch.cuda.is_available() else "cpu only")
print(torch.eq(torch.ones(2), torch.ones(2)))
print(torch.zeros(2, 2) + torch.eye(2))
print(torch.ones(2, 2).view(4, 1).view(1, -1))
print(torch.cat([torch.ones(2, 1), torch.zeros(2, 1)], 1))
print(x.grad.data.numpy())
w = Variable(torch.FloatTensor([1.0]), requires_grad=True)
print(w)
l = (w * 2 - 4) ** 2
l.backward()
print(w.grad.data[0], w.grad.item(), l.data[0], l.item())
""",
    'split, chunk and unbind': """
s = torch.arange(10.).reshape(5, 2).requires_grad_()
print(s.split(2), torch.split(s, [1, 4]), s.chunk(2, dim=1), s.chunk(3), torch.chunk(torch.ones(5), 4))
print(s.unbind(1), torch.unbind(s))
a, b = s.chunk(2, 1); (a * 2 + b).sum().backward(); print(s.grad)
a, b = s.chunk(2, 1); y = a * 2 + b; print(y.grad_fn.next_functions, y.grad_fn.next_functions[0][0].next_functions, a.grad_fn is b.grad_fn)
p = (s * 1).split([1, 4]); p[1].sum().backward(); print(p[1].grad_fn.next_functions, s.grad)
u = (s * 1).unbind(); (u[0] * u[4]).sum().backward(); print(s.grad, u[3].grad_fn._saved_dim)
c = (s * 1).chunk(2); c[1].retain_grad(); h = c[1].register_hook(lambda g: g * 10); c[1].backward(torch.ones(2, 2)); print(c[1].grad, s.grad)
w = (s * 1).split(2); w[0].sum().backward(retain_graph=True); w[1].sum().backward(); print(s.grad, w[2].grad_fn._saved_self_sym_sizes)
print(torch.autograd.grad(s.split(1)[3].sum(), s))
(s * 1).split(3)[0].mul_(2)
(s * 1).unbind()[1].add_(1)
with torch.no_grad(): print((s * 1).split(3)[0].mul_(2))
print(torch.tensor([]).chunk(2), torch.ones(3).split(5))
s.split([1, 2])
s.split(0)
s.chunk(0)
s.unbind(2)
""",
    'in-place view ops': """
v = torch.ones(2, 3, requires_grad=True); u = v * 2; print(u.t_(), u.shape)
u2 = v * 1; print(u2.transpose_(0, 1).grad_fn.name(), u2.unsqueeze_(0).grad_fn.name(), u2.squeeze_().grad_fn.name(), u2.shape)
(u.sum() + (u2 * u2).sum()).backward(); print(v.grad)
v.t_()
w = torch.arange(6.).reshape(2, 3); print(w.t_(), w.is_contiguous())
q = torch.ones(2, 1, 3, requires_grad=True) * 1; print(q.squeeze_(1).grad_fn.name(), q.squeeze_(0).grad_fn.name(), q.shape)
torch.ones(2, 2, 2).t_()
""",
    'numpy operands': """
print(np.ones(2) / torch.ones(2), np.ones(2) == torch.ones(2), np.float64(2) * torch.ones(2), torch.ones(2) + np.ones(2))
np.ones(2) + torch.ones(2)
np.ones(2) * torch.ones(2)
np.ones(2) - torch.ones(2)
np.ones(2) @ torch.ones(2)
[1.0, 2.0] @ torch.ones(2)
""",
    'batched matmul': """
a3 = torch.ones(2, 3, 4, requires_grad=True); m = torch.ones(4, 5, requires_grad=True); y3 = a3 @ m
print(y3.shape, y3.grad_fn, y3.grad_fn.next_functions[0][0], y3.grad_fn.next_functions[0][0].next_functions[0][0])
y3.sum().backward(); print(a3.grad[0], m.grad)
print(a3 @ torch.ones(4), (a3 @ torch.ones(4, requires_grad=True)).grad_fn, (torch.ones(5, 2, 3, 4) @ m).shape)
a3 @ torch.ones(5, 5)
a3 @ torch.ones(5)
""",
    'inverse trigonometry': """
tr = torch.tensor([0.5, -0.25], requires_grad=True); print(torch.atan(tr), torch.asin(tr), tr.acos(), torch.arctan(tr))
(torch.atan(tr) + torch.asin(tr) + torch.acos(tr)).sum().backward(); print(tr.grad, torch.tensor([0.3, 2.0]).atan_(), torch.asin(torch.tensor([2.0])))
""",
    'median': """
md = torch.tensor([2., 1., 2., 3., 2.], requires_grad=True); print(md.median(), md.median(0), torch.median(md))
md.median().backward(); print(md.grad)
md2 = torch.tensor([[3., 1., 2.], [2., 5., 2.]], requires_grad=True); r = md2.median(dim=1); print(r)
r.values.sum().backward(); print(md2.grad, torch.median(md2, 1, keepdim=True), md2.median(-2))
print(torch.tensor([4, 1, 3]).median(), torch.tensor([1., 2., 3., 4.]).median(), torch.tensor([]).median())
""",
    'nn modules printed': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(3)
print(nn.Linear(3, 2), nn.Linear(3, 2, bias=False), nn.ReLU(), nn.ReLU(inplace=True), nn.Sigmoid(), nn.Tanh())
print(nn.MSELoss(), nn.MSELoss(reduction='sum'), nn.L1Loss(), nn.Softmax(dim=1), nn.LogSoftmax(dim=0), nn.Identity(), nn.Flatten())
print(nn.Sequential(), nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1))))
print(nn.Parameter(torch.ones(2, 2)), nn.Parameter(torch.zeros(3), requires_grad=False), nn.Parameter())
p = nn.Parameter(torch.tensor([1.0, 2.0])); print(p * 2, p.is_leaf, p.grad_fn, type(p), type(p.data), type(p.detach()), f"{nn.Parameter(torch.tensor(2.))}")
lin = nn.Linear(2, 2); print(list(lin.parameters()), list(lin.named_parameters()), lin.state_dict())
s = nn.Sequential(lin, nn.Tanh(), nn.Linear(2, 1)); print(s[0], s[-1], len(s), s[1:], list(s.children()), [n for n, _ in s.named_modules()])
print(s.training, s.eval().training, s[0].training, s.train() is s, s.requires_grad_(False)[2].weight.requires_grad)
print(type(lin), type(s), type(nn.MSELoss()), type(torch.optim.SGD(lin.parameters())), torch.optim.SGD, nn.Module)
print(torch.optim.SGD([lin.weight], lr=0.1, momentum=0.9), torch.optim.SGD([{'params': [lin.weight]}, {'params': [lin.bias], 'lr': 1.0}], lr=0.1))
""",
    "nn.functional and Linear's nodes": """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(3)
a = torch.randn(3, 2, requires_grad=True); b = torch.randn(3, 2)
for r in ['mean', 'sum', 'none']: l = F.mse_loss(a, b, reduction=r); l.sum().backward(); print(l, l.grad_fn.next_functions, a.grad); a.grad = None
l = F.mse_loss(b, a); print(l, l.grad_fn.next_functions); l = nn.L1Loss()(a, b); l.backward(); print(l, a.grad, l.grad_fn.next_functions)
print(F.relu(a), F.sigmoid(a), F.tanh(a), F.softmax(a, dim=1), F.log_softmax(a, dim=0), F.softmax(a), F.linear(a, torch.ones(4, 2)))
x = torch.randn(2, 3, 4, requires_grad=True); o = nn.Linear(4, 5)(x); o.sum().backward(); print(o.grad_fn, o.grad_fn.next_functions, x.grad)
v = torch.randn(4, requires_grad=True); o = nn.Linear(4, 2)(v); print(o, o.grad_fn.next_functions[0][0].next_functions)
o = nn.Linear(4, 2, bias=False)(x); print(o.grad_fn, o.grad_fn.next_functions[0][0].next_functions)
""",
    'dropout': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(5)
x = torch.ones(4, 5, requires_grad=True); d = nn.Dropout(0.3); y = d(x); print(d, y, y.grad_fn, y.grad_fn.next_functions)
y.sum().backward(); print(x.grad)
print(F.dropout(x, 0.5), F.dropout(x, 0.25, training=False) is x, F.dropout(x, 0.0) is x, F.dropout(x, 1.0), F.dropout(x.double(), 0.6))
d.eval(); print(d(x) is x, d.training); d.train(); print(d(torch.arange(8.)), nn.Dropout(p=0.2, inplace=True))
g = torch.arange(6.) * 1; print(F.dropout(g, 0.5, inplace=True), g); print(nn.Dropout(0.1)(torch.ones(40)))
nn.Dropout(1.5)
F.dropout(x, -0.1)
""",
    'ModuleList': """
nn = torch.nn; torch.manual_seed(6)
ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)]); print(ml, len(ml), ml[0], ml[-1], ml[1:], type(ml))
print(nn.ModuleList(), nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU()]), [n for n, _ in ml.named_parameters()])
ml.append(nn.Tanh()); ml.extend([nn.ReLU()]); ml.insert(0, nn.Sigmoid()); print(ml, ml.pop(1), len(ml))
del ml[0]; print(ml, list(ml.state_dict()))
ml[0] = nn.Identity(); print(ml + nn.ModuleList([nn.ReLU()]))
class M(nn.Module):
    def __init__(self):
        super().__init__(); self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 1)])
    def forward(self, x):
        for l in self.layers: x = l(x)
        return x
print(M(), M()(torch.ones(2, 3)), sum(p.numel() for p in M().parameters()))
ml[7]
ml.extend(3)
""",
    'classification losses': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(7)
x = torch.randn(4, 3, requires_grad=True); t = torch.tensor([0, 2, 1, 2])
l = F.cross_entropy(x, t); print(l, l.grad_fn, l.grad_fn.next_functions, l.grad_fn.next_functions[0][0].next_functions)
l.backward(); print(x.grad); x.grad = None
for r in ['mean', 'sum', 'none']: l = nn.CrossEntropyLoss(reduction=r)(x, t); l.sum().backward(); print(r, l, x.grad); x.grad = None
l = F.cross_entropy(x, t, ignore_index=2); l.backward(); print(l, x.grad); x.grad = None
w = torch.tensor([1.0, 2.0, 0.5]); l = nn.CrossEntropyLoss(weight=w)(x, t); l.backward(); print(l, x.grad); x.grad = None
l = F.cross_entropy(x[0], t[0]); print(l, l.grad_fn); l = F.cross_entropy(x, torch.tensor([2, 2, 2, 2]), ignore_index=2); print(l)
p = F.softmax(torch.randn(4, 3), dim=1); l = F.cross_entropy(x, p); print(l, l.grad_fn, l.grad_fn.next_functions); print(F.cross_entropy(x, p, reduction='none'), F.cross_entropy(x, p, reduction='sum'))
lp = F.log_softmax(x, dim=1); l = F.nll_loss(lp, t); print(l, l.grad_fn, F.nll_loss(lp, t, reduction='none'), nn.NLLLoss(weight=w, ignore_index=0)(lp, t))
print(nn.CrossEntropyLoss(), nn.NLLLoss(), nn.CrossEntropyLoss(weight=w, ignore_index=1, reduction='sum'), nn.BCELoss(), nn.BCEWithLogitsLoss(pos_weight=torch.ones(3)))
print(list(nn.CrossEntropyLoss(weight=w).state_dict()), list(nn.BCEWithLogitsLoss().state_dict()), nn.CrossEntropyLoss().ignore_index)
F.nll_loss(x, torch.tensor([0, 5, 1, 1]))
F.nll_loss(x, torch.tensor([0, 1]))
F.nll_loss(x, torch.tensor([[0], [1], [2], [0]]))
F.cross_entropy(x, torch.tensor([0., 1., 2., 0.]))
F.nll_loss(x, t.int())
F.cross_entropy(x, torch.tensor([0, -1, 2, 0]))
F.cross_entropy(x, t, reduction='avg')
F.cross_entropy(x, t, weight=torch.ones(2))
F.cross_entropy(x, t.float().expand(3, 4).t().contiguous().long())
F.nll_loss(torch.tensor(1.), torch.tensor(0))
""",
    'classification losses over pixels and sequences, label smoothing': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(3)
x4 = torch.randn(2, 3, 2, 2, requires_grad=True); t4 = torch.randint(0, 3, (2, 2, 2)); w = torch.tensor([1.0, 2.0, 0.5])
l = F.nll_loss(x4, t4); print(l, l.grad_fn, l.grad_fn.next_functions); l.backward(); print(x4.grad); x4.grad = None
for r in ['sum', 'none']: l = F.nll_loss(x4, t4, weight=w, ignore_index=1, reduction=r); l.sum().backward(); print(r, l, l.grad_fn, x4.grad); x4.grad = None
x3 = torch.randn(2, 3, 5, requires_grad=True); t3 = torch.randint(0, 3, (2, 5))
l = F.nll_loss(x3, t3); print(l, l.grad_fn, l.grad_fn.next_functions); l.backward(); print(x3.grad); x3.grad = None
l = F.nll_loss(x3, t3, reduction='none'); print(l, l.grad_fn, l.grad_fn.next_functions, l.shape)
l = F.nll_loss(torch.randn(2, 3, 2, 1, 2, requires_grad=True), torch.zeros(2, 2, 1, 2, dtype=torch.long)); print(l, l.grad_fn)
x = torch.randn(4, 3, requires_grad=True); t = torch.tensor([0, 2, 1, 2])
l = F.cross_entropy(x, t, label_smoothing=0.1); print(l, l.grad_fn, l.grad_fn.next_functions); l.backward(); print(x.grad); x.grad = None
for r in ['sum', 'none']: l = nn.CrossEntropyLoss(reduction=r, label_smoothing=0.2)(x, t); l.sum().backward(); print(r, l, x.grad); x.grad = None
l = F.cross_entropy(x, t, weight=w, ignore_index=2, label_smoothing=0.3); l.backward(); print(l, x.grad); x.grad = None
l = F.cross_entropy(x, F.softmax(torch.randn(4, 3), 1), label_smoothing=0.1); print(l, l.grad_fn)
print(F.cross_entropy(x[0], t[0], label_smoothing=0.5), F.cross_entropy(x, t, label_smoothing=-0.5), nn.CrossEntropyLoss(label_smoothing=0.1))
print(l.grad_fn.next_functions[0][0]._saved_other if l.grad_fn.next_functions[0][0] is not None else None)
y = x.masked_select(x > 0); y.sum().backward(); print(y, y.grad_fn, x.grad); x.grad = None
print(torch.masked_select(torch.arange(6.).view(2, 3), torch.tensor([True, False, True])))
F.cross_entropy(x, t, label_smoothing=1.5)
F.nll_loss(x3, torch.randint(0, 3, (2, 4)))
F.nll_loss(x4, torch.randint(0, 3, (2, 2)))
F.nll_loss(x4, torch.randint(0, 3, (2, 3, 3)))
""",
    'devices a tutorial asks about, and out=': """
print(torch.accelerator.is_available(), torch.accelerator.current_accelerator(), torch.accelerator.device_count())
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"; print(device)
print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.manual_seed_all(0), torch.backends.mps.is_available())
torch.backends.cudnn.deterministic = True; torch.backends.cudnn.benchmark = False; print(torch.backends.cudnn.is_available())
a = torch.ones(4, 4); a[:, 1] = 0; y3 = torch.rand_like(a); r = torch.matmul(a, a.T, out=y3); print(r is y3, y3, y3._version)
z3 = torch.empty(0); print(torch.mul(a, a, out=z3), z3.shape, torch.exp(torch.zeros(2), out=torch.empty(2)))
print(torch.add(a, 1, out=torch.empty(4, 4, dtype=torch.float64)).dtype, torch.sum(a, 0, out=torch.empty(4)))
w = torch.ones(2, requires_grad=True)
with torch.no_grad(): print(torch.mul(w, 2, out=torch.empty(2)))
torch.accelerator.current_device_index()
torch.cuda.current_device()
torch.mul(w, 2, out=torch.empty(2))
torch.mul(a, a, out=torch.empty(4, 4, dtype=torch.long))
""",
    'binary cross entropy': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(8)
p = torch.rand(5, requires_grad=True); y = torch.tensor([0., 1., 1., 0., 1.])
l = F.binary_cross_entropy(p, y); print(l, l.grad_fn, l.grad_fn.next_functions); l.backward(); print(p.grad); p.grad = None
for r in ['mean', 'sum', 'none']: l = nn.BCELoss(reduction=r)(p, y); l.sum().backward(); print(r, l, p.grad); p.grad = None
l = nn.BCELoss(weight=torch.tensor([1., 2., 1., 2., 1.]))(p, y); l.backward(); print(l, p.grad); p.grad = None
yt = torch.rand(5, requires_grad=True); l = F.binary_cross_entropy(p, yt); l.backward(); print(l, l.grad_fn.next_functions, yt.grad)
print(F.binary_cross_entropy(torch.tensor([0., 1.]), torch.tensor([1., 0.])), F.binary_cross_entropy(torch.tensor([0.5]).double(), torch.tensor([1.]).double()))
z = torch.randn(5, requires_grad=True); l = F.binary_cross_entropy_with_logits(z, y); print(l, l.grad_fn, l.grad_fn.next_functions); l.backward(); print(z.grad); z.grad = None
for r in ['mean', 'sum', 'none']: l = nn.BCEWithLogitsLoss(reduction=r)(z, y); l.sum().backward(); print(r, l, z.grad); z.grad = None
l = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.))(z, y); l.backward(); print(l, z.grad); z.grad = None
l = F.binary_cross_entropy_with_logits(z, y, weight=torch.tensor([1., 2., 1., 2., 1.])); l.backward(); print(l, z.grad)
print(F.binary_cross_entropy_with_logits(torch.tensor([100., -100.]), torch.tensor([1., 0.])), nn.Sigmoid()(torch.tensor([100.])))
F.binary_cross_entropy(torch.rand(3), torch.rand(2))
F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.]))
F.binary_cross_entropy(torch.tensor([.5]), torch.tensor([1.5]))
F.binary_cross_entropy_with_logits(torch.rand(3), torch.rand(2))
F.binary_cross_entropy(torch.rand(3), torch.rand(3, dtype=torch.float64))
F.binary_cross_entropy(torch.rand(3, 1), torch.rand(3))
F.binary_cross_entropy(torch.rand(3), torch.ones(3, dtype=torch.long))
F.binary_cross_entropy_with_logits(torch.rand(3), torch.ones(3, dtype=torch.long))
F.binary_cross_entropy(torch.rand(3), torch.rand(3), reduction='avg')
""",
    'Embedding': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(9)
e = nn.Embedding(5, 3); i = torch.tensor([[1, 2, 1], [4, 0, 1]]); o = e(i)
print(e, e.weight, o, o.grad_fn, o.grad_fn.next_functions, type(e))
(o * torch.arange(18.).view(2, 3, 3)).sum().backward(); print(e.weight.grad)
p = nn.Embedding(4, 2, padding_idx=1); print(p, p.weight); o = p(torch.tensor([1, 3, 1, 0])); o.sum().backward(); print(o, p.weight.grad)
print(nn.Embedding(4, 2, padding_idx=-1), nn.Embedding(4, 2, max_norm=1.0), nn.Embedding(3, 2, _weight=torch.ones(3, 2)), e(torch.tensor(2)), e(torch.tensor([3], dtype=torch.int32)))
print(F.embedding(torch.tensor([0, 2]), torch.arange(6.).view(3, 2)), list(e.state_dict()), [n for n, _ in e.named_parameters()])
e(torch.tensor([5]))
e(torch.tensor([-1]))
e(torch.tensor([1.]))
nn.Embedding(4, 2, padding_idx=5)
F.embedding(torch.tensor([1]), torch.ones(3))
""",
    'BatchNorm1d': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(10)
bn = nn.BatchNorm1d(3); x = torch.randn(6, 3, requires_grad=True) * 2 + 1
print(bn, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.num_batches_tracked, list(bn.state_dict()))
y = bn(x); print(y, y.grad_fn, y.grad_fn.next_functions, bn.running_mean, bn.running_var, bn.num_batches_tracked)
(y * torch.arange(18.).view(6, 3)).sum().backward(); print(bn.weight.grad, bn.bias.grad)
bn.eval(); z = bn(torch.randn(2, 3)); print(z, z.grad_fn, bn.num_batches_tracked)
b3 = nn.BatchNorm1d(2, affine=False); v = torch.randn(4, 2, 5, requires_grad=True); w = b3(v); w.sum().backward(); print(b3, w.grad_fn.next_functions, w[0], b3.running_var)
bm = nn.BatchNorm1d(2, momentum=None); bm(torch.randn(4, 2)); bm(torch.randn(4, 2)); print(bm, bm.running_mean, bm.num_batches_tracked)
bt = nn.BatchNorm1d(2, track_running_stats=False); print(bt, bt.running_mean, bt(torch.tensor([[1., 2.], [3., 5.]])), bt.eval()(torch.tensor([[1., 2.], [3., 5.]])))
print(nn.BatchNorm1d(2, bias=False), nn.BatchNorm1d(2, eps=1e-3, momentum=0.5))
print(F.batch_norm(torch.tensor([[1., 2.], [3., 6.]]), torch.zeros(2), torch.ones(2), training=True), F.batch_norm(torch.tensor([[1., 2.]]), torch.zeros(2), torch.ones(2)))
nn.BatchNorm1d(3)(torch.randn(1, 3))
nn.BatchNorm1d(3)(torch.randn(4, 2))
nn.BatchNorm1d(3)(torch.randn(4))
nn.BatchNorm1d(3)(torch.randn(2, 3, 4, 5))
""",
    'BatchNorm2d, BatchNorm3d, LayerNorm': """
nn = torch.nn; F = torch.nn.functional; torch.manual_seed(12)
bn = nn.BatchNorm2d(3); x = torch.randn(4, 3, 5, 5, requires_grad=True)
y = bn(x); print(bn, y[0, 0, :2], y.grad_fn, bn.running_mean, bn.running_var)
(y * torch.arange(300.).view(4, 3, 5, 5)).sum().backward(); print(x.grad[1, 2, 0], bn.weight.grad, bn.bias.grad)
bn.eval(); print(bn(torch.ones(1, 3, 2, 2)))
b3 = nn.BatchNorm3d(2, momentum=None, affine=False); outs = [b3(torch.randn(2, 2, 3, 3, 3)) for _ in range(3)]; print(b3, b3.running_mean, b3.running_var, b3.num_batches_tracked)
ln = nn.LayerNorm(5); z = torch.randn(3, 4, 5, requires_grad=True); o = ln(z); print(ln, o[0], o.grad_fn, o.grad_fn._saved_normalized_shape)
(o * torch.arange(60.).view(3, 4, 5)).sum().backward(); print(z.grad[2], ln.weight.grad, ln.bias.grad)
l2 = nn.LayerNorm([4, 5], elementwise_affine=False, eps=1e-3); print(l2, l2(z)[1, 0], list(l2.state_dict()), nn.LayerNorm(5, bias=False))
print(F.layer_norm(z, (5,), None, torch.ones(5))[0, 0], F.layer_norm(z.double(), [4, 5]).dtype)
nn.BatchNorm2d(3)(torch.randn(4, 3, 5))
nn.BatchNorm3d(3)(torch.randn(4, 3, 5, 5))
nn.LayerNorm(4)(torch.randn(2, 5))
F.layer_norm(torch.randn(2, 3), 3)
F.layer_norm(torch.randn(2, 3), (3,), torch.ones(2))
""",
    'keepdims, one_hot, multinomial, jacobian': """
x = torch.arange(6.).view(2, 3); F = torch.nn.functional
for name in ['sum', 'mean', 'max', 'min', 'amax', 'amin', 'std', 'var', 'logsumexp', 'median', 'prod', 'argmax', 'argmin', 'any', 'all']: print(name, getattr(x, name)(1, keepdims=True), getattr(torch, name)(x, 0, keepdims=False))
print(x.any(), x.all(), (x > 2).any(0), (x > 2).all(dim=1, keepdim=True), x.sum(dim=(0, 1), keepdims=True))
x.norm(dim=1, keepdims=True)
t = torch.tensor([0, 2, 1]); print(F.one_hot(t), F.one_hot(t, 4), F.one_hot(torch.tensor([[1], [0]])), F.one_hot(torch.tensor(2), 3), F.one_hot(torch.tensor([], dtype=torch.long), 3))
F.one_hot(torch.tensor([1.]))
F.one_hot(torch.tensor([-1]))
F.one_hot(torch.tensor([3]), 2)
F.one_hot(torch.tensor([], dtype=torch.long))
torch.manual_seed(11); p = torch.tensor([0.1, 0.5, 0.4]); print(torch.multinomial(p, 2), p.multinomial(5, replacement=True), torch.multinomial(torch.tensor([[1., 0., 2.], [0.5, 0.5, 0.]]), 2), torch.multinomial(p.double(), 3, True), torch.multinomial(p, 1), torch.rand(2))
g = torch.Generator().manual_seed(1); print(torch.multinomial(p, 3, generator=g), torch.multinomial(torch.ones(50), 10, generator=g), torch.multinomial(torch.ones(4, 30), 40, True, generator=g), torch.rand(1))
torch.multinomial(p, 4)
torch.multinomial(torch.tensor([-1., 2.]), 1)
torch.multinomial(torch.zeros(3), 1)
torch.multinomial(torch.ones(2, 2, 2), 1)
torch.multinomial(torch.tensor([1, 2]), 1)
torch.multinomial(p, 0)
torch.multinomial(torch.tensor([[1., 0.], [0., 0.]]), 2, True)
torch.multinomial(torch.tensor([1., float('inf')]), 2, True)
J = torch.autograd.functional.jacobian; W = torch.tensor([[1., 2., 3.], [0.5, -1., 2.]]); v = torch.tensor([1., 2., 3.])
print(J(lambda x: x ** 2, v), J(lambda x: (W @ x).tanh(), v), J(lambda a, b: (a * b, a.sum()), (v, torch.ones(3))), J(lambda x: torch.ones(2), v), J(lambda x: x.exp().sum(), v.double()))
print(J(lambda x: x @ W.t(), torch.ones(2, 3)).shape, J(lambda x: x.sum(), v, vectorize=True), J(lambda a, b: a * b, (v, v)))
J(lambda x: torch.ones(2), v, strict=True)
J(lambda x: x, [v])
J(lambda x: 3, v)
""",
    'saved tensors (grad_fn._saved_*)': """
x = torch.tensor([1., 2., 3.], requires_grad=True); c = torch.tensor([4., 5., 6.])
y = x.pow(2); print(x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self, y.grad_fn._saved_exponent, [a for a in dir(y.grad_fn) if a.startswith('_saved_')])
y = x.exp(); print(y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result, y.grad_fn._saved_result)
z = x * c; print(z.grad_fn._saved_self, z.grad_fn._saved_other is c, (x / c).grad_fn._saved_other, (c / x).grad_fn._saved_self)
print(x.sin().grad_fn._saved_self is x, x.sigmoid().grad_fn._saved_result, x.tanh().grad_fn._saved_result, x.relu().grad_fn._saved_result, x.log().grad_fn._saved_self is x)
print((x * x).sum().grad_fn._saved_self_sym_sizes, x.mean().grad_fn._saved_self_sym_numel, x.mean().grad_fn._saved_self_sym_sizes, x.log_softmax(0).grad_fn._saved_dim, x.softmax(0).grad_fn._saved_result)
w = torch.ones(3, 2, requires_grad=True); m = x.view(1, 3) @ w; print(m.grad_fn._saved_self, m.grad_fn._saved_mat2 is w, m.grad_fn._saved_mat2_sym_sizes, m.grad_fn._saved_self_sym_sizes)
print(x.add(c, alpha=2).grad_fn._saved_alpha, (x - c).grad_fn._saved_alpha, x.clamp(-1, 2).grad_fn._saved_min, x.clamp(-1, 2).grad_fn._saved_max, x.view(3, 1).grad_fn._saved_self_sym_sizes)
print(x.unsqueeze(0).grad_fn._saved_dim, torch.cat([x, x]).grad_fn._saved_dim, torch.stack([x, x], 1).grad_fn._saved_dim, x.view(1, 3).transpose(0, 1).grad_fn._saved_dim0)
print(torch.nn.functional.mse_loss(x, c).grad_fn._saved_target is c, torch.nn.functional.mse_loss(x, c).grad_fn._saved_self is x)
t = x.tanh(); t.sum().backward(); print(x.grad)
t.grad_fn._saved_result
y = x ** 3; y.sum().backward(); print(y.grad_fn._saved_exponent)
y.grad_fn._saved_self
t.grad_fn._saved_nothing
y2 = x.exp(); y2.sum().backward(retain_graph=True); print(y2.grad_fn._saved_result)
a = x * 1; e = a.exp(); a.add_(1); print(e.grad_fn._saved_result)
b = x * 1; s = b.sin(); b.mul_(2); s.grad_fn._saved_self
print(x.grad_fn, torch.ones(2, requires_grad=True).sum().grad_fn._saved_self_sym_sizes)
X = torch.tensor([[1., 5., 2.], [4., 3., 6.]], requires_grad=True); m = X.max(1); print(m.values.grad_fn._saved_dim, m.values.grad_fn._saved_keepdim, m.values.grad_fn._saved_self_sym_sizes)
s = X[1]; print(s.grad_fn._saved_dim, s.grad_fn._saved_index, s.grad_fn._saved_self_sym_sizes); g = X.gather(1, torch.tensor([[0], [2]])); print(g.grad_fn._saved_dim, g.grad_fn._saved_index)
print(torch.where(X > 2, X, X * 2).grad_fn._saved_condition, X.min(0, keepdim=True)[0].grad_fn._saved_keepdim)
""",
    'rounded divisions and 1-D @ batch': """
x = torch.tensor([1.5, -2.], requires_grad=True); w = torch.tensor([3., 4.], requires_grad=True)
y = x // 2; print(y, y.requires_grad, y.grad_fn, y.grad_fn.name(), y.grad_fn.next_functions, (x // w).grad_fn.next_functions, 2 // x)
y.sum().backward()
(2 % x).sum().backward()
z = x % 2 + x % w + torch.fmod(x, 2) + torch.fmod(x, w) + x.div(w, rounding_mode='floor') + x.div(2, rounding_mode='trunc'); z.sum().backward(); print(z, x.grad, w.grad)
print((x % w).grad_fn, torch.fmod(x, 2).grad_fn, x.div(2, rounding_mode='floor').grad_fn.next_functions, torch.tensor([3, -4]) // 2, torch.tensor([3, -4]) % 2)
print(torch.tensor([1, 2]) ** -1, torch.tensor([2]).pow(-2), torch.tensor([1, 2]) ** -1.0)
print(torch.tensor([[], [1]]), torch.tensor([[1], []]), torch.tensor([[], []]), torch.tensor([[[]], [[1]]]), torch.tensor([[], [1.]]))
a = torch.ones(3, requires_grad=True); M = torch.arange(24.).view(2, 3, 4).requires_grad_(); y = a @ M; print(y, y.grad_fn, y.grad_fn.next_functions, y.grad_fn.next_functions[0][0].next_functions)
(y * torch.arange(8.).view(2, 4)).sum().backward(); print(a.grad, M.grad)
y = torch.ones(3) @ M; print(y.grad_fn.next_functions, y.grad_fn.next_functions[0][0].next_functions); B = torch.ones(5, 3, requires_grad=True); y = B @ M; print(y.shape, y.grad_fn, y.grad_fn.next_functions)
torch.ones(3) @ torch.ones(2, 4, 3)
torch.ones(3, requires_grad=True) @ torch.ones(2, 4, 3)
torch.ones(5, 3) @ torch.ones(2, 4, 3)
torch.ones(5, 3, requires_grad=True) @ torch.ones(2, 4, 3)
torch.ones(3) @ torch.ones(2, 2, 4, 3)
""",
    'bernoulli': """
torch.manual_seed(3); x = torch.full((3,), 0.5)
print(torch.bernoulli(x), torch.bernoulli(x, 0.3), x.bernoulli(), torch.bernoulli(torch.linspace(0, 1, 40)), torch.bernoulli(x.double()))
print(torch.bernoulli(x, generator=torch.Generator().manual_seed(1)), torch.empty(5).bernoulli_(), torch.empty(4).bernoulli_(0.2), torch.empty(2).bernoulli_(torch.tensor([0.2, 0.9])))
y = torch.bernoulli(torch.full((4,), 0.4, requires_grad=True)); print(y, y.grad_fn); y.sum().backward()
print(torch.rand(2))
torch.bernoulli(torch.tensor([1.5]))
torch.bernoulli(torch.tensor([1, 0]))
torch.empty(2).bernoulli_(1.5)
torch.ones(2, requires_grad=True).bernoulli_(0.5)
""",
    'SGD steps and init': """
nn = torch.nn; torch.manual_seed(4)
w = nn.Parameter(torch.tensor([1.0, -2.0])); opt = torch.optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)
for i in range(3): opt.zero_grad(); (w * w * w).sum().backward(); opt.step(); print(w, w.grad, opt.state[w])
print(opt.state_dict()); opt.zero_grad(set_to_none=False); print(w.grad)
w2 = nn.Parameter(torch.tensor([0.5])); opt2 = torch.optim.SGD([w2], lr=0.3, maximize=True); (w2 ** 2).sum().backward(); opt2.step(); print(w2)
print(nn.init.xavier_uniform_(torch.empty(2, 3)), nn.init.kaiming_normal_(torch.empty(3, 2)), nn.init.zeros_(torch.empty(2)), nn.init.calculate_gain('relu'))
""",
}


def run_lines(L, code):
    """Each line (with the indented lines under it) on its own, an error printed and the next line
    run, as a notebook would.

    Lines are compiled outside the ``try``: a line that parses in neither library is a broken
    test, not an agreement."""
    scope = {"torch": L, "Variable": L.autograd.Variable, "np": np, "math": math}
    buf = io.StringIO()
    statements = []
    for line in code.strip().split("\n"):   # an indented line continues the statement above it
        if line[:1].isspace() and statements:
            statements[-1] += "\n" + line
        else:
            statements.append(line)
    lines = [compile(statement, "<line>", "exec") for statement in statements]
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for line in lines:
            try:
                exec(line, scope)
            except Exception as e:  # noqa: BLE001
                print(f"ERROR {type(e).__name__}: {e}")
    return re.sub(r"at 0x[0-9a-f]+", "at 0x?", buf.getvalue())


def _no_name_errors(text):
    """A NameError in PyTorch's own run means the block uses a name it does not define."""
    assert "ERROR NameError" not in text, text
    return text


@pytest.mark.parametrize("name", list(LINES))
def test_assorted_lines_match(name):
    expected = _no_name_errors(run_lines(torch, LINES[name]))
    assert as_torch_text(run_lines(gradviz, LINES[name])) == expected


def run_tutorial(L, code):
    """The tutorial's output; its random numbers start from one seed in both libraries (a tutorial
    may call randn without a seed, and which tests ran before on this worker moves the generators)."""
    buf, program = io.StringIO(), compile(code, "<tutorial>", "exec")   # a syntax error fails the test
    L.manual_seed(67280421310721)   # (gradviz's initial seed; torch 2.13 starts from a random one)
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(program, {"torch": L, "Variable": L.autograd.Variable})
        except Exception as e:  # noqa: BLE001 -- the error is part of what is compared
            print(f"ERROR {type(e).__name__}: {e}")
    return re.sub(r"at 0x[0-9a-f]+", "at 0x?", buf.getvalue())


@pytest.mark.parametrize("code", TUTORIALS, ids=[f"tutorial{i}" for i in range(len(TUTORIALS))])
def test_tutorial_output_matches(code):
    assert as_torch_text(run_tutorial(gradviz, code)) == run_tutorial(torch, code)


# --- errors -------------------------------------------------------------------------------------

ERRORS = {
    "backward twice": "x = torch.ones(2, requires_grad=True); y = (x * x).sum(); y.backward(); y.backward()",
    "backward twice, pow": "x = torch.ones(2, requires_grad=True); y = (x ** 2).sum(); y.backward(); y.backward()",
    "backward twice, add": "x = torch.ones(2, requires_grad=True); y = (x + 1).sum(); y.backward(); y.backward()",
    "non-scalar": "x = torch.ones(2, requires_grad=True); (x * 2).backward()",
    "wrong shape": "x = torch.ones(2, requires_grad=True); (x * 2).backward(torch.ones(3))",
    "wrong shape 2d": "x = torch.ones(2, 3, requires_grad=True); (x * 2).backward(torch.ones(3, 2))",
    "leaf in place": "x = torch.ones(2, requires_grad=True); x.add_(1)",
    "leaf *=": "x = torch.ones(2, requires_grad=True); x *= 2",
    "leaf setitem": "x = torch.ones(2, requires_grad=True); x[0] = 5",
    "view of leaf": "x = torch.ones(2, 2, requires_grad=True); x[0].add_(1)",
    "leaf zero_": "x = torch.ones(2, requires_grad=True); x.zero_()",
    "version": "x = torch.ones(2, requires_grad=True); y = x * 1; z = y * y; y.add_(1); z.sum().backward()",
    "version, output": "x = torch.ones(2, requires_grad=True); y = x.exp(); y.add_(1); y.sum().backward()",
    "version, sigmoid": "x = torch.ones(2, requires_grad=True); y = x.sigmoid(); y.mul_(2); y.sum().backward()",
    "version, plain": "a = torch.ones(2); x = torch.ones(2, requires_grad=True); y = x * a; a.add_(1); "
                      "y.sum().backward()",
    "int tensor()": "torch.tensor([1, 2], requires_grad=True)",
    "int ones()": "torch.ones(2, dtype=torch.int64, requires_grad=True)",
    "int attribute": "x = torch.tensor([1, 2]); x.requires_grad = True",
    "int requires_grad_": "x = torch.tensor([1, 2]); x.requires_grad_()",
    "int Variable": "torch.autograd.Variable(torch.full((2, 3), 3), requires_grad=True)",
    "item": "torch.ones(3).item()",
    "non-leaf requires_grad": "y = torch.ones(2, requires_grad=True) * 2; y.requires_grad = False",
    "no graph": "torch.ones(2).sum().backward()",
    "no graph, wrong shape": "torch.ones(2).backward(torch.ones(3))",
    "grad, no graph, wrong shape": "torch.autograd.grad(torch.ones(2), torch.ones(2), torch.ones(3))",
    "no graph, no_grad": "x = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    y = (x * 2).sum()\n"
                         "y.backward()",
    "grad unused": "x = torch.ones(2, requires_grad=True); z = torch.ones(2, requires_grad=True); "
                   "torch.autograd.grad((x * 2).sum(), [x, z])",
    "grad of constant": "x = torch.ones(2, requires_grad=True); torch.autograd.grad((x * 2).sum(), [torch.ones(2)])",
    "retain_grad": "torch.ones(2).retain_grad()",
    "hook": "torch.ones(2).register_hook(lambda g: g)",
    "numpy": "torch.ones(2, requires_grad=True).numpy()",
    "bool": "bool(torch.ones(2))",
    "broadcast": "torch.ones(2, 3) + torch.ones(4)",
    "mm": "torch.ones(2, 3) @ torch.ones(2, 3)",
    "mm dtype": "torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)",
    "view": "torch.ones(2, 3).view(4)",
    "dim": "torch.ones(2, 3).sum(dim=2)",
    "index": "torch.ones(2, 3)[5]",
    "cat": "torch.cat([torch.ones(2), torch.ones(2, 2)])",
    "stack": "torch.stack([torch.ones(2), torch.ones(3)])",
    "mean of ints": "torch.tensor([1, 2]).mean()",
    "narrowing in place": "x = torch.tensor([1, 2]); x.add_(1.5)",
    "expand": "torch.ones(2, 3).expand(4, 3)",
    "expand rank": "torch.ones(2, 3).expand(3)",
    "grad size": "x = torch.ones(2, requires_grad=True); x.grad = torch.ones(3)",
    "grad dtype": "x = torch.ones(2, requires_grad=True); x.grad = torch.ones(2, dtype=torch.float64)",
    "rand int": "torch.rand(2, dtype=torch.int64)",
    "randint range": "torch.randint(5, 3, (2,))",
    "cuda": "torch.ones(2).cuda()",
    "ragged list": "torch.tensor([[1, 2], [3]])",
    "ragged list, longer": "torch.tensor([[1, 2], [3, 4, 5]], dtype=torch.float64)",
    "number for a row": "torch.tensor([[1], 2])",
    "list for a number": "torch.tensor([[1, 2], [3, [4]]])",
    "list for a float": "torch.tensor([[1.5, 2], [3, [4]]])",
    "None in a list": "torch.tensor([1, None])",
    "int overflow": "torch.tensor([2 ** 63])",
    "many-element tensors in a list": "torch.tensor([torch.tensor([1, 2]), torch.tensor([3, 4])])",
    "legacy from a float": "torch.Tensor(3.5)",
    "legacy from a str": "torch.FloatTensor('abc')",
    "legacy float size": "torch.Tensor(2, 3.0)",
    "legacy negative": "torch.Tensor(-1)",
    "legacy other dtype": "torch.FloatTensor(torch.zeros(2, dtype=torch.long))",
    "ones float size": "torch.ones(2, 3.0)",
    "ones float": "torch.ones(2.5)",
    "zeros negative": "torch.zeros(2, -1)",
    "randn negative": "torch.randn(-3)",
    "ones negative": "torch.ones(2, -1)",
    "empty negative": "torch.empty(-1)",
    "arange zero step": "torch.arange(0, 1, 0)",
    "add a str": "torch.ones(2) + 'a'",
    "add a list": "torch.ones(2) + [1, 1]",
    "times None": "torch.ones(2) * None",
    "less than a str": "torch.ones(2) < 'a'",
    "bool minus int": "torch.tensor([1, 2]) - True",
    "int minus bool": "True - torch.tensor([1, 2])",
    "bool minus bool": "torch.tensor([True]) - torch.tensor([False])",
    "bool sub": "torch.tensor([True]).sub(1)",
    "bool neg": "-torch.tensor([True, False])",
    "int // 0": "torch.tensor([1, 2]) // 0",
    "int % 0": "torch.tensor([5]) % torch.tensor([0])",
    "int ** -1": "torch.tensor([1, 2]) ** -1",
    "from_numpy of strings": "import numpy as np; torch.from_numpy(np.array(['a']))",
    "int8 @ float": "torch.ones(2, 2, dtype=torch.int8) @ torch.ones(2, 2)",
    "int sqrt_": "torch.tensor([4, 9]).sqrt_()",
    "leaf abs_": "torch.ones(2, requires_grad=True).abs_()",
    "permute too few": "torch.ones(2, 2).permute(0)",
    "permute twice": "torch.ones(2, 2).permute(0, 0)",
    "mask too long": "torch.ones(2, 2)[torch.tensor([True, False, True])]",
    "mask in dim 1": "torch.ones(2, 3)[:, torch.tensor([True, False])]",
    "tensor index out of range": "torch.ones(3)[torch.tensor([3])]",
    "list index out of range, dim 1": "torch.ones(2, 3)[[0], [5]]",
    "float tensor index": "torch.ones(3)[torch.tensor(1.)]",
    "float index": "torch.ones(3)[1.5]",
    "dot of matrices": "torch.dot(torch.ones(2, 2), torch.ones(2, 2))",
    "volatile": "torch.autograd.Variable(torch.ones(1), volatile=True)",
    "select out of range": "torch.ones(2, 3).select(1, 3)",
    "int alpha": "torch.tensor([1, 2]).add(1, alpha=0.5)",
    "arange wrong sign": "torch.arange(5, 0)",
    "non-leaf grad": "x = torch.ones(2, requires_grad=True); y = x * 2; y.sum().backward(); y.grad",
    "Linear, wrong width": "torch.nn.Linear(3, 2)(torch.ones(4, 5))",
    "Linear, wrong vector": "torch.nn.Linear(3, 2)(torch.ones(5))",
    "Linear, wrong 3-D": "torch.nn.Linear(3, 2)(torch.ones(2, 4, 5))",
    "Linear no bias, wrong width": "torch.nn.Linear(3, 2, bias=False)(torch.ones(4, 5))",
    "Linear, double input": "torch.nn.Linear(3, 2)(torch.ones(4, 3, dtype=torch.float64))",
    "Linear, 0-d input": "torch.nn.Linear(3, 2)(torch.tensor(1.))",
    "Linear, int input": "torch.nn.Linear(3, 2)(torch.ones(4, 3, dtype=torch.int64))",
    "SGD lr": "torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=-1)",
    "SGD momentum": "torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, momentum=-0.5)",
    "SGD weight_decay": "torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, weight_decay=-1)",
    "SGD nesterov": "torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, nesterov=True)",
    "SGD empty": "torch.optim.SGD([], lr=0.1)",
    "SGD of a module": "torch.optim.SGD(torch.nn.Linear(1, 1), lr=0.1)",
    "SGD of a tensor": "torch.optim.SGD(torch.ones(2, requires_grad=True), lr=0.1)",
    "SGD of a non-leaf": "torch.optim.SGD([torch.ones(2, requires_grad=True) * 2], lr=0.1)",
    "SGD of a number": "torch.optim.SGD([1.0], lr=0.1)",
    "SGD of a set": "torch.optim.SGD([{'params': {torch.nn.Parameter(torch.ones(1))}}], lr=0.1)",
    "SGD duplicate": "p = torch.nn.Parameter(torch.ones(1)); torch.optim.SGD([p, p], lr=0.1)",
    "SGD two groups": "p = torch.nn.Parameter(torch.ones(1)); torch.optim.SGD([{'params': [p]}, {'params': [p]}])",
    "MSELoss reduction": "torch.nn.MSELoss(reduction='avg')(torch.ones(2), torch.ones(2))",
    "mse_loss broadcast": "torch.nn.functional.mse_loss(torch.ones(3, 2), torch.ones(4))",
    "mse_loss target size": "torch.nn.functional.mse_loss(torch.ones(3, 2), torch.ones(3, 1))",
    "softmax without dim": "torch.nn.functional.softmax(torch.ones(2, 3))",
    "Module forward": "torch.nn.Module()(torch.ones(1))",
    "Module attribute": "torch.nn.Linear(1, 1).nothing",
    "Module assign tensor": "m = torch.nn.Linear(1, 1); m.weight = torch.ones(1, 1)",
    "Module before init": "class M(torch.nn.Module):\n    def __init__(self):\n        self.w = torch.nn.Parameter(torch.ones(1))\nM()",
    "Module init args": "torch.nn.Module(3)",
    "Module train mode": "torch.nn.Linear(1, 1).train('yes')",
    "Sequential index": "torch.nn.Sequential(torch.nn.ReLU())[3]",
    "Parameter of ints": "torch.nn.Parameter(torch.tensor([1, 2]))",
    "init of a vector": "torch.nn.init.xavier_uniform_(torch.empty(3))",
    "load_state_dict": "torch.nn.Linear(1, 1).load_state_dict({'weight': torch.ones(1, 1)})",
}


def run_error(L, code):
    program = compile(code, "<error>", "exec")   # a syntax error fails the test
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(program, {"torch": L})
            result = "no error"
        except Exception as e:  # noqa: BLE001
            result = f"{type(e).__name__}: {e}"
    for w in caught:  # PyTorch appends where in its C++ the warning was raised
        result += f"\nwarning {w.category.__name__}: {str(w.message).split(' (Triggered internally')[0]}"
    return result


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_messages_match(name):
    assert as_torch_text(run_error(gradviz, ERRORS[name])) == run_error(torch, ERRORS[name])


# --- layers, bit for bit ---------------------------------------------------------------------------

def test_batch_norm_is_bit_identical():
    """BatchNorm1d on a batch of rows, training and eval: output, gradients and running statistics.
    PyTorch splits the batch into one run per thread, so this holds where both count the same threads.
    Known difference: a batch of 2 rows, whose variance PyTorch sums another way (last bit, sometimes)."""
    from gradviz.kernels import get_num_threads as _threads
    if torch.get_num_threads() != _threads():
        pytest.skip(f"torch uses {torch.get_num_threads()} threads, gradviz assumes {_threads()}")
    rng = np.random.default_rng(0)
    for trial in range(20):
        n, c = int(rng.integers(3, 60)), int(rng.integers(1, 21))
        x = (rng.standard_normal((n, c)) * 3 + 1).astype(np.float32)
        seen = []
        for L in LIBS.values():
            bn = L.nn.BatchNorm1d(c)
            X = L.tensor(x, requires_grad=True)
            y = bn(X)
            (y * L.tensor(np.arange(n * c, dtype=np.float32).reshape(n, c))).sum().backward()
            bn.eval()
            seen.append([y.detach().numpy(), X.grad.numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy(),
                         bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                         bn(L.tensor(x)).detach().numpy()])
        for a, b in zip(*seen):
            np.testing.assert_array_equal(b, a)
