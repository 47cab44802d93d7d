"""The activations after ReLU in the hand derivation, read as maths: each is defined by its formula
(ELU with indicators, GELU with Φ, softplus with ln and e), its local derivative is written as maths
(not the node's rule applied by name), every line evaluates to the engine's ``.grad``, and every
piece of LaTeX converts to MathML -- in both engines (the torch ones skip without torch).
"""

import pytest

from gradviz import formula
from gradviz.widget import AutogradWidget
from gradviz.widget.derivation import mathml
from test_derivation_maths import ENGINES, after_run_all, engine_grads, lib_of, read_the_maths, texts

# name: (how the program calls it, what the definition of d must hold, what the derivative must hold)
ACTIVATIONS = {
    "leaky_relu": (lambda lib, a: lib.nn.functional.leaky_relu(a, 0.1), r"\max(0, a) + 0.1 \min(0, a)", r"\mathbb{1}"),
    "elu": (lambda lib, a: lib.nn.functional.elu(a), r"\left(e^{a} - 1\right)", r"e^{a}"),
    "selu": (lambda lib, a: lib.nn.functional.selu(a), "1.051", r"e^{a}"),
    "celu": (lambda lib, a: lib.celu(a, 0.5), r"e^{\frac{a}{0.5}}", r"e^{\frac{a}{0.5}}"),
    "gelu": (lambda lib, a: lib.nn.functional.gelu(a), r"a \Phi(a)", r"\operatorname{erf}"),
    "gelu_tanh": (lambda lib, a: lib.nn.functional.gelu(a, approximate="tanh"), r"\tanh", r"\tanh^{2}"),
    "silu": (lambda lib, a: lib.nn.functional.silu(a), r"a \cdot \sigma\left(a\right)", r"\sigma"),
    "softplus": (lambda lib, a: lib.nn.functional.softplus(a), r"\ln\left(1 + e^{a}\right)", r"\sigma"),
    "softplus_beta": (lambda lib, a: lib.nn.functional.softplus(a, 2.0), r"\frac{1}{2}", r"\sigma"),
    "hardtanh": (lambda lib, a: lib.nn.functional.hardtanh(a, -0.5, 0.5), r"\min(\max(a,", r"\mathbb{1}"),
    "relu6": (lambda lib, a: lib.nn.functional.relu6(a), r"\min(\max(a, 0), 6)", r"\mathbb{1}"),
    "mish": (lambda lib, a: lib.nn.functional.mish(a), r"\tanh\left(\ln\left(1 + e^{a}\right)\right)", r"\sigma"),
    "logsigmoid": (lambda lib, a: lib.nn.functional.logsigmoid(a), r"\ln\left(\sigma\left(a\right)\right)", r"\sigma"),
    "hardsigmoid": (lambda lib, a: lib.nn.functional.hardsigmoid(a), r"\frac{\min(\max(a + 3, 0), 6)}{6}", r"\frac{1}{6}"),
    # in place: the node keeps the result (LeakyReluBackward1, EluBackward1, CeluBackward1)
    "leaky_relu_": (lambda lib, a: lib.nn.functional.leaky_relu(a * 1, 0.1, inplace=True), r"\min(0,", r"\mathbb{1}"),
    "elu_": (lambda lib, a: lib.nn.functional.elu(a * 1, inplace=True), r"\left(e^{", r"e^{"),
    "celu_": (lambda lib, a: lib.celu_(a * 1, 0.5), r"e^{\frac{", r"e^{\frac{"),
}


def _definition(widget, name):
    """The right-hand side of ``name``'s definition (of its last version, d_{2}, after an in-place op)."""
    lhs = [formula.latex_name(name) + " = ", formula.latex_name(name) + "_{2} = "]
    found = [d["latex"] for d in widget.derivation["defs"] if d["latex"].startswith(tuple(lhs))]
    assert found, (name, [d["latex"] for d in widget.derivation["defs"]])
    return found[-1].split(" = ", 1)[1]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_an_activation_is_derived_as_maths(engine, name):
    lib = lib_of(engine)
    make, defined, derivative = ACTIVATIONS[name]
    a = lib.tensor([-1.5, 0.25, 2.0], requires_grad=True)
    w = lib.tensor([1.0, -2.0, 0.5])
    d = make(lib, a)
    s = (d * w).sum()
    names = {"a": a, "d": d, "w": w, "s": s}
    grads = engine_grads(s, names, None)
    widget = AutogradWidget(s, names=names)
    read_the_maths(widget, grads)                       # every line is the engine's .grad
    assert defined in _definition(widget, "d")
    shown = texts(widget)
    lines = [t for t in shown if t.startswith(r"\frac{\partial s}{\partial a} = ")]
    assert lines and all(derivative in t for t in lines), (derivative, lines)   # the derivative, as maths
    for t in shown:                                    # the derivation's LaTeX converts to MathML
        if "\\" in t:
            out = mathml(t)["mathml"]
            assert out.startswith("<math") and "merror" not in out, (t, out)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_live_buttons_after_run_all(engine):
    """The notebook's own backward() frees the graph and a training step moves the leaves; the widget's
    backward(), zero_(), backward() run the activations again (PyTorch's own ops, with the numbers each
    node keeps, in the torch engine) and end with ✓ on every leaf."""
    lib = lib_of(engine)
    F = lib.nn.functional
    a = lib.tensor([-1.5, 0.25, 2.0], requires_grad=True)
    b = lib.tensor([0.5, -0.75, 1.25], requires_grad=True)
    h = F.leaky_relu(a, 0.1) + F.elu(b, 0.5) + F.gelu(a * b) + F.gelu(b, approximate="tanh")
    h = F.silu(h) + F.softplus(h, 2.0) + F.hardtanh(h, -0.5, 0.5) + lib.selu(h) + lib.celu(h, 0.7)
    s = (F.mish(h) + F.logsigmoid(h) + F.hardsigmoid(h)).sum()
    tensors = {"a": a, "b": b, "h": h, "s": s}
    w = AutogradWidget(s, names=tensors)
    after_run_all(lib, w, s, None, tensors, train=True)
