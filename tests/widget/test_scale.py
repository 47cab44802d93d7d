"""Big graphs: no recursion as deep as the graph, and a folded group of the picture is one step.

No timing is asserted here (a shared machine makes that flaky): ``benchmarks/widget.py`` reports
how long a 20,000-op chain takes and how big its page is.
"""

import json

import numpy as np
import pytest

import gradviz
import gradviz as torch
from gradviz.widget import AutogradWidget
from gradviz.widget._lesson import Lesson
from widget_lessons import traced
from gradviz.widget.derivation import _paths

N = 20_000


def chain(n):
    """x -> (+0.001, *1.0001) alternately, n ops: a path n deep, as an unrolled loop makes."""
    x = torch.tensor(0.5, requires_grad=True)
    h = x
    for k in range(n):
        h = h * 1.0001 if k % 2 else h + 0.001
    return x, h


@pytest.fixture(scope="module")
def big():
    x, h = chain(N)
    w = gradviz.animate(h, names={"x": x, "h": h})
    return x, h, w


def test_a_20000_op_chain_animates(big):
    x, h, w = big
    assert w.error == "" and "error" not in w.derivation      # no RecursionError anywhere
    kinds = [f["kind"] for f in w.frames]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert len(w.frames) < 100                                 # folded: not 3 frames per op
    assert kinds.count("fwd_group") >= 2 and kinds.count("bwd_group") >= 2
    fwd = [f["folded"]["count"] for f in w.frames if f["kind"] == "fwd_group"]
    assert sum(fwd) == N                                       # every op is in exactly one step


def test_the_folded_steps_tell_the_truth(big):
    x, h, w = big
    expected = 0.5
    for k in range(N):
        expected = np.float32(expected * np.float32(1.0001)) if k % 2 else np.float32(expected + np.float32(0.001))
    fwd = [f for f in w.frames if f["kind"] == "fwd_group"]
    assert all(f["msg"][1]["n"] == str(N) for f in fwd)
    assert w.caption(w.frames.index(fwd[-1])).endswith("gives " + fwd[-1]["msg"][1]["value"])
    acc = next(f for f in w.frames if f["kind"] == "acc")
    assert acc["msg"][0] == "cap_acc_new" and acc["msg"][1]["leaf"] == "x"
    h.backward()
    assert np.allclose(acc["event"]["grad_after"], x.grad.item())      # the engine's own number
    leaf = w.derivation["leaves"][0]
    assert leaf["leaf"] == "x" and np.allclose(float(leaf["chain"]), x.grad.item(), rtol=1e-4)
    stages = leaf["paths"][0]["stages"]          # the chain of ∂s (cut with ⋯) and its value, no 20,000-factor formula
    assert len(stages) == 2 and r"\cdots" in stages[0]["latex"] and len(stages[0]["latex"]) < 2000
    assert np.isclose(float(stages[1]["latex"]), x.grad.item(), rtol=1e-3)
    x.grad = None


def test_the_state_stays_small(big):
    x, h, w = big
    assert len(json.dumps(w.state())) < 2_000_000
    assert len(w.graph["nodes"]) <= 200


def test_a_folded_step_can_be_written_out():
    x, h = chain(2000)
    w = gradviz.animate(h, names={"x": x, "h": h})
    n = len(w.frames)
    i = next(k for k, f in enumerate(w.frames) if f["kind"] == "fwd_group")
    count = w.frames[i]["folded"]["count"]
    steps = w.expand(i)
    assert len(steps) == count * 2
    assert [f["kind"] for f in steps[:2]] == ["fwd_in", "fwd_out"]
    assert w.frames[i:i + len(steps)] == steps and len(w.frames) == n - 1 + len(steps) and w.frame == i
    assert steps[0]["msg"][1]["k"] == "1" and steps[0]["msg"][1]["n"] == "2000"
    j = next(k for k, f in enumerate(w.frames) if f["kind"] == "bwd_group")
    back = w.expand(j)
    assert {f["kind"] for f in back} <= {"node", "acc", "sum"} and len(back) > 1
    assert back[0]["event"]["name"] in ("AddBackward0", "MulBackward0")
    with pytest.raises(ValueError, match="not a folded step"):
        w.expand(0)


def test_the_pytorch_view_of_a_20000_op_chain():
    x, h = chain(N)
    w = AutogradWidget(h, view="pytorch")
    assert w.error == "" and "error" not in w.derivation and len(w.frames) < 100


def test_every_path_of_a_deep_chain_is_walked_without_recursion():
    x, h = chain(5000)
    lesson = Lesson(traced(h, {"x": x, "h": h}))
    paths, count = _paths(lesson, lesson.leaves[0], 4)
    assert count == 1 and len(paths) == 1 and len(paths[0]) == 5000
    assert paths[0][0][0] is lesson.root_step and paths[0][-1][0] is lesson.nodes[0]


def test_paths_are_listed_in_input_order():
    x = torch.tensor(2.0, requires_grad=True)
    a = x * 3
    b = x + 1
    o = a * b + x
    lesson = Lesson(traced(o, {"x": x, "a": a, "b": b, "o": o}))
    paths, count = _paths(lesson, lesson.leaves[0], 10)
    assert count == 3
    assert [[n.out.name for n, _ in p] for p in paths] == [["o", "c", "a"], ["o", "c", "b"], ["o"]]


def test_interleaved_groups_are_still_one_step_each():
    """x_i * 2 summed: the products and the sums sit in neighbouring bands of the picture, so in
    creation order their groups alternate; each group is still one step, run in depth order."""
    xs = [torch.tensor(float(i), requires_grad=True) for i in range(1500)]
    s = xs[0] * 2
    for x in xs[1:]:
        s = s + x * 2
    w = gradviz.animate(s)
    kinds = [f["kind"] for f in w.frames]
    groups = [f["folded"]["group"] for f in w.frames if f["kind"] == "fwd_group"]
    assert len(groups) == len(set(groups)) and len(w.frames) < 100
    assert sum(f["folded"]["count"] for f in w.frames if f["kind"] == "fwd_group") == 2999
    back = [f["folded"]["group"] for f in w.frames if f["kind"] == "bwd_group"]
    assert back == groups[::-1]                                  # backward: deepest first
    assert kinds[-1] == "done" and len(json_size(w)) < 2_000_000


def json_size(w):
    return json.dumps(w.state())


def test_a_small_graph_is_not_folded():
    x = torch.ones(2, requires_grad=True)
    o = (5 * (x + 1) ** 2).sum()
    w = gradviz.animate(o)
    assert not any("folded" in f for f in w.frames) and not w.graph["summarized"]


def test_draw_a_20000_op_chain():
    x, h = chain(N)
    d = gradviz.draw(h)
    assert d.graph.summarized and len(d.graph.nodes) <= 200 and "<svg" in d.svg()
    assert d.graph.node(d.graph.id_of(h.grad_fn)).kind == "group" and d.graph.node(d.graph.id_of(h)).is_root


def test_a_leaf_cut_from_a_leaf_thousands_deep():
    """detach().requires_grad_() again and again: each leaf remembers (weakly) the one it was cut
    from, and the dataflow view walks that history without recursing."""
    c = torch.tensor(1.0, requires_grad=True)
    alive = [c]
    for _ in range(3000):
        c = c.detach().requires_grad_()
        alive.append(c)
    w = gradviz.animate(c)
    assert w.error == "" and w.graph["summarized"]


def test_the_front_end_can_ask_for_a_folded_step_op_by_op():
    x, h = chain(600)
    w = gradviz.animate(h, names={"x": x, "h": h})
    i = next(k for k, f in enumerate(w.frames) if f["kind"] == "fwd_group")
    count = w.frames[i]["folded"]["count"]
    w._on_msg(w, {"type": "expand", "frame": i}, [])
    assert [f["kind"] for f in w.frames[i:i + 2]] == ["fwd_in", "fwd_out"] and w.frame == i
    n = len(w.frames)
    w._on_msg(w, {"type": "expand", "frame": 0}, [])          # not a folded step: said in the widget
    assert len(w.frames) == n + 1 and w.frames[-1]["kind"] == "error" and "not a folded step" in w.caption()
    assert count > 1
