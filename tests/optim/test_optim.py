"""gradviz.optim against PyTorch 2.13: Adam, AdamW, RMSprop and Adagrad steps bit for bit, reprs,
state, messages, and seeded training loops printing the same losses."""

import contextlib
import io
import re
import warnings

import numpy as np
import pytest

import gradviz
import gradviz.optim as goptim
from gradviz.kernels import _mkl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

LIBS = (torch, gradviz)

CASES = [
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"amsgrad": True, "maximize": True, "betas": (0.5, 0.9)}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.3}),
    ("RMSprop", {}),
    ("RMSprop", {"centered": True, "momentum": 0.9, "weight_decay": 0.01}),
    ("RMSprop", {"momentum": 0.5, "alpha": 0.9, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.1}),
]


def run_steps(L, name, kwargs, dtype, p0, grads):
    p = L.nn.Parameter(L.tensor(p0, dtype=getattr(L, dtype)))
    opt = getattr(L.optim, name)([p], **kwargs)
    for g in grads:
        p.grad = L.tensor(g, dtype=getattr(L, dtype))
        opt.step()
    return p.detach().numpy().copy(), {k: v.numpy().copy() for k, v in opt.state[p].items()}


@pytest.fixture
def torch_sqrt(monkeypatch):
    """PyTorch's CPU sqrt goes through MKL's vsSqrt/vdSqrt, which is not correctly rounded (numpy's
    is). gradviz calls the same MKL when it is installed; where it is not, the step is given torch's
    sqrt, so every other float operation of a step must still agree to the last bit."""
    if _mkl.library() is None:
        monkeypatch.setattr(goptim, "_sqrt", lambda a: torch.from_numpy(np.ascontiguousarray(a)).sqrt().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs", CASES, ids=[f"{n}{k}" for n, k in CASES])
def test_steps_are_bit_identical(torch_sqrt, name, kwargs, dtype):
    rng = np.random.default_rng(abs(hash((name, str(kwargs), dtype))) % 2 ** 32)
    for n in (1, 5, 16, 33, 70):   # below and above the vector width of the kernels
        p0 = rng.standard_normal(n)
        grads = [rng.standard_normal(n) * 10 ** rng.uniform(-3, 1) for _ in range(6)]
        (tp, tstate), (gp, gstate) = (run_steps(L, name, kwargs, dtype, p0, grads) for L in LIBS)
        np.testing.assert_array_equal(gp, tp)
        assert list(gstate) == list(tstate)
        for key in tstate:
            np.testing.assert_array_equal(gstate[key], tstate[key])


# --- what a student sees ---------------------------------------------------------------------------

def printed(L, code):
    buf = io.StringIO()
    program = compile(code, "<optim>", "exec")
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(program, {"torch": L})
        except Exception as e:  # noqa: BLE001 -- the message is part of what is compared
            print(f"ERROR {type(e).__name__}: {e}")
    return re.sub(r"at 0x[0-9a-f]+", "at 0x?", buf.getvalue()).replace("gradviz", "torch")


SHOWN = {
    "reprs": """w = torch.nn.Parameter(torch.ones(2))
for O in (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, torch.optim.Adagrad):
    print(O([w]), type(O([w])), O([w]).defaults)
print(torch.optim.Adam([{'params': [w]}, {'params': [torch.nn.Parameter(torch.zeros(1))], 'lr': 0.1}], betas=(0.5, 0.6)))
""",
    "state after steps": """w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
for O in (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, torch.optim.Adagrad):
    opt = O([w], lr=0.5)
    print(opt.state[w])
    for _ in range(2):
        opt.zero_grad(); (w * w * w).sum().backward(); opt.step()
    print(w, opt.state[w], opt.state_dict())
opt = torch.optim.RMSprop([w], momentum=0.9, centered=True)
(w * w).sum().backward(); opt.step(); print(list(opt.state[w]))
""",
    "closure": """w = torch.nn.Parameter(torch.tensor([3.0]))
opt = torch.optim.Adam([w], lr=0.1)
def closure():
    opt.zero_grad(); loss = (w ** 2).sum(); loss.backward(); return loss
print(opt.step(closure), w, w._version)
""",
}

ERRORS = [
    "torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], lr=-1)",
    "torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], eps=-1)",
    "torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], betas=(1.0, 0.9))",
    "torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], betas=(0.9, -0.1))",
    "torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], betas=(0, 0.9))",
    "torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], weight_decay=-1)",
    "torch.optim.AdamW([], lr=0.1)",
    "torch.optim.RMSprop([torch.nn.Parameter(torch.ones(1))], alpha=-1)",
    "torch.optim.RMSprop([torch.nn.Parameter(torch.ones(1))], momentum=-1)",
    "torch.optim.RMSprop([torch.nn.Parameter(torch.ones(1))], eps=-1)",
    "torch.optim.Adagrad([torch.nn.Parameter(torch.ones(1))], lr_decay=-1)",
    "torch.optim.Adagrad([torch.nn.Parameter(torch.ones(1))], initial_accumulator_value=-1)",
    "torch.optim.Adagrad([torch.nn.Parameter(torch.ones(1))], eps=-1)",
]


@pytest.mark.parametrize("name", list(SHOWN))
def test_printed_like_torch(torch_sqrt, name):
    assert printed(gradviz, SHOWN[name]) == printed(torch, SHOWN[name])


@pytest.mark.parametrize("code", ERRORS)
def test_messages_like_torch(code):
    assert printed(gradviz, code) == printed(torch, code)


# --- seeded training loops, printed ----------------------------------------------------------------

LOOPS = {
    "Adam, CrossEntropyLoss, MLP": """torch.manual_seed(0)
X = torch.randn(24, 4); y = (X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 1).long()
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = torch.nn.CrossEntropyLoss()
for step in range(8):
    opt.zero_grad(); loss = loss_fn(model(X), y); loss.backward(); opt.step()
    print(step, loss.item())
print(model[2].bias)
""",
    "RMSprop, MSELoss, tanh": """torch.manual_seed(1)
X = torch.randn(16, 3); y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
for step in range(8):
    opt.zero_grad(); loss = torch.nn.functional.mse_loss(model(X), y); loss.backward(); opt.step()
    print(step, loss.item())
print(model[0].weight)
""",
    "Adam, MSELoss, ReLU (no exp or log)": """torch.manual_seed(2)
X = torch.randn(16, 3); y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for step in range(8):
    opt.zero_grad(); loss = torch.nn.functional.mse_loss(model(X), y); loss.backward(); opt.step()
    print(step, loss.item())
""",
}


# Where a loop differs in the last digits without MKL, the reason is named.
SQRT = pytest.mark.xfail(_mkl.library() is None, strict=False,
                         reason="PyTorch's CPU sqrt is MKL's vsSqrt, not correctly rounded (about 20% of float32 "
                                "results differ from numpy's by one ulp); without MKL 2024.2 installed (the `exact` "
                                "extra) Adam/RMSprop/Adagrad steps differ in the last bit")
_MARKS = {"RMSprop, MSELoss, tanh": [SQRT], "Adam, MSELoss, ReLU (no exp or log)": [SQRT]}


@pytest.mark.parametrize("name", [pytest.param(n, marks=_MARKS.get(n, [])) for n in LOOPS])
def test_training_loop_prints_torchs_losses(name):
    assert printed(gradviz, LOOPS[name]) == printed(torch, LOOPS[name])


@pytest.mark.parametrize("name", list(LOOPS))
def test_training_loop_prints_torchs_losses_given_its_sqrt(torch_sqrt, name):
    """With PyTorch's sqrt, everything else of the steps is gradviz's own."""
    assert printed(gradviz, LOOPS[name]) == printed(torch, LOOPS[name])
