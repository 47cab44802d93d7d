"""Real PyTorch in, the same widget out: frames under `import torch` equal frames under `import gradviz as torch`.

The lessons' graphs (tests/widget_lessons.py) are built twice from the same source, once with each
library, and the widgets compared: the same steps, the same captions (numbers to 4 significant
digits; PyTorch's -0.0 is 0), the same derivation, the same picture.  Random expression graphs are
compared the same way (built inside ``gradviz.watch()``, which sees the constants PyTorch does
not save).  Then the edges: live buttons, bad input, a custom Function, watch(), module names.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

import gradviz  # noqa: E402
import widget_lessons as gv_lessons  # noqa: E402
from strategies import build_dag, dag_recipes  # noqa: E402
from gradviz.widget import AutogradWidget, animate  # noqa: E402

HERE = Path(__file__).parent
_source = Path(gv_lessons.__file__).read_text(encoding="utf-8").replace("import gradviz as torch", "import torch")
TORCH_LESSONS = {}
exec(compile(_source, "widget_lessons (torch)", "exec"), TORCH_LESSONS)

NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def same_text(a, b):
    """Equal words, and numbers equal to 4 significant digits (-0 is 0)."""
    if a == b:
        return True
    if not isinstance(a, str) or not isinstance(b, str):
        return False
    def skeleton(text):           # the words; a sign's column shifts the padding, so no spaces
        return re.sub(r"\s+", "", NUMBER.sub("#", text).replace("-#", "#"))
    if skeleton(a) != skeleton(b):
        return False
    xs, ys = [float(m) for m in NUMBER.findall(a)], [float(m) for m in NUMBER.findall(b)]
    return len(xs) == len(ys) and all(np.isclose(x, y, rtol=1e-3, atol=1e-4) for x, y in zip(xs, ys))


def assert_same(a, b, where=""):
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), f"{where}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            assert_same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)} items"
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert np.isclose(a, b, rtol=1e-3, atol=1e-4), f"{where}: {a} != {b}"
    else:
        assert same_text(a, b), f"{where}:\n  gradviz: {a!r}\n  torch:   {b!r}"


def shown(w):
    """What a student sees of a widget, engine aside."""
    frames = [{k: f[k] for k in ("phase", "kind", "run", "focus", "lit", "edges", "set")} for f in w.frames]
    for f, g in zip(frames, w.frames):
        f["caption"] = w.caption(w.frames.index(g))
        f["event"] = None if g["event"] is None else {k: v for k, v in g["event"].items() if k != "seq"}
    graph = [(n["id"], n["kind"], n["label"], n["name"], n["value"]) for n in w.graph["nodes"]]
    edges = [(e["id"], e["src"], e["dst"], e["kind"], e["input"]) for e in w.graph["edges"]]
    return {"frames": frames, "derivation": w.derivation, "graph": graph, "edges": edges, "error": w.error,
            "root": w.root_name}


@pytest.mark.parametrize("lesson", sorted(gv_lessons.LESSONS))
def test_every_lesson_animates_the_same_under_real_torch(lesson):
    g_root, g_names, g_grad = gv_lessons.LESSONS[lesson]()
    t_root, t_names, t_grad = TORCH_LESSONS["LESSONS"][lesson]()
    a, b = AutogradWidget(g_root, g_grad, names=g_names), AutogradWidget(t_root, t_grad, names=t_names)
    assert b.error == ""
    assert_same(shown(a), shown(b), lesson)


@pytest.mark.parametrize("lesson", sorted(gv_lessons.LESSONS))
def test_live_buttons_run_the_real_engine_the_same_way(lesson):
    widgets = []
    for lessons in (gv_lessons.LESSONS, TORCH_LESSONS["LESSONS"]):
        root, names, grad = lessons[lesson]()
        w = AutogradWidget(root, grad, names=names)
        w.backward(retain_graph=True)
        w.zero_grad()
        w.backward(retain_graph=False)
        w.forward_again = False                 # (on, gradviz's widget would build the graph again)
        w.backward()                            # the graph is freed: the engine's own message
        widgets.append(w)
    a, b = (shown(w) for w in widgets)
    last_a, last_b = a["frames"].pop(), b["frames"].pop()
    assert_same(a, b, lesson)
    assert last_a["kind"] == last_b["kind"] == "error"
    assert "second time" in last_a["caption"] and "second time" in last_b["caption"]


def test_the_seed_lesson_with_real_torch_leaves_grad_alone():
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * torch.sum(y)
    w = animate(o)
    assert w.root_name == "o" and x.grad is None          # animate() put .grad back
    assert w.derivation["leaves"][0]["chain"] == "[10., 10.]"
    o.backward()
    assert x.grad.tolist() == [10.0, 10.0]
    w.forward_again = False
    w.backward()                                          # the real freed-graph message
    assert w.frames[-1]["kind"] == "error" and "Trying to backward through the graph a second time" in \
        w.frames[-1]["error"]


# --- random graphs, built in both libraries from one recipe -------------------------------------

@settings(max_examples=25, deadline=None, derandomize=True)
@given(dag_recipes(broadcast=False))
def test_random_graphs_animate_the_same_under_real_torch(recipe):
    g_root, g_names = build_dag(gradviz, recipe, constants=False)
    with gradviz.watch():
        t_root, t_names = build_dag(torch, recipe, constants=False)
    assume(g_root.requires_grad)
    a = AutogradWidget(g_root, names={**g_names, "out": g_root})
    b = AutogradWidget(t_root, names={**t_names, "out": t_root})
    assert_same(shown(a), shown(b), str(recipe))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(dag_recipes(broadcast=False))
def test_random_graphs_without_watch_have_the_real_gradients(recipe):
    """Unwatched, a constant PyTorch did not save may be unknown; the steps and gradients are still the real ones."""
    g_root, g_names = build_dag(gradviz, recipe, constants=False)
    t_root, t_names = build_dag(torch, recipe, constants=False)
    assume(g_root.requires_grad)
    a = shown(AutogradWidget(g_root, names={**g_names, "out": g_root}))
    b = shown(AutogradWidget(t_root, names={**t_names, "out": t_root}))
    assert [f["kind"] for f in a["frames"]] == [f["kind"] for f in b["frames"]]
    assert_same([f["event"] for f in a["frames"]], [f["event"] for f in b["frames"]])
    assert_same([leaf["chain"] for leaf in a["derivation"]["leaves"]], [leaf["chain"] for leaf in b["derivation"]["leaves"]])


# --- custom Functions: their code runs once per backward() the user asked for --------------------

def _cube(lib, calls):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            calls.append("forward")
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            calls.append("backward")
            x, = ctx.saved_tensors
            return g * 3 * x ** 2
    return Cube


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
def test_a_custom_function_runs_once_per_backward(lib):
    calls = []
    Cube = _cube(lib, calls)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    o = (y * 2).sum()
    del y                                   # its value is gone: it must not be worked out by running forward
    calls.clear()
    w = animate(o, names={"x": x, "o": o})
    assert calls == ["backward"]            # the one recorded pass; the derivation and frames reuse it
    assert w.derivation["leaves"][0]["chain"] == "[ 6., 24.]"
    w.backward(retain_graph=True)
    # gradviz: the button's pass takes the result animate()'s pass computed (one backward asked for,
    # one run); torch cannot hand it over, so it runs again, and animate()'s last frame said so
    assert calls == ["backward"] * (1 if lib is gradviz else 2)
    assert any("Cube" in w.caption(i) for i in range(len(w.frames)))
    if lib is torch:
        assert any("ran your CubeBackward backward() once more" in w.caption(i) for i in range(len(w.frames)))


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
def test_an_error_in_a_custom_backward_is_shown_as_the_users(lib):
    class Broken(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("my bug")

    x = lib.tensor([1.0], requires_grad=True)
    o = Broken.apply(x).sum()
    w = animate(o)
    last = w.frames[-1]
    assert last["kind"] == "error" and "Broken.backward raised ValueError: my bug" in last["error"]
    assert "your" in last["error"]


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
def test_an_error_in_a_hook_is_shown_as_the_users(lib):
    x = lib.tensor([1.0], requires_grad=True)

    def bad_hook(g):
        raise RuntimeError("hook says no")
    x.register_hook(bad_hook)
    w = animate((x * 3).sum())
    assert "error" not in w.frames[-1]              # animate()'s own pass runs none of the user's hooks
    w.backward(retain_graph=True)                   # the button runs the user's backward(), hooks and all
    assert "your bad_hook raised RuntimeError: hook says no" in w.frames[-1]["error"]


def test_an_error_in_expected_is_shown_as_the_instructors():
    x = torch.ones(2, requires_grad=True)
    o = (x * 2).sum()
    w = animate(o, expected={"x": lambda x: 1 / 0})
    assert "expected=" in w.error and "ZeroDivisionError" in w.error


# --- what PyTorch does not keep, and bad input -------------------------------------------------

def test_watch_gives_the_values_pytorch_did_not_keep():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    plain = ((x - 3) * (x - 3)).sum()
    with gradviz.watch():
        watched = ((x - 3) * (x - 3)).sum()
    a, b = animate(plain, names={"x": x}), animate(watched, names={"x": x})
    labels = [n["label"] for n in b.graph["nodes"] if n["kind"] == "const"]
    assert labels == ["3", "3"]
    assert b.caption(1) == "Forward, op 1 of 4 (subtract): computes x - 3 from x = [1., 2.], 3"
    assert "?" not in "".join(b.caption(i) for i in range(len(b.frames)))
    # unwatched, MulBackward0 saved x - 3 (so 3 is worked out); the numbers are the same
    assert a.derivation["leaves"][0]["chain"] == b.derivation["leaves"][0]["chain"] == "[-4., -2.]"


def test_an_unknown_node_is_drawn_with_its_real_gradients():
    x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    o = torch.linalg.det(x)
    w = animate(o, names={"x": x, "o": o})
    assert w.error == ""
    node = next(f for f in w.frames if f["kind"] == "node")
    assert "LinalgDetBackward0" in w.caption(w.frames.index(node))
    x.grad = None
    o2 = torch.linalg.det(x)
    o2.backward()
    assert w.derivation["leaves"][0]["chain"] == gradviz.value_text.format_value(x.grad.numpy()).replace("\n", "") \
        or w.derivation["leaves"][0]["chain"].replace(" ", "") == \
        " ".join(gradviz.value_text.format_value(x.grad.numpy()).split()).replace(" ", "")


def test_a_leaf_and_a_tensor_without_grad_fn():
    x = torch.ones(2, requires_grad=True)
    w = animate(x)
    assert w.root_name == "x" and w.error == ""
    d = torch.ones(2)
    w = animate(d * 2)
    assert w.frames[0]["msg"][0] == "cap_no_grad"


def test_a_freed_graph_is_drawn_with_what_is_known():
    x = torch.ones(2, requires_grad=True)
    u = x * x
    o = (u * u).sum()
    o.backward()                              # frees the saved tensors
    w = animate(o, names={"x": x, "o": o})
    assert w.graph["nodes"] and w.frames[-1]["kind"] == "error"
    assert "second time" in w.frames[-1]["error"]


def test_a_cuda_tensor_gets_a_clear_message(monkeypatch):
    from gradviz.trace import torch_engine

    class FakeDevice:
        type = "cuda"

        def __str__(self):
            return "cuda:0"
    t = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(ValueError, match="on the CPU, and this one is on cuda:0"):
        torch_engine.check_root(type("T", (), {"device": FakeDevice()})())
    assert torch_engine.check_root(t) is None


def test_too_old_a_torch_gets_a_clear_message():
    from gradviz.trace import torch_engine
    with pytest.raises(RuntimeError, match=r"from torch 2\.1 on .* this is torch 2\.0\.1"):
        torch_engine.check_torch(type("T", (), {"__version__": "2.0.1+cpu"}))


def test_nn_parameters_get_their_dotted_names():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    x = torch.tensor([[1.0, 2.0]])
    loss = model(x).sum()
    w = animate(loss)
    names = {n["name"] for n in w.graph["nodes"] if n["kind"] == "leaf"}
    assert {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias", "x"} <= names
    assert w.error == ""


def test_draw_and_save_html_take_a_torch_tensor(tmp_path):
    x = torch.ones(2, requires_grad=True)
    o = (3 * x).sum()
    d = gradviz.draw(o)
    assert "MulBackward0" in d.source or "×" in d.source
    page = animate(o).save_html(tmp_path / "torch.html")
    assert "<svg" in Path(page).read_text(encoding="utf-8")


def test_importing_gradviz_does_not_import_torch():
    code = ("import sys, gradviz; x = gradviz.ones(2, requires_grad=True); gradviz.draw((x * 2).sum()); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_a_real_torch_model_collapses_into_its_layers():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    X, Y = torch.tensor([[1.0, 2.0], [0.0, 1.0]]), torch.tensor([0, 1])
    for watching in (False, True):
        if watching:
            with gradviz.watch():
                loss = torch.nn.CrossEntropyLoss()(model(X), Y)
        else:
            loss = torch.nn.CrossEntropyLoss()(model(X), Y)
        w = animate(loss, collapse=model)
        ops = [n["label"] for n in w.graph["nodes"] if n["kind"] == "op"]
        assert ops[0] == "model.0" and "model.2" in ops and w.error == ""
        loss.backward()
        assert "model.0.bias.grad" in w.caption(len(w.frames) - 1)
        chain = {leaf["leaf"]: leaf["chain"] for leaf in w.derivation["leaves"]}
        assert chain["model.0.bias"] == " ".join(gradviz.value_text.format_value(model[0].bias.grad.numpy()).split())
        model.zero_grad()


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
def test_a_node_with_several_outputs_reads_each_from_its_variable(lib):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    p, q = a.split(2)                        # one SplitBackward0, two outputs, in both engines
    o = (p * 2 + q.exp()).sum()
    w = animate(o, names={"a": a, "p": p, "q": q, "o": o})
    assert w.error == ""
    exp_in = next(w.caption(i) for i in range(len(w.frames)) if w.caption(i).startswith("Forward") and
                  "(exp)" in w.caption(i))
    assert "= [3., 4.]" in exp_in                 # output 1 of the split, not output 0 (named after it: README)
    assert w.derivation["leaves"][0]["chain"] == " ".join(
        gradviz.value_text.format_value(np.array([2, 2, np.exp(3), np.exp(4)], np.float32)).split())


def test_a_split_animates_the_same_in_both_engines():
    widgets = []
    for lib in (gradviz, torch):
        a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        p, q = a.split(2)
        o = (p * 2 + q.exp()).sum()
        widgets.append(AutogradWidget(o, names={"a": a, "p": p, "q": q, "o": o}))
    assert_same(*(shown(w) for w in widgets))


def test_a_gradient_torch_refuses_is_torchs_message():
    x = torch.ones(2, requires_grad=True)
    w = animate(x * 2, torch.ones(3))
    assert w.frames[-1]["kind"] == "error" and "Mismatch in shape" in w.frames[-1]["error"]
    assert "torch.Size([3])" in w.frames[-1]["error"] and x.grad is None


def test_the_graph_finds_torch_tensors_and_nodes():
    x = torch.ones(2, requires_grad=True)
    y = 5 * (x + 1) ** 2
    o = (1 / 2) * torch.sum(y)
    g = gradviz.draw(o).graph
    assert g.node(g.id_of(x)).name == "x" and g.node(g.id_of(y)).name == "y" and g.node(g.id_of(o)).is_root
    assert g.node(g.id_of(o.grad_fn)).kind == "op"
    p = gradviz.draw(o, view="pytorch").graph
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    assert p.node(p.id_of(acc)).kind == "accumulate" and p.node(p.id_of(o.grad_fn)).label == "MulBackward0"


ACTS = ["tanh", "sigmoid", "relu", "exp", "square", "none"]


@st.composite
def network_recipes(draw):
    """Small networks on a batch: matrix products, broadcast biases, activations, a loss."""
    seed = draw(st.integers(0, 2 ** 16))
    batch, n_in = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    layers = draw(st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.sampled_from(ACTS)), min_size=1, max_size=2))
    return seed, batch, n_in, layers, draw(st.sampled_from(["mse", "sum", "mean"]))


def build_network(lib, recipe):
    seed, batch, n_in, layers, loss = recipe
    rng = np.random.default_rng(seed)
    names = {"X": lib.tensor(rng.uniform(-1, 1, (batch, n_in)).astype(np.float32).tolist())}
    h, k = names["X"], n_in
    for j, (m, bias, act) in enumerate(layers):
        W = names[f"W{j}"] = lib.tensor(rng.uniform(-1, 1, (k, m)).astype(np.float32).tolist(), requires_grad=True)
        h = h @ W
        if bias:
            b = names[f"b{j}"] = lib.tensor(rng.uniform(-1, 1, m).astype(np.float32).tolist(), requires_grad=True)
            h = h + b
        h = {"tanh": lib.tanh, "sigmoid": lib.sigmoid, "relu": lib.relu, "exp": lib.exp,
             "square": lambda t: t ** 2, "none": lambda t: t * 2.0}[act](h)
        k = m
    if loss == "mse":
        names["Y"] = lib.tensor(rng.uniform(-1, 1, tuple(h.shape)).astype(np.float32).tolist())
        out = ((h - names["Y"]) ** 2).mean()
    else:
        out = h.sum() if loss == "sum" else h.mean()
    names["loss"] = out
    return out, names


@settings(max_examples=15, deadline=None, derandomize=True)
@given(network_recipes())
def test_random_networks_animate_the_same_under_real_torch(recipe):
    g_root, g_names = build_network(gradviz, recipe)
    with gradviz.watch():
        t_root, t_names = build_network(torch, recipe)
    a, b = AutogradWidget(g_root, names=g_names), AutogradWidget(t_root, names=t_names)
    assert_same(shown(a), shown(b), str(recipe))


def test_a_freed_torch_graph_runs_its_ops_again_with_torch():
    """Issue 21: after Run All the lesson's own o.backward() freed the graph; the button runs the
    graph's ops again with PyTorch from the leaves as they are now, and checks at those values."""
    x = torch.ones(2, requires_grad=True)
    o = (x * x).sum()
    w = animate(o, names={"x": x, "o": o})
    w.backward(retain_graph=False)
    w.zero_grad()
    with torch.no_grad():
        x += 1                                    # a training step
    w.backward()
    mine = w.frames[[f["kind"] for f in w.frames].index("zero") + 1:]
    assert [f["kind"] for f in mine][:2] == ["forward_again", "seed"] and mine[-1]["kind"] == "done"
    assert torch.equal(x.grad, torch.tensor([4.0, 4.0]))
    acc = [f for f in mine if f["kind"] == "acc"][-1]
    assert acc["set"]["check:x"]["ok"] is True


def test_a_freed_torch_graph_of_user_code_is_not_run_forward_again_and_says_why():
    Cube = _cube(torch, [])
    x = torch.ones(2, requires_grad=True)
    o = Cube.apply(x).sum()
    w = animate(o, names={"x": x, "o": o})
    w.backward(retain_graph=False)
    w.backward()                                  # your own forward: never run again, and said so
    kinds = [f["kind"] for f in w.frames]
    assert w.frames[-1]["phase"] == "note" and w.frames[-1]["msg"][1]["reason"] == ["why_user", {}]
    assert "forward_again" not in kinds and "error" not in kinds
    w.forward_again = False                       # unticked: PyTorch's own refusal is the lesson
    w.backward()
    assert w.frames[-1]["kind"] == "error" and "second time" in w.frames[-1]["error"]


@pytest.mark.parametrize("lesson", ["seed", "neuron", "tiny_mlp"])
def test_after_a_torch_pass_only_leaves_keep_a_grad(lesson):
    root, names, gradient = TORCH_LESSONS["LESSONS"][lesson]()
    w = AutogradWidget(root, gradient, names=names)
    shown, kinds = {}, {n["id"]: n["kind"] for n in w.graph["nodes"]}
    for f in w.frames:
        shown.update(f["set"])
    assert w.frames[-1]["kind"] == "done"
    assert all(v == "" for k, v in shown.items() if k.startswith("grad:") and kinds[k[5:]] != "leaf")


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
def test_each_output_of_a_split_keeps_its_own_name(lib):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    p, q = a.split(2)                        # one SplitBackward0; q is its output 1
    o = (p * 2 + q.exp()).sum()
    w = animate(o, names={"a": a, "p": p, "q": q, "o": o})
    text = [w.caption(i) for i in range(len(w.frames))]
    assert any("(exp): computes e^q from q = [3., 4.]" in c for c in text), text
    assert any(c.startswith("ExpBackward0 gets") and "∂c/∂q" in c and "to q." in c for c in text), text
    assert not any("e^p" in c or "∂c/∂p" in c for c in text)
    assert [d["latex"] for d in w.derivation["defs"]][2] == "c = e^{q}"
    stages = [path["stages"][0]["latex"] for path in w.derivation["leaves"][0]["paths"]]
    assert any(r"\partial c}{\partial q} \cdot \frac{\partial q}{\partial a}" in s for s in stages), stages


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
def test_an_unnamed_further_output_gets_a_letter_of_its_own(lib):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    o = (a.split(2)[1].exp()).sum()
    w = animate(o, names={"a": a, "o": o})
    fwd = next(w.caption(i) for i in range(len(w.frames)) if "(exp): computes" in w.caption(i))
    first, piece = w._animation.lesson.nodes[0].out.name, w._animation.lesson.nodes[0].pieces[1].name
    assert piece not in (first, "a", "o") and f"from {piece} = " in fwd, fwd


def _check_marks(w):
    """The check marks each frame sets: (frame index, leaf, ok)."""
    return [(k, slot[6:], v.get("ok")) for k, f in enumerate(w.frames) for slot, v in (f.get("set") or {}).items()
            if slot.startswith("check:") and isinstance(v, dict)]


def _last_checks(w):
    shown = {}
    for f in w.frames:
        shown.update(f["set"])
    return {k: v for k, v in shown.items() if k.startswith("check:")}


def _crosses(w):
    """Check marks that say ✗ (ok False that is not a zeroed or k calls' worth Σ)."""
    return [(k, slot) for k, f in enumerate(w.frames) for slot, v in (f.get("set") or {}).items()
            if slot.startswith("check:") and isinstance(v, dict) and v.get("ok") is False and "times" not in v]


def test_buttons_on_a_collapsed_torch_model_run_its_ops_again_and_end_with_a_tick():
    """Lesson 7's collapse=model after a training step: backward(), zero_(), backward() runs the
    ops PyTorch recorded for each layer (t, addmm, tanh, log_softmax, nll_loss) again from the
    parameters as they are now, and ends with ✓ on every parameter, at the engine's .grad."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    X, Y = torch.randn(4, 2), torch.tensor([0, 1, 1, 0])
    loss = torch.nn.functional.cross_entropy(model(X), Y)
    loss.backward()                        # a .grad from the notebook's own training step...
    with torch.no_grad():
        for p in model.parameters():       # ...then the step: that .grad is for other values
            p -= 0.1 * p.grad
    out = torch.nn.functional.cross_entropy(model(X), Y)
    w = animate(out, collapse=model)
    for act in ("backward", "zero", "backward"):
        w.backward() if act == "backward" else w.zero_grad()
    assert w.frames[-1]["kind"] == "done" and not any(f.get("unchecked") or f["phase"] == "error" for f in w.frames)
    assert [f["msg"][0] for f in w.frames if f["kind"] == "forward_again"] == ["cap_forward_again_freed"]
    checks = _last_checks(w)
    assert len(checks) == 4 and all(c["ok"] is True for c in checks.values()) and not _crosses(w), checks
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(X), Y).backward()
    assert all(torch.allclose(a, p.grad) for a, p in zip(got, model.parameters()))


def test_a_constant_pytorch_did_not_keep_is_no_obstacle_when_only_sums_carry_it():
    """Lesson 7's 'Shifted' module, (x * w + 2.0).mean() without watch(): PyTorch keeps no 2.0, but
    only add and mean carry it to the root, whose gradients read none of its values. After a
    training step, backward(), zero_(), backward() runs the graph again, shows the loss at the new
    w (the add's output, never known, stays unknown) and ends with ✓ at the engine's .grad."""
    wt = torch.nn.Parameter(torch.tensor([0.5, -1.0]))
    x = torch.tensor([1.0, 2.0])
    out = (x * wt + 2.0).mean()
    w = animate(out, names={"x": x, "w": wt, "out": out})
    out.backward()                             # the notebook's own call frees the graph
    with torch.no_grad():
        wt -= 0.5 * wt.grad                    # a training step
    for act in ("backward", "zero", "backward"):
        w.backward() if act == "backward" else w.zero_grad()
    assert w.frames[-1]["kind"] == "done" and not any(f.get("unchecked") or f["phase"] == "error" for f in w.frames)
    again = [f for f in w.frames if f["kind"] == "forward_again"]
    now = (x * wt + 2.0).mean()
    assert again and all(f["msg"][1]["value"] == gradviz.value_text.summary(now.detach().numpy()) for f in again)
    checks = _last_checks(w)
    assert list(checks) and all(c["ok"] is True for c in checks.values()) and not _crosses(w), checks
    assert torch.allclose(wt.grad, torch.tensor([0.5, 1.0]))
    lesson = w._animation.lesson
    assert [s.out.data is None for s in lesson.nodes] == [False, True, False]     # add's output: never known


@pytest.mark.parametrize("case", ["unkept", "user"])
def test_buttons_on_a_graph_that_cannot_run_again_end_in_words(case):
    """tanh(w + 2.0) without watch() (PyTorch keeps no 2.0, and tanh's gradient reads its value) and a
    custom Function (its forward is the user's code): backward(), zero_(), backward() ends on a
    note saying backward() was not run and why, never PyTorch's refusal, a ✗ or a traceback; the
    first press is ✓."""
    from gradviz.widget.i18n import render
    wt = torch.nn.Parameter(torch.tensor([0.5, -1.0]))
    if case == "unkept":
        out = torch.tanh(wt + 2.0).sum()
        reason = "PyTorch did not keep a value this pass read"
    else:
        out = _cube(torch, []).apply(wt).sum()
        reason = "it calls your own code (a custom autograd.Function)"
    w = animate(out, names={"w": wt, "out": out})
    assert not [m for m in _check_marks(w) if m[2] is False and m[0] == 0]      # no ✗ at the start either
    w.backward()
    first_done = len(w.frames)
    assert [m for m in _check_marks(w) if m[0] >= first_done - 10 and m[2] is True]
    w.zero_grad()
    grads = [wt.grad.clone()]
    w.backward()
    last = w.frames[-1]
    words = render("en", last["msg"])
    assert last["phase"] == "note" and last.get("unchecked") is True and "error" not in last
    assert words.startswith("backward() is not run this time") and reason in words
    assert "no new call to check" in words and "Traceback" not in words and "Error" not in words
    assert not any(f["phase"] == "error" for f in w.frames)
    assert _crosses(w) == []                 # (ok False with "times": zeroed or k calls' worth, said as such)
    assert torch.equal(wt.grad, grads[0])          # nothing ran: .grad unchanged
    assert "이번에는 backward() 호출을 실행하지 않습니다" in render("ko", last["msg"])


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
@pytest.mark.parametrize("how", ["split", "split_sizes", "unbind", "chunk"])
def test_a_node_of_several_outputs_runs_again_and_ends_with_a_tick(lib, how):
    """split/unbind after Run All and a training step: backward(), zero_(), backward() runs the
    node again with the sizes its node keeps, takes its numbers (no hand rule) from that press's
    pass, and ends with ✓ at the engine's .grad."""
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    parts = {"split": lambda: a.split(2), "split_sizes": lambda: a.split([1, 3]),
             "unbind": lambda: a.unbind(0), "chunk": lambda: a.chunk(2)}[how]()
    o = (parts[0] * 2).sum() + parts[-1].exp().sum()
    w = animate(o, names={"a": a, "o": o})
    o.backward()
    with lib.no_grad():
        a -= 0.1
    for act in ("backward", "zero", "backward"):
        w.backward() if act == "backward" else w.zero_grad()
    assert w.frames[-1]["kind"] == "done" and not any(f.get("unchecked") or f["phase"] == "error" for f in w.frames)
    checks = _last_checks(w)
    assert checks["check:a"]["ok"] is True and not _crosses(w), checks
    want = np.zeros(4)
    last = {"unbind": 1, "split_sizes": 3}.get(how, 2)
    want[:parts[0].numel()] = 2.0
    want[4 - last:] += np.exp(np.array([1.0, 2.0, 3.0, 4.0])[4 - last:] - 0.1)
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("lib", [gradviz, torch], ids=["gradviz", "torch"])
@pytest.mark.parametrize("how", ["select", "index_select", "gather"])
def test_picked_elements_run_again_and_end_with_a_tick(lib, how):
    """x[i], index_select and gather after Run All and a training step: backward(), zero_(),
    backward() runs them again with the indices their node keeps and ends with ✓ (under real
    PyTorch they once ended on the note that an op cannot be called again)."""
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    v = lib.tensor([0.5, -1.0], requires_grad=True)
    picked = {"select": lambda: x[0][1] * v[0] + x[1, 2],
              "index_select": lambda: (x.index_select(1, lib.tensor([0, 2])).sum(0) * v).sum(),
              "gather": lambda: (x.gather(1, lib.tensor([[0], [2]])).squeeze(1) * v).sum()}[how]
    o = picked()
    w = animate(o, names={"x": x, "v": v, "o": o})
    o.backward()
    with lib.no_grad():
        x -= 0.1
        v += 0.2
    for act in ("backward", "zero", "backward"):
        w.backward() if act == "backward" else w.zero_grad()
    assert w.frames[-1]["kind"] == "done" and not any(f.get("unchecked") or f["phase"] == "error" for f in w.frames)
    checks = _last_checks(w)
    assert checks["check:x"]["ok"] is True and checks["check:v"]["ok"] is True and not _crosses(w), checks
