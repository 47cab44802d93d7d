"""smooth_l1_loss, huber_loss and kl_div (with xlogy) in the hand derivation, read as maths: each loss is defined by its
pieces (½(x − y)² inside β, linear beyond, with indicators), its derivative is written as maths (the
indicators and sign(x − y), 1/n for the mean, g ⊙ it for 'none'), every line evaluates to the engine's
``.grad``, every piece of LaTeX converts to MathML, and the live buttons after Run All end with ✓ --
in both engines (the torch ones skip without torch).
"""

import warnings

import pytest

from gradviz.widget import AutogradWidget
from gradviz.widget.derivation import mathml
from test_derivation_maths import ENGINES, after_run_all, engine_grads, lib_of, read_the_maths, texts

# (the loss, its keyword, the reduction): what the definition of L and the derivative must hold
CASES = {
    "smooth_l1_mean": ("smooth_l1_loss", {}, "mean", r"\frac{1}{6}\sum (\frac{1}{2} (p - y)^{2}", r"\frac{1}{6}"),
    "smooth_l1_beta_sum": ("smooth_l1_loss", {"beta": 0.5}, "sum", r"\sum (\frac{(p - y)^{2}}{2 \cdot 0.5}",
                           r"\frac{p - y}{0.5}"),
    "huber_delta_mean": ("huber_loss", {"delta": 0.5}, "mean", r"0.5 (|p - y| - \frac{0.5}{2})",
                         r"0.5 \operatorname{sign}"),
    "huber_none": ("huber_loss", {}, "none", r"\frac{1}{2} (p - y)^{2} \mathbb{1}[|p - y| < 1]", r"\odot"),
}


def _program(lib, case):
    fn, kw, reduction = CASES[case][:3]
    p = lib.tensor([[0.2, -0.4, 1.0], [0.5, 0.1, -0.3]], requires_grad=True)
    y = lib.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 1.5]], requires_grad=True)
    L = getattr(lib.nn.functional, fn)(p, y, reduction=reduction, **kw)
    s = L if reduction != "none" else (L * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum()
    return s, {"p": p, "y": y, "L": L, "s": s}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(CASES))
def test_a_regression_loss_is_derived_as_maths(engine, case):
    lib = lib_of(engine)
    s, names = _program(lib, case)
    grads = engine_grads(s, names, None)
    widget = AutogradWidget(s, names=names)
    read_the_maths(widget, grads)                      # every line is the engine's .grad (p's and y's)
    defined, derivative = CASES[case][3:]
    defs = [d["latex"] for d in widget.derivation["defs"]]
    assert any(d.startswith("L = ") and defined in d for d in defs), (defined, defs)
    shown = texts(widget)
    lines = [t for t in shown if t.startswith(r"\frac{\partial ") and r"}{\partial p} = " in t]
    assert lines and all(r"\mathbb{1}" in t and derivative in t for t in lines), (derivative, lines)
    for t in shown:
        if "\\" in t:
            out = mathml(t)["mathml"]
            assert out.startswith("<math") and "merror" not in out, (t, out)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_live_buttons_after_run_all(engine):
    """A linear model fitted with SmoothL1Loss(beta=0.5) + HuberLoss(delta=2): the notebook's own
    backward(), a training step, then backward(), zero_(), backward() end with ✓ on every leaf."""
    lib = lib_of(engine)
    w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = lib.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0]])
    t = lib.tensor([[1.0, 0.0], [0.0, 1.0], [5.0, -4.0]])
    p = x @ w
    s = lib.nn.SmoothL1Loss(beta=0.5)(p, t) + lib.nn.HuberLoss(delta=2.0)(p, t)
    tensors = {"w": w, "p": p, "s": s}
    widget = AutogradWidget(s, names=tensors)
    after_run_all(lib, widget, s, None, tensors, train=True)


# kl_div is written out of other ops (xlogy(t, t) − t·x, or e^t·(t − x) for log_target): no zero in a
# target that requires grad (its ∂/∂t is log t + 1 − x, −∞ there, as in PyTorch)
KL = [("batchmean", False, False), ("mean", True, False), ("sum", False, True), ("none", True, True)]


def _kl(lib, reduction, log_target, target_grad):
    z = lib.tensor([[0.2, -0.4, 1.0], [0.5, 0.1, -0.3]], requires_grad=True)
    x = z.log_softmax(1)
    t = lib.tensor([[0.2, 0.5, 0.3], [0.05, 0.9, 0.05]])
    t = (t.log() if log_target else t).requires_grad_(target_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # ('mean' warns, as in PyTorch)
        L = lib.nn.functional.kl_div(x, t, reduction=reduction, log_target=log_target)
    s = L if reduction != "none" else L.sum()
    names = {"z": z, "x": x, "L": L, "s": s}
    return s, {**names, "t": t} if target_grad else names


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", KL)
def test_kl_div_reads_as_maths(engine, case):
    """Every line evaluates to the engine's .grad (z's, and t's when it requires grad: through xlogy,
    ln t and t/t written as such)."""
    lib = lib_of(engine)
    s, names = _kl(lib, *case)
    widget = AutogradWidget(s, names=names)
    read_the_maths(widget, engine_grads(s, names, None))
    if case[2] and not case[1]:
        shown = " ".join(texts(widget))
        assert r"t \cdot \ln\left(t\right)" in shown and r"\frac{t}{t}" in shown   # b = t ln t, ∂b/∂t⁽²⁾ = t/t


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", KL)
def test_kl_div_live_buttons_after_run_all(engine, case):
    """backward(), zero_(), backward() after the notebook's own backward() and a training step end with ✓
    (under real torch, xlogy(t, t), which SubBackward0 does not keep, runs again as a tensor 0)."""
    lib = lib_of(engine)
    s, names = _kl(lib, *case)
    widget = AutogradWidget(s, names=names)
    after_run_all(lib, widget, s, None, names, train=True)
