"""PyTorch's adapter: a :class:`gradviz.trace.Trace` from real ``torch.Tensor``s, read from the real engine.

Imported only when a torch tensor is handed to gradviz (``import gradviz`` never imports torch).
Nothing here re-implements PyTorch; it reads what the engine keeps:

* the graph from ``grad_fn`` / ``next_functions`` (``AccumulateGrad.variable`` for leaves), the
  forward order from the nodes' sequence numbers, each output's shape from ``_input_metadata``;
* values from, in turn: a ``with gradviz.watch():`` block, the caller's variables, the nodes'
  saved tensors (``_saved_result``, a consumer's ``_saved_self``/``_saved_other``...), and the op
  table's forward rule replayed on what is known (:func:`gradviz.trace.replay`);
* animate()'s backward pass from PyTorch's own nodes, called one by one in the engine's order
  without any hook and without writing ``.grad`` (:mod:`gradviz.trace.torch_backward`); the
  widget's ``backward()`` button's from hooks on every node (``register_hook``; ``register_prehook``
  on each ``AccumulateGrad`` for ``.grad`` before the add), fired by ``backward()`` itself, in the
  order the engine ran them.

The op's mathematics comes from gradviz's op table, found by PyTorch's node name; a node the table
does not know (or a custom ``autograd.Function``) is drawn and animated with the gradients the
engine really computed, and has no hand derivation.

What it cannot know: a leaf's creation order (leaves are ordered by where the caller's names were
found, else by first use); a constant PyTorch did not save and no watch() saw (``x + 1``'s 1 is
worked out from the saved output when it can be, else drawn as ``?``); the history behind a
``detach()`` (PyTorch keeps no link back).
"""

import contextlib
import math
import re
import sys

import numpy as np

from ..autograd.engine import walk
from ..naming import tensor_library
from ..ops import OPS
from .model import (EngineAdapter, Event, Input, Run, Step, Trace, Value, describe_error, name_values,
                    no_derivation_latex, replay)
from . import torch_backward
from .torch_dims import signed, wrap_dims
from .torch_norms import layer_norm_params
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
               1: ("other", "mat1", "mat2", "vec", "target", "exponent", "end", "weight", "tensor1", "min"),
               2: ("mat2", "bias", "tensor2", "weight", "max")}
# gradviz parameter -> PyTorch's saved attribute, where the names differ.
PARAM_ALIAS = {"n": "exponent", "d0": "dim0", "d1": "dim1", "cond": "condition"}
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


# The saved attribute an op-table parameter is read from, where it has another name on this node
_SAVED_AS = {("repeat", "sizes"): "repeats", ("slice", "s"): "start", ("topk", "index"): "indices"}


def _saved_numbers(fn):
    """The numbers a node the op table does not know saved (addcmul's value, lerp's weight): part of what it computed."""
    out = []
    for attr in dir(fn):
        value = _saved(fn, attr[len("_saved_"):]) if attr.startswith("_saved_") else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out.append((attr[len("_saved_"):], value))
    return out


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
        self._ran = []                     # the nodes animate()'s last pass called (for its notes)
        self._wrote = []                   # tensors whose .grad a custom backward wrote in it (put back)
        self.fns = self._walk(roots)                       # strong references: the nodes stay alive
        self.outputs = self._live_outputs(roots)
        self._made_when = sorted((seen["n"], fn._sequence_nr()) for fn in self.fns
                                 for seen in [watched(fn)] if seen is not None and "n" in seen)
        steps = [self._step(fn) for fn in self.fns]
        self.all_steps = list(steps)         # hooked on every backward(), even if a layer folds some
        # a custom Function's node -> whether it saved tensors (None: freed already, so it did): stale()
        self._saves = {id(s.fn()): _saves_tensors(s.fn()) is not False for s in steps if s.user}
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
        if known is OPS["gelu"] and params.get("approximate") == "tanh":   # one node name, two formulas
            known = op = OPS["gelu_tanh"]
        if known is not None and complete:
            key, symbol, latex, dlatex = known.key, known.symbol, known.latex_for(params), known.dlatex
        else:
            label = type(fn).__name__.removesuffix("Backward") if user else _op_name(name)
            latex, dlatex = no_derivation_latex(label, len(fn.next_functions), () if user else _saved_numbers(fn))
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
        if step.key is not None and step.inputs:
            wrap_dims(known, params, step.inputs[0].shape)
        self.by_fn[id(fn)] = step
        self.values.append(out)
        return step

    def _params(self, fn, op, out_shape):
        """The op-table parameters of ``fn`` from its saved attributes; ``known`` is False if one is missing."""
        if op is None:
            return {}, False
        params = {}
        for key, default in op.params.items():
            if key in ("shape", "sizes") and op.key != "repeat":
                params[key] = out_shape
                continue
            value = _saved(fn, _SAVED_AS.get((op.key, key)) or PARAM_ALIAS.get(key, key))
            if key == "s":        # x[a:b]: the slice the node keeps as start, end, step
                value = slice(value, _saved(fn, "end"), _saved(fn, "step")) if value is not None else None
            if value is None and key == "dim" and isinstance(default, tuple):
                params[key] = None         # sum(dim=None): every dim (wrap_dims says which)
                continue
            if value is None and key == "correction":   # x.var(): None, PyTorch's default (1)
                params[key] = default
                continue
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
            if key == "dim":       # (a dim given as -1 PyTorch keeps as given, shown as 2**64 - 1)
                value = signed(value)
            if key == "dim" and isinstance(default, tuple) and isinstance(value, int):
                value = (value,)
            params[key] = value
        if "keepdim" in op.saved:                         # (the rules read it: a reduction's shape)
            params["keepdim"] = bool(_saved(fn, "keepdim"))
        if "dim" in op.saved and "dim" not in params and _saved(fn, "dim") is not None:   # (sort, var, std:
            params["dim"] = signed(_saved(fn, "dim"))                                     # no default to read)
        if op.key == "norm":                               # (the op table gives norm no defaults to read)
            params.update(ord=_saved(fn, "ord"), dim=signed(_saved(fn, "dim")), keepdim=bool(_saved(fn, "keepdim")))
        if op.key == "native_batch_norm" and _saved(fn, "weight") is None:   # (the bias is not saved)
            params.update(has_weight=False, has_bias=fn.next_functions[2][0] is not None)
        if op.key == "native_layer_norm":                  # (eps is not saved; the mean and rstd are)
            x, rstd = (_saved(fn, a) for a in ("input", "result2"))
            params.update(layer_norm_params(None if x is None else _array(x), params["normalized_shape"],
                                            None if rstd is None else _array(rstd), _saved(fn, "weight") is not None,
                                            _saved(fn, "bias") is not None))
        if op.key in ("nll_loss", "nll_loss2d"):          # cross_entropy(weight=..., ignore_index=...)
            for key in ("weight", "ignore_index"):
                value = _saved(fn, key)
                if value is not None:
                    params[key] = _array(value) if isinstance(value, self.torch.Tensor) else value
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
            elif inp.kind == "op" and inp.data is None and inp.output_nr in inp.src.pieces:
                inp.data = inp.src.pieces[inp.output_nr].data
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
        if step.out.data is None and step.outputs > 1:
            self._pieces_replayed(step)

    def _pieces_replayed(self, step):
        """A split's outputs worked out from its input, with the sizes and dim its node keeps (the
        table's replay is for nodes of one output): what later steps read."""
        call, (inp,) = _PIECES.get(step.key), step.inputs if len(step.inputs) == 1 else (None,)
        if call is None or inp is None or inp.data is None:
            return
        try:
            with self.torch.no_grad():
                out = [_array(t) for t in call(self.torch, _tensor(self.torch, inp.data, inp.src), step.fn())]
        except Exception:  # sizes it cannot read: the values stay unknown
            return
        if len(out) != step.outputs:
            return
        step.out.data, step.out.replayed = out[0], True
        for k, v in step.pieces.items():      # (the outputs a later step reads)
            if v.data is None:
                v.data = out[k]

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
        if step.key == "clamp_tensor":     # clamp(x, min=t): the bound not given is none, an infinite one
            for i in missing:
                if i and _saved(step.fn(), ("min", "max")[i - 1]) is None:
                    self._set_const(step, i, -np.inf if i == 1 else np.inf)
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
        """Run the backward pass: the new run and the error.

        ``observe=False`` (the widget's button): the real ``root.backward()``, as the user would call
        it (their hooks run, ``.grad`` is written), with a hook on every node to record it.
        ``observe=True`` (animate()'s own pass): PyTorch's engine loop run node by node without any
        hook (:mod:`gradviz.trace.torch_backward`): no tensor, node, module, multi-grad or
        post-accumulate-grad hook runs, no ``retain_grad()`` is filled, no ``.grad`` is written (so
        no optimiser-in-backward can step); each leaf's event holds the ``.grad`` that backward()
        would make, computed apart. What PyTorch runs inside a node (a custom ``Function.backward``,
        a saved tensor's unpack hook) runs, and the run's ``notes`` say which.
        """
        run = Run(self.seed(gradient), bool(retain_graph))
        try:
            started = self._observed(run, gradient) if observe else self._real(run, gradient, retain_graph)
            error = None
        except _Failed as failed:
            started, error = failed.started, describe_error(failed.exc)
        for k, e in enumerate(run.events):
            e.step = k
        if observe:
            run.notes = self._notes()
        if error and not run.events and not started:
            return [], error
        run.error = error
        self.trace.runs.append(run)
        return [run], error

    def _observed(self, run, gradient):
        """animate()'s pass: events from :func:`torch_backward.backward_steps`, in the engine's order.
        With a custom Function in the graph, every ``.grad`` is kept (its ``backward`` may call
        ``backward()`` itself) and the tensors it wrote to are noted in ``self._wrote``."""
        torch, root, events, started, wrote = self.torch, self.roots[0], run.events, [], []
        self._ran, self._wrote = [], []
        keep = (torch_backward.every_grad_kept(torch) if torch_backward.custom_nodes(torch, self.fns)
                else contextlib.nullcontext([]))
        try:
            with keep as wrote:
                g = torch_backward.seed(torch, root, gradient)
                if root.grad_fn is None:      # a leaf itself: the seed is its gradient
                    self._leaf_event(events, root, g)
                    return True
                for fn, grads_in, grads_out in torch_backward.backward_steps(torch, root.grad_fn, root.output_nr, g):
                    started.append(True)
                    if fn.name() == torch_backward.ACCUMULATE:
                        self._leaf_event(events, fn.variable, grads_in[0])
                        continue
                    self._ran.append(fn)
                    step = self.by_fn[id(fn)]
                    events.append(Event(0, len(events), step.name, step.seq, node=step,
                                        grad_in=self._arriving(step, grads_in),
                                        grads_out=tuple(None if g is None else _array(g) for g in grads_out)))
        except Exception as exc:  # PyTorch's own message is the lesson: keep it, show it
            raise _Failed(exc, bool(started)) from exc
        finally:
            self._wrote = list(wrote)
        return True

    def _leaf_event(self, events, t, g):
        """A leaf's AccumulateGrad: the gradient that arrived and the ``.grad`` it would make,
        ``.grad`` + gradient, computed apart (nothing is written)."""
        leaf = self.trace.value_for(t)
        if leaf is None or g is None:
            return
        with self.torch.no_grad():
            after = g if t.grad is None else t.grad + g
        events.append(Event(0, len(events), "AccumulateGrad", leaf.seq, variable=leaf, grad_in=_array(g),
                            grad_before=_array(t.grad), grad_after=_array(after)))

    def _arriving(self, step, grads):
        """The gradient a node receives, as gradviz records it: one array (several outputs' side by side)."""
        if len(grads) == 1:
            return None if grads[0] is None else _array(grads[0])
        return np.concatenate([(np.zeros(m.shape, _np_dtype(self.torch, m.dtype)) if g is None else _array(g)).ravel()
                               for g, m in zip(grads, step.fn()._input_metadata)])

    def _real(self, run, gradient, retain_graph):
        """The widget's backward() button: ``root.backward()``, recorded by a hook on every node."""
        events, handles, started = run.events, [], []

        def on_node(step):
            def hook(grad_inputs, grad_outputs):
                events.append(Event(0, len(events), step.name, step.seq, node=step,
                                    grad_in=self._arriving(step, grad_outputs),
                                    grads_out=tuple(None if g is None else _array(g) for g in grad_inputs)))
            return hook

        def on_leaf(leaf, before):
            def pre(grad_outputs):
                t = leaf.tensor()
                before[0] = None if t.grad is None else _array(t.grad)

            def post(grad_inputs, grad_outputs):
                t = leaf.tensor()
                events.append(Event(0, len(events), "AccumulateGrad", leaf.seq, variable=leaf,
                                    grad_in=None if grad_outputs[0] is None else _array(grad_outputs[0]),
                                    grad_before=before[0], grad_after=None if t.grad is None else _array(t.grad)))
            return pre, post

        try:
            for step in self.all_steps:
                handles.append(step.fn().register_hook(on_node(step)))
            root = self.by_fn.get(id(self.roots[0].grad_fn)) if self.roots[0].grad_fn is not None else None
            if root is not None:      # the engine reached the graph (else it refused the call itself)
                handles.append(root.fn().register_prehook(lambda grad_outputs: started.append(True)))
            for leaf in self.trace.leaves:
                acc = self.accs.get(id(leaf.tensor()))
                if acc is not None:
                    pre, post = on_leaf(leaf, [None])
                    handles += [acc.register_prehook(pre), acc.register_hook(post)]
            self.roots[0].backward(gradient, retain_graph=retain_graph)
        except Exception as exc:  # PyTorch's own message is the lesson: keep it, show it
            raise _Failed(exc, bool(started)) from exc
        finally:
            for h in handles:
                h.remove()
        return True

    def _notes(self):
        """What ran in the widget's pass that PyTorch runs inside a node, where no caller can hold
        it back: messages for the widget. (Every hook PyTorch runs from its engine's loop -- tensor,
        node, module, multi-grad, post-accumulate-grad hooks, retain_grad() -- did not run.)"""
        notes, ran = {}, []
        for fn in self._ran:
            for hook in torch_backward.unpack_hooks(fn):
                ran.append(f"{_hook_name(hook)} (the unpack hook of a tensor {fn.name()} saved)")
        if ran:
            notes["hooks"] = ["note_hooks_ran", {"hooks": ", ".join(dict.fromkeys(ran))}]
        users = [fn.name() for fn in torch_backward.custom_nodes(self.torch, self._ran)]
        if users:
            key = "note_function_rerun_wrote" if self._wrote else "note_function_rerun"
            notes["rerun"] = [key, {"fns": ", ".join(dict.fromkeys(users))}]
        return notes

    def stale(self):
        """Why ``backward()`` would fail now: ``"freed"`` or ``"modified"`` (read from the saved tensors), or None.

        A custom Function's node counts as freed once what its ``forward`` saved
        (``ctx.save_for_backward``) is gone: read without unpacking it, so no hook of the user's runs.
        """
        for step in self.all_steps:
            fn = step.fn()
            if step.user:
                if self._saves.get(id(fn)) and _saves_tensors(fn) is None:
                    return "freed"
                continue
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
        name); never the user's own code (a custom Function, a module's forward).  A layer folded
        by ``collapse=`` runs as the ops PyTorch recorded for it (``collapse=`` only changes the
        picture).  A constant PyTorch did not keep (``x * w + 2.0`` keeps no 2.0) is no obstacle while
        only ops whose gradients read none of its values carry it to the root (:func:`_passes_on`):
        the new graph is built with 0 for it, and each value known then moves by exactly what the
        leaves' change moved it (what was not known stays unknown).  The trace then holds the new
        pass: nodes and every value.  Why not: ``"user"``
        (a custom Function), ``"unkept"`` (a value PyTorch did not keep), ``"op"`` (an op it
        cannot call), ``"differs"`` (an op gives other numbers when run again: a random one),
        ``"no graph"``.
        """
        torch, made, done = self.torch, {}, []
        if any(s.user for s in self.all_steps):
            return "user"
        if any(s.op is None and (s.outputs == 1 or s.key not in _PIECES) for s in self.all_steps):
            return "op"
        layer_of = {id(m): fold for fold, _, _ in self.trace.folds for m in fold.members if m.out is fold.out}
        lost = {}      # id(step) -> its first output with 0 for each constant PyTorch did not keep
        pieces, old_pieces = {}, {}     # a node of several outputs (split): its new and its first tensors

        def zero(i):      # 0 for a constant PyTorch did not keep, as a tensor where it was one of a known
            #                 dtype (t.xlogy(t) - y: 0.0 - y would record RsubBackward1, not SubBackward0)
            if i.dtype is None:
                return 0.0
            return torch.from_numpy(np.zeros(tuple(i.shape or ()), np.dtype(i.dtype)))

        def then(i):      # an input as the first pass read it (0 for a constant PyTorch did not keep)
            if i.kind == "const" and i.data is None:
                return zero(i)
            if i.kind == "op" and id(i.src) in lost:
                return lost[id(i.src)]
            if i.output_nr and i.data is None:
                return old_pieces[id(i.src)][i.output_nr]
            return _tensor(torch, i.data, i.src)

        def now(i):       # an input as the new pass reads it: the leaf itself, or what was made again
            if i.kind == "leaf":
                return i.src.tensor()
            if i.kind == "op":
                return pieces[id(i.src)][i.output_nr] if i.output_nr else made[id(i.src)]
            return zero(i) if i.data is None else _tensor(torch, i.data, i.src)

        for s in self.all_steps:
            if s.outputs > 1:
                got = self._pieces_again(s, made, pieces, old_pieces)
                if isinstance(got, str):
                    return got
                made[id(s)] = pieces[id(s)][0]
                done.append((s, made[id(s)], got))
                continue
            call = _REPLAY.get(s.op.key)
            if call is None or any(i.output_nr and id(i.src) not in pieces for i in s.inputs):
                return "op"
            unknown = [k for k, i in enumerate(s.inputs)
                       if (i.kind == "const" and i.data is None) or (i.kind == "op" and id(i.src) in lost)]
            if unknown and not _passes_on(s, unknown):
                return "unkept"
            try:
                with torch.no_grad():                    # the same op on the numbers it read then
                    old = call(torch, [then(i) for i in s.inputs], s.params)
                if not unknown:
                    if s.out.data is None:
                        return "unkept"
                    if not np.allclose(_array(old), s.out.data, rtol=1e-5, atol=1e-6, equal_nan=True):
                        return "differs"
                args = [now(inp) for inp in s.inputs]
                out = call(torch, args, s.params)
            except Exception:  # an op we cannot call so: say the forward pass cannot run again
                return "op"
            if out.grad_fn is None or out.grad_fn.name() != s.name:
                return "op"
            made[id(s)] = out
            if unknown:
                lost[id(s)] = old
            if id(s) in layer_of:        # a folded layer's last op: what later steps read as the layer's
                made[id(layer_of[id(s)])] = out
                if unknown:
                    lost[id(layer_of[id(s)])] = old
            done.append((s, out, args))
        root = self.trace.root_step
        if root is None or id(root) not in made:
            return "no graph"
        for s, out, args in done:
            fn = out.grad_fn
            self.by_fn[id(fn)] = s
            s.fn = lambda fn=fn: fn
            s.out.ref = out
            for k, v in s.pieces.items():       # (a split's further outputs)
                v.ref = pieces[id(s)][k]
            if id(s) not in lost:
                s.out.data = _array(out)
            elif s.out.data is not None:     # known then: it moves by what the leaves' change moved it
                s.out.data = (s.out.data + (_array(out) - _array(lost[id(s)]))).astype(s.out.data.dtype)
            for inp, a in zip(s.inputs, args):
                if inp.kind == "leaf":
                    inp.data = _array(a)
                elif inp.kind == "op":
                    inp.data = inp.src.out.data if id(inp.src) in lost else _array(a)
            for nxt, _ in fn.next_functions:
                if nxt is not None and nxt.name() == ACCUMULATE:
                    self.accs[id(nxt.variable)] = nxt
        for fold, _, _ in self.trace.folds:      # each layer's step: its last op, and its inputs' numbers
            fold.fn = next(m.fn for m in fold.members if m.out is fold.out)
            for inp in fold.inputs:
                if inp.kind == "leaf":
                    inp.data = _array(inp.src.tensor())
                elif inp.kind == "op" and id(inp.src) in made:
                    inp.data = inp.src.out.data if id(inp.src) in lost else _array(made[id(inp.src)])
        for v in self.trace.leaves:
            v.data = _array(v.tensor())
        self.fns = [out.grad_fn for _, out, _ in done]       # strong references: the nodes stay alive
        self.roots[0] = made[id(root)]
        return None

    def _pieces_again(self, s, made, pieces, old_pieces):
        """A node of several outputs (split, unbind) run again on its input as it is now, with the
        sizes and dim its node keeps (numbers, never freed): the args, or why it cannot."""
        (inp,) = s.inputs if len(s.inputs) == 1 else (None,)
        if inp is None or inp.kind == "const" or (inp.kind == "op" and (inp.output_nr or id(inp.src) not in made)):
            return "op"
        torch, call, fn = self.torch, _PIECES[s.key], s.fn()
        try:
            if inp.data is not None:
                with torch.no_grad():
                    old_pieces[id(s)] = call(torch, _tensor(torch, inp.data, inp.src), fn)
                if s.out.data is not None and not np.allclose(_array(old_pieces[id(s)][0]), s.out.data, equal_nan=True):
                    return "differs"
            arg = inp.src.tensor() if inp.kind == "leaf" else made[id(inp.src)]
            pieces[id(s)] = call(torch, arg, fn)
        except Exception:  # an op we cannot call so: say the forward pass cannot run again
            return "op"
        if len(pieces[id(s)]) != s.outputs or pieces[id(s)][0].grad_fn is None or pieces[id(s)][0].grad_fn.name() != s.name:
            return "op"
        return [arg]

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


class _Failed(Exception):
    """A pass that raised: the exception, and whether the engine had reached the graph."""

    def __init__(self, exc, started):
        super().__init__(str(exc))
        self.exc, self.started = exc, started


def _saves_tensors(fn):
    """Whether a custom Function's node holds saved tensors (True/False), or None once they were
    freed (PyTorch raises then, even for a node that saved none)."""
    try:
        return bool(fn._raw_saved_tensors)
    except RuntimeError:
        return None


def _hook_name(hook):
    """A hook as its author knows it: its name, with the module for one of PyTorch's own."""
    name = getattr(hook, "__qualname__", None) or type(hook).__name__
    name = name.replace(".<locals>", "")
    module = getattr(hook, "__module__", None) or ""
    return f"{module}.{name}" if module.split(".")[0] == "torch" else name


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


# How PyTorch makes the outputs of a node of several (no hand rule: the engine's numbers), from its
# input and the sizes and dim the node keeps.
_PIECES = {
    "split": lambda t, x, fn: t.split(x, fn._saved_split_size, signed(fn._saved_dim)),
    "split_sizes": lambda t, x, fn: t.split(x, list(fn._saved_split_sizes), signed(fn._saved_dim)),
    "unbind": lambda t, x, fn: t.unbind(x, signed(fn._saved_dim)),
}

# Ops whose backward reads no value of an input (only sizes, or a known constant factor): a
# constant PyTorch did not keep may flow through them, since the new graph's gradients do not depend
# on it; each value they make moves by exactly what the leaves' change moved it (see _passes_on).
_SHIFTS = {"add", "sub", "add_scalar", "sub_scalar", "neg", "sum", "mean", "sum_dim", "mean_dim", "clone",
           "mul_scalar", "div_scalar", "view", "reshape_alias", "t", "transpose", "unsqueeze", "squeeze",
           "squeeze_dim", "expand", "permute"}


def _passes_on(step, unknown):
    """Whether ``step`` can be run again with 0 for its inputs ``unknown`` (a constant PyTorch did not
    keep, or a value made from one) and still give the new graph its gradients: its backward reads
    no value of theirs, and what they add to its output does not depend on the leaves.

    The other inputs of ``mul``/``div`` (numerator only) must then be constants with known numbers:
    ``(x + c) * 0.5`` moves with x alone.
    """
    key = step.op.key
    if key in _SHIFTS:
        return True
    if key in ("mul", "div"):
        rest = [i for k, i in enumerate(step.inputs) if k not in unknown]
        return (len(rest) == 1 and rest[0].kind == "const" and rest[0].data is not None
                and (key == "mul" or unknown == [0]))
    return False


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
    "addmm": lambda t, a, p: t.addmm(a[0], a[1], a[2]), "dot": lambda t, a, p: t.dot(a[0], a[1]),
    "bmm": lambda t, a, p: t.bmm(a[0], a[1]),
    **{k: (lambda k: lambda t, a, p: getattr(t, k)(a[0]))(k)
       for k in ("reciprocal", "rsqrt", "log1p", "expm1", "clone")},
    # reshapes and transposes (a Linear on a batch is t -> addmm; on a vector unsqueeze -> mm -> squeeze)
    "t": lambda t, a, p: a[0].t(), "transpose": lambda t, a, p: a[0].transpose(p["d0"], p["d1"]),
    "view": lambda t, a, p: a[0].view(p["shape"]), "reshape_alias": lambda t, a, p: a[0].reshape(p["shape"]),
    "unsqueeze": lambda t, a, p: a[0].unsqueeze(p["dim"]), "squeeze": lambda t, a, p: a[0].squeeze(),
    "squeeze_dim": lambda t, a, p: a[0].squeeze(p["dim"]), "expand": lambda t, a, p: a[0].expand(p["shape"]),
    "permute": lambda t, a, p: a[0].permute(p["dims"]),
    "repeat": lambda t, a, p: a[0].repeat(p["sizes"]),
    "slice": lambda t, a, p: a[0][(slice(None),) * (p["dim"] % a[0].ndim) + (p["s"],)],
    "clamp": lambda t, a, p: t.clamp(a[0], p["lo"], p["hi"]),
    "clamp_min": lambda t, a, p: t.clamp_min(a[0], p["min"]), "clamp_max": lambda t, a, p: t.clamp_max(a[0], p["max"]),
    "norm": lambda t, a, p: t.linalg.vector_norm(a[0], p["ord"], p["dim"], p["keepdim"]),
    # picking elements: x[i], index_select, gather (the indices the node keeps)
    "select": lambda t, a, p: a[0].select(p["dim"], p["index"]),
    "index_select": lambda t, a, p: t.index_select(a[0], p["dim"], t.as_tensor(p["index"])),
    "gather": lambda t, a, p: t.gather(a[0], p["dim"], t.as_tensor(p["index"])),
    # the activations after ReLU (their numbers read from what each node keeps)
    "leaky_relu": lambda t, a, p: t.nn.functional.leaky_relu(a[0], p["negative_slope"]),
    "elu": lambda t, a, p: t._C._nn.elu(a[0], p["alpha"], p["scale"], p["input_scale"]),
    "celu": lambda t, a, p: t.celu(a[0], p["alpha"]),
    "gelu": lambda t, a, p: t.nn.functional.gelu(a[0], approximate=p["approximate"]),
    "gelu_tanh": lambda t, a, p: t.nn.functional.gelu(a[0], approximate=p["approximate"]),
    "softplus": lambda t, a, p: t.nn.functional.softplus(a[0], p["beta"], p["threshold"]),
    "hardtanh": lambda t, a, p: t.nn.functional.hardtanh(a[0], p["min_val"], p["max_val"]),
    **{k: (lambda k: lambda t, a, p: getattr(t.nn.functional, k)(a[0]))(k)
       for k in ("silu", "mish", "hardsigmoid")},
    "log_sigmoid": lambda t, a, p: t.nn.functional.logsigmoid(a[0]),
    # the losses and what cross_entropy is made of (log_softmax -> nll_loss)
    "softmax": lambda t, a, p: t.softmax(a[0], p["dim"]), "log_softmax": lambda t, a, p: t.log_softmax(a[0], p["dim"]),
    "nll_loss": lambda t, a, p: t.nn.functional.nll_loss(a[0], t.as_tensor(p["target"]), reduction=p["reduction"]),
    "mse_loss": lambda t, a, p: t.nn.functional.mse_loss(a[0], a[1], reduction=p["reduction"]),
    "xlogy": lambda t, a, p: t.xlogy(a[0], a[1]),
    "smooth_l1_loss": lambda t, a, p: t.nn.functional.smooth_l1_loss(a[0], a[1], reduction=p["reduction"], beta=p["beta"]),
    "huber_loss": lambda t, a, p: t.nn.functional.huber_loss(a[0], a[1], reduction=p["reduction"], delta=p["delta"]),
    "binary_cross_entropy": lambda t, a, p: t.nn.functional.binary_cross_entropy(a[0], a[1], reduction=p["reduction"]),
    "binary_cross_entropy_with_logits": lambda t, a, p: t.nn.functional.binary_cross_entropy_with_logits(
        a[0], a[1], reduction=p["reduction"]),
}
