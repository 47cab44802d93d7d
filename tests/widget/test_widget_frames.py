"""The widget's frames are the engine's recorded events, number for number and in order.

The widget records its own backward pass; each test then records the same pass independently
(the widget puts every ``.grad`` back, so the engine starts from the same state) and compares.
Random graphs come from hypothesis: shared intermediates (fan-out), several paths to a leaf,
constants, data tensors without grad, scalars and small vectors.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings

import gradviz as torch
from gradviz.value_text import format_value
from gradviz.trace import record
from gradviz.widget import AutogradWidget
from gradviz.widget.frames import event_data
from strategies import graphs
from widget_lessons import LESSONS

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True)


def independent_recording(root, gradient=None):
    """The same backward pass, recorded by the test itself; ``.grad`` restored afterwards."""
    leaves = {}
    with record() as rec:
        root.backward(gradient, retain_graph=True)
    for e in rec.events:
        if e.name == "AccumulateGrad":
            leaves[id(e.variable)] = e.variable
    for t in leaves.values():      # back to the state the widget also left
        if rec.events and all(ev.grad_before is None for ev in rec.events if ev.variable is t):
            t.grad = None
        else:
            first = next(ev for ev in rec.events if ev.variable is t)
            t.grad._data[...] = first.grad_before
    return rec


def event_frames(widget):
    return [f for f in widget.frames if f["event"] is not None]


def assert_frames_match(widget, rec):
    frames = event_frames(widget)
    assert len(frames) == len(rec.events)
    for f, e in zip(frames, rec.events):
        want = event_data(e)
        got = f["event"]
        assert (got["run"], got["step"], got["name"], got["seq"]) == (want["run"], want["step"], want["name"],
                                                                      want["seq"])
        np.testing.assert_array_equal(np.array(got["grad_in"], dtype=float), np.asarray(e.grad_in, dtype=float))
        assert len(got["grads_out"]) == len(e.grads_out)
        for g, w in zip(got["grads_out"], e.grads_out):
            assert (g is None) == (w is None)
            if w is not None:
                np.testing.assert_array_equal(np.array(g, dtype=float), np.asarray(w, dtype=float))
        for key in ("grad_before", "grad_after"):
            w = getattr(e, key)
            assert (got[key] is None) == (w is None)
            if w is not None:
                np.testing.assert_array_equal(np.array(got[key], dtype=float), np.asarray(w, dtype=float))
        assert f["phase"] == "backward"
        assert f["kind"] == ("acc" if e.name == "AccumulateGrad" else "node")


def edge_text_of(widget, frame):
    return {k[5:]: v for k, v in frame["set"].items() if k.startswith("edge:")}


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_frames_are_the_recorded_events(lesson):
    root, names, gradient = LESSONS[lesson]()
    w = AutogradWidget(root, gradient, names=names)
    assert_frames_match(w, independent_recording(root, gradient))


@pytest.mark.parametrize("lesson", sorted(LESSONS))
def test_forward_frames_follow_the_ops_in_the_order_they_ran(lesson):
    from gradviz.trace import forward_nodes
    root, names, gradient = LESSONS[lesson]()
    w = AutogradWidget(root, gradient, names=names)
    fwd = [f for f in w.frames if f["phase"] == "forward"]
    nodes = forward_nodes(root)
    assert [f["kind"] for f in fwd] == ["fwd_in", "fwd_out"] * len(nodes)
    op_ids = w.graph["op_ids"]
    assert [f["focus"][0] for f in fwd[::2]] == [op_ids[str(n._seq)] for n in nodes]
    # the output value appears at its op's second frame, with the value the graph shows
    values = {n["id"]: n["value"] for n in w.graph["nodes"]}
    for f in fwd[1::2]:
        (slot, text), = [(k, v) for k, v in f["set"].items() if k.startswith("val:")]
        assert text == values[slot[4:]]


def test_seed_lesson_numbers_and_captions():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names)
    kinds = [f["kind"] for f in w.frames]
    assert kinds == ["start"] + ["fwd_in", "fwd_out"] * 5 + ["seed"] + ["node"] * 5 + ["acc", "done"]
    seed = w.frames[kinds.index("seed")]
    assert "∂o/∂o = 1" in w.caption(kinds.index("seed"))
    assert seed["set"]  # resets the previous run's edge labels
    mul = kinds.index("node") + 2          # MulBackward0 of y = 5 * b: gets 0.5, sends 2.5
    assert w.caption(mul) == ("MulBackward0 gets ∂o/∂y = [0.5000, 0.5000], multiplies by ∂y/∂b = [5., 5.] "
                              "and sends [2.5000, 2.5000] to b.")   # PyTorch's format, as the picture
    assert list(edge_text_of(w, w.frames[mul]).values()) == ["[2.5000, 2.5000]"]
    acc = w.frames[kinds.index("acc")]
    assert w.caption(kinds.index("acc")) == "AccumulateGrad: x.grad was None, so it becomes [10., 10.]"
    assert acc["set"]["check:x"] == {"grad": "[10., 10.]", "ok": True, "diff": ""}
    assert root.grad_fn is not None and names["x"].grad is None   # the notebook's state is untouched


def test_sum_frame_where_a_tensor_fed_several_ops():
    root, names, _ = LESSONS["fan_out"]()
    w = AutogradWidget(root, names=names)
    sums = [(i, f) for i, f in enumerate(w.frames) if f["kind"] == "sum"]
    assert len(sums) == 2, "c feeds three ops and a feeds c and ... : their gradients are sums"
    for i, f in sums:
        nxt = w.frames[i + 1]                       # the node (or AccumulateGrad) that gets the sum
        assert nxt["event"] is not None
        total = np.array(nxt["event"]["grad_in"])
        slots = [(k, v) for k, v in f["set"].items() if k.startswith("grad:")]
        if nxt["kind"] == "acc":                    # a leaf: its .grad is AccumulateGrad's to write
            assert slots == []
        else:
            (slot, text), = slots
            assert text.endswith(format_value(total.astype(np.float32)).replace("\n", "\n    ")[-3:])
        assert len(f["edges"]) >= 2
        # the terms are what the consumers sent, as recorded: they add up to the total
        sent = [np.array(g) for fr in w.frames[:i] if fr["event"] and fr["run"] == f["run"]
                for e_id, g in zip(_edges_of(w, fr), fr["event"]["grads_out"]) if e_id in f["edges"]]
        np.testing.assert_allclose(sum(sent), total, rtol=1e-6)



def test_a_leaf_grad_changes_only_when_accumulategrad_runs():
    """x feeds two ops: the sum frame names the total, but x.grad is written by AccumulateGrad."""
    x = torch.tensor(2., requires_grad=True)
    w = torch.tensor(3., requires_grad=True)
    y = x * w
    z = y * x + y
    widget = AutogradWidget(z, names={"x": x, "w": w, "y": y, "z": z})
    widget.backward(retain_graph=True)
    widget.backward(retain_graph=True)     # animate() put .grad back to None: 15 again, then 30
    slot = "grad:" + widget._animation.ids.leaf(widget._animation.lesson.trace.value_for(x))
    writes = [(f["kind"], f["set"][slot]) for f in widget.frames if slot in f["set"]]
    assert [k for k, _ in writes if k not in ("start", "sync")] == ["acc"] * 3
    assert [v for k, v in writes if k == "acc"] == [".grad 15.", ".grad 15.", ".grad 30."]
    sums = [widget.caption(i) for i, f in enumerate(widget.frames) if f["kind"] == "sum" and "x fed" in
            widget.caption(i)]
    assert sums == ["x fed 2 ops, so the gradients coming back from them add up: 9. + 6. = 15."] * 3

def _edges_of(w, frame):
    """The edge ids a node frame sent gradients along, in input order (None where nothing)."""
    seq = frame["event"]["seq"]
    from gradviz.drawing.svg_ids import ids_from_graph
    ids = ids_from_graph(w.graph)
    return [ids._edge_in.get((seq, i)) for i in range(len(frame["event"]["grads_out"]))]


def test_gradient_argument_is_the_seed():
    root, names, gradient = LESSONS["vector_jacobian"]()
    w = AutogradWidget(root, gradient, names=names)
    seed = next(i for i, f in enumerate(w.frames) if f["kind"] == "seed")
    assert "gradient=" in w.caption(seed)
    want = format_value(np.array([[0., 60.], [60., 0.]], np.float32))
    assert w.frames[-2]["set"]["check:x"]["grad"] == " ".join(want.split())


def test_backward_false_shows_only_the_forward_pass():
    root, names, _ = LESSONS["seed"]()
    w = AutogradWidget(root, names=names, backward=False)
    assert {f["phase"] for f in w.frames} == {"start", "forward"}


def test_a_recording_of_your_own():
    root, names, _ = LESSONS["seed"]()
    with record() as rec:
        root.backward(retain_graph=True)
        root.backward()
    w = AutogradWidget(root, names=names, recording=rec)
    assert_frames_match(w, rec)
    assert [f["run"] for f in w.frames if f["kind"] == "seed"] == [0, 1]
    assert names["x"].grad.tolist() == [20.0, 20.0]   # a recording of yours is left as it is


# --- random graphs ---------------------------------------------------------------------------------

@SETTINGS
@given(graphs())
def test_random_graphs_frames_are_the_recorded_events_and_drawn(case):
    """Every frame is an event the engine recorded, and everything it lights up is in the picture."""
    root, _ = case
    assume(root.requires_grad)
    w = AutogradWidget(root, names={})
    assert_frames_match(w, independent_recording(root))
    assert w.error == ""
    nodes = {n["id"] for n in w.graph["nodes"]}
    edges = {e["id"] for e in w.graph["edges"]}
    for f in w.frames:
        assert set(f["focus"]) | set(f["lit"]) <= nodes
        assert set(f["edges"]) <= edges
        for slot in f["set"]:
            kind, _, ident = slot.partition(":")
            if kind in ("val", "grad", "cls", "name"):
                assert ident in nodes, slot
            elif kind == "edge":
                assert ident in edges, slot
        for ident in nodes:
            assert f'id="gv-{ident}"' in w.svg


def test_a_broadcast_input_is_not_said_to_be_multiplied():
    """What goes back to a broadcast input is a sum over its copies: the caption gives the rule."""
    x = torch.ones(2, 1, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    o = (x * b).sum()
    w = AutogradWidget(o, names={"x": x, "b": b, "o": o})
    (mul,) = [w.caption(i) for i, f in enumerate(w.frames) if f["kind"] == "node" and "MulBackward0" in w.caption(i)]
    assert mul == ("MulBackward0 gets ∂o/∂a = [[1., 1., 1.], [1., 1., 1.]], sends ∂o/∂x = Σ_batch (1 · b) = "
                   "[[3.], [3.]] to x; sends ∂o/∂b = Σ_batch (1 · x) = [2., 2., 2.] to b.")
