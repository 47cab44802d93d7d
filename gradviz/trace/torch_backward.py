"""PyTorch's backward pass run node by node as its engine runs it, with no hook and no ``.grad`` written.

animate()'s own pass over a torch graph (the picture observes, it never acts). PyTorch runs every
hook from its engine's loop, not from the nodes (``engine.cpp``, ``call_function``): tensor hooks
(``register_hook``, ``register_multi_grad_hook``) and ``retain_grad()`` as pre-hooks of the node
that made the tensor, hooks on ``grad_fn`` nodes, and the module backward hooks (hooks on the nodes
of ``BackwardHookFunction``); then ``AccumulateGrad`` writes ``.grad`` and runs the
post-accumulate-grad hooks. A node called by itself (``grad_fn(*grads)``, ``Node::operator()``)
computes its gradients and runs none of them. PyTorch has no switch to hold the hooks back, so
this module is the engine's loop, in Python, without them:

* each node's dependencies (``compute_dependencies``) and a ready queue in the engine's order: the
  highest sequence number first, ties (the leaves' ``AccumulateGrad``) broken as libstdc++'s
  ``std::priority_queue`` breaks them (:class:`_ReadyQueue`);
* each node called with its input buffer under ``no_grad`` (the engine's grad mode without
  ``create_graph``), its gradients checked as ``validate_outputs`` checks them (reduced to the
  input's shape with ``sum_to``, cast to its dtype, PyTorch's messages) and summed into the next
  node's buffer in the order the engine adds them, so every sum has the engine's bits;
* a leaf's gradient is handed back, never accumulated.

A custom ``autograd.Function`` node is called through its Python ``apply``, with what
``PyNode::apply`` does around it: undefined gradients given as zeros, the returned tuple checked
and matched to the inputs that need a gradient. What runs anyway is code PyTorch calls inside a
node: a custom Function's own ``backward()``, and the unpack hook of a saved tensor
(``saved_tensors_hooks``, ``torch.utils.checkpoint``, ``save_on_cpu``): :func:`unpack_hooks` finds
them, so the widget can say so. A custom ``backward`` may even call ``backward()`` itself (a
reentrant ``torch.utils.checkpoint`` does, on its part of the graph): PyTorch's engine then runs
that part, with its hooks, and writes ``.grad``; :func:`every_grad_kept` puts every ``.grad`` back.
Two checks of PyTorch's are not repeated for a custom Function:
``set_materialize_grads(False)`` cannot be read (zeros are passed, which its ``backward`` must take
as no gradient anyway), and a gradient returned for an argument that was not a tensor is refused
only where its position can be told.
"""

import contextlib
import gc
import warnings

from ..autograd.engine import walk

__all__ = ["ACCUMULATE", "seed", "backward_steps", "unpack_hooks", "custom_nodes", "every_grad_kept"]

ACCUMULATE = "torch::autograd::AccumulateGrad"


def seed(torch, root, gradient=None):
    """The gradient ``root.backward(gradient)`` starts from, checked as ``backward()`` checks it
    (``grad can be implicitly created only for scalar outputs``, ``Mismatch in shape``...) and as
    the engine checks its root (cast to the root's dtype)."""
    grads = torch.autograd._tensor_or_tensors_to_tuple(gradient, 1)
    g, = torch.autograd._make_grads((root,), grads, is_grads_batched=False)
    if not root.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if g is not None and g.dtype != root.dtype:
        g = g.to(root.dtype)
    return g


def backward_steps(torch, fn, input_nr, grad):
    """Yield ``(node, grads_in, grads_out)`` for each node the engine would run from ``fn`` (the
    root's ``grad_fn``, its output ``input_nr`` receiving ``grad``), in the engine's order.

    ``grads_in``: the gradients the node receives, one per output of its forward op (None where
    none arrived); ``grads_out``: what it sends down each of its ``next_functions``, checked as the
    engine checks them. An ``AccumulateGrad`` node is yielded with the leaf's gradient and
    ``grads_out=()``, and nothing is written to ``.grad``. PyTorch's errors are raised as its
    engine raises them (a freed graph, a gradient of the wrong shape).
    """
    deps, nodes = _dependencies(fn)
    queue, waiting = _ReadyQueue(), {}
    first = [None] * _inputs(fn)
    first[input_nr] = grad
    queue.push(fn, first)
    anomaly = torch.is_anomaly_enabled()
    with torch.no_grad():
        while queue:
            fn, grads_in = queue.pop()
            grads_in = tuple(grads_in)
            if fn.name() == ACCUMULATE:
                yield fn, grads_in, ()
                continue
            out = _call(torch, fn, grads_in)
            out = _validated(torch, fn, out)
            if anomaly:
                for i, g in enumerate(out):
                    if g is not None and bool(torch.isnan(g).any()):
                        raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")
            yield fn, grads_in, out
            for (nxt, nr), g in zip(fn.next_functions, out):
                if nxt is None:
                    continue
                key = id(nxt)
                deps[key] -= 1
                buffer = waiting.pop(key, None) or [None] * _inputs(nxt)
                if g is not None:                        # InputBuffer::add: the first as is, then summed
                    buffer[nr] = g if buffer[nr] is None else buffer[nr] + g
                if deps[key] == 0:
                    queue.push(nodes[key], buffer)
                else:
                    waiting[key] = buffer
    del nodes


def unpack_hooks(fn):
    """The unpack hooks of the tensors ``fn`` saved (``saved_tensors_hooks`` and its users): they
    run inside the node when it reads them, whoever calls it."""
    hooks = []
    for attr in dir(fn):
        if not attr.startswith("_raw_saved_"):
            continue
        try:
            saved = getattr(fn, attr)
        except Exception:  # freed, or not readable: nothing will be unpacked
            continue
        for s in saved if isinstance(saved, (list, tuple)) else [saved]:
            hook = getattr(s, "unpack_hook", None)
            if hook is not None:
                hooks.append(hook)
    return hooks


def custom_nodes(torch, fns):
    """The nodes of custom ``autograd.Function``s among ``fns`` (the user's ``backward`` runs in
    them), leaving out the module backward hooks' own ``BackwardHookFunction`` (an identity)."""
    return [fn for fn in fns if isinstance(fn, torch.autograd.function.BackwardCFunction)
            and fn.name() != "BackwardHookFunctionBackward"]


@contextlib.contextmanager
def every_grad_kept(torch):
    """Put back, after the block, the ``.grad`` of every live tensor that can hold one (the object,
    and its numbers where they changed in place); yields the list of tensors whose ``.grad`` the
    block changed, filled when it ends.

    For a pass that runs a custom ``backward``: it may call ``backward()`` on tensors the widget
    cannot see (a reentrant checkpoint's inner graph), so every tensor is looked at."""
    kept = []
    with warnings.catch_warnings():     # (isinstance() reads __class__, which some modules' objects warn on)
        warnings.simplefilter("ignore")
        for o in gc.get_objects():
            try:
                if isinstance(o, torch.Tensor) and o.requires_grad and (o.is_leaf or o.retains_grad):
                    g = o.grad
                    kept.append((o, g, None if g is None or g.layout != torch.strided else g.detach().clone()))
            except Exception:  # a tensor being torn down, a subclass that refuses: nothing to keep
                continue
    changed = []
    try:
        yield changed
    finally:
        with torch.no_grad():
            for t, g, data in kept:
                now = t.grad
                if now is not g:
                    t.grad = g
                    changed.append(t)
                elif data is not None and not torch.equal(g, data):
                    g.copy_(data)
                    changed.append(t)


# -- the engine's bookkeeping ----------------------------------------------------------------------

def _inputs(fn):
    """How many gradients ``fn`` takes: one per output of its forward op."""
    return max(len(fn._input_metadata), 1)


def _dependencies(root):
    """``compute_dependencies``: for each node, how many edges of the graph lead into it; and the
    nodes themselves by id (held, so no id is reused while the pass runs)."""
    nodes, deps = walk([root]), {}
    for fn in nodes:
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                deps[id(nxt)] = deps.get(id(nxt), 0) + 1
    return deps, {id(fn): fn for fn in nodes}


class _ReadyQueue:
    """The engine's CPU ready queue: a ``std::priority_queue`` of tasks, the highest sequence
    number on top (``CompareNodeTaskTime``). libstdc++'s heap algorithm is kept step for step, so
    tasks of equal number (every ``AccumulateGrad`` has the largest) come out in the engine's order."""

    def __init__(self):
        self.heap = []

    def __len__(self):
        return len(self.heap)

    def push(self, fn, grads):
        self.heap.append((fn._sequence_nr(), fn, grads))
        self._sift_up(len(self.heap) - 1, 0, self.heap[-1])

    def pop(self):
        heap = self.heap
        top, value, n = heap[0], heap[-1], len(heap) - 1
        heap[-1] = heap[0]                       # std::pop_heap, then pop_back
        hole = second = 0
        while second < (n - 1) // 2:             # __adjust_heap: the hole goes down by the larger child
            second = 2 * (second + 1)
            if heap[second][0] < heap[second - 1][0]:
                second -= 1
            heap[hole] = heap[second]
            hole = second
        if n % 2 == 0 and second == (n - 2) // 2:
            second = 2 * (second + 1)
            heap[hole] = heap[second - 1]
            hole = second - 1
        self._sift_up(hole, 0, value)
        heap.pop()
        return top[1], top[2]

    def _sift_up(self, hole, top, value):        # std::__push_heap
        heap = self.heap
        parent = (hole - 1) // 2
        while hole > top and heap[parent][0] < value[0]:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = value


def _call(torch, fn, grads):
    """The node's own computation, ``Node::operator()`` (a custom Function: ``PyNode::apply``), as a
    tuple with one gradient per ``next_functions`` entry."""
    if isinstance(fn, torch.autograd.function.BackwardCFunction):
        return _call_python(torch, fn, grads)
    out = fn(*grads)
    return out if isinstance(out, tuple) else (out,)


def _call_python(torch, fn, grads):
    """``PyNode::apply``: undefined gradients as zeros, the user's ``backward`` through the node's
    ``apply``, its results checked and given to the inputs that need one."""
    given = []
    for g, meta in zip(grads, fn._input_metadata):
        given.append(torch.zeros(tuple(meta.shape), dtype=meta.dtype, device=meta.device) if g is None else g)
    result = fn.apply(*given)
    if not isinstance(result, tuple):
        result = (result,)
    needs = tuple(fn.needs_input_grad)
    if len(result) > len(needs) and all(r is None for r in result[len(needs):]):
        result = result[:len(needs)]
    if len(result) != len(needs):
        raise RuntimeError(f"function {fn.name()} returned an incorrect number of gradients "
                           f"(expected {len(needs)}, got {len(result)})")
    for r in result:
        if r is not None and not isinstance(r, torch.Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
    tensors = len(fn.next_functions)
    if sum(1 for r, need in zip(result, needs) if r is not None or need) > tensors:
        position = next(i for i, (r, need) in enumerate(zip(result, needs)) if r is not None and not need)
        raise RuntimeError(f"function {fn.name()} returned a gradient different than None at position "
                           f"{position + 1}, but the corresponding forward input was not a Variable")
    # the inputs that need a gradient are, in order, the valid edges (a tensor that needs none has an
    # invalid edge, and what is returned for it is dropped)
    wanted = iter(r for r, need in zip(result, needs) if need)
    return tuple(None if nxt is None else next(wanted, None) for nxt, _ in fn.next_functions)


def _validated(torch, fn, grads):
    """``validate_outputs``: one gradient per edge, each reduced to its input's shape and cast to its
    dtype, or PyTorch's error."""
    edges = fn.next_functions
    if len(grads) != len(edges):
        raise RuntimeError(f"Function {fn.name()} returned an invalid number of gradients - expected "
                           f"{len(edges)}, but got {len(grads)}")
    out = []
    for i, ((nxt, nr), g) in enumerate(zip(edges, grads)):
        if nxt is None or g is None:
            out.append(None if nxt is None else g)
            continue
        meta = nxt._input_metadata[nr]
        shape = tuple(meta.shape)
        if tuple(g.shape) != shape:
            if not _expandable(shape, tuple(g.shape)):
                raise RuntimeError(f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                                   f"{list(g.shape)} but expected shape compatible with {list(shape)}")
            g = g.sum_to_size(shape)
        if g.dtype != meta.dtype:
            g = g.to(meta.dtype)
        out.append(g)
    return tuple(out)


def _expandable(shape, desired):
    """``at::is_expandable_to``: ``shape`` broadcasts to ``desired``."""
    if len(shape) > len(desired):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(shape), reversed(desired)))
