"""gradviz.optim.lr_scheduler and optimizers given named_parameters(), against PyTorch 2.13: the
rates after every step to the last bit, momentum/betas cycled, state_dict() contents, reprs,
warnings (a scheduler stepped before its optimizer, get_lr() outside step(), the epoch argument)
and error messages; load_state_dict of optimizer states."""

import pytest

import gradviz
from parity import printed

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RUN = """S = torch.optim.lr_scheduler
def run(make, n=14, opt_cls=torch.optim.SGD, metric=None, **okw):
    w = torch.nn.Parameter(torch.ones(2))
    opt = opt_cls([w], lr=0.1, **okw)
    s = make(opt)
    print(type(s).__name__, s.get_last_lr())
    for i in range(n):
        opt.step()
        s.step(metric[i % len(metric)]) if metric else s.step()
        g = opt.param_groups[0]
        print(i, s.get_last_lr(), g["lr"], g.get("momentum"), g.get("betas"))
    print(s.state_dict() if not hasattr(s, "_schedulers") else sorted(s.state_dict()))
"""

SCHEDULES = {
    "StepLR": "run(lambda o: S.StepLR(o, 3, 0.5))",
    "MultiStepLR": "run(lambda o: S.MultiStepLR(o, [2, 5, 5], 0.3))",
    "ExponentialLR": "run(lambda o: S.ExponentialLR(o, 0.9))",
    "CosineAnnealingLR": "run(lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.001))",
    "LambdaLR": "run(lambda o: S.LambdaLR(o, lambda e: 0.95 ** e))",
    "MultiplicativeLR": "run(lambda o: S.MultiplicativeLR(o, lambda e: 0.9))",
    "LinearLR": "run(lambda o: S.LinearLR(o, start_factor=0.25, total_iters=4))",
    "ConstantLR": "run(lambda o: S.ConstantLR(o, factor=0.5, total_iters=3))",
    "PolynomialLR": "run(lambda o: S.PolynomialLR(o, total_iters=6, power=2.0))",
    "OneCycleLR": "run(lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=14), momentum=0.9)",
    "OneCycleLR, Adam, linear, three phases": """run(lambda o: S.OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=7,
    anneal_strategy="linear", three_phase=True), opt_cls=torch.optim.Adam)""",
    "ReduceLROnPlateau": "run(lambda o: S.ReduceLROnPlateau(o, patience=1, factor=0.5), metric=[1.0, .9, .95, .97, .99, .5])",
    "ReduceLROnPlateau max abs cooldown": """run(lambda o: S.ReduceLROnPlateau(o, "max", patience=0, threshold=0.1,
    threshold_mode="abs", cooldown=2, min_lr=0.02), metric=[1.0, 1.05, 1.2, 1.1])""",
    "SequentialLR": "run(lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, total_iters=3), S.ExponentialLR(o, 0.8)], [3]))",
    "ChainedScheduler": "run(lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=2), S.ExponentialLR(o, 0.9)]))",
    "CyclicLR": "run(lambda o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode='triangular2'), momentum=0.9)",
    "CosineAnnealingWarmRestarts": "run(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01))",
}

SHOWN = {
    "warnings, reprs and errors": """S = torch.optim.lr_scheduler
w = torch.nn.Parameter(torch.ones(2)); opt = torch.optim.SGD([w], lr=0.1); s = S.StepLR(opt, 2)
s.step()                       # before opt.step(): torch's warning
print(s, opt); print(s.get_lr())
s2 = S.StepLR(torch.optim.SGD([w], lr=1.0), 2); s2.load_state_dict(s.state_dict()); print(s2.get_last_lr(), s2.last_epoch)
s.step(5); print(s.get_last_lr())
for bad in [lambda: S.StepLR("x", 2), lambda: S.LinearLR(opt, start_factor=0), lambda: S.ConstantLR(opt, 2.0),
            lambda: S.OneCycleLR(opt, 1.0), lambda: S.ReduceLROnPlateau(opt, factor=1.5),
            lambda: S.ReduceLROnPlateau(opt, mode="up"), lambda: S.SequentialLR(opt, [S.StepLR(opt, 1)], [1]),
            lambda: S.LambdaLR(opt, [lambda e: 1, lambda e: 2]),
            lambda: S.StepLR(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1), 2, last_epoch=3)]:
    try:
        bad()
    except (TypeError, ValueError, KeyError) as e:
        print(type(e).__name__, e)
o = torch.optim.SGD([w], lr=0.1); s = S.OneCycleLR(o, 1.0, total_steps=2)
try:
    for _ in range(3):
        o.step(); s.step()
except ValueError as e:
    print(e)
""",
    "a training loop": """torch.manual_seed(0)
D = torch.utils.data
X = torch.randn(40, 3); y = (X @ torch.tensor([1.5, -2.0, 0.5]) + 0.3).unsqueeze(1)
dl = D.DataLoader(D.TensorDataset(X, y), batch_size=8, shuffle=True)
model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=3, steps_per_epoch=len(dl))
plateau_opt = torch.optim.Adam(model.named_parameters(), lr=0.01)
for epoch in range(3):
    for xb, yb in dl:
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        print(epoch, loss.item(), sched.get_last_lr())
print(opt.state_dict()["param_groups"][0]["lr"], plateau_opt.state_dict()["param_groups"][0]["param_names"])
""",
    "named parameters": """torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
opt = torch.optim.Adam(m.named_parameters(), lr=0.01)
print(opt)
m(torch.ones(4, 2)).sum().backward(); opt.step()
sd = opt.state_dict()
print(sd["param_groups"], list(sd["state"]), sd["state"][0]["step"])
opt2 = torch.optim.SGD([{"params": m[0].named_parameters()}, {"params": m[2].named_parameters(), "lr": 0.5}], lr=0.1)
print(opt2.state_dict())
for bad in [lambda: torch.optim.SGD([("a", m[0].weight), m[0].bias]),
            lambda: torch.optim.SGD(m[0].named_parameters()).add_param_group({"params": m[2].parameters()}),
            lambda: torch.optim.Adam([m[0].weight]).load_state_dict(sd),
            lambda: torch.optim.Adam([{"params": [m[0].weight]}, {"params": [m[0].bias]}]).load_state_dict(sd)]:
    try:
        bad()
    except ValueError as e:
        print(e)
opt3 = torch.optim.Adam(m.parameters(), lr=0.01)
opt3.load_state_dict(sd); print(opt3.state_dict()["param_groups"], opt3.state[m[0].weight])
for _ in range(2):
    opt3.zero_grad(); m(torch.ones(4, 2)).sum().backward(); opt3.step()
print(m[0].weight, opt3.state_dict()["state"][3])
""",
    "schedulers a SequentialLR or ChainedScheduler refuses": """w = torch.nn.Parameter(torch.ones(2))
opt, other = torch.optim.SGD([w], lr=0.1), torch.optim.SGD([w], lr=0.2)
S = torch.optim.lr_scheduler
for bad in [[S.StepLR(opt, 2), object()], [S.StepLR(opt, 2), S.ReduceLROnPlateau(opt)],
            [S.StepLR(opt, 2), S.StepLR(other, 2)], []]:
    for make in [lambda s: S.SequentialLR(opt, s, milestones=[3] * max(len(s) - 1, 0)),
                 lambda s: S.ChainedScheduler(s, opt)]:
        try:
            make(bad)
        except (TypeError, ValueError) as e:
            print(type(e).__name__, e)
""",
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_rates_as_torch(name):
    code = RUN + SCHEDULES[name]
    assert printed(gradviz, code) == printed(torch, code)


@pytest.mark.parametrize("name", SHOWN)
def test_as_torch(name):
    assert printed(gradviz, SHOWN[name]) == printed(torch, SHOWN[name])


def test_module_path():
    from gradviz.optim.lr_scheduler import StepLR
    import gradviz.optim.lr_scheduler as lrs
    assert lrs.StepLR is StepLR and StepLR.__module__ == "gradviz.optim.lr_scheduler"
