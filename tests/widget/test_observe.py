"""The picture observes, it never acts: draw(), animate(), watch() leave the user's program as it was.

Each test snapshots everything a student could look at -- every tensor's numbers and version, every
``.grad`` (the object, its numbers, its version), retained grads, hooks, modules, optimisers --
before and after the widget, in gradviz's engine and in real PyTorch, and compares.  The only
changes allowed are the ones a button was pressed for.
"""

import gc
import weakref

import numpy as np
import pytest

import gradviz
from gradviz.widget import animate
from gradviz.widget.i18n import render

try:
    import torch
except ImportError:  # the gradviz half runs without torch
    torch = None

LIBS = [pytest.param(gradviz, id="gradviz"),
        pytest.param(torch, id="torch", marks=[pytest.mark.torch, pytest.mark.skipif(
            torch is None, reason="the PyTorch half needs torch installed")])]


def numbers(t):
    if t is None:
        return None
    if torch is not None and isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.to_dense() if t.layout != torch.strided else t).numpy().copy()
    return np.array(t.detach().numpy(), copy=True)


def snapshot(*tensors):
    """Everything about these tensors the user can see, as plain data."""
    out = []
    for t in tensors:
        g = t.grad if t.is_leaf or t.retains_grad else None
        out.append((numbers(t), t._version, t.requires_grad, id(g) if g is not None else None,
                    numbers(g), None if g is None else g._version))
    return out


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
                assert u is not None and v is not None and u.shape == v.shape
                assert np.array_equal(u, v, equal_nan=True), (u, v)
            else:
                assert u == v, (x, y)


def last_words(w):
    return render("en", w.frames[-1]["msg"])


def _cube(lib, calls):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            calls.append("backward")
            x, = ctx.saved_tensors
            return g * 3 * x ** 2
    return Cube


# --- retained grads, hooks, .grad ---------------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS)
def test_animate_fills_no_retained_grad(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    o = y.sum()
    animate(o)
    assert y.grad is None and x.grad is None
    o.backward()
    assert y.grad.tolist() == [1.0, 1.0]          # the issue's [2, 2]: the widget's pass had filled it
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("lib", LIBS)
def test_animate_after_backward_keeps_every_grad(lib):
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    y = (x * 3).tanh()
    y.retain_grad()
    o = (y * y).sum()
    o.backward(retain_graph=True)
    before = snapshot(x, y)
    w = animate(o)
    same(before, snapshot(x, y))
    o.backward()                                   # the user's second pass: accumulation, as without the widget
    assert np.allclose(numbers(x.grad), 2 * before[0][4])
    assert "wrote no .grad" in render("en", next(f["msg"] for f in w.frames if f["msg"][0] == "cap_done_replay"))


@pytest.mark.parametrize("lib", LIBS)
def test_no_tensor_hook_runs_in_the_widgets_pass(lib):
    calls = []
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    x.register_hook(lambda g: calls.append("x"))
    y.register_hook(lambda g: calls.append("y"))
    y.register_hook(lambda g: g * 10)              # a hook that changes the gradient: not run either
    o = y.sum()
    animate(o)
    gradviz.draw(o)
    assert calls == []
    o.backward()
    assert calls == ["y", "x"] and x.grad.tolist() == [20.0, 20.0]   # the hooks are still there


@pytest.mark.parametrize("lib", LIBS)
def test_the_backward_button_is_the_users_own_call(lib):
    calls = []
    x = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: calls.append("x"))
    w = animate((x * 2).sum())
    assert calls == [] and x.grad is None
    w.backward(retain_graph=True)                  # pressed: the real backward(), hooks and .grad
    assert calls == ["x"] and x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("lib", LIBS)
def test_draw_and_animate_keep_every_tensor(lib):
    lib.manual_seed(0)
    w1 = lib.randn(3, 2, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    X = lib.randn(4, 3)
    h = (X @ w1 + b).tanh()
    h.retain_grad()
    loss = (h ** 2).mean()
    for when in ("before", "after"):
        if when == "after":
            loss.backward(retain_graph=True)
        before = snapshot(w1, b, X, h, loss)
        gradviz.draw(loss)
        animate(loss)
        animate(loss, view="pytorch")
        same(before, snapshot(w1, b, X, h, loss))


# --- custom Functions ------------------------------------------------------------------------------

def test_a_custom_backward_runs_once_per_users_backward_gradviz():
    calls = []
    Cube = _cube(gradviz, calls)
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    o = (Cube.apply(x) * 2).sum()
    w = animate(o)                                 # before the user's pass: the widget's pass runs it...
    assert calls == ["backward"]
    o.backward(retain_graph=True)                  # ...and the user's own pass takes that result
    assert calls == ["backward"] and x.grad.tolist() == [6.0, 24.0]
    animate(o)                                     # after: the widget reads the user's pass
    assert calls == ["backward"]
    o.backward()                                   # a second backward asked for: a second run
    assert calls == ["backward"] * 2 and x.grad.tolist() == [12.0, 48.0]
    assert "ran your" not in last_words(w)


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.torch
def test_a_custom_backward_rerun_under_torch_is_said():
    calls = []
    Cube = _cube(torch, calls)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    o = (Cube.apply(x) * 2).sum()
    w = animate(o)
    assert calls == ["backward"] and x.grad is None
    assert "ran your CubeBackward backward() once more" in last_words(w)
    w_ko = animate(o, lang="ko")
    assert "CubeBackward의 backward() 함수를 한 번 더" in render("ko", w_ko.frames[-1]["msg"])


# --- PyTorch only: what its engine offers ---------------------------------------------------------

pytorch = pytest.mark.skipif(torch is None, reason="needs torch")


@pytorch
@pytest.mark.torch
def test_optimiser_in_backward_cannot_step():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opts = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step(p):
        opts[p].step()
        opts[p].zero_grad()
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    loss = model(torch.ones(2, 3)).pow(2).sum()
    before = snapshot(*model.parameters())
    animate(loss)
    animate(loss, collapse=model)
    same(before, snapshot(*model.parameters()))
    loss.backward()                               # the user's own pass steps, once
    assert not torch.equal(model.weight, torch.from_numpy(before[0][0]))


@pytorch
@pytest.mark.torch
def test_grad_version_is_unchanged():
    x = torch.ones(2, requires_grad=True)
    o = (x * x).sum()
    o.backward(retain_graph=True)
    g, v = x.grad, x.grad._version
    animate(o)
    assert x.grad is g and x.grad._version == v and x.grad.tolist() == [2.0, 2.0]


@pytorch
@pytest.mark.torch
def test_sparse_embedding():
    emb = torch.nn.Embedding(5, 2, sparse=True)
    idx = torch.tensor([1, 1, 2])
    loss = emb(idx).sum() * 3
    w0 = animate(loss)                            # before the user's pass
    assert emb.weight.grad is None and not w0.error
    loss.backward(retain_graph=True)
    g = emb.weight.grad
    dense = g.to_dense().clone()
    assert dense[1].tolist() == [6.0, 6.0]
    w = animate(loss)                             # after it: no TypeError, no doubled gradient
    assert emb.weight.grad is g and torch.equal(g.to_dense(), dense)
    assert "emb.weight.grad" in last_words(w) and "12." in last_words(w)   # what backward() would make


def _hooked(kind, calls, lib):
    """A small model and loss with one user hook of ``kind`` that counts its calls; the hook is
    registered where the widget cannot see it (inside a function, on a node or an intermediate)."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    X = lib.randn(5, 3)
    undo = []

    def count(name, value=None):
        def hook(*args):
            calls.append(name)
            return value
        return hook
    if kind == "module full backward hook":
        model[0].register_full_backward_hook(count(kind))
    elif kind == "module full backward pre-hook":
        model[2].register_full_backward_pre_hook(count(kind))
    elif kind == "module backward hook (legacy)":
        model[1].register_backward_hook(count(kind))
    elif kind == "global module backward hook":
        undo.append(lib.nn.modules.module.register_module_full_backward_hook(count(kind)))
    elif kind == "post-accumulate-grad hook":
        model[0].weight.register_post_accumulate_grad_hook(count(kind))
    elif kind == "parameter hook":
        model[2].bias.register_hook(count(kind))

    def loss_of(model):
        h = model[1](model[0](X))              # an intermediate the widget is never handed
        if kind == "tensor hook on an unseen intermediate":
            h.register_hook(count(kind))
        elif kind == "gradient-changing tensor hook":
            h.register_hook(lambda g: (calls.append(kind), g * 10)[1])
        elif kind == "retain_grad on an unseen intermediate":
            h.retain_grad()
            calls.append(h)                    # (the test reads its .grad)
        elif kind == "node hook":
            h.grad_fn.register_hook(count(kind))
        elif kind == "node pre-hook":
            h.grad_fn.register_prehook(count(kind))
        elif kind == "multi-grad hook":
            lib.autograd.graph.register_multi_grad_hook((h, model[0].weight), count(kind))
        elif kind == "multi-grad hook (any)":
            lib.autograd.graph.register_multi_grad_hook((h, model[0].weight), count(kind), mode="any")
        return (model[2](h) ** 2).mean()
    return model, loss_of, undo


HOOK_KINDS = ["tensor hook on an unseen intermediate", "gradient-changing tensor hook",
              "retain_grad on an unseen intermediate", "node hook", "node pre-hook", "multi-grad hook",
              "multi-grad hook (any)", "module full backward hook", "module full backward pre-hook",
              "module backward hook (legacy)", "global module backward hook", "post-accumulate-grad hook",
              "parameter hook"]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("kind", HOOK_KINDS)
def test_no_hook_of_any_kind_runs_in_the_widgets_pass(kind, lib):
    """Every hook is held back. PyTorch runs them from its engine's loop, so the widget runs that loop
    itself (gradviz.trace.torch_backward); gradviz's engine has one switch (observing()). Counts,
    .grad and retained grads are unchanged, the picture shows the gradients backward() computes,
    and the hooks still run in the user's own backward()."""
    if kind == "global module backward hook" and lib is gradviz:
        pytest.skip("gradviz has no global module hooks (torch.nn.modules.module.register_module_*)")
    plain = []
    model0, loss_of0, undo0 = _hooked(None, plain, lib)
    expected = lib.autograd.grad(loss_of0(model0), list(model0.parameters()))
    calls = []
    model, loss_of, undo = _hooked(kind, calls, lib)
    try:
        loss = loss_of(model)
        retained = calls.pop() if kind.startswith("retain_grad") else None
        before = snapshot(*model.parameters())
        for show in (lambda: animate(loss), lambda: animate(loss, collapse=model),
                     lambda: animate(loss, view="pytorch"), lambda: gradviz.draw(loss)):
            w = show()
            assert calls == [], kind
            same(before, snapshot(*model.parameters()))
            if retained is not None:
                assert retained.grad is None
        w = animate(loss, names={"w": model[0].weight, "b": model[2].bias})
        assert not w.error
        words = last_words(w)
        assert "ran none of your hooks" in words and "ran once in the widget's pass" not in words
        # the picture: the gradients backward() computes (without the hooks' own changes)
        shown = {e.variable.tensor(): e.grad_after for e in w._animation.adapter.trace.runs[0].events if e.variable is not None}
        for p, g in zip(model.parameters(), expected):
            assert shown[p].tobytes() == numbers(g).tobytes()
        loss.backward()                            # the user's own pass: the hooks are all still there
        assert calls.count(kind) >= 1 or (retained is not None and retained.grad is not None)
    finally:
        for h in undo + undo0:
            h.remove()


@pytorch
@pytest.mark.torch
def test_the_torch_pass_is_the_engines_pass_bit_for_bit():
    """The widget's own loop and PyTorch's engine: same nodes in the same order (ties between leaves
    as the engine's priority queue breaks them), same gradients to the last bit, sums over fan-out
    in the engine's order, broadcasting reduced and dtypes cast as validate_outputs does."""
    from gradviz.trace import make_adapter
    torch.manual_seed(1)
    xs = [torch.randn(3, requires_grad=True) for _ in range(7)]
    a = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True, dtype=torch.float64)
    c = torch.randn(1, 3, requires_grad=True)

    def fan(x):
        return x.sin() + x.cos() * 3 + x.exp() / 7 + x * x

    Cube = _cube(torch, [])
    graphs = [lambda: torch.stack(xs).sum(),                                   # seven leaves ready at once
              lambda: fan(a).sum() * fan(a.tanh()).mean(),                      # fan-out: sums of four
              lambda: (a + c + b.float()).pow(2).sum(),                          # sum_to, a float64 leaf
              lambda: sum(p.sum() * (i + 1) for i, p in enumerate(a.chunk(3, 1))),  # several outputs
              lambda: (Cube.apply(a) * 2).sum() + Cube.apply(c).sum(),
              lambda: torch.nn.functional.cross_entropy(a @ torch.randn(3, 5), torch.tensor([0, 1, 4, 2]))]
    for make in graphs:
        for t in xs + [a, b, c]:
            t.grad = None
        root = make()
        seen = make_adapter([root], names={})
        observed, error = seen.backward(None, retain_graph=True, observe=True)
        assert error is None
        assert all(t.grad is None for t in xs + [a, b, c])
        real, error = seen.backward(None, retain_graph=True, observe=False)
        assert error is None
        o, r = observed[0].events, real[0].events
        assert [(e.name, e.seq) for e in o] == [(e.name, e.seq) for e in r]
        for eo, er in zip(o, r):
            for u, v in [(eo.grad_in, er.grad_in), (eo.grad_after, er.grad_after)] + list(zip(eo.grads_out, er.grads_out)):
                assert (u is None) == (v is None)
                if u is not None:
                    assert u.dtype == v.dtype and u.tobytes() == v.tobytes(), eo.name


@pytorch
@pytest.mark.torch
def test_errors_are_pytorchs_own():
    """A custom backward that returns a wrong shape, too many gradients or a number: the widget's
    pass raises what PyTorch's engine raises, word for word; a freed graph too."""
    def make(result):
        class Bad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, n):
                return a * n

            @staticmethod
            def backward(ctx, g):
                return result(g)
        return Bad
    x = torch.ones(2, requires_grad=True)
    for result in (lambda g: (torch.ones(3), None), lambda g: (g, None, g), lambda g: (5, None),
                   lambda g: g):
        Bad = make(result)
        with pytest.raises(RuntimeError) as real:
            Bad.apply(x, 3).sum().backward()
        w = animate(Bad.apply(x, 3).sum())
        assert str(real.value) in w.frames[-1]["msg"][1]["message"]
        assert x.grad is None
    o = (x * x).sum()
    o.backward()
    with pytest.raises(RuntimeError) as real:
        o.backward()
    w = animate(o)
    assert str(real.value).split(".")[0] in render("en", w.frames[-1]["msg"])


@pytorch
@pytest.mark.torch
def test_what_runs_inside_a_node_is_named():
    """A saved tensor's unpack hook runs inside the node that reads it (PyTorch gives no way around
    it): the widget says which; torch.utils.checkpoint's recomputation is one."""
    import torch.utils.checkpoint as checkpoint
    calls = []

    def unpack(t):
        calls.append("unpack")
        return t
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        o = x.sin().sum()
    w = animate(o)
    assert calls == ["unpack"] and x.grad is None
    assert "unpack (the unpack hook of a tensor SinBackward0 saved)" in last_words(w)
    assert "ran once in the widget's pass" in last_words(w)
    w_ko = animate(o, lang="ko")
    assert "unpack (the unpack hook" in render("ko", w_ko.frames[-1]["msg"])

    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    forwards = []
    lin.register_forward_hook(lambda *a: forwards.append(1))
    loss = checkpoint.checkpoint(lambda a: lin(a).tanh(), x.unsqueeze(0), use_reentrant=False).sum()
    n = len(forwards)
    w = animate(loss)
    assert "torch.utils.checkpoint" in last_words(w) and lin.weight.grad is None
    assert len(forwards) > n                    # it ran the forward again: that is what it says
    shown = {e.variable.tensor(): e.grad_after for e in w._animation.adapter.trace.runs[0].events if e.variable is not None}
    loss.backward()
    assert np.array_equal(shown[lin.weight], lin.weight.grad.numpy())


# --- training after the widget is training without it ------------------------------------------------

def _train(lib, optimiser, widget, steps=3):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    opt = optimiser(lib, model)
    X, Y = lib.randn(5, 3), lib.randn(5, 1)
    for _ in range(steps):
        loss = lib.nn.functional.mse_loss(model(X), Y)
        if widget == "before":
            animate(loss, collapse=model)
            gradviz.draw(loss)
        opt.zero_grad()
        loss.backward(retain_graph=True)
        if widget == "after":
            animate(loss)
        opt.step()
    return [numbers(p) for p in model.parameters()] + [numbers(p.grad) for p in model.parameters()]


OPTIMISERS = {"momentum": lambda lib, m: lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
              "adam": lambda lib, m: lib.optim.Adam(m.parameters(), lr=0.01)}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("optimiser", sorted(OPTIMISERS))
def test_steps_after_the_widget_are_bit_identical(lib, optimiser):
    plain = _train(lib, OPTIMISERS[optimiser], None)
    for widget in ("before", "after"):
        shown = _train(lib, OPTIMISERS[optimiser], widget)
        for a, b in zip(plain, shown):
            assert a.tobytes() == b.tobytes()


# --- watch() --------------------------------------------------------------------------------------

@pytorch
@pytest.mark.torch
def test_training_under_watch_is_bit_identical():
    def train(watched):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        X, Y = torch.randn(6, 3), torch.tensor([0, 1, 1, 0, 1, 0])
        with gradviz.watch() if watched else _nothing():
            for _ in range(5):
                loss = torch.nn.functional.cross_entropy(model(X), Y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return [p.detach().numpy().tobytes() for p in model.parameters()]
    assert train(True) == train(False)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _rss():
    with open("/proc/self/statm") as f:
        import os
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytorch
@pytest.mark.torch
def test_watch_is_bounded_and_freed():
    """2,000 steps under watch(): what it keeps lives with the graph, so memory stays flat (each
    step's intermediates are 0.5 MB: keeping them all would be a gigabyte), and nothing is left once
    the block has ended and the graph is gone."""
    from gradviz.trace import torch_watch
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                          # (a busy machine: threads that wait for a core spin)
    w = torch.nn.Parameter(torch.randn(2 ** 15))       # 128 KB: each intermediate below is as big
    opt = torch.optim.SGD([w], lr=1e-4, momentum=0.9)
    X = torch.randn(2 ** 15)
    rss = []
    with gradviz.watch():
        for i in range(2000):
            h = (X * w).tanh()
            loss = (h * h).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if i in (200, 1999):
                gc.collect()
                rss.append(_rss())
        kept = weakref.ref(loss.grad_fn.metadata[torch_watch.KEY]["out"].t)
    torch.set_num_threads(threads)
    assert rss[1] - rss[0] < 64 * 2 ** 20, [r / 2 ** 20 for r in rss]   # flat (the old watch() kept 20,000 nodes' values)
    assert torch_watch.watched(loss.grad_fn)["out"] is not None         # the last graph's values, for animate()
    del h, loss
    gc.collect()
    assert kept() is None                                          # freed with the graph
    assert all(ref() is not None for ref, _ in torch_watch._BORN.values())   # only tensors still alive


# --- odd inputs: drawn truthfully, or refused in one line ------------------------------------------

def test_mixed_engines_are_refused_in_one_line():
    if torch is None:
        pytest.skip("needs torch")
    with pytest.raises(TypeError, match="one engine's graph at a time"):
        gradviz.draw(gradviz.ones(2), torch.ones(2))


def test_every_option_is_type_checked():
    x = gradviz.ones(2, requires_grad=True)
    w = animate((x * 2).sum())
    for options, what in [({"element_id": 5}, "element_id= must be a string"),
                          ({"include_script": "yes"}, "include_script= must be True or False"),
                          ({"static_fallback": 1}, "static_fallback= must be True or False")]:
        with pytest.raises(TypeError, match=what):
            w.save_html("/nonexistent/never-written.html", **options)
    with pytest.raises(TypeError, match="path= must be a file name"):
        w.save_html(5)
    with pytest.raises(TypeError, match="collapse= takes an nn.Module"):
        animate((x * 2).sum(), collapse="model")
    with pytest.raises(TypeError, match="frame= must be a Python frame"):
        gradviz.draw(x, frame=3)
    with pytest.raises(TypeError, match="namespace= must be a dict"):
        gradviz.draw(x, namespace=[x])
    d = gradviz.draw(x)
    with pytest.raises(TypeError, match="path= must be a file name"):
        d.save(None)
    with pytest.raises(TypeError, match="dpi= must be a positive number"):
        d.save("/nonexistent/x.png", dpi="high")


@pytorch
@pytest.mark.torch
@pytest.mark.parametrize("make", ["complex", "nested"])
def test_what_the_picture_cannot_show_is_refused_up_front(make):
    if make == "complex":
        x = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        root, word = (x * x).abs().sum(), "complex64"
    else:
        nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], requires_grad=True)
        root, word = torch.nested.to_padded_tensor(nt * 2, 0).sum(), "nested tensor"
    for show in (gradviz.draw, animate):
        with pytest.raises(TypeError, match=word) as err:
            show(root)
        assert "\n" not in str(err.value)


@pytorch
@pytest.mark.torch
def test_sparse_and_half_precision_are_drawn_with_their_numbers():
    i = torch.tensor([[0, 1, 1], [2, 0, 2]])
    v = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
    d = torch.ones(3, 2, requires_grad=True)
    for root in (torch.sparse.sum(torch.sparse_coo_tensor(i, v, (2, 3))),
                 torch.sparse.mm(torch.sparse_coo_tensor(i, v, (2, 3)), d).sum(),
                 (torch.sparse_coo_tensor(i, v, (2, 3)).to_sparse_csr() @ d).sum()):
        w = animate(root)
        done = last_words(w)
        assert not w.error and "v.grad = [" in done and "None" not in done
        assert v.grad is None and d.grad is None
    for dtype in (torch.bfloat16, torch.float16):
        x = torch.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
        w = animate((x * 3).sum(), names={"x": x})
        assert "x.grad = [3., 3.]" in last_words(w)
        assert "?" not in gradviz.draw((x * 3).sum()).source


def test_no_hook_of_any_kind_runs_in_gradviz_widget_pass():
    """gradviz's engine can hold every hook back: one switch (gradviz.autograd.grad_mode.observing) that
    tensor, node, post-accumulate-grad, module and saved-tensor hooks all honour."""
    calls = []
    model = gradviz.nn.Linear(2, 1)
    model.register_full_backward_hook(lambda m, gi, go: calls.append("module"))
    x = gradviz.ones(1, 2, requires_grad=True)
    with gradviz.autograd.graph.saved_tensors_hooks(lambda t: (calls.append("pack"), t)[1],
                                                     lambda t: (calls.append("unpack"), t)[1]):
        y = model(x).tanh()
    calls.clear()
    o = y.sum()
    x.register_post_accumulate_grad_hook(lambda p: calls.append("post-accumulate"))
    x.register_hook(lambda g: calls.append("tensor"))
    y.grad_fn.register_hook(lambda gi, go: calls.append("node"))
    y.grad_fn.register_prehook(lambda go: calls.append("prehook"))
    before = snapshot(x, *model.parameters())
    animate(o)
    animate(o, collapse=model)
    gradviz.draw(o)
    assert calls == []
    same(before, snapshot(x, *model.parameters()))
    o.backward()
    assert {"module", "post-accumulate", "tensor", "node", "prehook", "unpack"} <= set(calls)


@pytorch
@pytest.mark.torch
def test_a_reentrant_checkpoint_writes_no_grad_that_stays():
    """A reentrant checkpoint's backward calls backward() on its own part of the graph, through
    PyTorch's engine: the widget puts back every .grad it wrote, and says so."""
    import torch.utils.checkpoint as checkpoint
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    x = torch.ones(1, 2, requires_grad=True)
    loss = checkpoint.checkpoint(lambda a: lin(a).tanh(), x, use_reentrant=True).sum()
    lin.bias.grad = torch.ones(2)
    g, before = lin.bias.grad, snapshot(x, lin.weight)
    w = animate(loss)
    same(before, snapshot(x, lin.weight))
    assert lin.bias.grad is g and g.tolist() == [1.0, 1.0]        # (its numbers written back: a new version)
    assert "CheckpointFunctionBackward" in last_words(w) and "put every .grad back" in last_words(w)
    loss.backward()
    shown = {e.variable.tensor(): e.grad_after for e in w._animation.adapter.trace.runs[0].events if e.variable is not None}
    assert np.array_equal(shown[x], x.grad.numpy())
