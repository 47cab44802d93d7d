"""The hand derivation: the chain rule along every path, from the op table's LaTeX, safe MathML."""

import numpy as np
import pytest
from hypothesis import assume, given

import gradviz as torch
from gradviz.widget import AutogradWidget
from gradviz.widget._lesson import Lesson
from gradviz.widget.derivation import (build_derivation, chain_gradients, check, expected_gradients, fill,
                                       mathml)
from strategies import graphs
from test_widget_frames import SETTINGS
from widget_lessons import LESSONS, traced


def lesson_of(name):
    root, names, gradient = LESSONS[name]()
    return root, names, gradient, Lesson(traced(root, names))


def test_seed_lesson_by_hand():
    root, names, _, lesson = lesson_of("seed")
    d = build_derivation(lesson, np.float32(1), [r"o = \frac12 \sum_i 5(x_i+1)^2"],
                         {"x": lambda x: 5 * (x + 1)})
    assert [m["latex"] for m in d["defs"]] == ["a = x + 1", "b = a^{2}", r"y = 5 b", r"c = \sum y",
                                               r"o = 0.5 c"]
    (leaf,) = d["leaves"]
    assert leaf["leaf"] == "x" and leaf["count"] == 1 and leaf["chain"] == "[10., 10.]"
    stages = [m["latex"] for m in leaf["paths"][0]["stages"]]
    assert stages == [
        r"\frac{\partial o}{\partial c} \cdot \frac{\partial c}{\partial y} \cdot \frac{\partial y}{\partial b}"
        r" \cdot \frac{\partial b}{\partial a} \cdot \frac{\partial a}{\partial x}",
        r"0.5 \cdot 1 \cdot 5 \cdot \left(2 a\right) \cdot 1",
        r"0.5 \cdot 1 \cdot 5 \cdot \left(2 \cdot 2\right) \cdot 1",
        "10",
    ]
    assert leaf["closed"] == "[10., 10.]"
    assert d["custom"][0]["mathml"].startswith('<math display="block">')


def test_the_neuron_applies_tanh_squared_to_its_argument():
    root, names, _, lesson = lesson_of("neuron")
    d = build_derivation(lesson, np.float32(1))
    b = next(e for e in d["leaves"] if e["leaf"] == "b")
    stages = [m["latex"] for m in b["paths"][0]["stages"]]
    assert r"\left(1 - \tanh^{2}\left(0.8814\right)\right) \cdot 1" in stages
    assert not any(r"\tanh^{2} \cdot" in s for s in stages)


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_the_chain_rule_agrees_with_the_engine(lesson):
    root, names, gradient, lesson_ = lesson_of(lesson)
    seed = np.ones_like(root._data) if gradient is None else gradient._data
    chain = chain_gradients(lesson_, seed)
    root.backward(gradient)
    for leaf in lesson_.leaves:
        np.testing.assert_allclose(chain[leaf.seq], leaf.tensor().grad._data, rtol=1e-5, atol=1e-6)


def test_paths_sum_to_the_result_when_a_leaf_is_reached_many_ways():
    root, names, _, lesson = lesson_of("fan_out")
    d = build_derivation(lesson, np.float32(1))
    a = next(l for l in d["leaves"] if l["leaf"] == "a")
    assert a["count"] == 4 and len(a["paths"]) == 4 and "sum" in a
    assert a["sum"]["latex"].startswith(r"\frac{\partial \mathrm{out}}{\partial a} = ")
    b = next(l for l in d["leaves"] if l["leaf"] == "b")
    assert b["count"] == 5 and len(b["paths"]) == 5                 # up to 6 paths: all written out ...
    assert r"\dots" not in b["sum"]["latex"]                          # ... and the sum has every term


def test_more_than_six_paths_are_written_as_backprop_does():
    """Each tensor's gradient once, numbered, as the sum over its uses (issue 21): no hidden paths."""
    x = torch.tensor(1.5, requires_grad=True)
    h = x
    for _ in range(3):
        h = h * h + h                                    # 2 ways through each step: 8 paths
    d = build_derivation(Lesson(traced(h, {"x": x, "out": h})), np.float32(1))
    (leaf,) = d["leaves"]
    assert leaf["count"] == 1 and not leaf["paths"][0]["factors"]
    assert d["where"][0]["latex"].startswith(r"\left(1\right)\quad")
    assert all(r"\dots" not in m["latex"] for m in d["where"])


@SETTINGS
@given(graphs())
def test_random_graphs_by_hand_equal_the_engine(case):
    root, leaves = case
    assume(root.requires_grad)
    lesson = Lesson(traced(root))
    chain = chain_gradients(lesson, np.ones_like(root._data))
    root.backward()
    for leaf in lesson.leaves:
        np.testing.assert_allclose(chain[leaf.seq], leaf.tensor().grad._data, rtol=2e-5, atol=1e-5)
    d = build_derivation(lesson, np.ones_like(root._data))
    for entry in d["leaves"]:
        for path in entry["paths"]:
            for m in path["stages"]:
                assert m["mathml"].startswith("<math") and "<script" not in m["mathml"]


def test_fill_puts_names_then_numbers():
    x = torch.tensor([3.0], requires_grad=True)
    y = x ** 3
    lesson = Lesson(traced(y.sum(), {"x": x, "y": y}))
    node = lesson.trace.step_for(y.grad_fn)
    assert fill(node.op.dlatex[0], lesson, node, False) == "3 x^{3 - 1}"
    assert fill(node.op.dlatex[0], lesson, node, True) == r"3 \cdot 3^{3 - 1}"
    z = torch.tensor(-2.0, requires_grad=True)
    w = z.exp()
    lz = Lesson(traced(w, {"z": z, "w": w}))
    assert fill("e^{@0}", lz, lz.trace.step_for(w.grad_fn), True) == r"e^{\left(-2\right)}"


def test_expected_closed_forms():
    root, names, _, lesson = lesson_of("neuron")
    got = expected_gradients(lesson, {"w": lambda w: 0.5 * np.array([2.0, 0.0]),
                                      "b": (r"1 - \tanh^2 n", 0.5)})
    (latex, value), = [v for k, v in got.items() if k == names["b"]._seq]
    assert latex == r"1 - \tanh^2 n" and value == pytest.approx(0.5)
    with pytest.raises(ValueError, match="not a leaf"):
        expected_gradients(lesson, {"q": 1.0})


def test_expected_with_several_leaves_by_name():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    o = (a * b).sum()
    lesson = Lesson(traced(o, {"a": a, "b": b, "o": o}))
    got = expected_gradients(lesson, {"a": lambda a, b: b})
    np.testing.assert_array_equal(got[a._seq][1], [3.0, 4.0])


def test_check():
    assert check(np.array([10., 10.]), np.array([10., 10.])) == {"ok": True, "diff": ""}
    assert check(np.array([12., 10.]), np.array([10., 10.])) == {"ok": False, "diff": "[2., 0.]"}
    assert check(None, np.array([1.0])) == {"ok": None, "diff": ""}
    # whole multiples are accumulation (two backward() calls; zero_()), not a wrong gradient
    assert check(np.array([20., 20.]), np.array([10., 10.])) == {"ok": False, "diff": "[10., 10.]", "times": 2}
    assert check(np.array([0., 0.]), np.array([10., 10.]))["times"] == 0
    assert "times" not in check(np.array([15., 15.]), np.array([10., 10.]))
    assert "times" not in check(np.array([1., 1.]), np.array([0., 0.]))
    assert "times" not in check(np.array([np.nan, 1.]), np.array([1., 1.]))


def test_widget_checks_against_the_instructors_closed_form():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names, expected={"x": lambda x: 4 * (x + 1)})     # a wrong formula
    acc = next(f for f in w.frames if f["kind"] == "acc")
    assert acc["set"]["check:x"] == {"grad": "[10., 10.]", "ok": False, "diff": "[2., 2.]"}


# --- safety ---------------------------------------------------------------------------------------

def test_broken_latex_shows_its_source():
    m = mathml(r"\frac{1}{")
    assert m["mathml"].startswith("<math") and "frac" in m["mathml"]


def test_hostile_names_and_steps_are_escaped():
    x = torch.ones(2, requires_grad=True)
    o = (x * 2).sum()
    evil = "<img src=x onerror=alert(1)>"
    w = AutogradWidget(o, names={evil: x, "o": o}, derivation=[r"\text{<script>alert(2)</script>}"])
    markup = []                                   # what the front end puts in as markup: MathML only

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                (markup.append(x) if k == "mathml" else walk(x))
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(w.derivation)
    assert markup and all("<img" not in m and "<script" not in m for m in markup)
    assert "onerror" not in w.svg.replace("onerror=alert(1)&gt;", "")
