"""The displayed chain rule is evaluated, number for number, and compared with the engine's gradient.

Every formula the derivation panel shows is a :mod:`gradviz.formula` tree; the LaTeX on screen is
``tree.latex()`` / ``tree.latex(numbers=True)``.  These tests evaluate those very trees -- exactly,
and from the numbers *as written* (rounded to the digits shown) -- for every lesson graph
(``tests/widget_lessons.py`` and every ``animate()`` call of ``notebooks/*.ipynb``) and for random
graphs, and compare with what the engine accumulated into ``.grad``.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import gradviz
import gradviz as torch
from gradviz import formula
from gradviz.widget import AutogradWidget
from strategies import graphs
from test_notebooks import lesson_params
from widget_lessons import LESSONS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


# --- every lesson graph -----------------------------------------------------------------------

def engine_gradients(w):
    """What the engine accumulated into each leaf's .grad in the widget's first backward() call."""
    out = {}
    for f in w.frames:
        if f["kind"] == "acc" and f["run"] == 0:
            out[f["event"]["seq"]] = np.array(f["event"]["grad_in"], dtype=np.float64)
    return out


def assert_displayed_math_is_the_engines(w, rtol=2e-4, shown_rtol=2e-2):
    lesson, formulas = w._animation.lesson, w._animation.formulas
    grads = engine_gradients(w)
    assert grads, "the widget recorded no backward pass"
    shown = {e["leaf"]: e for e in w.derivation["leaves"]}
    for leaf in lesson.leaves[:len(w.derivation["leaves"])]:
        trees = formulas["exprs"][leaf.seq]
        entry = shown[lesson.name(leaf)]
        for tree, path in zip(trees, entry["paths"]):
            stages = [m["latex"] for m in path["stages"]]
            assert tree.latex() in stages and tree.latex(numbers=True) in stages   # the trees are what is shown
        if entry["count"] != len(trees):
            continue                         # not every path is written: the sum says "…"
        want = grads[leaf.seq]
        total = np.broadcast_to(sum(t.value() for t in trees), want.shape)
        np.testing.assert_allclose(total, want, rtol=rtol, atol=1e-5 * (1 + np.abs(want).max()),
                                   err_msg=f"{lesson.name(leaf)}: {[t.latex() for t in trees]}")
        with formula.as_shown():                   # the numbers as a student reads them
            written = np.broadcast_to(sum(t.value() for t in trees), want.shape)
        np.testing.assert_allclose(written, want, rtol=shown_rtol, atol=shown_rtol * (1 + np.abs(want).max()))


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_lesson_derivations_evaluate_to_the_engines_gradient(name):
    root, names, gradient = LESSONS[name]()
    w = AutogradWidget(root, gradient, names=names)
    assert_displayed_math_is_the_engines(w)


def test_the_mlp_is_written_as_matrices():
    root, names, gradient = LESSONS["tiny_mlp"]()
    w = AutogradWidget(root, gradient, names=names)
    leaves = {e["leaf"]: e for e in w.derivation["leaves"]}
    w1 = [m["latex"] for m in leaves["W1"]["paths"][0]["stages"]]
    assert any(s.startswith("X^{T}") and r"W_{2}^{T}" in s and r"\odot" in s and r"\tanh^{2}\left(" in s
               for s in w1), w1
    b1 = [m["latex"] for m in leaves["b1"]["paths"][0]["stages"]]
    assert any(s.startswith(r"\sum_{\text{batch}}") for s in b1), b1
    where = [m["latex"] for m in w.derivation["where"]]
    assert any(r"\frac{1}{4}" in s for s in where), "n = 4 filled in (in δ's definition)"


def test_the_mlp_names_the_gradient_at_its_output_delta_once():
    """Lesson 6's long matrix formulas fit a line of the panel: ``δ = ∂loss/∂d = 1/n · (2f) = 1/4 · (2f)``
    is written once, then ``∂loss/∂W₁ = Xᵀ[(δ W₂ᵀ) ⊙ (1 − tanh²(b))]``, ``∂loss/∂W₂ = hᵀ δ``,
    ``∂loss/∂b₂ = Σ δ``.  δ's definition, evaluated as displayed (exactly and from its numbers as
    written), is the engine's ∂loss/∂d, and every line using it evaluates to the engine's .grad."""
    X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    Y = torch.tensor([[0.], [1.], [1.], [0.]])
    torch.manual_seed(0)
    W1, b1 = torch.randn(2, 4, requires_grad=True), torch.zeros(4, requires_grad=True)
    W2, b2 = torch.randn(4, 1, requires_grad=True), torch.zeros(1, requires_grad=True)
    h = torch.tanh(X @ W1 + b1)
    d = h @ W2 + b2
    d.retain_grad()
    loss = ((d - Y) ** 2).mean()
    w = AutogradWidget(loss, names={"X": X, "Y": Y, "W1": W1, "b1": b1, "W2": W2, "b2": b2, "h": h, "d": d})
    delta = w._animation.formulas["delta"]
    where = [m["latex"] for m in w.derivation["where"]]
    assert len(where) == 1 and where[0].startswith(delta.definition() + " = \\left[\\begin{matrix}")   # and its value
    assert where[0].startswith(r"\delta = \frac{\partial \mathrm{loss}}{\partial d} = ") and r"\frac{1}{4}" in where[0], where
    leaves = {e["leaf"]: [m["latex"] for m in e["paths"][0]["stages"]] for e in w.derivation["leaves"]}
    assert r"X^{T} \left[\left(\delta W_{2}^{T}\right) \odot" in leaves["W1"][1], leaves["W1"]
    assert all(r"\delta" in stages[1] for stages in leaves.values()), leaves
    assert leaves["b2"][1] == r"\sum \delta", leaves["b2"]          # b₂ = [b] takes the sum of all of δ
    d.grad = None                     # (animate()'s own backward() filled the retained one)
    loss.backward()
    np.testing.assert_allclose(delta.value(), d.grad.numpy(), rtol=1e-5)
    with formula.as_shown():
        np.testing.assert_allclose(delta.value(), d.grad.numpy(), rtol=2e-2, atol=1e-3)
    assert_displayed_math_is_the_engines(w)


def notebook_cells(path):
    """The code of a notebook's code cells, in order."""
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def notebook_widgets(path, ns=None, stop=None):
    """Run a notebook's code in-process (in ``ns``); every ``gradviz.animate()`` call gives its widget.

    ``stop``: end after the cell that made that many widgets (the namespace as it was then)."""
    cells = notebook_cells(path)
    made = []
    real = gradviz.animate

    def animate(root, gradient=None, **options):
        import sys
        w = AutogradWidget(root, gradient, _frame=sys._getframe(1), **options)
        made.append(w)
        return w

    ns = {"__name__": "__main__"} if ns is None else ns
    gradviz.animate = animate
    try:
        for src in cells:
            if stop is not None and len(made) >= stop:
                break
            try:
                exec(compile(src, path.name, "exec"), ns)
            except Exception:  # the lessons raise on purpose (a freed graph...): go on, as Run All does
                pass
    finally:
        gradviz.animate = real
    return made


@pytest.mark.parametrize("path", lesson_params())
def test_notebook_derivations_evaluate_to_the_engines_gradient(path):
    widgets = notebook_widgets(path)
    assert widgets, "every lesson animates at least one graph"
    for w in widgets:
        assert_displayed_math_is_the_engines(w)
        assert w.svg_lr == "", "a lesson's graph is larger top to bottom: no second drawing (docs/layout-direction.md)"


# --- random graphs ----------------------------------------------------------------------------

@SETTINGS
@given(graphs())
def test_random_elementwise_graphs(case):
    root, leaves = case
    assume(root.requires_grad)
    w = AutogradWidget(root, names={})
    assert_displayed_math_is_the_engines(w)


ACTS = ["tanh", "sigmoid", "relu", "exp", "square", "sin", "none"]


@st.composite
def networks(draw):
    """Small networks on a batch: matrix products, broadcast biases, activations, a mean or a sum."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    batch, n_in = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    widths = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    X = torch.tensor(rng.uniform(-1, 1, (batch, n_in)).astype(np.float32))
    h, leaves, k = X, [], n_in
    for m in widths:
        W = torch.tensor(rng.uniform(-1, 1, (k, m)).astype(np.float32), requires_grad=True)
        leaves.append(W)
        h = h @ W
        if draw(st.booleans()):
            b = torch.tensor(rng.uniform(-1, 1, m).astype(np.float32), requires_grad=True)
            leaves.append(b)
            h = h + b
        act = draw(st.sampled_from(ACTS))
        h = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu, "exp": torch.exp,
             "square": lambda t: t ** 2, "sin": torch.sin, "none": lambda t: t * 2.0}[act](h)
        k = m
    if draw(st.booleans()):
        Y = torch.tensor(rng.uniform(-1, 1, h.shape).astype(np.float32))
        loss = ((h - Y) ** 2).mean()
    else:
        loss = h.sum() if draw(st.booleans()) else h.mean()
    return loss, leaves


@SETTINGS
@given(networks())
def test_random_networks(case):
    root, leaves = case
    w = AutogradWidget(root, names={})
    assert_displayed_math_is_the_engines(w)


# --- the product so far, frame by frame -------------------------------------------------------

@pytest.mark.parametrize("name", sorted(LESSONS))
def test_each_backward_step_says_what_it_sends_and_the_formula_agrees(name):
    root, names, gradient = LESSONS[name]()
    assert_steps_agree(AutogradWidget(root, gradient, names=names))


@SETTINGS
@given(st.one_of(graphs(), networks()))
def test_each_backward_step_of_random_graphs_agrees(case):
    root, leaves = case
    assume(root.requires_grad)
    assert_steps_agree(AutogradWidget(root, names={}))


def assert_steps_agree(w):
    """Every node frame's so-far formulas evaluate to what the engine sent down each edge."""
    math_ = w._animation.math
    nodes = {n.seq: n for n in w._animation.lesson.nodes}
    seen = 0
    for f in w.frames:
        if f["kind"] != "node" or f["run"] != 0:
            continue
        node = nodes[f["event"]["seq"]]
        sent = [(i, g) for i, g in enumerate(f["event"]["grads_out"]) if g is not None]
        assert len(f["chain"]["so_far"]) == len(sent)
        for (i, g), item in zip(sent, f["chain"]["so_far"]):
            tree = math_.edge[(id(node), i)]
            assert tree.latex() in item["latex"] or tree.latex(numbers=True) in item["latex"]
            np.testing.assert_allclose(np.broadcast_to(tree.value(), np.shape(g)), np.array(g, dtype=float),
                                       rtol=2e-4, atol=1e-6)
            seen += 1
        for leaf_name, j, k in f["chain"]["factors"]:
            entry = next(e for e in w.derivation["leaves"] if e["leaf"] == leaf_name)
            factor = entry["paths"][j]["factors"][k]
            assert factor["node"] == f["focus"][0]
    assert seen


def test_factors_point_at_the_picture_and_fan_in_paths_carry_their_term():
    root, names, gradient = LESSONS["fan_out"]()
    w = AutogradWidget(root, gradient, names=names)
    a = next(e for e in w.derivation["leaves"] if e["leaf"] == "a")
    node_ids = {n["id"] for n in w.graph["nodes"]}
    edge_ids = {e["id"] for e in w.graph["edges"]}
    for p in a["paths"]:
        assert "term" in p and p["term"]["mathml"].startswith("<math")
        assert len(p["factors"]) == len(p["stages"][0]["latex"].split(r" \cdot "))
        for fac in p["factors"]:
            assert fac["node"] in node_ids and (fac["edge"] is None or fac["edge"] in edge_ids)
    acc = next(f for f in w.frames if f["kind"] == "acc" and f["event"]["seq"] == names["a"]._seq)
    (item,) = acc["chain"]["so_far"]
    assert item["of"] == "a" and item["value"] == "[1245.2864, -18.8506]"    # PyTorch's format
    assert item["latex"].startswith(r"\frac{\partial \mathrm{out}}{\partial a} = ")


def test_the_nn_linear_network_of_lesson_6():
    """nn.Linear records addmm with a transposed weight: Xᵀ … then ᵀ, and the bias summed over the batch."""
    X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    Y = torch.tensor([[0.], [1.], [1.], [0.]])
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    loss = torch.nn.MSELoss()(model(X), Y)
    w = AutogradWidget(loss, names={"X": X, "Y": Y, "model": model, "loss": loss})
    assert_displayed_math_is_the_engines(w)
    bias = next(e for e in w.derivation["leaves"] if e["leaf"] == "model.0.bias")
    assert any(m["latex"].startswith(r"\sum_{\text{batch}}") for m in bias["paths"][0]["stages"])


def test_a_scalar_broadcast_under_the_roots_sum_is_summed_over_its_copies():
    """(x·s + s).sum(): s was copied to both elements, so ∂/∂s through + is Σ(1 · 1) = 2, not 1."""
    x = torch.tensor([1.137, 0.77], requires_grad=True)
    s = torch.tensor(0.541, requires_grad=True)
    w = AutogradWidget((x * s + s).sum(), names={"x": x, "s": s})
    assert_displayed_math_is_the_engines(w)
    assert_steps_agree(w)
    entry = next(e for e in w.derivation["leaves"] if e["leaf"] == "s")
    assert any(m["latex"] == r"\sum \left(1 \cdot 1\right)" for p in entry["paths"] for m in p["stages"])


# one of each way a gradient is written: reductions along a dim, views, transposes, expand, the
# losses, powers, matrix-vector products, and ops written as their backward node applied (Rule)
ON_A_MATRIX = {
 "sum_dim": lambda a: (a.sum(dim=0) ** 2).sum(),
 "sum_dim_keep": lambda a: (a.sum(dim=1, keepdim=True) * a).sum(),
 "mean_dim": lambda a: a.mean(dim=1).exp().sum(),
 "view": lambda a: (a.view(-1) * 3).sum(),
 "t": lambda a: (a.t() @ a).sum(),
 "transpose": lambda a: (a.transpose(0, 1) * 2).sum(),
 "unsqueeze": lambda a: (a.unsqueeze(0) * a).sum(),
 "expand": lambda a: (a[:, :1].expand(3, 4) * a).sum(),
 "mse": lambda a: torch.nn.functional.mse_loss(a, torch.ones(3, 4)),
 "mse_sum": lambda a: torch.nn.functional.mse_loss(a, torch.ones(3, 4), reduction="sum"),
 "pow_tt": lambda a: (a ** a).sum(),
 "div": lambda a: (1 / a + a / 2).mean(),
 "rsub": lambda a: (2 - a).log().sum(),
 "mv": lambda a: (a @ torch.ones(4)).sum(),
 "softmax": lambda a: (a.softmax(dim=1) * torch.arange(4.)).sum(),
 "max": lambda a: a.max() * 2,
 "clamp": lambda a: a.clamp(0.8, 1.2).sum(),
 "sigmoid_relu": lambda a: (a.sigmoid() - 0.6).relu().sum(),
 "abs_neg": lambda a: (-a + 1).abs().sum(),
 "cat": lambda a: torch.cat([a, a * 2]).sum(),
 "index": lambda a: (a[1] * a[2]).sum(),
 "addmm": lambda a: torch.addmm(torch.ones(4), a, torch.ones(4, 4)).tanh().sum(),
}



@pytest.mark.parametrize("name", sorted(ON_A_MATRIX))
def test_each_way_a_gradient_is_written_evaluates_to_the_engines(name):
    rng = np.random.default_rng(1)
    a = torch.tensor(rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32), requires_grad=True)
    w = AutogradWidget(ON_A_MATRIX[name](a), names={"a": a})
    assert w.derivation.get("error") is None, w.derivation.get("error")
    assert_displayed_math_is_the_engines(w)
    assert_steps_agree(w)


def test_a_number_copied_to_every_element_is_multiplied_with_a_dot():
    root, names, gradient = LESSONS["tiny_mlp"]()
    w = AutogradWidget(root, gradient, names=names)
    assert r"\frac{1}{4} \cdot \left(2 f\right)" in w.derivation["where"][0]["latex"]    # δ = … = 1/4 · (2f)
