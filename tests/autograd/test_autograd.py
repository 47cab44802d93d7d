"""The engine as a student meets it: backward, accumulation, retain_graph, grad modes, hooks, and
every classic error with PyTorch's exact type and message."""

import gc
import re
import warnings
import weakref

import pytest

import gradviz as torch
from gradviz.autograd import Variable

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")
NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information.")


def raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


# --- the seed lesson ----------------------------------------------------------------------------

def test_seed_lesson_gradient():
    x = torch.ones(2, requires_grad=True)
    o = 0.5 * torch.sum(5 * (x + 1) ** 2)
    o.backward()
    assert x.grad.tolist() == [10.0, 10.0]
    assert repr(o) == "tensor(20., grad_fn=<MulBackward0>)"


# --- classic errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda x: (x * x).sum(), lambda x: (x ** 2).sum(), lambda x: x.exp().sum(),
                                  lambda x: (x * 2).tanh().mean()])
def test_backward_twice_without_retain_graph(make):
    x = torch.ones(2, requires_grad=True)
    y = make(x)
    y.backward()
    with raises(RuntimeError, SECOND_BACKWARD):
        y.backward()


def test_backward_twice_through_nodes_that_save_nothing_is_allowed():
    x = torch.ones(2, requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()  # AddBackward0 and SumBackward0 keep nothing: PyTorch allows this too
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_scalar_backward_needs_a_gradient():
    x = torch.ones(2, requires_grad=True)
    with raises(RuntimeError, "grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_gradient_of_the_wrong_shape():
    x = torch.ones(2, requires_grad=True)
    with raises(RuntimeError, "Mismatch in shape: grad_output[0] has a shape of gradviz.Size([3]) and "
                              "output[0] has a shape of gradviz.Size([2])."):
        (x * 2).backward(torch.ones(3))


@pytest.mark.parametrize("gradient, error, message", [
    ("abc", TypeError, "gradients can be either Tensors or None, but got str"),     # zipped: 'a' first
    ([1.0, 1.0], TypeError, "gradients can be either Tensors or None, but got float"),
    (3, TypeError, "'int' object is not iterable"),
    ([], RuntimeError, "got 1 tensors and 0 gradients"),
    ([None], RuntimeError, "grad can be implicitly created only for scalar outputs"),
])
def test_gradient_that_is_not_a_tensor(gradient, error, message):
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    for call in (lambda: y.backward(gradient), lambda: torch.autograd.grad(y, x, gradient)):
        with raises(error, message):
            call()
    y.backward([torch.ones(2), torch.ones(2)])     # PyTorch zips: a gradient too many is ignored
    assert x.grad.tolist() == [2.0, 2.0]


def test_in_place_on_a_leaf_that_requires_grad():
    x = torch.ones(2, requires_grad=True)
    msg = "a leaf Variable that requires grad is being used in an in-place operation."
    for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.zero_(), lambda: x.__iadd__(1)):
        with raises(RuntimeError, msg):
            op()
    with torch.no_grad():  # the usual SGD step
        x -= 0.1 * torch.ones(2)
    assert x.tolist() == pytest.approx([0.9, 0.9])


def test_in_place_on_a_view_of_a_leaf():
    x = torch.ones(2, 2, requires_grad=True)
    msg = "a view of a leaf Variable that requires grad is being used in an in-place operation."
    with raises(RuntimeError, msg):
        x[0] = 5
    with raises(RuntimeError, msg):
        x[0].add_(1)
    with raises(RuntimeError, msg):
        x.view(4).mul_(2)


def test_in_place_change_of_a_saved_tensor():
    x = torch.ones(2, requires_grad=True)
    y = x * 1
    z = y * y
    y.add_(1)
    with raises(RuntimeError, "one of the variables needed for gradient computation has been modified by "
                              "an inplace operation: [gradviz.FloatTensor [2]], which is output 0 of "
                              "Add, is at version 1; expected version 0 instead. Hint: enable "
                              "anomaly detection to find the operation that failed to compute its gradient, "
                              "with torch.autograd.set_detect_anomaly(True, check_nan=False)."):
        z.sum().backward()


def test_in_place_change_of_a_saved_output():
    x = torch.ones(2, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"\[gradviz.FloatTensor \[2\]\], which is output 0 of "
                                           r"Exp, is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_in_place_change_of_a_saved_plain_tensor():
    a = torch.ones(2)
    x = torch.ones(2, requires_grad=True)
    y = x * a
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[gradviz.FloatTensor \[2\]\] "
                                           r"is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_requires_grad_on_integers_three_messages():
    with raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        torch.tensor([1, 2], requires_grad=True)
    with raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        torch.ones(2, dtype=torch.int64, requires_grad=True)
    with raises(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
        Variable(torch.full((2, 3), 3), requires_grad=True)
    x = torch.tensor([1, 2])
    with raises(RuntimeError, "only Tensors of floating point and complex dtype can require gradients"):
        x.requires_grad = True
    with raises(RuntimeError, "only Tensors of floating point dtype can require gradients"):
        x.requires_grad_()
    x.requires_grad = False  # turning it off is always fine


def test_item_of_many_elements():
    with raises(RuntimeError, "a Tensor with 3 elements cannot be converted to Scalar"):
        torch.ones(3).item()
    assert torch.ones(1, 1).item() == 1.0


def test_non_leaf_grad_warns_with_pytorchs_text():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning) as record:
        assert y.grad is None
    assert str(record[0].message) == NON_LEAF_GRAD
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None  # a leaf: no warning


def test_changing_requires_grad_of_a_non_leaf():
    y = torch.ones(2, requires_grad=True) * 2
    with raises(RuntimeError, "you can only change requires_grad flags of leaf variables. If you want to use "
                              "a computed variable in a subgraph that doesn't require differentiation use "
                              "var_no_grad = var.detach()."):
        y.requires_grad = False


def test_backward_of_something_without_a_graph():
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.ones(2).sum().backward()
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = (x * 2).sum()
    with raises(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
        y.backward()


def test_numpy_of_a_tensor_that_requires_grad():
    with raises(RuntimeError, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                              "instead."):
        torch.ones(2, requires_grad=True).numpy()


def test_bool_of_many_elements():
    with raises(RuntimeError, "Boolean value of Tensor with more than one value is ambiguous"):
        bool(torch.ones(2))


# --- accumulation, retain_graph, freeing --------------------------------------------------------

def test_grad_accumulates_in_the_same_tensor():
    x = torch.ones(2, requires_grad=True)
    y = (x * 5).sum()
    y.backward(retain_graph=True)
    g = x.grad
    assert g.tolist() == [5.0, 5.0]
    y.backward(retain_graph=True)
    assert x.grad is g and g.tolist() == [10.0, 10.0]
    (x * 1).sum().backward()
    assert x.grad is g and g.tolist() == [11.0, 11.0]
    x.grad.zero_()
    (x * 2).sum().backward()
    assert x.grad is g and g.tolist() == [2.0, 2.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad is not g and x.grad.tolist() == [3.0, 3.0]


def test_seed_lesson_twice_with_retain_graph():
    x = torch.ones(2, requires_grad=True)
    o = 0.5 * torch.sum(5 * (x + 1) ** 2)
    o.backward(retain_graph=True)
    assert x.grad.tolist() == [10.0, 10.0]
    o.backward()
    assert x.grad.tolist() == [20.0, 20.0]
    with raises(RuntimeError, SECOND_BACKWARD):
        o.backward()


def test_saved_values_are_freed_after_backward():
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    assert node.saved_values is not None and len(node.saved_values) == 1
    y.sum().backward(retain_graph=True)
    assert node.saved_values is not None
    y.sum().backward()
    assert node.saved_values is None


def test_a_node_frees_what_it_saved_as_soon_as_it_has_run():
    """As PyTorch's engine (release_variables after each node): a hook later in the same pass finds
    an earlier node's values freed, and a pass stopped by an error has freed the nodes it ran."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = y.exp()
    seen = []

    def look(g):
        with raises(RuntimeError, SECOND_BACKWARD):
            z.grad_fn._saved_result           # z's ExpBackward0 ran before y's gradient arrived
        seen.append(y.grad_fn._saved_result.tolist())    # y's has not run yet

    h = y.register_hook(look)
    z.sum().backward(retain_graph=False)
    assert len(seen) == 1 and x.grad is not None
    h.remove()

    def stop(g):
        raise ValueError("stop")

    y, x.grad = x.exp(), None
    z = y.exp()
    w = z.sum()
    h = y.register_hook(stop)
    with pytest.raises(ValueError):
        w.backward()
    h.remove()
    assert y.grad_fn._saved_result.tolist() == y.tolist() and x.grad is None
    with raises(RuntimeError, SECOND_BACKWARD):    # z's node ran, and freed its result, before the error
        w.backward()


def test_freed_arrays_can_be_garbage_collected():
    x = torch.ones(1000, requires_grad=True)
    y = x * 3
    z = y * y                              # MulBackward0 saves y's array (for both inputs)
    probe = weakref.ref(y._data)
    del y
    gc.collect()
    assert probe() is not None             # kept alive by what z's grad_fn saved
    z.sum().backward()
    gc.collect()
    assert probe() is None                 # backward freed it


def test_gradient_flows_to_every_use_of_a_tensor():
    x = torch.tensor([2.0], requires_grad=True)
    y = x * x + x * 3 + x.exp().log()       # d/dx = 2x + 3 + 1
    y.backward()
    assert x.grad.tolist() == pytest.approx([8.0])


def test_backward_with_a_gradient_argument():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.backward(torch.tensor([0.1, 1.0, 0.0001]))
    assert x.grad.tolist() == pytest.approx([0.2, 2.0, 0.0002])


def test_backward_inputs_limits_accumulation():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    (a * b * 3).sum().backward(inputs=[a])
    assert a.grad.tolist() == [3.0, 3.0] and b.grad is None


# --- grad modes ---------------------------------------------------------------------------------

def test_no_grad_context_and_decorator():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad

    @torch.no_grad()
    def double(t):
        return t * 2

    assert double(x).grad_fn is None
    assert (x * 2).grad_fn is not None


def test_enable_grad_inside_no_grad_and_set_grad_enabled():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_no_grad_restores_mode_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with torch.no_grad():
            1 / 0
    assert torch.is_grad_enabled()


def test_detach_shares_storage_and_cuts_the_graph():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    d.add_(1)
    assert y.tolist() == [3.0, 3.0]     # same storage
    x2 = torch.ones(2, requires_grad=True)
    x2.detach_()
    assert not x2.requires_grad


def test_integer_and_bool_results_leave_the_graph():
    # PyTorch: only floating-point outputs can carry a gradient, so x.long() has no grad_fn
    x = torch.tensor([1.7, -2.3], requires_grad=True)
    for y in (x.int(), x.long(), x.bool(), x.to(torch.int64)):
        assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    assert repr(x.int()) == "tensor([ 1, -2], dtype=gradviz.int32)"
    assert repr(x.long().float()) == "tensor([ 1., -2.])"
    assert x.double().grad_fn is not None


# --- autograd.grad, retain_grad, hooks ----------------------------------------------------------

def test_autograd_grad_returns_without_accumulating():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x ** 2).sum(), x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None
    z = torch.ones(2, requires_grad=True)
    with raises(RuntimeError, "The differentiated Tensor at index 1 appears to not have been used in the "
                              "graph. Set allow_unused=True if this is the desired behavior."):
        torch.autograd.grad((x * 2).sum(), [x, z])
    gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [2.0, 2.0]
    with raises(RuntimeError, "One of the differentiated Tensors does not require grad"):
        torch.autograd.grad((x * 2).sum(), [torch.ones(2)])


def test_retain_grad_on_a_non_leaf():
    x = torch.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 6.0] and y.retains_grad
    with raises(RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"):
        torch.ones(2).retain_grad()


def test_hooks_see_and_replace_the_gradient():
    x = torch.ones(2, requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    h.remove()
    x.register_hook(lambda g: g * 10)
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [30.0, 30.0]
    y = torch.ones(2, requires_grad=True) * 1
    y.register_hook(lambda g: g * 0)
    with raises(RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"):
        torch.ones(2).register_hook(print)


def test_the_gradient_given_to_backward_is_the_one_hooks_see():
    """PyTorch hands the engine the gradient tensor given, not a copy: a hook writing into it writes
    into that tensor (and a later change to it does not reach .grad, which backward made anew)."""
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.add_(5))
    g = torch.ones(2)
    y.backward(g)
    assert g.tolist() == [6.0, 6.0] and x.grad.tolist() == [12.0, 12.0]
    g.zero_()
    assert x.grad.tolist() == [12.0, 12.0]
    (x + 0).backward(x.grad)            # .grad itself as the seed: the sum of the old and the new
    assert x.grad.tolist() == [24.0, 24.0]
    d = torch.ones(2, dtype=torch.float64)
    (x * 1).backward(d)                 # a seed of another dtype is converted, as PyTorch does
    assert x.grad.dtype is torch.float32 and d.dtype is torch.float64


def test_backward_runs_without_grad_mode_as_in_pytorch():
    """Hooks and custom backward()s run under no_grad: what they compute records no graph."""
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            seen.append(("backward", torch.is_grad_enabled(), (2 * a * g).grad_fn))
            return 2 * a * g

    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: seen.append(("hook", torch.is_grad_enabled(), None)))
    Square.apply(x).sum().backward()
    assert seen == [("backward", False, None), ("hook", False, None)]
    assert torch.is_grad_enabled() and x.grad.tolist() == [2.0, 4.0] and x.grad.grad_fn is None


# --- Variable and grad_fn structure -------------------------------------------------------------

def test_variable_is_a_tensor():
    v = Variable(torch.ones(2, 2), requires_grad=True)
    assert isinstance(v, torch.Tensor) and isinstance(v, Variable)
    assert repr(v) == "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"
    assert repr(v.data) == "tensor([[1., 1.],\n        [1., 1.]])"
    assert v.grad is None and v.grad_fn is None
    out = ((v + 2) * (v + 2) * 3).mean()
    out.backward()
    assert v.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_next_functions_mirror_pytorch():
    x = torch.ones(2, requires_grad=True)
    y = x + 2
    fn, idx = y.grad_fn.next_functions[0]
    assert type(fn).__name__ == "AccumulateGrad" and idx == 0 and fn.variable is x
    assert y.grad_fn.next_functions[1] == (None, 0)
    z = y * y
    assert z.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[1][0] is y.grad_fn
    w = x * x
    assert w.grad_fn.next_functions[0][0] is y.grad_fn.next_functions[0][0]  # one AccumulateGrad per leaf
    assert repr(type(y.grad_fn)) == "<class 'AddBackward0'>"
    assert y.grad_fn.name() == "AddBackward0"


def test_a_node_gets_its_pytorch_class_in_place_when_it_is_first_seen():
    """The engine records plain Nodes (CPython reads their attributes at full speed: one class) and gives
    each its class, MulBackward0..., the first time it leaves the engine, by any way a student reaches
    it: the same object, so identity holds across the ways."""
    from gradviz.autograd.node import Node, Pending
    x = torch.ones(2, requires_grad=True)
    z = ((x * 2).exp() + 1).sum()
    add, exp = z._grad_fn._edges[0][0], z._grad_fn._edges[0][0]._edges[0][0]
    assert type(add) is Node and type(exp) is Pending    # nobody has looked yet (exp not even filled)
    assert type(z.grad_fn).__name__ == "SumBackward0" and z.grad_fn is z._grad_fn
    assert type(z.grad_fn.next_functions[0][0]).__name__ == "AddBackward0"   # reached through the edges
    assert type(exp) is Pending and exp.name() == "ExpBackward0" and type(exp).__name__ == "ExpBackward0"
    mul = exp._edges[0][0]
    assert repr(mul).startswith("<MulBackward0 object at ") and type(mul).__name__ == "MulBackward0"
    y = x * 3
    edge = torch.autograd.graph.get_gradient_edge(y)
    assert type(edge.node).__name__ == "MulBackward0" and edge.node is y.grad_fn
    assert isinstance(y.grad_fn, torch.autograd.graph.Node)
    z.backward()                                          # and shown nodes run as before
    assert torch.equal(x.grad, (x.detach() * 2).exp() * 2)


def test_a_node_recorded_now_and_filled_later_is_the_node_recorded_at_once():
    """The forward pass captures an op's inputs and defers its node's fields (node.Pending); filled,
    they are what recording at once gives: the same edges (one AccumulateGrad per leaf), metadata,
    saved values and versions. Reading any of them fills the node, and then it is a plain Node."""
    from gradviz.autograd import engine
    from gradviz.autograd.node import Node, Pending
    x = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    c = torch.tensor([2.0, 4.0])                         # no gradient: an input without an edge
    for f in (lambda: x * c, lambda: (x * 2).exp(), lambda: torch.cat([x, c[None], x]),
              lambda: x.t() @ x, lambda: x[0] + 1):
        y = f()
        node = y._grad_fn
        assert type(node) is Pending and node._pending is not None
        inputs, arrays = node._pending[:2]
        at_once = engine.record(node.op, inputs, arrays, y._wrap(y._data), node._params)
        assert type(at_once) is Node and at_once._pending is None
        for field in ("_edges", "_metas", "_out_meta", "_nograd_inputs"):
            assert getattr(node, field) == getattr(at_once, field), field
        assert type(node) is Node and node._pending is None       # filled by the first read
        kept = [[None if s is None else (id(s[0]), s[2], s[3]) for s in n._saved] for n in (node, at_once)]
        assert kept[0] == kept[1]     # the same arrays (mul: c; exp: its result) at the same versions
    y = x * 2
    assert type(y._grad_fn) is Pending and type(y.grad_fn).__name__ == "MulBackward0"   # seen: filled


def test_next_functions_cannot_be_replaced():
    """A student who assigns (or deletes) a node's next_functions gets PyTorch 2.13's refusal, and the
    graph keeps its edges: backward still reaches the leaf."""
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).sum()

    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    for fn, owner in ((y.grad_fn, "SumBackward0"), (acc, "AccumulateGrad"),
                      (Twice.apply(x).grad_fn, "torch._C._FunctionBase")):
        edges = fn.next_functions
        for attempt in ("fn.next_functions = ()", "del fn.next_functions"):
            with raises(AttributeError, f"attribute 'next_functions' of '{owner}' objects is not writable"):
                exec(attempt)
        assert fn.next_functions == edges
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_leafs_accumulate_grad_keeps_its_variable():
    """AccumulateGrad.variable is the leaf, and (as in PyTorch 2.13) cannot be reassigned or deleted:
    backward still fills that leaf's .grad."""
    x, other = torch.ones(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    y = (x * 3).sum()
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc.variable is x
    for attempt in ("acc.variable = other", "del acc.variable"):
        with raises(AttributeError, "attribute 'variable' of 'AccumulateGrad' objects is not writable"):
            exec(attempt)
    y.backward()
    assert acc.variable is x and x.grad.tolist() == [3.0, 3.0] and other.grad is None


def test_node_metadata_is_one_dict_that_cannot_be_replaced():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    for fn in (y.grad_fn, y.grad_fn.next_functions[0][0]):   # a node, and a leaf's AccumulateGrad
        assert fn.metadata == {} and fn.metadata is fn.metadata
        fn.metadata["note"] = 1
        assert fn.metadata == {"note": 1}
        with raises(AttributeError, f"attribute 'metadata' of '{type(fn).__name__}' objects is not writable"):
            fn.metadata = {}


def test_gradient_dtype_follows_the_leaf():
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    (x * torch.ones(2)).sum().backward()   # float64 * float32 -> float64
    assert x.grad.dtype is torch.float64
    f = torch.ones(2, requires_grad=True)
    (f * torch.ones(2, dtype=torch.float64)).sum().backward()
    assert f.grad.dtype is torch.float32


def test_broadcasting_gradients_are_summed():
    a = torch.ones(3, 1, requires_grad=True)
    b = torch.ones(4, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.tolist() == [[4.0], [4.0], [4.0]] and b.grad.tolist() == [3.0] * 4


def test_deep_graph_does_not_recurse():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_custom_function():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, power):
            ctx.save_for_backward(x)
            ctx.power = power
            return x ** power

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * ctx.power * x ** (ctx.power - 1), None

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Square.apply(x, 3)
    assert repr(y) == "tensor([1., 8.], grad_fn=<SquareBackward>)"
    assert repr(type(y.grad_fn)) == "<class 'gradviz.autograd.function.SquareBackward'>"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward(retain_graph=True)
    assert x.grad.tolist() == [3.0, 12.0]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    with raises(RuntimeError, SECOND_BACKWARD):
        y.sum().backward()
    with torch.no_grad():
        assert Square.apply(x, 2).grad_fn is None


DEEPCOPY = """import copy
x = torch.ones(2, requires_grad=True)
x.register_hook(lambda g: print('hook', g))
(x * 3).sum().backward()
x.note = "mine"
y = copy.deepcopy(x)
print(y, y.grad, y.note, y.is_leaf, y.grad is x.grad, y.requires_grad)
(y * 2).sum().backward(); print(y.grad, x.grad)
for made in [lambda: x * 2, lambda: x[0:1]]:
    try:
        copy.deepcopy(made())
    except RuntimeError as e:
        print("RuntimeError", e)
with torch.no_grad():
    print(copy.deepcopy(x * 2))
d = copy.deepcopy({"a": x, "b": x}); print(d["a"] is d["b"])
p = torch.nn.Parameter(torch.ones(2)); p.register_hook(lambda g: print("phook"))
p.grad = torch.full((2,), 7.0); p.tag = 1
q = copy.deepcopy(p); print(type(q).__name__, q.grad, hasattr(q, "tag"), q.requires_grad)
(q * 1).sum().backward(); print(q.grad)
t = copy.deepcopy(torch.arange(6.0).reshape(2, 3).t()); print(t.stride(), t.is_contiguous(), t)
r = torch.ones(2, requires_grad=True); r.retain_grad(); print(copy.deepcopy(r).retains_grad)
n = torch.ones(3); n2 = copy.deepcopy(n); n2 += 1; print(n, n2)
m2 = copy.deepcopy(torch.nn.Linear(2, 1)); print(type(m2.weight).__name__, m2.weight.grad)
"""


def test_deepcopy_as_torch():
    """copy.deepcopy: a leaf only, a new leaf without hooks, .grad and attributes deep-copied; a
    Parameter's copy has no .grad (it once copied the hooks, and crashed deep inside copy on a result)."""
    real = pytest.importorskip("torch")
    from parity import printed
    assert printed(torch, DEEPCOPY) == printed(real, DEEPCOPY)


@pytest.mark.parametrize("make, shown", [
    (lambda x: x * 2, "tensor(2)"),                                    # a Python int: int64
    (lambda x: x * 2.5, "tensor(2.5000, dtype=gradviz.float64)"),      # a float: float64
    (lambda x: x * True, "tensor(True)"),
    (lambda x: x.double() / 2.5, "tensor(2.5000, dtype=gradviz.float64)"),
    (lambda x: 2 / x, "tensor(2)"),
])
def test_a_saved_python_number_keeps_its_own_type(make, shown):
    """PyTorch saves a number in an op as a 'wrapped number' tensor of the number's type, whatever
    dtype the op computes in: ``(x * 2).grad_fn._saved_other`` prints ``tensor(2)`` (as torch 2.13)."""
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    saved = make(x).grad_fn._saved_other
    assert repr(saved) == shown and not saved.requires_grad


def test_a_clamp_bound_not_given_is_saved_as_none():
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    fn = torch.clamp(x, min=torch.tensor(0.0)).grad_fn
    assert (type(fn).__name__, fn._saved_max, repr(fn._saved_min)) == ("ClampBackward0", None, "tensor(0.)")
    fn = torch.clamp(x, max=torch.tensor(0.0)).grad_fn
    assert (fn._saved_min, repr(fn._saved_max)) == (None, "tensor(0.)")


GRAD_LAYOUTS = [  # (the leaf, how its gradient arrives): the strides of .grad in torch 2.13
    ("torch.ones(3, 4)", "(x.t() * 2).backward(torch.ones(4, 3))", (4, 1)),
    ("torch.ones(3, 4)", "(x * 1).backward(torch.ones(4, 3).t())", (4, 1)),
    ("torch.ones(4, 3).t()", "(x * 2).sum().backward()", (1, 3)),
    ("torch.ones(4, 6)[:, ::2]", "(x * 2).backward(torch.ones(3, 4).t())", (3, 1)),
    ("torch.ones(3, 1).t()", "(x * 2).sum().backward()", (3, 1)),
    ("torch.ones(2, 3, 4).permute(2, 0, 1)", "(x * 2).sum().backward()", (1, 12, 4)),
    ("torch.ones(4, 3).t()", "(x * x).sum().backward(create_graph=True)", (1, 3)),
]
GRAD_LAYOUT = "x = {}.detach().requires_grad_()\n{}\nprint(x.grad.stride(), x.grad.is_contiguous())"


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("leaf, run, strides", GRAD_LAYOUTS)
def test_a_new_grad_is_laid_out_as_pytorch_lays_it(leaf, run, strides):
    """PyTorch's layout contract for gradients: a new ``.grad`` keeps the gradient's layout where its
    strides are the leaf's, else takes the leaf's where the leaf is dense (a transposed parameter, a
    transposed .grad), else is row-major. (``.grad.sum()`` adds in memory order: a batched det's
    A.grad.sum() printed other digits before.)"""
    x = eval(leaf).detach().requires_grad_()
    exec(run)
    assert x.grad.stride() == strides


def test_a_retained_grad_is_row_major():
    x = torch.ones(3, 4, requires_grad=True)
    y = x.t() * 2
    y.retain_grad()
    y.backward(torch.ones(3, 4).t())
    assert y.grad.stride() == (3, 1)


@pytest.mark.torch
@pytest.mark.parametrize("leaf, run, strides", GRAD_LAYOUTS)
def test_grad_layouts_are_torchs(leaf, run, strides):
    real = pytest.importorskip("torch")
    from parity import printed
    code = GRAD_LAYOUT.format(leaf, run)
    shown = [[line for line in printed(lib, code).splitlines() if not line.startswith("WARNING")] for lib in (torch, real)]
    assert shown[0] == shown[1]     # (create_graph's warning comes once a process, and so is not compared)
