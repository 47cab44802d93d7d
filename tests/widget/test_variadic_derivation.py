"""Variadic ops (stack, cat, hstack, vstack) in the hand derivation, read as maths: the definition
names every input in order (``h = [a, b, c]``, or ``x_{0}, x_{1}, \\ldots, x_{19}`` for a long indexed
run), each input's gradient is its own part of the joined gradient (``g[k]``, ``g[2:4]``), and every
line evaluates to the engine's ``.grad`` -- for 2, 3, 6 and 20 inputs and for random joins
(hypothesis), in both engines (the torch ones skip without torch).
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradviz import formula
from gradviz.widget import AutogradWidget
from test_derivation_maths import ENGINES, engine_grads, lib_of, read_the_maths

JOINS = ["stack", "cat", "hstack", "vstack"]


def _definition(widget, name):
    """The forward definition of the tensor called ``name`` (LaTeX, its right-hand side)."""
    lhs = formula.latex_name(name) + " = "
    found = [d["latex"] for d in widget.derivation["defs"] if d["latex"].startswith(lhs)]
    assert found, (name, [d["latex"] for d in widget.derivation["defs"]])
    return found[0][len(lhs):]


def _inputs_listed(rhs):
    inner = re.fullmatch(r"\[(.*?)\](\\quad .*)?", rhs)      # (a tensor joined twice: x^{(1)}, x^{(2)}, said so)
    assert inner, rhs
    return [x.strip() for x in inner.group(1).split(", ")]


def _join(lib, how, xs, dim=0):
    if how in ("hstack", "vstack"):
        return getattr(lib, how)(xs)
    return getattr(lib, how)(xs, dim=dim)


def _program(lib, how, n, names=None):
    xs = [lib.tensor([float(i), 1.0 + i / 10], requires_grad=True) for i in range(n)]
    h = _join(lib, how, xs)
    w = lib.tensor(np.arange(1.0, 1.0 + np.prod(tuple(h.shape))).reshape(tuple(h.shape)).astype(np.float32).tolist())
    s = (h * w).sum()
    found = dict(names(xs) if names else {}, h=h, w=w, s=s)
    return s, xs, found


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("how", JOINS)
@pytest.mark.parametrize("n", [2, 3, 6, 20])
def test_a_join_is_defined_with_every_input_and_sends_each_its_part(engine, how, n):
    lib = lib_of(engine)
    s, xs, names = _program(lib, how, n)
    w = AutogradWidget(s, names=names)
    lesson = w._animation.lesson
    joined = next(node for node in lesson.nodes if node.key in ("stack", "cat"))
    want = [formula.latex_name(lesson.input_name(joined, i)) for i in range(n)]
    listed = _inputs_listed(_definition(w, lesson.name(joined)))
    assert listed in (want, want[:2] + [r"\ldots"] + want[-1:]), listed     # all n in order, or x_0, x_1, …, x_19
    if r"\ldots" in listed:
        assert n > formula.LIST_MAX and re.fullmatch(r".+_\{\d+\}", want[0])
    grads = engine_grads(s, {**names, **{f"x{k}": x for k, x in enumerate(xs)}}, None)
    read_the_maths(w, grads)
    for leaf in lesson.leaves[:8]:          # each leaf's one path ends in its part of the joined gradient
        entry = next(e for e in w.derivation["leaves"] if e["leaf"] == lesson.name(leaf))
        assert len(entry["paths"]) == 1
        assert re.search(r"\\left\[[\d:, ]+\\right\]", entry["paths"][0]["stages"][1]["latex"]), entry["paths"][0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("n", [6, 20])
def test_an_indexed_run_of_inputs_is_written_as_a_textbook_writes_it(engine, n):
    lib = lib_of(engine)
    s, xs, names = _program(lib, "stack", n, names=lambda xs: {f"x{k}": x for k, x in enumerate(xs)})
    w = AutogradWidget(s, names=names)
    listed = _inputs_listed(_definition(w, "h"))
    if n <= formula.LIST_MAX:
        assert listed == [f"x_{{{k}}}" for k in range(n)]
    else:
        assert listed == ["x_{0}", "x_{1}", r"\ldots", f"x_{{{n - 1}}}"]
    read_the_maths(w, engine_grads(s, names, None))
    x3 = next(e for e in w.derivation["leaves"] if e["leaf"] == "x3")
    # ∂s/∂x₃ = (1 · w)[3] = w's row 3: the numbers a student can check against h's row 3
    stages = [st["latex"] for st in x3["paths"][0]["stages"]]
    assert any(st.endswith(r"\left[3\right]") for st in stages), stages
    assert np.allclose(np.asarray(eval(x3["chain"].replace(".,", ".0,").replace(".]", ".0]")), float),
                       [7.0, 8.0])


def test_listed_writes_a_long_indexed_run_with_an_ellipsis_and_other_names_in_full():
    assert formula.listed([f"x_{{{k}}}" for k in range(20)]) == r"x_{0}, x_{1}, \ldots, x_{19}"
    assert formula.listed([f"x_{{{k}}}" for k in range(20)], text=True) == "x_{0}, x_{1}, …, x_{19}"
    names = list("abcdfgkm")
    assert formula.listed(names) == "a, b, c, d, f, g, k, m"          # no pattern: every name
    assert formula.listed(["x_{0}", "x_{2}"] + [f"x_{{{k}}}" for k in range(3, 9)]).count(",") == 7
    assert formula.fill(r"[@*]", {"0": "a", "1": "b", "2": "c", "y": "h"}) == "[a, b, c]"
    assert formula.plain(formula.fill(r"[@*]", {str(k): f"x_{{{k}}}" for k in range(12)})) == "[x₀, x₁, …, x₁₁]"


# --- random joins ---------------------------------------------------------------------------------

@st.composite
def joins(draw):
    """A recipe: which join, how many inputs (some reused, some made by an op, some constant), the
    inputs' shape and the dim, what is done with the result, and whether backward gets a gradient=."""
    how = draw(st.sampled_from(JOINS))
    n = draw(st.integers(2, 9))
    shape = draw(st.sampled_from([(2,), (3,), (2, 2), (1, 3)]))
    dim = draw(st.integers(0, len(shape) - (0 if how == "stack" else 1)))
    picks = draw(st.lists(st.sampled_from(["leaf", "again", "tanh", "scaled", "const"]), min_size=n, max_size=n))
    after = draw(st.sampled_from(["weighted", "tanh", "square", "gradient"]))
    return {"how": how, "shape": shape, "dim": dim, "picks": picks, "after": after,
            "seed": draw(st.integers(0, 2**16))}


def build_join(lib, recipe):
    rng = np.random.default_rng(recipe["seed"])
    shape = recipe["shape"]
    new = lambda grad: lib.tensor(rng.uniform(-1.5, 1.5, shape).astype(np.float32).tolist(), requires_grad=grad)
    leaves, xs = [], []
    for pick in recipe["picks"]:
        if pick == "again" and leaves:
            xs.append(leaves[-1])                      # one tensor joined twice: two paths to it
        elif pick == "const":
            xs.append(new(False))
        else:
            leaves.append(new(True))
            x = leaves[-1]
            xs.append(x.tanh() if pick == "tanh" else x * 2.5 if pick == "scaled" else x)
    if not leaves:
        leaves.append(new(True))
        xs[0] = leaves[0]
    h = _join(lib, recipe["how"], xs, recipe["dim"])
    names = {f"x{k}": t for k, t in enumerate(leaves)}
    names["h"] = h
    after = recipe["after"]
    if after == "gradient":
        v = lib.tensor(rng.integers(-2, 3, tuple(h.shape)).astype(np.float32).tolist())
        return h, names, v
    if after == "weighted":
        w = lib.tensor(rng.uniform(-2, 2, tuple(h.shape)).astype(np.float32).tolist())
        out = (h * w).sum()
    elif after == "tanh":
        out = h.tanh().sum()
    else:
        out = (h * h).mean()
    names["out"] = out
    return out, names, None


def _check_join(engine, recipe):
    lib = lib_of(engine)
    root, names, gradient = build_join(lib, recipe)
    grads = engine_grads(root, names, gradient)
    w = AutogradWidget(root, gradient, names=names)
    read_the_maths(w, grads)
    lesson = w._animation.lesson
    joined = next(node for node in lesson.nodes if node.key in ("stack", "cat"))
    listed = _inputs_listed(_definition(w, lesson.name(joined)))
    assert len(listed) == len(joined.inputs) or r"\ldots" in listed, listed
    assert "?" not in listed
    for e in w.derivation["leaves"]:        # every leaf's hand result is its .grad
        assert e["chain"] != "0" or np.allclose(grads.get(e["leaf"], 0), 0), e


@settings(max_examples=30, deadline=None, derandomize=True)
@given(joins())
def test_random_joins_read_as_maths_gradviz(recipe):
    _check_join("gradviz", recipe)


@pytest.mark.torch
@settings(max_examples=20, deadline=None, derandomize=True)
@given(joins())
def test_random_joins_read_as_maths_torch(recipe):
    _check_join("torch", recipe)


# --- keyword tensors: cross_entropy(weight=w) -------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_with_class_weights_defines_and_uses_them(engine, reduction):
    """The weights are part of the loss's definition (ℓ = −Σ w_t f / Σ w_t), defined themselves, and
    the derivation's numbers are the engine's .grad (torch's saved weight is read, not dropped)."""
    lib = lib_of(engine)
    d = lib.tensor([[1.0, 2.0, 0.5], [0.3, 0.2, 0.1]], requires_grad=True)
    s = lib.nn.functional.cross_entropy(d, lib.tensor([0, 2]), weight=lib.tensor([1.0, 2.0, 3.0]),
                                        reduction=reduction)
    names = {"d": d, "s": s}
    grads = engine_grads(s, names, None)
    w = AutogradWidget(s, names=names)
    read_the_maths(w, grads)
    defs = [x["latex"] for x in w.derivation["defs"]]
    assert any(r"w_{t_b}\, " in x and x.startswith("s = ") for x in defs), defs
    assert (r"\sum_{b} w_{t_b}}" in next(x for x in defs if x.startswith("s = "))) == (reduction == "mean")
    assert r"w = \left[1,\ 2,\ 3\right]" in defs, defs


@pytest.mark.parametrize("engine", ENGINES)
def test_where_names_its_condition_apart_from_the_tensors(engine):
    """where(cond, b, c) with a tensor called c: the condition is cond, defined (1 where it holds),
    never the letter of a tensor; torch's saved condition is read as gradviz's is."""
    lib = lib_of(engine)
    a, b, c = (lib.tensor(v, requires_grad=True) for v in ([1.0, 2.0], [3.0, 4.0], [0.5, 0.25]))
    d = lib.where(a > 1.5, b, c)
    s = (d * d).sum()
    names = {"a": a, "b": b, "c": c, "d": d, "s": s}
    grads = engine_grads(s, names, None)
    w = AutogradWidget(s, names=names)
    read_the_maths(w, grads)
    defs = [x["latex"] for x in w.derivation["defs"]]
    assert r"d = b \text{ if } \mathrm{cond} \text{ else } c" in defs, defs
    assert r"\mathrm{cond} = \left[0,\ 1\right]" in defs, defs


BLENDS = {   # the op table's entries (gradviz._blend_ops): how each is written, with its number
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c, value=2.0), r"a + 2 b \cdot c"),
    "addcdiv": (lambda lib, a, b, c: a.addcdiv(b, c, value=2.0), r"a + 2 \cdot \frac{b}{c}"),
    "lerp": (lambda lib, a, b, c: lib.lerp(a, b, 0.75), r"a + 0.75 \cdot \left(b - a\right)"),
    "lerp_tensor": (lambda lib, a, b, c: a.lerp(b, c), r"a + c \cdot \left(b - a\right)"),
    # tensor bounds, the lower one above the upper one in a row (max wins, and gets the gradient)
    "clamp": (lambda lib, a, b, c: a.clamp(min=c, max=b), r"\operatorname{clamp}(a, c, b)"),
    "clamp_min": (lambda lib, a, b, c: lib.clamp(a, min=c), r"\operatorname{clamp}(a, c, \infty)"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("op", sorted(BLENDS))
def test_addcmul_addcdiv_and_lerp_are_defined_from_the_table_and_sum_to_grad(engine, op):
    """addcmul, addcdiv, lerp (a number or a tensor as weight), c broadcast along rows: written with
    its value or weight (torch's saved _saved_value / _saved_weight read), every line equal to .grad."""
    lib = lib_of(engine)
    a, b = (lib.tensor(v, requires_grad=True) for v in ([[1.0, 2.0], [-1.0, 0.5]], [[3.0, 4.0], [0.25, 2.0]]))
    c = lib.tensor([0.5, 0.25], requires_grad=True)
    make, want = BLENDS[op]
    d = make(lib, a, b, c)
    s = (d * d).sum()
    names = {"a": a, "b": b, "c": c, "d": d, "s": s}
    grads = engine_grads(s, names, None)
    w = AutogradWidget(s, names=names)
    read_the_maths(w, grads)
    assert _definition(w, "d") == want


@pytest.mark.torch
def test_an_op_the_table_lacks_is_defined_with_its_inputs_and_numbers():
    """A PyTorch op gradviz's table does not have (torch engine): every input, then the numbers its node
    saved (hardshrink's lambda), so the definition says what was computed."""
    torch = pytest.importorskip("torch")
    a = torch.tensor([0.25, 2.0], requires_grad=True)
    d = torch.nn.functional.hardshrink(a, 0.5)
    s = d.sum()
    names = {"a": a, "d": d, "s": s}
    grads = engine_grads(s, names, None)
    w = AutogradWidget(s, names=names)
    read_the_maths(w, grads)
    assert _definition(w, "d") == r"\operatorname{hardshrink}(a, \mathrm{lambd} = 0.5)"


@pytest.mark.parametrize("engine", ENGINES)
def test_one_tensor_joined_many_times_reads_as_backprop(engine):
    """x stacked eight times: more paths than are listed, so backprop's numbered form, in which x's
    line adds up its eight parts of the joined gradient (g[0] + g[1] + … + g[7])."""
    lib = lib_of(engine)
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    h = lib.stack([x] * 8)
    w = lib.tensor(np.arange(16.0).reshape(8, 2).astype(np.float32).tolist())
    s = (h * w).sum()
    names = {"x": x, "h": h, "w": w, "s": s}
    grads = engine_grads(s, names, None)
    widget = AutogradWidget(s, names=names)
    read_the_maths(widget, grads)
    entry = next(e for e in widget.derivation["leaves"] if e["leaf"] == "x")
    line = entry["paths"][0]["stages"][0]["latex"]
    assert all(rf"\left[{k}\right]" in line for k in range(8)), line
    assert np.allclose(grads["x"], [56.0, 64.0])
