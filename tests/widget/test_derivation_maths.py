"""The maths the widget shows, read as maths: every line of the derivation evaluates to the engine's
``.grad``, and no panel or caption holds ``□``, an exception's text or a node name used as a function.

For every widget of every lesson (tests/widget_lessons.py, and lessons 5-7's own programs) and for
random programs (hypothesis) covering ``gradient=``, cross-entropy, in-place rebinding, reuse,
collapsed modules and custom Functions, in both engines (the torch ones skip without torch).

Then the live buttons after Run All (:func:`after_run_all`: the notebook's own backward() freed the
graph, maybe a training step since): backward(), zero_(), backward() ends with ✓ on every leaf and
the derivation, worked out again at the values the press ran on, still reads as the engine's
``.grad``; only a custom Function (its forward is the user's code, never run again) ends on the
note saying so in words.
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradviz
from gradviz.widget import AutogradWidget
from gradviz.widget.i18n import render
from widget_lessons import LESSONS

ENGINES = ["gradviz", pytest.param("torch", marks=pytest.mark.torch)]


def lib_of(engine):
    if engine == "gradviz":
        return gradviz
    return pytest.importorskip("torch")


# --- reading a widget ---------------------------------------------------------------------------

# a node name written as a function: \mathrm{LogSoftmaxBackward0}\left( ... or Linear(...
AS_FUNCTION = re.compile(r"(\\mathrm\{|\\operatorname\{)?[A-Z][A-Za-z]*Backward\d*\}?\s*(\\left)?\(|"
                         r"\\mathrm\{(Linear|Conv\w*|BatchNorm\w*|Sequential)\}\\left\(")
EXCEPTION = re.compile(r"\b[A-Z]\w*(Error|Exception)\b|Traceback|unsupported operand|NoneType|"
                       r"object has no attribute")


def texts(widget):
    """Every piece of text the widget shows: derivation LaTeX, captions (en, ko), running products."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("latex", "value", "chain", "closed", "error", "leaf") and isinstance(x, str):
                    out.append(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(widget.derivation)
    for f in widget.frames:
        for lang in ("en", "ko"):
            out.append(render(lang, f["msg"]))
        walk(f.get("chain") or {})
    return out


def read_the_maths(widget, grads, run=0):
    """The checks of this file, on one widget; ``grads``: {leaf name: the engine's .grad} in the pass
    ``run`` of the trace (0: animate()'s own; -1: the last button press, at the values it ran on)."""
    for text in texts(widget):
        assert r"\square" not in text and "□" not in text, text
        assert not EXCEPTION.search(text), text
        assert not AS_FUNCTION.search(text), text
    lesson, keep = widget._animation.lesson, widget._animation.formulas
    assert "error" not in widget.derivation, widget.derivation.get("error")
    for leaf in lesson.leaves[:8]:
        name = lesson.name(leaf)
        want = grads.get(name)
        if want is None:
            continue
        exprs = keep["exprs"].get(leaf.seq, [])
        entry = next(e for e in widget.derivation["leaves"] if e["leaf"] == name)
        if exprs and all(e is not None for e in exprs) and len(exprs) == entry["count"]:
            total = sum(np.asarray(e.value(), np.float64) for e in exprs)
            assert np.allclose(total, want, rtol=1e-3, atol=1e-5), (name, total, want)
        for line in keep.get("lines", {}).get(leaf.seq, []):       # the backprop form: each line
            assert np.allclose(line.value(), want, rtol=1e-3, atol=1e-5), (name, line.latex(), want)
    for key, (expr, value) in keep.get("checked", {}).items():     # every numbered line's value
        assert np.allclose(np.asarray(expr.value(), np.float64), value, rtol=1e-3, atol=1e-5), (key, expr.latex())
    lines = keep.get("node_lines", {})
    runs = widget._animation.lesson.trace.runs
    shown = [runs[run]] if runs else []
    for run in shown:                                            # backprop's numbered lines: each tensor's gradient
        for e in run.events:
            if e.node is not None and id(e.node) in lines:
                assert np.allclose(np.asarray(lines[id(e.node)].value(), np.float64),
                                   np.asarray(e.grad_in, np.float64), rtol=1e-3, atol=1e-5), e.node.name
    math = widget._animation.math
    if math is not None:                       # what each step sends, as the running product writes it
        for run in shown:
            for e in run.events:
                if e.node is None:
                    continue
                for i, g in enumerate(e.grads_out):
                    expr = math.edge.get((id(e.node), i))
                    if expr is not None and g is not None:
                        assert np.allclose(np.asarray(expr.value(), np.float64), np.asarray(g, np.float64),
                                           rtol=1e-3, atol=1e-5), (e.node.name, i, expr.latex())


def engine_grads(root, names, gradient, retain=True):
    """Each leaf's .grad after ``root.backward(gradient)`` from zero (then put back to None)."""
    leaves = [t for t in names.values() if getattr(t, "is_leaf", False) and t.requires_grad]
    for t in leaves:
        t.grad = None
    root.backward(gradient, retain_graph=retain)
    ids = {id(t) for t in leaves}
    out = {k: np.array(t.grad.detach().numpy(), np.float64)
           for k, t in names.items() if id(t) in ids and t.grad is not None}
    for t in leaves:
        t.grad = None
    return out


def check(root, names, gradient=None, **options):
    grads = engine_grads(root, names, gradient)
    w = AutogradWidget(root, gradient, names=names, **options)
    read_the_maths(w, grads)
    return w


# --- the lessons --------------------------------------------------------------------------------

@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_every_lesson_widget_reads_as_maths(lesson):
    root, names, gradient = LESSONS[lesson]()
    check(root, names, gradient)


def test_backward_with_a_gradient_differentiates_L():
    """Lesson 5: L = Σ v ⊙ z, each path v ⊙ 30, the sum [[0, 60], [60, 0]], ∂L/∂… in the captions."""
    root, names, gradient = LESSONS["vector_jacobian"]()
    w = check(root, names, gradient)
    d = w.derivation
    defs = " ".join(m["latex"] for m in d["defs"])
    assert r"L = \sum v \odot z" in defs
    (leaf,) = d["leaves"]
    for p in leaf["paths"]:
        latex = [s["latex"] for s in p["stages"]]
        assert latex[0].startswith(r"\frac{\partial L}{\partial z} \odot"), latex
        assert r"v \odot 30" in latex
        assert latex[-1] == r"\left[\begin{matrix}0 & 30 \\ 30 & 0\end{matrix}\right]"
        # the left side's factors and the right side's values, one for one
        assert len(p["factors"]) == latex[0].count(r"\partial ") // 2 == 5
    assert leaf["sum"]["latex"].endswith(r"= \left[\begin{matrix}0 & 60 \\ 60 & 0\end{matrix}\right]")
    captions = [w.caption(i) for i in range(len(w.frames))]
    assert not any("∂z/∂z" in c or "gets ∂z/" in c for c in captions)
    assert any("L = Σ v ⊙ z" in c and "∂L/∂z = v" in c for c in captions)


# --- the live buttons after Run All ---------------------------------------------------------------

def lesson_in(engine, name):
    """``(lib, root, names, gradient)``: a lesson of tests/widget_lessons.py built with ``engine``."""
    if engine == "gradviz":
        return (gradviz,) + LESSONS[name]()
    torch = lib_of("torch")
    import widget_lessons
    from pathlib import Path
    source = Path(widget_lessons.__file__).read_text(encoding="utf-8").replace("import gradviz as torch", "import torch")
    space = {}
    exec(compile(source, "widget_lessons (torch)", "exec"), space)
    return (torch,) + space["LESSONS"][name]()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("lesson", sorted(LESSONS))
@pytest.mark.parametrize("train", [False, True], ids=["run_all", "then_a_step"])
def test_every_lesson_widget_ends_its_buttons_with_a_tick(engine, lesson, train):
    """Issue 21: after Run All (the lesson's own backward() freed the graph; maybe a training step
    on every leaf since), backward(), zero_(), backward() ends with ✓ on every leaf, the derivation
    worked out again at the values the press ran on."""
    lib, root, names, gradient = lesson_in(engine, lesson)
    w = AutogradWidget(root, gradient, names=names)
    after_run_all(lib, w, root, gradient, names, train=train)


class _Shifted:
    """Lesson 7's module: (x * w + 2.0).mean(), whose 2.0 PyTorch does not keep without watch()."""

    def __new__(cls, lib):
        class Shifted(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor([0.5, -1.0]))

            def forward(self, x):
                return (x * self.w + 2.0).mean()
        return Shifted()


@pytest.mark.parametrize("engine, program", [("gradviz", "collapse"), ("gradviz", "shifted")] + [
    pytest.param("torch", p, marks=pytest.mark.torch) for p in ("collapse", "shifted", "shifted_watched")])
def test_lesson_7s_widgets_end_their_buttons_with_a_tick(engine, program):
    """Lesson 7 after Run All: the classifier trained with Adam then drawn with collapse=model, and
    the Shifted module with and without gradviz.watch(): ✓ at the end of backward(), zero_(), backward()."""
    lib = lib_of(engine)
    if program == "collapse":
        loss, names, model = _classifier(lib, steps=30)
        w = AutogradWidget(loss, names={k: v for k, v in names.items() if "." not in k}, collapse=model)
        tensors = {k: v for k, v in names.items() if "." in k}
        after_run_all(lib, w, loss, None, tensors, train=True)
        return
    shifted, data = _Shifted(lib), lib.tensor([1.0, 2.0])
    if program == "shifted_watched":             # (watch() watches real PyTorch)
        with gradviz.watch():
            out = shifted(data)
    else:
        out = shifted(data)
    w = AutogradWidget(out, names={"shifted": shifted, "data": data, "out": out, "shifted.w": shifted.w})
    after_run_all(lib, w, out, None, {"shifted.w": shifted.w}, train=True)


# --- composite ops and collapsed layers -------------------------------------------------------------

def _classifier(lib, steps=0, collapse=False):
    """Lesson 7's XOR classifier (Linear-Tanh-Linear, cross-entropy), after some Adam steps."""
    lib.manual_seed(0)
    X = lib.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    Y = lib.tensor([0, 1, 1, 0])
    model = lib.nn.Sequential(lib.nn.Linear(2, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    loss_fn = lib.nn.CrossEntropyLoss()
    optimizer = lib.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        optimizer.step()
    optimizer.zero_grad()
    loss = loss_fn(model(X), Y)
    names = {"X": X, "Y": Y, "model": model, "loss": loss}
    names.update({f"model.{k}": p for k, p in model.named_parameters()})
    return loss, names, model


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("collapse", [False, True])
def test_cross_entropy_writes_delta_as_softmax_minus_onehot(engine, collapse):
    """Lesson 7: δ = (softmax(f) − onehot(t))/4 with its numbers; ∂loss/∂W = δᵀ c for a collapsed
    Linear; after Adam steps no exception's text anywhere."""
    lib = lib_of(engine)
    loss, names, model = _classifier(lib, steps=30)
    grads = engine_grads(loss, {k: v for k, v in names.items() if k != "model"}, None)
    w = AutogradWidget(loss, names={k: v for k, v in names.items() if "." not in k},
                       **({"collapse": model} if collapse else {}))
    read_the_maths(w, {f"model.{k}": g for k, g in
                       ((k.split(".", 1)[1], g) for k, g in grads.items() if k.startswith("model."))})
    where = " ".join(m["latex"] for m in w.derivation["where"])
    assert r"\frac{\operatorname{softmax}\left(" in where and r"\operatorname{onehot}(t)}{4}" in where, where
    assert r"\left[\begin{matrix}" in where                     # with its numbers
    defs = " ".join(m["latex"] for m in w.derivation["defs"])
    assert r"t = \left[0,\ 1,\ 1,\ 0\right]" in defs
    captions = " ".join(w.caption(i) for i in range(len(w.frames)))
    assert "(softmax(" in captions and "onehot(t))/4" in captions
    if collapse:
        lines = {e["leaf"]: e["paths"][0]["stages"][1]["latex"] for e in w.derivation["leaves"]}
        assert lines["model.2.weight"] == r"\delta^{T} c", lines
        assert lines["model.2.bias"] == r"\sum_{\text{batch}} \delta", lines


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", ["softmax", "mse_sum", "mse_none", "bce", "bce_logits"])
def test_composite_losses_have_textbook_derivatives(engine, case):
    lib = lib_of(engine)
    F = lib.nn.functional
    x = lib.tensor([[0.2, -0.4, 1.0], [0.5, 0.1, -0.3]], requires_grad=True)
    y = lib.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    if case == "softmax":
        s = F.softmax(x, dim=1)
        out = (s * y).sum()
    elif case == "mse_sum":
        out = F.mse_loss(x, y, reduction="sum")
    elif case == "mse_none":
        out = (F.mse_loss(x, y, reduction="none") * y).sum()
    elif case == "bce":
        out = F.binary_cross_entropy(lib.sigmoid(x), y)
    else:
        out = F.binary_cross_entropy_with_logits(x, y)
    check(out, {"x": x, "y": y, "out": out})


# --- in-place code and many paths ------------------------------------------------------------------

def micrograd(lib):
    """micrograd's README expression, in place: c += c + 1 and friends."""
    a = lib.tensor(-4.0, requires_grad=True)
    b = lib.tensor(2.0, requires_grad=True)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return g, {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g}


@pytest.mark.parametrize("engine", ENGINES)
def test_micrograd_in_place_reads_as_backprop(engine):
    """24 and 30 paths: each tensor's gradient once, numbered and checked; a.grad 138.8338, b.grad 645.5773."""
    g, names = micrograd(lib_of(engine))
    w = check(g, names)
    leaves = {e["leaf"]: e for e in w.derivation["leaves"]}
    assert leaves["a"]["chain"] == "138.8338" and leaves["b"]["chain"] == "645.5773"
    where = [m["latex"] for m in w.derivation["where"]]
    assert where[0] == r"\left(1\right)\quad \frac{\partial g}{\partial g} = 1"
    assert len(w._animation.formulas["node_lines"]) == len(where) >= 20
    assert not any(r"\dots" in e["paths"][0]["stages"][0]["latex"] for e in leaves.values())


@pytest.mark.parametrize("engine", ENGINES)
def test_in_place_versions_are_numbered_in_code_order(engine):
    """c changed in place: c₁ = a + b = -2, c₂ = c₁ + m = -3, c₃ = c₂ + r = -1 (one symbol, one value).
    (PyTorch keeps no 1 of c + 1: under gradviz.watch() the widget sees it.)"""
    lib = lib_of(engine)
    if engine == "torch":
        with gradviz.watch():
            g, names = micrograd(lib)
    else:
        g, names = micrograd(lib)
    w = check(g, names)
    defs = [m["latex"] for m in w.derivation["defs"]]
    assert [d.split(" = ")[0] for d in defs if d.startswith("c")] == ["c_{1}", "c_{2}", "c_{3}"]
    assert [d.split(" = ")[0] for d in defs if d.startswith("d_")] == ["d_{1}", "d_{2}", "d_{3}"]
    captions = [w.caption(i) for i in range(len(w.frames)) if w.frames[i]["kind"] == "fwd_out"]
    values = {}
    for c in captions:
        name, value = c.split(" = ")[0], c.split("; ")[0].rsplit(" = ", 1)[1]
        assert values.setdefault(name, value) == value, (name, value, values[name])
    assert values["c₁"] == "-2." and values["c₂"] == "-3." and values["c₃"] == "-1."
    assert "c = c" not in " ".join(defs) and r"\partial c}{\partial c}" not in str(w.derivation)


# --- random programs (hypothesis): the rules, not the examples ---------------------------------------

UNARY = ["tanh", "exp", "sigmoid", "sin", "neg", "square", "relu"]
BINARY = ["add", "mul", "sub", "div"]


@st.composite
def programs(draw):
    """A recipe for a small program: its kind, shapes, seed, ops (with reuse: y * y), and options."""
    kind = draw(st.sampled_from(["sum", "gradient", "cross_entropy", "in_place", "collapse", "function"]))
    shape = draw(st.sampled_from([(3,), (2, 2), (2, 3)]))
    n_leaves = draw(st.integers(1, 3))
    steps = draw(st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 30), st.integers(0, 30)),
                          min_size=1, max_size=6))
    return {"kind": kind, "shape": shape, "leaves": n_leaves, "steps": steps,
            "seed": draw(st.integers(0, 2**16)), "hidden": draw(st.integers(2, 5)),
            "loss": draw(st.sampled_from(["mse", "ce"])), "train": draw(st.booleans()),
            "presses": draw(st.lists(st.sampled_from(["backward", "backward_retain", "zero"]), max_size=3))}


def _apply(lib, op, a, b):
    if op == "neg":
        return -a
    if op == "square":
        return a * a                                     # one tensor, read twice
    if op in UNARY:
        return getattr(a, op)()
    if op == "div":
        return a / (b * b + 1.0)
    return {"add": a + b, "mul": a * b, "sub": a - b}[op]


def build_program(lib, recipe):
    """``(root, names, gradient, options)`` for the recipe, in ``lib`` (gradviz or torch)."""
    rng = np.random.default_rng(recipe["seed"])
    kind, shape = recipe["kind"], recipe["shape"]
    if kind == "collapse":
        lib.manual_seed(recipe["seed"] % 1000)
        X = lib.tensor(rng.uniform(-1, 1, (4, 2)).astype(np.float32).tolist())
        model = lib.nn.Sequential(lib.nn.Linear(2, recipe["hidden"]), lib.nn.Tanh(), lib.nn.Linear(recipe["hidden"], 2))
        if recipe["loss"] == "ce":
            loss = lib.nn.functional.cross_entropy(model(X), lib.tensor([0, 1, 1, 0]))
        else:
            loss = lib.nn.functional.mse_loss(model(X), lib.tensor(rng.uniform(-1, 1, (4, 2)).astype(np.float32).tolist()))
        names = {"X": X, "loss": loss, "model": model}
        return loss, names, None, {"collapse": model}
    leaves = {f"p{i}": lib.tensor(rng.uniform(0.5, 1.5, shape).astype(np.float32).tolist(), requires_grad=True)
              for i in range(recipe["leaves"])}
    pool = list(leaves.values())
    if kind == "in_place":
        c = pool[0] * 1.5
        for op, i, j in recipe["steps"]:
            # c += f(c, p) or f(p, p'); f of c itself only where nothing saves c (PyTorch would refuse)
            uses_c = i % 2 == 0
            op = {"mul": "add", "div": "sub", "square": "neg"}.get(op, op) if uses_c else op
            op = "neg" if uses_c and op in UNARY else op
            c += _apply(lib, op, c if uses_c else pool[i % len(pool)], pool[j % len(pool)])
        names = dict(leaves, c=c)
        out = (c * c).sum()
        names["out"] = out
        return out, names, None, {}
    for op, i, j in recipe["steps"]:
        pool.append(_apply(lib, op, pool[i % len(pool)], pool[j % len(pool)]))
    z = pool[-1] if len(pool) > len(leaves) else pool[0] * 2.0
    if kind == "function":                       # the user's own autograd.Function inside the graph
        z = _cube(lib).apply(z) * 0.5
    names = dict(leaves, z=z)
    if kind in ("sum", "function"):
        out = z.sum()
        names["out"] = out
        return out, names, None, {}
    if kind == "gradient":
        v = lib.tensor(rng.integers(-2, 3, shape).astype(np.float32).tolist())
        return z, names, v, {}
    logits = z.reshape(-1, shape[-1]) if len(shape) > 1 else z.reshape(1, -1)
    target = lib.tensor(rng.integers(0, shape[-1], logits.shape[0]).tolist())
    out = lib.nn.functional.cross_entropy(logits, target)
    names["out"] = out
    return out, names, None, {}


def _cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g
    return Cube


def _check_program(engine, recipe):
    lib = lib_of(engine)
    root, names, gradient, options = build_program(lib, recipe)
    tensors = {k: v for k, v in names.items() if k != "model"}
    if "collapse" in options:
        tensors.update({f"model.{k}": p for k, p in names["model"].named_parameters()})
    grads = engine_grads(root, tensors, gradient)
    w = AutogradWidget(root, gradient, names=names, **options)
    read_the_maths(w, grads)
    assert all(e["chain"] != "0" or np.allclose(grads.get(e["leaf"], 0), 0) for e in w.derivation["leaves"])
    after_run_all(lib, w, root, gradient, tensors, train=recipe.get("train", False),
                  words=recipe["kind"] == "function", presses=recipe.get("presses", ()))


def after_run_all(lib, w, root, gradient, tensors, train=False, words=False, presses=()):
    """The notebook's own ``root.backward(gradient)`` (it frees the graph), maybe a training step on
    every leaf, then the buttons backward(), zero_(), backward(): never ✗ nor an error, and at the end
    ✓ on every leaf, the derivation at the values the last press ran on reading as the engine's
    .grad -- or, with ``words`` (a custom Function: the user's code is never run again), the note
    saying backward() was not run and why, .grad left as it was (``words="op"``: the reason given is
    an op the widget cannot call again). ``presses``: any buttons pressed
    before those three ("backward", "backward_retain" with retain_graph=True, "zero")."""
    leaves = {k: t for k, t in tensors.items() if getattr(t, "is_leaf", False) and t.requires_grad}
    for t in leaves.values():
        t.grad = None
    root.backward(gradient)
    if train:                                    # a small step (a bounded one: exp(exp(x)) overflows soon)
        with lib.no_grad():
            for t in leaves.values():
                if t.grad is not None:
                    t -= 0.05 * t.grad.clamp(-1, 1)
    start = len(w.frames)
    for act in tuple(presses) + ("backward", "zero", "backward"):
        if act == "zero":
            w.zero_grad()
        else:
            w.backward(retain_graph=act == "backward_retain")
    new = w.frames[start:]
    crosses = [(slot, v) for f in new for slot, v in f["set"].items()
               if slot.startswith("check:") and isinstance(v, dict) and v.get("ok") is False and "times" not in v]
    assert not crosses and not any(f["phase"] == "error" for f in new), (crosses, [w.caption(start + i) for i in
                                                                                  range(len(new))])
    last = w.frames[-1]
    if words:
        why = "why_" + (words if isinstance(words, str) else "user")
        assert last["phase"] == "note" and last["unchecked"] is True and last["msg"][1]["reason"] == [why, {}]
        return
    assert last["kind"] == "done" and not any(f.get("unchecked") for f in new), render("en", last["msg"])
    shown = {}
    for f in w.frames:
        shown.update(f["set"])
    checks = {k: v for k, v in shown.items() if k.startswith("check:")}
    assert checks and all(c["ok"] is True for c in checks.values()), checks
    grads = {k: np.array(t.grad.detach().numpy(), np.float64) for k, t in leaves.items() if t.grad is not None}
    read_the_maths(w, grads, run=-1)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(programs())
def test_random_programs_read_as_maths_gradviz(recipe):
    _check_program("gradviz", recipe)


@pytest.mark.torch
@settings(max_examples=20, deadline=None, derandomize=True)
@given(programs())
def test_random_programs_read_as_maths_torch(recipe):
    _check_program("torch", recipe)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_has_its_textbook_derivative(engine, training):
    """∂β = Σ_b g, ∂γ = Σ_b g ⊙ x̂, ∂x = γ/(N√(σ²+ε)) ⊙ (N g − Σ_b g − x̂ ⊙ Σ_b g ⊙ x̂) (eval: g ⊙ γ/√(σ²+ε))."""
    lib = lib_of(engine)
    lib.manual_seed(0)
    bn = lib.nn.BatchNorm1d(3)
    x = lib.tensor(np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32).tolist(), requires_grad=True)
    y = lib.tensor([[0., 1., 2.], [1., 0., 1.], [2., 2., 0.], [1., 1., 1.]])
    if not training:
        bn(x)                                   # running statistics from one batch
        bn.eval()
    out = (bn(x) * y).sum()
    names = {"x": x, "y": y, "out": out, "bn.weight": bn.weight, "bn.bias": bn.bias}
    w = check(out, names)
    lines = {e["leaf"]: e["paths"][0]["stages"][1]["latex"] for e in w.derivation["leaves"]}
    if engine == "torch" and not training:
        # (the torch adapter does not read the running statistics PyTorch saved: the engine's numbers,
        # written g · ∂a/∂x, are used, and still checked above)
        assert r"\frac{\partial a}{\partial x}" in lines["x"], lines
        return
    assert r"\hat{x}" in lines["bn.weight"] and r"\sqrt{\sigma^{2} + \epsilon}" in lines["x"], lines


@pytest.mark.parametrize("engine", ENGINES)
def test_a_step_with_no_hand_rule_says_so_in_words(engine, monkeypatch):
    """A custom Function: its numbers are the engine's, and where even those are not known the line
    says "no hand derivation" -- never an exception's text, never the node's name as a function."""
    lib = lib_of(engine)
    Cube = _cube(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out = (Cube.apply(x) * 2.0).sum()
    names = {"x": x, "out": out}
    check(out, names)                                      # the engine's numbers, checked
    from gradviz.widget import derivation
    monkeypatch.setattr(derivation, "_recorded_vjp", lambda *a: None)
    w = AutogradWidget(out, names=names)
    text = " ".join(texts(w))
    assert "no hand derivation" in text and not EXCEPTION.search(text) and not AS_FUNCTION.search(text)


def _every_formula(widget):
    """Every {latex, mathml} pair the widget shows: the derivation panel's and the frames' running products."""
    found = []

    def walk(v):
        if isinstance(v, dict):
            if "latex" in v and "mathml" in v:
                found.append(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(widget.derivation)
    walk([f.get("chain") for f in widget.frames])
    return found


@pytest.mark.parametrize("engine", ENGINES)
def test_layer_norm_has_its_textbook_derivative(engine):
    """With h = g ⊙ γ: ∂x = (n h − Σ_j h − x̂ ⊙ Σ_j h ⊙ x̂)/(n√(σ²+ε)), the sums along each row; ∂γ = Σ_batch g ⊙ x̂,
    ∂β = Σ_batch g; every formula becomes MathML (none left as its LaTeX source)."""
    lib = lib_of(engine)
    ln = lib.nn.LayerNorm(3)
    x = lib.tensor(np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32).tolist(), requires_grad=True)
    y = lib.tensor([[0., 1., 2.], [1., 0., 1.], [2., 2., 0.], [1., 1., 1.]])
    out = (ln(x) * y).sum()
    w = check(out, {"x": x, "y": y, "out": out, "ln.weight": ln.weight, "ln.bias": ln.bias})
    lines = {e["leaf"]: e["paths"][0]["stages"][1]["latex"] for e in w.derivation["leaves"]}
    assert r"\sum_{j}" in lines["x"] and r"\sqrt{\sigma^{2} + \epsilon}" in lines["x"] and r"\hat{x}" in lines["x"]
    assert r"\mathrm{ln.weight}" in lines["x"], lines["x"]
    assert r"\sum_{\text{batch}}" in lines["ln.weight"] and r"\hat{x}" in lines["ln.weight"], lines
    assert r"\sum_{\text{batch}}" in lines["ln.bias"], lines
    defs = [m["latex"] for m in w.derivation["defs"]]
    assert r"a = \frac{x - \mu}{\sqrt{\sigma^{2} + \epsilon}} \odot \mathrm{ln.weight} + \mathrm{ln.bias}" in defs
    formulas = _every_formula(w)
    assert formulas and not [m["latex"] for m in formulas if m["mathml"].startswith("<math><mtext>")]


@pytest.mark.parametrize("engine", ENGINES)
def test_layer_norm_without_weight_writes_neither(engine):
    """F.layer_norm(x, shape, bias=b) over the last two dimensions, eps=1e-3 (not saved by PyTorch: the
    torch engine works it out): no ⊙ 1 in the definition, no γ in the derivative, each line checked."""
    lib = lib_of(engine)
    rng = np.random.default_rng(2)
    x = lib.tensor(rng.normal(size=(2, 2, 3)).astype(np.float32).tolist(), requires_grad=True)
    y = lib.tensor(rng.normal(size=(2, 2, 3)).astype(np.float32).tolist())
    out = (lib.nn.functional.layer_norm(x, (2, 3), None, lib.full((2, 3), 0.5), 1e-3) * y).sum()
    w = check(out, {"x": x, "y": y, "out": out})
    assert r"a = \frac{x - \mu}{\sqrt{\sigma^{2} + \epsilon}} + 0.5" in [m["latex"] for m in w.derivation["defs"]]
    (line,) = [e["paths"][0]["stages"][1]["latex"] for e in w.derivation["leaves"] if e["leaf"] == "x"]
    assert line.startswith(r"\frac{1}{6 \sqrt{\sigma^{2} + \epsilon}}") and r"\odot 1" not in line, line


@pytest.mark.parametrize("engine", ENGINES)
def test_batch_norm_of_images_and_without_weight_has_its_textbook_derivative(engine):
    """BatchNorm2d: the sums over the batch and each channel's pixels (Σ_{b,h,w}), n = N·H·W; F.batch_norm
    without weight: no γ written, in the derivative or the definition (under real PyTorch its weight has
    no value: the lines were nan)."""
    lib = lib_of(engine)
    x = lib.tensor(np.random.default_rng(4).normal(size=(2, 3, 2, 2)).astype(np.float32).tolist(), requires_grad=True)
    y = lib.tensor(np.random.default_rng(5).normal(size=(2, 3, 2, 2)).astype(np.float32).tolist())
    bn = lib.nn.BatchNorm2d(3)
    out = (bn(x) * y).sum()
    w = check(out, {"x": x, "y": y, "out": out, "bn.weight": bn.weight, "bn.bias": bn.bias})
    lines = {e["leaf"]: e["paths"][0]["stages"][1]["latex"] for e in w.derivation["leaves"]}
    assert lines["x"].startswith(r"\frac{\mathrm{bn.weight}}{8 \sqrt{\sigma^{2} + \epsilon}}"), lines["x"]
    assert r"\sum_{b,h,w}" in lines["x"] and r"\sum_{b,h,w}" in lines["bn.weight"] and r"\hat{x}" in lines["bn.weight"]
    out = (lib.nn.functional.batch_norm(x, None, None, training=True) * y).sum()
    w = check(out, {"x": x, "y": y, "out": out})
    (line,) = [e["paths"][0]["stages"][1]["latex"] for e in w.derivation["leaves"] if e["leaf"] == "x"]
    assert line.startswith(r"\frac{1}{8 \sqrt{\sigma^{2} + \epsilon}}"), line
    defs = [m["latex"] for m in w.derivation["defs"]]      # (it was · 1 + 0, and ? + ? under PyTorch)
    assert r"a = \frac{x - \mu}{\sqrt{\sigma^{2} + \epsilon}}" in defs, defs
