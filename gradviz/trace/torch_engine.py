"""PyTorch's adapter: a :class:`gradviz.trace.Trace` from real ``torch.Tensor``s, read from the real engine.

Imported only when a torch tensor is handed to gradviz (``import gradviz`` never imports torch).
Nothing here re-implements PyTorch; it reads what the engine keeps:

* the graph from ``grad_fn`` / ``next_functions`` (``AccumulateGrad.variable`` for leaves), the
  forward order from the nodes' sequence numbers, each output's shape from ``_input_metadata``;
* values from, in turn: a ``with gradviz.watch():`` block, the caller's variables, the nodes'
  saved tensors (``_saved_result``, a consumer's ``_saved_self``/``_saved_other``...), and the op
  table's forward rule replayed on what is known (:func:`gradviz.trace.replay`);
* the backward pass from hooks on every node (``register_hook``; ``register_prehook`` on each
  ``AccumulateGrad`` for ``.grad`` before the add), fired by ``backward()`` itself, in the order
  the engine ran them.

The op's mathematics comes from gradviz's op table, found by PyTorch's node name; a node the table
does not know (or a custom ``autograd.Function``) is drawn and animated with the gradients the
engine really computed, and has no hand derivation.

What it cannot know: a leaf's creation order (leaves are ordered by where the caller's names were
found, else by first use); a constant PyTorch did not save and no watch() saw (``x + 1``'s 1 is
worked out from the saved output when it can be, else drawn as ``?``); the history behind a
``detach()`` (PyTorch keeps no link back).
"""

import re
import sys

import numpy as np

from ..autograd.engine import walk
from ..naming import tensor_library
from ..ops import OPS
from .model import (EngineAdapter, Event, Input, Run, Step, Trace, Value, describe_error, name_values,
                    no_derivation_latex, replay)
from .torch_watch import born, watched

__all__ = ["TorchAdapter", "MIN_TORCH", "check_torch"]

MIN_TORCH = (2, 1)
ACCUMULATE = "torch::autograd::AccumulateGrad"

# The op-table entry for a PyTorch node name (the first entry of that name: the plain form).
BY_NAME = {}
for _op in OPS.values():
    BY_NAME.setdefault(_op.name, _op)

# Where PyTorch saves input i of a node (the argument names of its aten op), tried in order.
SAVED_INPUT = {0: ("self", "input"),
               1: ("other", "mat1", "mat2", "vec", "target", "exponent", "weight", "tensor1"),
               2: ("mat2", "bias", "tensor2")}
# gradviz parameter -> PyTorch's saved attribute, where the names differ.
PARAM_ALIAS = {"n": "exponent", "d0": "dim0", "d1": "dim1"}
REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
FIXED = {"t", "t_"}           # ops whose parameters PyTorch never varies (t() is transpose(0, 1))


def check_torch(torch):
    """A clear error for a torch older than the adapter needs."""
    try:
        version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    except ValueError:  # a development build: assume it is new enough
        return
    if version < MIN_TORCH:
        raise RuntimeError(f"gradviz draws real PyTorch graphs from torch {MIN_TORCH[0]}.{MIN_TORCH[1]} on (it reads "
                           f"the engine's sequence numbers and node hooks); this is torch {torch.__version__}. "
                           "Upgrade torch, or run the same code with `import gradviz as torch`.")


def check_root(t):
    """A clear error for a tensor the adapter cannot read (not on the CPU, complex, nested)."""
    device = getattr(t, "device", None)
    if device is not None and device.type != "cpu":
        raise ValueError(f"gradviz shows tensors on the CPU, and this one is on {device}: run the forward pass "
                         "on the CPU to see its graph (model.cpu(), x.cpu()), e.g. with a few examples.")
    check_kind(getattr(t, "is_nested", False), t.dtype)


def check_kind(nested, dtype, where="this tensor"):
    """Refuse, in one line, what the picture cannot show truthfully: nested and complex tensors.

    (Sparse tensors are shown as their dense numbers; bfloat16 and float16 as float32 numbers.)
    """
    if nested:
        raise TypeError(f"gradviz draws strided tensors, and {where} is a nested tensor (torch.nested): "
                        "draw the graph of torch.nested.to_padded_tensor(...) or of each component instead")
    if dtype is not None and dtype.is_complex:
        name = str(dtype).replace("torch.", "")
        raise TypeError(f"gradviz's picture shows real numbers, and {where} is {name}: PyTorch differentiates "
                        "complex tensors by conjugate Wirtinger derivatives, which the hand derivation does not "
                        "write; draw a real graph (x.real, x.imag, x.abs()) instead")


def _np_dtype(torch, dtype):
    try:
        return torch.empty((), dtype=dtype).numpy().dtype
    except Exception:  # bfloat16 and friends have no numpy twin: shown as float32
        return np.dtype(np.float32)


def _array(t):
    """A torch tensor's numbers (a copy; a sparse tensor's dense, bfloat16's in float32), or None when
    they cannot be read."""
    try:
        t = t.detach()
        if t.layout != sys.modules["torch"].strided:
            t = t.to_dense()
        if t.dtype == sys.modules["torch"].bfloat16:
            t = t.float()
        return t.cpu().numpy().copy()
    except Exception:  # a freed saved tensor, a meta tensor, a sparse one...
        return None


def _saved(fn, attr):
    """``fn._saved_<attr>``, or None (absent, or freed by a backward pass)."""
    try:
        return getattr(fn, "_saved_" + attr)
    except Exception:  # "Trying to backward through the graph a second time ..."
        return None


class TorchAdapter(EngineAdapter):
    """Builds a :class:`Trace` from torch tensors, and runs the real ``backward()`` with hooks."""

    engine = "torch"

    def __init__(self, roots, found, cuts=True):
        torch = sys.modules["torch"]
        check_torch(torch)
        for r in roots:
            check_root(r)
        self.torch, self.roots, self.found = torch, list(roots), found
        self.watched = watched           # what a gradviz.watch() block saw, if any
        self.by_fn, self.by_tensor, self.values, self.accs = {}, {}, [], {}
        self.ranks = {k: i for i, k in enumerate(found)}
        self._consumers = None
        self.fns = self._walk(roots)                       # strong references: the nodes stay alive
        self.outputs = self._live_outputs(roots)
        self._made_when = sorted((seen["n"], fn._sequence_nr()) for fn in self.fns
                                 for seen in [watched(fn)] if seen is not None and "n" in seen)
        steps = [self._step(fn) for fn in self.fns]
        self.all_steps = list(steps)         # hooked on every backward(), even if a layer folds some
        for step in steps:
            self._fill(step)
        root_values = []
        for r in roots:
            step = self.by_fn.get(id(r.grad_fn)) if r.grad_fn is not None else None
            root_values.append(step.out if step is not None else self._leaf(r))
        leaves = [v for v in self.values if v.requires_grad and v.is_leaf]
        if not steps:
            leaves = [v for v in root_values if v.requires_grad]
        leaves.sort(key=lambda v: v.order)
        self.trace = Trace(root_values, steps, leaves, self.values, [], engine="torch", adapter=self)
        self._in_place_versions(found)
        name_values(self.trace, found)

    def _in_place_versions(self, found):
        """A caller's tensor changed in place (``c += c + 1``): its earlier values are the nodes its
        grad_fn reaches through input 0, once per version (``c._version``), named c₁, c₂... as gradviz
        names them (see :func:`gradviz.trace.in_place_versions`); only when every such node is an op
        with an in-place form, else nothing is numbered."""
        for key, name in list(found.items()):
            t = found.tensors.get(key)
            fn = getattr(t, "grad_fn", None)
            if tensor_library(t) != "torch" or fn is None or t.is_leaf or not getattr(t, "_version", 0):
                continue
            chain = [fn]
            for _ in range(t._version):
                op = BY_NAME.get(chain[-1].name())
                nxt = chain[-1].next_functions[0][0] if chain[-1].next_functions else None
                if op is None or not op.inplace or nxt is None or id(nxt) not in self.by_fn:
                    chain = None
                    break
                chain.append(nxt)
            if not chain:
                continue
            for k, node in enumerate(reversed(chain), 1):
                step = self.by_fn[id(node)]
                if step.out.name is None or step.out.tensor() is None:
                    step.out.name = name
                step.out.version = k

    # -- reading the graph ---------------------------------------------------------------------

    def _walk(self, roots):
        fns = []
        for fn in walk(r.grad_fn for r in roots):     # (PyTorch's AccumulateGrad has no next_functions)
            if fn.name() == ACCUMULATE:
                check_kind(fn.variable.is_nested, fn.variable.dtype, "a leaf of this graph")
                self.accs[id(fn.variable)] = fn
            else:
                for m in fn._input_metadata:    # (read before its shape: a nested one has none)
                    check_kind(m.is_nested_tensor or m.is_cpp_nested_tensor, m.dtype,
                               f"the output of {fn.name()}")
                fns.append(fn)
        fns.sort(key=lambda f: f._sequence_nr())
        return fns

    def _live_outputs(self, roots):
        """grad_fn -> a live tensor it made: the roots and the caller's variables."""
        out = {}
        for t in list(roots) + self._torch_tensors():
            fn = getattr(t, "grad_fn", None)
            if fn is not None:
                out.setdefault((id(fn), t.output_nr), t)
        return out

    def _torch_tensors(self):
        """The caller's named tensors that are torch's (a notebook may hold gradviz ones too)."""
        return [t for t in self.found.tensors.values() if tensor_library(t) == "torch"]

    def _leaf(self, t, literal=False, use=None):
        """The Value of a leaf or data tensor (shared by every use; one per use for a literal).

        Its place in forward order: when ``gradviz.watch()`` saw it made, else where the caller's
        names were found (their order of assignment), else just before ``use`` (the seq of the
        first step that reads it).
        """
        v = self.by_tensor.get(id(t))
        if v is not None and not literal:
            return v
        rank = self.ranks.get(id(t))
        when = born(t)
        if when is not None and self._made_when:      # before the first node made after it
            later = [seq for n, seq in self._made_when if n > when]
            order = ((min(later) if later else self._made_when[-1][1] + 1) - 0.5, 0, when)
        elif rank is None and use is not None:
            order = (use - 0.5, 0, 0)
        else:
            order = ((rank if rank is not None else 10 ** 6 + len(self.values)) - 10 ** 9, 0, 0)
        v = Value(seq=-(len(self.values) + 1), shape=tuple(t.shape), dtype=_np_dtype(self.torch, t.dtype),
                  data=_array(t), requires_grad=bool(t.requires_grad), is_leaf=t.grad_fn is None,
                  retains_grad=bool(getattr(t, "retains_grad", False)), literal=literal,
                  grad=None if t.grad is None else _array(t.grad),
                  order=order, ref=None if literal else t)
        if not literal:
            self.by_tensor[id(t)] = v
        self.values.append(v)
        return v

    def _step(self, fn):
        torch, name = self.torch, fn.name()
        user = isinstance(fn, torch.autograd.function.BackwardCFunction)
        known = None if user else BY_NAME.get(name)
        # a node with several outputs (split) has no hand derivation: its pieces' gradients arrive together
        op = None if len(fn._input_metadata) > 1 else known
        meta = fn._input_metadata[0] if len(fn._input_metadata) else None
        out_t = self.outputs.get((id(fn), 0))
        shape = tuple(meta.shape) if meta is not None else (tuple(out_t.shape) if out_t is not None else ())
        dtype = _np_dtype(torch, meta.dtype) if meta is not None else np.dtype(np.float32)
        out = Value(shape=shape, dtype=dtype, requires_grad=True, is_leaf=False,
                    retains_grad=bool(out_t is not None and out_t.retains_grad),
                    grad=None if out_t is None or not out_t.retains_grad or out_t.grad is None else _array(out_t.grad),
                    order=(fn._sequence_nr(), 1, 0), ref=out_t)
        params, complete = self._params(fn, known, shape)
        if known is not None and complete:
            key, symbol, latex, dlatex = known.key, known.symbol, known.latex, known.dlatex
        else:
            label = type(fn).__name__.removesuffix("Backward") if user else _op_name(name)
            latex, dlatex = no_derivation_latex(label, len(fn.next_functions))
            key, symbol, op = None, label, None
        step = Step(seq=fn._sequence_nr(), name=name, op=op, key=key, symbol=symbol, latex=latex,
                    dlatex=dlatex, params=params, out=out, fn=lambda fn=fn: fn, user=user,
                    outputs=len(fn._input_metadata) or 1)
        for i, (nxt, nr) in enumerate(fn.next_functions):
            if nxt is None:
                step.inputs.append(self._const(fn, i, shape, dtype))
            elif nr:     # output nr of a node with several (split): its value only from a variable
                src, other = self.by_fn[id(nxt)], self.outputs.get((id(nxt), nr))
                shape_nr = tuple(other.shape) if other is not None else src.out.shape
                src.piece(nr, other)
                step.inputs.append(Input("op", src, shape_nr, src.out.dtype,
                                         _array(other) if other is not None else None, output_nr=nr))
            elif nxt.name() == ACCUMULATE:
                v = self._leaf(nxt.variable, use=step.seq)
                step.inputs.append(Input("leaf", v, v.shape, v.dtype, v.data))
            else:
                src = self.by_fn[id(nxt)]
                step.inputs.append(Input("op", src, src.out.shape, src.out.dtype, None))
        self.by_fn[id(fn)] = step
        self.values.append(out)
        return step

    def _params(self, fn, op, out_shape):
        """The op-table parameters of ``fn`` from its saved attributes; ``known`` is False if one is missing."""
        if op is None:
            return {}, False
        params = {}
        for key, default in op.params.items():
            if key in ("shape", "sizes"):
                params[key] = out_shape
                continue
            value = _saved(fn, PARAM_ALIAS.get(key, key))
            if value is None:
                if op.key in FIXED:
                    params[key] = default
                    continue
                if op.key == "rsub" and key == "c":      # worked out from the output in _fill
                    continue
                return params, False
            if key == "reduction":
                value = REDUCTIONS.get(value, value)
            if isinstance(value, self.torch.Tensor):   # (embedding's indices): the op table reads numpy
                value = _array(value)
            if key == "dim" and isinstance(default, tuple) and isinstance(value, int):
                value = (value,)
            params[key] = value
        if op.key in ("sum_dim", "mean_dim"):
            params["keepdim"] = bool(_saved(fn, "keepdim"))
        return params, True

    def _const(self, fn, i, out_shape, out_dtype):
        """Input ``i`` that needs no gradient: a saved tensor, a watched one, or unknown (None)."""
        t = None
        for attr in SAVED_INPUT.get(i, ()):
            t = _saved(fn, attr)
            if t is not None and hasattr(t, "shape"):
                break
            t = None
        if t is None:
            return Input("const", None, (), out_dtype, None)
        if id(t) not in self.found and t.dim() > 0:       # a copy of the caller's data tensor?
            data = _array(t)
            t = (self._caller_data(data) if data is not None else None) or t
        literal = id(t) not in self.found and t.dim() == 0 and t.grad_fn is None
        v = self._leaf(t, literal=literal, use=fn._sequence_nr())
        if literal:   # a Python number: computed in the other operand's dtype
            v.dtype = out_dtype
            v.data = None if v.data is None else v.data.astype(out_dtype)
            v.order = (fn._sequence_nr(), -1, i)
        return Input("const", v, v.shape, v.dtype, v.data)

    # -- values --------------------------------------------------------------------------------

    def _fill(self, step):
        """The step's output value, and its inputs' values (forward order: producers are done)."""
        fn = step.fn()
        for inp in step.inputs:
            if inp.kind == "op" and not inp.output_nr:
                inp.data = inp.src.out.data
        seen = self.watched(fn)
        out_t = step.out.tensor()
        if seen is not None and seen.get("out") is not None:
            step.out.data = seen["out"]
        elif out_t is not None:
            step.out.data = _array(out_t)
        else:
            result = _saved(fn, "result")
            step.out.data = _array(result) if result is not None else None
        if step.out.data is None:
            step.out.data = self._saved_by_consumer(fn)
        self._constants(step, seen)
        if step.out.data is None:
            step.out.data = replay(step)

    def _saved_by_consumer(self, fn):
        """The value of ``fn``'s output as a later node saved it (``_saved_self`` of x ** 2...)."""
        if self._consumers is None:               # one pass over the graph, not one per node
            self._consumers = {}
            for consumer in self.fns:
                for i, (nxt, _) in enumerate(consumer.next_functions):
                    if nxt is not None:
                        self._consumers.setdefault(id(nxt), []).append((consumer, i))
        for consumer, i in self._consumers.get(id(fn), ()):
            for attr in SAVED_INPUT.get(i, ()):
                t = _saved(consumer, attr)
                if t is not None and hasattr(t, "grad_fn") and t.grad_fn is fn:
                    return _array(t)
        return None

    def _constants(self, step, seen):
        """Constants PyTorch did not save: from watch(), else worked out from a known output."""
        missing = [i for i, inp in enumerate(step.inputs) if inp.kind == "const" and inp.data is None]
        if seen is not None:
            scalars = seen.get("args", [])
            if len(scalars) == len(step.inputs):
                for i in missing:
                    self._set_const(step, i, scalars[i])
                missing = []
            if step.key == "rsub" and "c" not in step.params and len(scalars) == 2:
                step.params["c"] = float(np.asarray(scalars[1]))
        out = step.out.data
        if out is None:
            return
        known = [inp.data for inp in step.inputs]
        alpha = _saved(step.fn(), "alpha") or 1
        if step.key == "rsub" and "c" not in step.params and known and known[0] is not None:
            c = _one(out + alpha * known[0])
            if c is not None:
                step.params["c"] = float(c)
        if step.key in ("add", "sub") and len(missing) == 1 and len(known) == 2:
            i = missing[0]
            other = known[1 - i]
            if other is None:
                return
            with np.errstate(all="ignore"):
                if step.key == "add":
                    value = (out - other) / alpha if i == 1 else out - alpha * other
                else:
                    value = (other - out) / alpha if i == 1 else out + alpha * other
            self._set_const(step, i, _one(value) if _one(value) is not None else value)

    def _set_const(self, step, i, value):
        if value is None or hasattr(value, "grad_fn"):
            return
        inp = step.inputs[i]
        a = np.asarray(value).astype(step.out.dtype)
        data = self._caller_data(a)
        if data is not None:             # the caller's own data tensor (Y in `pred - Y`), by its numbers
            v = self._leaf(data, use=step.seq)
            inp.src, inp.shape, inp.dtype, inp.data = v, v.shape, v.dtype, v.data
            return
        v = Value(seq=-(len(self.values) + 1), shape=a.shape, dtype=a.dtype, data=a, literal=a.ndim == 0,
                  order=(step.seq, -1, i))
        self.values.append(v)
        inp.src, inp.shape, inp.dtype, inp.data = v, a.shape, a.dtype, a

    def _caller_data(self, a):
        """A caller's data tensor (no gradient) holding exactly the numbers ``a`` (an inferred operand)."""
        if a.ndim == 0:
            return None
        for t in self._torch_tensors():
            if t.grad_fn is None and not t.requires_grad and tuple(t.shape) == a.shape:
                data = _array(t)
                if data is not None and np.allclose(data, a, rtol=1e-5, atol=1e-6):
                    return t
        return None

    # -- the engine, for the widget --------------------------------------------------------------

    def backward(self, gradient, retain_graph, observe=False):
        """Run the real engine with a hook on every node: the new run and the error.

        ``observe=False`` (the widget's button): ``root.backward()``, as the user would call it.
        ``observe=True`` (animate()'s own pass): ``torch.autograd.grad`` on the leaves, which
        writes no ``.grad`` (no post-accumulate-grad hook, so no optimiser-in-backward, can step),
        with every tensor hook the adapter can reach set aside and every retained ``.grad`` put
        back; the leaves' events are placed where the engine would have run their AccumulateGrad.
        What PyTorch gives no way to keep from running (node and module hooks, a custom
        ``Function.backward``) runs, and the run's ``notes`` say which.
        """
        torch = self.torch
        run = Run(self.seed(gradient), bool(retain_graph))
        index, events, handles = 0, run.events, []      # (each backward() call is a run of its own)
        started = []
        pending, placed = {}, {}    # observe: id(acc) -> edges still to run; id(acc) -> its Event
        if observe:
            for step in self.all_steps:
                for nxt, _ in step.fn().next_functions:
                    if nxt is not None and nxt.name() == ACCUMULATE:
                        pending[id(nxt)] = pending.get(id(nxt), 0) + 1
        leaf_of = {id(self.accs.get(id(v.tensor()))): v for v in self.trace.leaves
                   if self.accs.get(id(v.tensor())) is not None}

        def np_or_none(g):
            return None if g is None else _array(g)

        def on_node(step):
            def hook(grad_inputs, grad_outputs):
                grad_in = np_or_none(grad_outputs[0]) if len(grad_outputs) == 1 else np.concatenate(
                    [(np.zeros(m.shape, _np_dtype(self.torch, m.dtype)) if g is None else _array(g)).ravel()
                     for g, m in zip(grad_outputs, step.fn()._input_metadata)])    # as gradviz records them
                events.append(Event(index, len(events), step.name, step.seq, node=step, grad_in=grad_in,
                                    grads_out=tuple(np_or_none(g) for g in grad_inputs)))
                if observe:            # a leaf's AccumulateGrad runs as soon as its last producer has
                    for nxt, _ in step.fn().next_functions:
                        if nxt is None or id(nxt) not in pending:
                            continue
                        pending[id(nxt)] -= 1
                        if pending[id(nxt)] == 0 and id(nxt) in leaf_of:
                            leaf = leaf_of[id(nxt)]
                            placed[id(nxt)] = e = Event(index, len(events), "AccumulateGrad", leaf.seq,
                                                        variable=leaf)
                            events.append(e)
            return hook

        def on_leaf(leaf, before):
            def pre(grad_outputs):
                t = leaf.tensor()
                before[0] = None if t.grad is None else _array(t.grad)

            def post(grad_inputs, grad_outputs):
                t = leaf.tensor()
                events.append(Event(index, len(events), "AccumulateGrad", leaf.seq, variable=leaf,
                                    grad_in=np_or_none(grad_outputs[0]), grad_before=before[0],
                                    grad_after=None if t.grad is None else _array(t.grad)))
            return pre, post

        error, aside = None, None
        try:
            for step in self.all_steps:
                handles.append(step.fn().register_hook(on_node(step)))
            root = self.by_fn.get(id(self.roots[0].grad_fn)) if self.roots[0].grad_fn is not None else None
            if root is not None:      # the engine reached the graph (else it refused the call itself)
                handles.append(root.fn().register_prehook(lambda grad_outputs: started.append(True)))
            if observe:
                aside = _SetAside(self)
                leaves = [self.accs[k].variable for k in self.accs]
                if self.roots[0].grad_fn is None:   # a leaf itself: the seed is its gradient
                    leaves = [self.roots[0]] if self.roots[0].requires_grad else []
                grads = torch.autograd.grad(self.roots[0], leaves, gradient, retain_graph=True,
                                            allow_unused=True) if leaves else ()
                self._leaf_events(events, placed, leaves, grads, index)
            else:
                for leaf in self.trace.leaves:
                    acc = self.accs.get(id(leaf.tensor()))
                    if acc is not None:
                        pre, post = on_leaf(leaf, [None])
                        handles += [acc.register_prehook(pre), acc.register_hook(post)]
                self.roots[0].backward(gradient, retain_graph=retain_graph)
        except Exception as exc:  # PyTorch's own message is the lesson: keep it, show it
            error = describe_error(exc)
        finally:
            for h in handles:
                h.remove()
            if aside is not None:
                aside.put_back()
        if observe:
            events[:] = [e for e in events if e.name != "AccumulateGrad" or e.grad_in is not None]
            for k, e in enumerate(events):
                e.step = k
            run.notes = self._notes()
        if error and not events and not started:
            return [], error
        run.error = error
        self.trace.runs.append(run)
        return [run], error

    def _leaf_events(self, events, placed, leaves, grads, index):
        """Fill each leaf's event: the gradient ``autograd.grad`` returned and the ``.grad`` it
        would have made, ``.grad`` + gradient (computed apart: nothing is written)."""
        torch = self.torch
        for t, g in zip(leaves, grads):
            if g is None:
                continue
            acc = self.accs.get(id(t))
            e = placed.get(id(acc)) if acc is not None else None
            if e is None:
                leaf = self.trace.value_for(t)
                if leaf is None:
                    continue
                e = Event(index, len(events), "AccumulateGrad", leaf.seq, variable=leaf)
                events.append(e)
            with torch.no_grad():
                after = g if t.grad is None else t.grad + g
            e.grad_in, e.grad_before, e.grad_after = _array(g), _array(t.grad), _array(after)

    def _notes(self):
        """What ran in the widget's pass that PyTorch gives no way to hold back: messages for the widget."""
        notes = {}
        torch = self.torch
        ran = []
        module = torch.nn.modules.module
        if getattr(module, "_global_backward_hooks", None) or getattr(module, "_global_backward_pre_hooks", None):
            ran.append("register_module_full_backward_hook")
        for name, m in self.found.modules:
            for sub_name, sub in m.named_modules(prefix=name):
                kinds = [k for k, d in (("register_full_backward_hook", sub._backward_hooks),
                                        ("register_full_backward_pre_hook", sub._backward_pre_hooks)) if d]
                ran += [f"{sub_name}.{k}" for k in kinds]
        if not ran and any(s.name == "BackwardHookFunctionBackward" for s in self.all_steps):
            ran.append("a module's register_full_backward_hook")
        if ran:
            notes["hooks"] = ["note_hooks_ran", {"hooks": ", ".join(dict.fromkeys(ran))}]
        users = [s.name for s in self.all_steps if s.user and s.name != "BackwardHookFunctionBackward"]
        if users:
            notes["rerun"] = ["note_function_rerun", {"fns": ", ".join(dict.fromkeys(users))}]
        return notes

    def stale(self):
        """Why ``backward()`` would fail now: ``"freed"`` or ``"modified"`` (read from the saved tensors), or None."""
        for step in self.all_steps:
            fn = step.fn()
            for attr in dir(fn):
                if not attr.startswith("_saved_"):
                    continue
                try:
                    getattr(fn, attr)
                except RuntimeError as exc:
                    return "modified" if "inplace" in str(exc) else "freed"
        return None

    def forward_again(self):
        """Run the graph's ops again with PyTorch from the leaves as they are now (the widget's
        backward() button, once the graph was freed or a leaf changed): None, or why it cannot.

        Only ops of the op table that :data:`_REPLAY` knows how to call, each first checked on the
        numbers it read the first time (it must give the output it gave, and a node of the same
        name); never the user's own code (a custom Function, a module's forward), never a graph
        folded into layers. The trace then holds the new pass: nodes and every value.
        """
        torch, made, done = self.torch, {}, []
        if len(self.trace.steps) != len(self.all_steps) or any(s.user or s.op is None for s in self.all_steps):
            return "user"
        for s in self.trace.steps:
            call = _REPLAY.get(s.op.key)
            if call is None or any(i.output_nr or i.kind == "const" and i.data is None for i in s.inputs):
                return "user"
            try:
                with torch.no_grad():                    # the same op on the numbers it read then
                    old = call(torch, [_tensor(torch, i.data, i.src) for i in s.inputs], s.params)
                if s.out.data is None or not np.allclose(_array(old), s.out.data, rtol=1e-5, atol=1e-6,
                                                         equal_nan=True):
                    return "user"
                args = [inp.src.tensor() if inp.kind == "leaf" else made[id(inp.src)] if inp.kind == "op"
                        else _tensor(torch, inp.data, inp.src) for inp in s.inputs]
                out = call(torch, args, s.params)
            except Exception:  # an op we cannot call so: say the forward pass cannot run again
                return "user"
            if out.grad_fn is None or out.grad_fn.name() != s.name:
                return "user"
            made[id(s)] = out
            done.append((s, out, args))
        root = self.trace.root_step
        if root is None or id(root) not in made:
            return "no graph"
        for s, out, args in done:
            fn = out.grad_fn
            self.by_fn[id(fn)] = s
            s.fn = lambda fn=fn: fn
            s.out.data, s.out.ref = _array(out), out
            for inp, a in zip(s.inputs, args):
                if inp.kind != "const":
                    inp.data = _array(a)
            for nxt, _ in fn.next_functions:
                if nxt is not None and nxt.name() == ACCUMULATE:
                    self.accs[id(nxt.variable)] = nxt
        for v in self.trace.leaves:
            v.data = _array(v.tensor())
        self.fns = [out.grad_fn for _, out, _ in done]       # strong references: the nodes stay alive
        self.roots[0] = made[id(root)]
        return None

    def add_recording(self, rec, error=None):
        raise TypeError("recording= is a gradviz recording; for a torch tensor, animate() records "
                        "the real backward() itself")

    @staticmethod
    def _grad(t):
        return t.grad

    @staticmethod
    def _numbers(g):
        return _array(g)

    @staticmethod
    def _version(g):
        return None

    def restore(self, saved):
        """Put every ``.grad`` back: the same tensor objects, with their old numbers (written only
        where they changed, so an untouched ``.grad`` keeps its version)."""
        torch = self.torch
        with torch.no_grad():
            for leaf, grad, data, _ in saved.values():
                if grad is not None and grad.layout == torch.strided and not _equal(_array(grad), data):
                    grad.copy_(torch.from_numpy(data))
                leaf.grad = grad

    def seed(self, gradient):
        root = self.roots[0]
        if gradient is None:
            return np.ones(tuple(root.shape), _np_dtype(self.torch, root.dtype))
        try:
            seed = _array(gradient) if hasattr(gradient, "detach") else np.asarray(gradient)
            seed = np.asarray(seed, dtype=_np_dtype(self.torch, root.dtype))
        except (TypeError, ValueError):
            return None
        return seed if seed.shape == tuple(root.shape) else None


class _SetAside:
    """The tensor hooks of every tensor the adapter can reach (the graph's leaves, the roots, the
    caller's tensors and modules' parameters), emptied for the widget's pass and put back after;
    and every retained ``.grad`` of those tensors (``retain_grad()`` fills it even under
    ``autograd.grad``), put back as the same object."""

    def __init__(self, adapter):
        tensors = [acc.variable for acc in adapter.accs.values()] + list(adapter.roots) + adapter._torch_tensors()
        for _, m in adapter.found.modules:
            tensors += list(m.parameters())
        self.hooks, self.retained = [], []
        for t in {id(t): t for t in tensors}.values():
            d = getattr(t, "_backward_hooks", None)
            if d:                                # emptied in place: PyTorch's C++ side holds this dict
                self.hooks.append((d, dict(d)))
                d.clear()
            if t.grad_fn is not None and t.retains_grad:
                self.retained.append((t, t._grad))

    def put_back(self):
        for d, hooks in self.hooks:
            d.update(hooks)
        for t, g in self.retained:
            t.grad = g


def _equal(a, b):
    return a is not None and b is not None and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _op_name(node_name):
    """The op a node name stands for, as a student writes it: ``LinalgDetBackward0`` -> ``linalg_det``."""
    base = re.sub(r"Backward\d*$", "", node_name)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower() or node_name


def _one(a):
    """The single number an array holds everywhere (a 0-d array), or None."""
    a = np.asarray(a)
    if a.size == 0:
        return None
    first = a.reshape(-1)[0]
    return np.asarray(first) if np.allclose(a, first, rtol=1e-6, atol=1e-6) else None


def _tensor(torch, data, src):
    """A constant (or a value) as PyTorch takes it: a Python number stays a number (``x + 1``)."""
    if src is not None and getattr(src, "literal", False) and np.ndim(data) == 0:
        return np.asarray(data).item()
    return torch.from_numpy(np.array(data, copy=True))


def _dims(p):
    d = p.get("dim")
    return tuple(d) if isinstance(d, (tuple, list)) else d


# How PyTorch computes each op of the op table that forward_again() may run again: (torch, the
# inputs, the op's params) -> the output. Each call is checked on the first pass's numbers first.
_REPLAY = {
    "add": lambda t, a, p: a[0] + a[1], "sub": lambda t, a, p: a[0] - a[1],
    "mul": lambda t, a, p: a[0] * a[1], "div": lambda t, a, p: a[0] / a[1],
    "add_scalar": lambda t, a, p: a[0] + p["c"], "sub_scalar": lambda t, a, p: a[0] - p["c"],
    "mul_scalar": lambda t, a, p: a[0] * p["c"], "div_scalar": lambda t, a, p: a[0] / p["c"],
    "rsub": lambda t, a, p: p["c"] - a[0],
    "pow": lambda t, a, p: t.pow(a[0], p["n"]), "pow_tt": lambda t, a, p: t.pow(a[0], a[1]),
    "neg": lambda t, a, p: -a[0],
    **{k: (lambda k: lambda t, a, p: getattr(t, k)(a[0]))(k)
       for k in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "abs")},
    "sum": lambda t, a, p: t.sum(a[0]), "mean": lambda t, a, p: t.mean(a[0]),
    "sum_dim": lambda t, a, p: t.sum(a[0], _dims(p), keepdim=bool(p.get("keepdim"))),
    "mean_dim": lambda t, a, p: t.mean(a[0], _dims(p), keepdim=bool(p.get("keepdim"))),
    "mm": lambda t, a, p: t.mm(a[0], a[1]), "mv": lambda t, a, p: t.mv(a[0], a[1]),
    "addmm": lambda t, a, p: t.addmm(a[0], a[1], a[2]),
}
