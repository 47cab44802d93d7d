"""gradviz.drawing.graph: the neutral graph -- nodes, edges, ids, names, values, lookups, to_dict()."""

import json

import numpy as np
import pytest

import gradviz as torch
import gradviz.trace as trace
from gradviz.autograd import Variable
from gradviz.drawing.picture import build_graph
from gradviz.drawing.graph import Graph, latex_name
from gradviz.value_text import format_number, format_value


def seed1(**kw):
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1/2) * torch.sum(y)
    return build_graph(o, **kw), (x, y, o)


def kinds(g):
    return [(n.id, n.kind, n.label) for n in g.nodes]


def test_seed_dataflow_nodes_in_forward_order():
    """Intermediates get the letters animate()'s captions use (drawn, though no variable's name)."""
    g, _ = seed1()
    assert kinds(g) == [
        ("n0", "leaf", "x"), ("n1", "const", "1"), ("n2", "op", "+"), ("n3", "value", "a"),
        ("n4", "const", "2"), ("n5", "op", "^"), ("n6", "value", "b"), ("n7", "const", "5"),
        ("n8", "op", "×"), ("n9", "value", "y"), ("n10", "op", "Σ"), ("n11", "value", "c"),
        ("n12", "const", "0.5"), ("n13", "op", "×"), ("n14", "value", "o")]
    assert g.roots == ["n14"] and g.node("n14").is_root
    assert [n.grad_fn for n in g.nodes if n.kind == "op"] == [
        "AddBackward0", "PowBackward0", "MulBackward0", "SumBackward0", "MulBackward0"]


def test_edges_point_the_way_data_flows_with_operand_positions():
    g, _ = seed1()
    edges = [(e.src, e.dst, e.kind, e.position, e.input) for e in g.edges]
    assert edges[:3] == [("n0", "n2", "input", 0, 0), ("n1", "n2", "input", 1, 1), ("n2", "n3", "output", None, None)]
    # the exponent of ** 2 is an operand drawn from the op's parameters: no next_functions index
    assert ("n4", "n5", "input", 1, None) in edges
    # 5 * u: the coefficient is drawn first, whichever side Python had it on
    assert ("n7", "n8", "input", 0, 1) in edges and ("n6", "n8", "input", 1, 0) in edges
    assert [e.id for e in g.edges] == [f"e{k}" for k in range(len(g.edges))]


def test_values_shapes_and_flags():
    g, (x, y, o) = seed1()
    leaf, y_node, root = g.node("n0"), g.node("n9"), g.node("n14")
    assert (leaf.value, leaf.shape, leaf.dtype, leaf.is_leaf, leaf.requires_grad) == ("[1., 1.]", (2,), "float32", True, True)
    assert leaf.repr == "tensor([1., 1.], requires_grad=True)"
    assert (y_node.value, y_node.is_leaf, y_node.grad_fn) == ("[20., 20.]", False, "MulBackward0")
    assert root.value == "20." and root.repr == "tensor(20., grad_fn=<MulBackward0>)"
    # intermediates nobody holds any more are recomputed: (x + 1) ** 2
    assert g.node("n6").value == "[4., 4.]"
    assert g.node("n1").value == "1." and g.node("n12").value == "0.5000"


def test_grad_after_backward_and_recorded_flows():
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1/2) * torch.sum(y)
    assert build_graph(o).node("n0").grad is None
    with trace.record() as rec:
        o.backward()
    g = build_graph(o, recording=rec)
    assert g.node("n0").grad == "[10., 10.]"
    assert g.node("n9").grad is None and g.node("n9").flow == "[0.5000, 0.5000]"
    assert g.node("n14").flow == "1."
    into_plus = [e for e in g.edges if e.dst == "n2"]
    assert [e.grad for e in into_plus] == ["[10., 10.]", None]   # the constant gets no gradient


def test_a_tensor_used_twice_is_drawn_once_with_two_edges():
    x = Variable(torch.ones(1, 1), requires_grad=True)
    y = 2 * x + 3
    z = y * y * 3
    with trace.record() as rec:
        z.backward()
    g = build_graph(z, recording=rec)
    y_id = g.id_of(y)
    out = g.out_edges(y_id)
    assert len([n for n in g.nodes if n.name == "y"]) == 1
    assert len(out) == 2 and out[0].dst == out[1].dst
    assert [e.grad for e in out] == ["[[15.]]", "[[15.]]"] and g.node(y_id).flow == "[[30.]]"


def test_names_from_the_caller_explicit_names_and_name():
    g, _ = seed1()
    assert [n.name for n in g.nodes if n.name] == ["x", "y", "o"]
    x = torch.ones(2, requires_grad=True)
    _hidden = x * 2
    h = _hidden.sum()
    assert [n.name for n in build_graph(h).nodes if n.name] == ["x", "h"]
    assert build_graph(h, name="loss").node(build_graph(h).roots[0]).name == "loss"
    assert [n.name for n in build_graph(h, names={"w": x}).nodes if n.name] == ["w", "h"]
    assert [n.name for n in build_graph(h, namespace=False).nodes if n.name] == []
    assert [n.name for n in build_graph(h, namespace={"inp": x}).nodes if n.name] == ["inp"]


class TinyModel:
    """Shaped like an nn.Module, as far as naming goes."""

    def __init__(self):
        self.weight = torch.ones(2, requires_grad=True)
        self.bias = torch.zeros(1, requires_grad=True)

    def named_parameters(self):
        return iter([("weight", self.weight), ("bias", self.bias)])


def test_a_models_parameters_are_named_by_their_dotted_names():
    model = TinyModel()
    x = torch.tensor([1.0, 2.0])
    out = (model.weight * x).sum() + model.bias
    g = build_graph(out)
    assert [n.label for n in g.nodes if n.kind == "leaf"] == ["model.weight", "model.bias", "x"]
    w = model.weight  # noqa: F841 -- a variable of its own wins
    assert "w" in [n.label for n in build_graph(out).nodes]
    assert "lin.bias" in [n.label for n in build_graph(out, names={"lin": model}, namespace=False).nodes]


def test_names_are_found_from_one_frame_up_and_inside_comprehensions():
    def helper(t):  # what the widget does: build for its caller
        import sys
        return build_graph(t, frame=sys._getframe(1))
    x = torch.ones(2, requires_grad=True)
    s = (x * 3).sum()
    assert [n.name for n in helper(s).nodes if n.name] == ["x", "s"]
    assert [n.name for n in [build_graph(s) for _ in range(1)][0].nodes if n.name] == ["x", "s"]


def test_ids_are_the_same_every_run():
    a, _ = seed1()
    torch.ones(3) * 2   # other tensors in between shift the core's sequence numbers
    b, _ = seed1()
    strip = lambda g: [{k: v for k, v in n.items() if k not in ("seq", "fn_seq")} for n in g.to_dict()["nodes"]]
    assert strip(a) == strip(b)
    assert a.to_dict()["edges"] == b.to_dict()["edges"]


def test_lookup_from_tensors_grad_fns_and_accumulate_grad():
    g, (x, y, o) = seed1()
    assert g.id_of(x) == "n0" and g.id_of(y) == "n9" and g.id_of(o) == "n14"
    assert g.id_of(o.grad_fn) == "n13" and g.id_of(y.grad_fn) == "n8"
    acc = o.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0] \
        .next_functions[0][0].next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad" and g.id_of(acc) == "n0"
    p = build_graph(o, view="pytorch")
    assert p.node(p.id_of(acc)).kind == "accumulate" and p.id_of(x) == "n0"
    assert p.id_of(o.grad_fn) == p.op_ids[o.grad_fn._seq]
    assert g.id_of(torch.ones(1), None) is None
    with pytest.raises(KeyError):
        g.id_of(torch.ones(1))


def test_to_dict_is_json_and_maps_core_sequence_numbers():
    g, (x, y, o) = seed1()
    d = json.loads(json.dumps(g.to_dict()))
    assert set(d) == {"view", "summarized", "nodes", "edges", "roots", "op_ids", "value_ids",
                      "tensor_ids", "accumulate_ids"}
    assert d["op_ids"][str(o.grad_fn._seq)] == "n13"
    assert d["value_ids"][str(o.grad_fn._seq)] == "n14"
    assert d["tensor_ids"][str(x._seq)] == "n0" and d["tensor_ids"][str(y._seq)] == "n9"
    node = d["nodes"][0]
    for key in ("id", "kind", "label", "name", "seq", "fn_seq", "shape", "dtype", "value", "grad", "flow",
                "is_leaf", "requires_grad", "retains_grad", "is_root", "grad_fn", "op", "symbol", "params",
                "latex", "dlatex", "repr", "next", "members"):
        assert key in node
    for key in ("id", "src", "dst", "kind", "position", "input", "shape", "value", "grad", "count"):
        assert key in d["edges"][0]
    op = d["nodes"][8]
    assert (op["latex"], op["dlatex"]) == (r"5 \cdot \left(x + 1\right)^{2}", [r"5", r"\left(x + 1\right)^{2}"])


def test_pytorch_view_is_next_functions():
    g, (x, y, o) = seed1(view="pytorch")
    assert kinds(g) == [("n0", "leaf", "x"), ("n1", "accumulate", "AccumulateGrad"),
                        ("n2", "op", "AddBackward0"), ("n3", "op", "PowBackward0"), ("n4", "op", "MulBackward0"),
                        ("n5", "op", "SumBackward0"), ("n6", "op", "MulBackward0"), ("n7", "value", "o")]
    assert g.node("n2").next == ["n1", None]       # (AccumulateGrad, 0), (None, 0) for the 1
    assert g.node("n3").next == ["n2"]
    assert [(e.src, e.dst, e.kind) for e in g.edges] == [
        ("n0", "n1", "accumulate"), ("n1", "n2", "next"), ("n2", "n3", "next"), ("n3", "n4", "next"),
        ("n4", "n5", "next"), ("n5", "n6", "next"), ("n6", "n7", "root")]


def test_constants_from_parameters_and_detached_data():
    x = torch.ones(2, requires_grad=True)
    data = torch.tensor([2., 3.])
    cut = (x * 2).detach()
    r = (1 - x) * data + cut
    g = build_graph(r, namespace=False)
    rsub = next(n for n in g.nodes if n.grad_fn == "RsubBackward1" and n.kind == "op")
    into = g.in_edges(rsub.id)
    assert [(g.node(e.src).kind, g.node(e.src).label, e.position, e.input) for e in into] == [
        ("const", "1", 0, None), ("leaf", "a", 1, 0)]     # unnamed: a made-up letter, as animate() says
    leaves = [n for n in g.nodes if n.kind == "leaf"]
    assert [(n.requires_grad, n.value) for n in leaves] == [(True, "[1., 1.]"), (False, "[2., 3.]"), (False, "[2., 2.]")]


def test_detach_and_no_grad_are_drawn_as_cut_edges():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    d = y.detach()
    with torch.no_grad():
        n = x + 1
    z = (d * x + n).sum()
    g = build_graph(z)
    cuts = [(g.node(e.src).label, g.node(e.dst).label, e.cut) for e in g.edges if e.kind == "cut"]
    assert cuts == [("y", "d", "detach()"), ("x", "n", "no_grad()")]
    # y's history is drawn (values flowed from it) but gradients have no way back through the cut
    assert [n.grad_fn for n in g.nodes if n.kind == "op"] == ["MulBackward0", "MulBackward0", "AddBackward0",
                                                               "SumBackward0"]
    assert not any(e.kind == "cut" for e in build_graph(z, view="pytorch").edges)
    dot = torch.draw(z).source
    assert 'class="gv-edge gv-cut" style=dotted arrowhead=tee label="cut by detach()"' in dot


def test_a_cut_keeps_nothing_alive():
    import gc
    import weakref
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    d = y.detach()
    gone = weakref.ref(y)
    del y
    gc.collect()
    assert gone() is None
    g = build_graph((d * x).sum(), namespace=False)
    assert not any(e.kind == "cut" for e in g.edges)
    assert [n.grad_fn for n in g.nodes if n.kind == "op"] == ["MulBackward0", "SumBackward0"]


def test_retain_grad_and_integer_dtype():
    x = torch.ones(2, requires_grad=True)
    h = x * 2
    h.retain_grad()
    o = h.sum()
    o.backward()
    node = build_graph(o).node(build_graph(o).id_of(h))
    assert node.retains_grad and node.grad == "[1., 1.]"
    i = torch.arange(3)
    assert build_graph(i).nodes[0].dtype == "int64" and build_graph(i).nodes[0].value == "[0, 1, 2]"


def test_large_values_are_summarized():
    assert format_value(np.ones(16, np.float32)).count("1.") == 16
    big = format_value(np.arange(1000, dtype=np.float32))
    assert big == "[  0.,   1.,  ..., 998., 999.]"   # as torch prints it, double space and all
    assert format_value(None) is None


def test_big_graphs_are_summarized_into_groups(tanh_chain):
    loss, w = tanh_chain(60)
    g = build_graph(loss)
    assert len(g.nodes) > 400
    s = g.summarized_graph(200)
    assert s.summarized and len(s.nodes) <= 200 and g.summarized_graph(10_000) is g
    assert s.node(s.roots[0]).name == "loss"
    assert "w" in [n.name for n in s.nodes]      # named parameters stay visible
    groups = [n for n in s.nodes if n.kind == "group"]
    assert groups and sum(len(n.members) for n in groups) + len(s.nodes) - len(groups) == len(g.nodes)
    data = s.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data     # plain data, the same after a round trip
    assert sorted(n["id"] for n in data["nodes"]) == sorted(n.id for n in s.nodes)


def test_format_number_and_latex_names():
    assert [format_number(v) for v in (5.0, 0.5, np.float32(0.1), -1, True)] == ["5", "0.5", "0.1", "-1", "True"]
    assert latex_name("w1") == "w_{1}" and latex_name("beta") == r"\beta"
    assert latex_name("<script>&_") == r"\mathrm{<script>\&\_}"


def test_bad_input():
    with pytest.raises(TypeError, match=r"build_graph\(\) takes a tensor .*, not the float 3.0"):
        build_graph(3.0)
    with pytest.raises(ValueError):
        build_graph(torch.ones(1), view="sideways")
    assert isinstance(torch.Graph, type) and torch.Graph is Graph


def _shape(fn, label):
    """(name, [children]) all the way down next_functions; None entries kept as None."""
    if fn is None:
        return None
    return (label(fn), [_shape(f, label) for f, _ in fn.next_functions])


@pytest.mark.torch
@pytest.mark.parametrize("seed", ["tutorial", "mean", "cs535"])
def test_pytorch_view_matches_real_pytorch(seed):
    real = pytest.importorskip("torch")

    def run(lib, V=lambda t: t):
        if seed == "tutorial":
            x = lib.ones(2, requires_grad=True)
            return (1/2) * lib.sum(5 * (x + 1) ** 2)
        if seed == "mean":
            y = lib.ones(2, 2, requires_grad=True) + 2
            return (y * y * 3).mean()
        y = 2 * lib.ones(1, 1, requires_grad=True) + 3
        return y * y * 3

    ours = run(torch)
    g = build_graph(ours, view="pytorch", namespace=False)
    by_id = {n.id: n for n in g.nodes}

    def our_label(fn):
        return by_id[g.id_of(fn)].label

    theirs = run(real).grad_fn
    assert _shape(ours.grad_fn, our_label) == _shape(theirs, lambda f: f.name().replace("torch::autograd::", ""))
