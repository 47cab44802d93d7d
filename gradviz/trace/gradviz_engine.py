"""Recording gradviz's own engine, and its adapter: what a backward pass did, as the trace's model.

>>> import gradviz as torch
>>> from gradviz.trace import record, trace_of
>>> x = torch.ones(2, requires_grad=True)
>>> o = (3 * x).sum()
>>> with record() as rec:
...     o.backward()
>>> [e.name for e in rec.events]
['SumBackward0', 'MulBackward0', 'AccumulateGrad']
>>> t = trace_of(o, names={"x": x, "o": o}, recording=rec)
>>> [(s.name, s.out.name) for s in t.steps], [v.name for v in t.leaves]
([('MulBackward0', 'a'), ('SumBackward0', 'o')], ['x'])

Recording costs nothing when no ``record()`` is active: the engine checks one list.
"""

import contextlib
import weakref

import numpy as np

from .. import autograd
from ..autograd import engine, grad_mode
from ..autograd.multi_output import apply_outputs
from ..ops import OPS
from ..tensor import Tensor, apply
from . import folding
from .model import (EngineAdapter, Event, Input, Run, Step, Trace, Value, describe_error, in_place_versions,
                    name_values, replay)

__all__ = ["record", "Recording", "forward_nodes", "GradvizAdapter"]


# --- recording gradviz's engine -----------------------------------------------------------------

class Recording:
    """While active (a context manager), the engine's backward passes as the trace's own data: one
    :class:`~gradviz.trace.model.Run` per ``backward()`` call (its seeds and ``retain_graph``) and one
    :class:`~gradviz.trace.model.Event` per node run or ``.grad`` accumulated, holding the engine's
    node and tensor; :meth:`GradvizAdapter.add_recording` puts the trace's steps and values in their place."""

    def __init__(self):
        self.events, self.runs = [], []

    def __enter__(self):
        engine._recorders.append(self)
        return self

    def __exit__(self, *exc):
        engine._recorders.remove(self)

    # called by the engine
    def _begin(self, roots, seeds, retain_graph):
        seeds = [np.array(g, copy=True) for g in seeds]
        self.runs.append(Run(seeds[0] if seeds else np.ones(()), retain_graph, seeds=seeds))

    def _end(self):
        pass

    def _step(self):
        run = len(self.runs) - 1
        self._steps = 0 if not self.events or self.events[-1].run != run else self._steps + 1
        return run, self._steps

    def _node(self, node, g, grads):
        run, step = self._step()
        self.events.append(Event(run, step, node.name(), node._seq, node=node, grad_in=np.array(g, copy=True),
                                 grads_out=tuple(None if x is None else np.array(x, copy=True) for x in grads)))

    def _leaf(self, var, g, before, after):
        run, step = self._step()
        acc = var._acc() if var._acc is not None else None
        self.events.append(Event(run, step, "AccumulateGrad", var._seq, node=acc, variable=var,
                                 grad_in=np.array(g, copy=True), grad_before=before, grad_after=after))


def record():
    """``with record() as rec: loss.backward()`` -- then read ``rec.events``."""
    return Recording()


def forward_nodes(*roots):
    """The grad_fn nodes behind ``roots`` in the order the forward pass created them."""
    return sorted((n for n in engine.walk(t.grad_fn for t in roots) if n.op is not None), key=lambda n: n._seq)


# --- gradviz's adapter --------------------------------------------------------------------------

def _is_user_function(fn):
    return type(fn).__module__ == "gradviz.autograd.function"


def _cut_origins(t):
    """``[(tensor, "detach()" | "no_grad()")]``: what ``t`` was cut from, if those are still alive."""
    how, refs = getattr(t, "_cut", (None, ()))
    return [(o, how) for o in (r() for r in refs) if o is not None]


class GradvizAdapter(EngineAdapter):
    """Builds a :class:`Trace` from gradviz tensors, and turns engine recordings into its runs."""

    engine = "gradviz"

    def __init__(self, roots, found, cuts=True):
        self.roots, self.found = list(roots), found
        self.by_tensor, self.by_fn, self.values = {}, {}, []
        fns, grad_fns = self._reachable(roots, cuts)
        steps = [self._step(fn, id(fn) not in grad_fns) for fn in fns]
        root_values = [self.by_fn[id(r._grad_fn)].out if r._grad_fn is not None else self._value(r)
                       for r in roots]
        leaves = sorted({id(v): v for v in self.values if v.requires_grad and v.is_leaf
                         and any(i.kind == "leaf" and i.src is v for s in steps if not s.cut_only
                                 for i in s.inputs)}.values(), key=lambda v: v.seq)
        for r, v in zip(roots, root_values):
            if r._grad_fn is None and r._requires_grad and v not in leaves:
                leaves = [v]
        cuts_ = [(self._value(d), self._origin(o), how) for d, o, how in self.cuts]
        self.trace = Trace(root_values, steps, leaves, self.values, cuts_, engine="gradviz", adapter=self)
        in_place_versions(self.trace.steps)
        name_values(self.trace, found)

    # walking
    def _reachable(self, roots, cuts):
        """Every grad_fn behind ``roots`` in forward order; with ``cuts``, also across detach()."""
        self.cuts, seen = [], set()

        def visit(t):
            """The grad_fns to walk on from tensor ``t``: its own, or with ``cuts`` those of what it was
            cut from (depth first with a stack of our own: a leaf cut from a leaf cut from ... can be
            thousands deep).  A task is (tensor, the cut that led to it or None)."""
            found, todo = [], [(t, None)]
            while todo:
                t, cut = todo.pop()
                if cut is not None:
                    self.cuts.append(cut)
                if t._grad_fn is not None:
                    found.append(t._grad_fn)
                elif cuts and id(t) not in seen:
                    seen.add(id(t))
                    todo.extend((origin, (t, origin, how)) for origin, how in reversed(_cut_origins(t)))
            return found

        def across_cuts(fn):          # the inputs a node was given without grad, and their history
            return [g for t in (getattr(fn, "_nograd_inputs", None) or {}).values() if t is not None
                    for g in visit(t)]

        # first the gradient graph alone (what backward() can reach), then the cut history
        grad_fns = {id(fn) for fn in engine.walk(r._grad_fn for r in roots)
                    if not isinstance(fn, autograd.AccumulateGrad)}
        starts = [fn for r in roots for fn in visit(r)]
        fns = [fn for fn in engine.walk(starts, also=across_cuts) if not isinstance(fn, autograd.AccumulateGrad)]
        fns.sort(key=lambda f: f._seq)
        return fns, grad_fns

    def _value(self, t):
        """The Value of a leaf, data or constant tensor (one per literal use, shared otherwise)."""
        v = self.by_tensor.get(id(t))
        if v is not None and not t._literal:
            return v
        v = Value(seq=t._seq, shape=tuple(t._data.shape), dtype=t._data.dtype, data=t._data,
                  requires_grad=t._requires_grad, is_leaf=t._grad_fn is None, retains_grad=t._retains_grad,
                  literal=t._literal, grad=None if t._grad is None else t._grad._data,
                  order=(t._seq, 0, len(self.values)), ref=t)
        self.by_tensor[id(t)] = v
        self.values.append(v)
        return v

    def _origin(self, t):
        return self.by_fn[id(t._grad_fn)].out if t._grad_fn is not None else self._value(t)

    def _step(self, fn, cut_only):
        op, user = fn.op, _is_user_function(fn)
        outs = getattr(fn, "_outs", None)           # split/unbind: one node, one output per piece
        inputs = []
        for i, (nxt, k) in enumerate(fn.next_functions):
            shape, dtype, _ = fn._metas[i]
            if nxt is None:
                t = fn._nograd_inputs.get(i)
                src = self._value(t) if t is not None else None
                inputs.append(Input("const", src, tuple(shape), dtype, None if src is None else src.data))
            elif isinstance(nxt, autograd.AccumulateGrad):
                src = self._value(nxt.variable)
                inputs.append(Input("leaf", src, tuple(shape), dtype, src.data))
            elif k:              # a further piece of a node with several outputs: its own tensor's numbers
                src, piece = self.by_fn[id(nxt)], nxt._outs[k][0]()
                src.piece(k, None if piece is None else weakref.ref(piece))
                inputs.append(Input("op", src, tuple(shape), dtype, None if piece is None else piece._data,
                                    output_nr=k))
            else:
                src = self.by_fn[id(nxt)]
                inputs.append(Input("op", src, tuple(shape), dtype, src.out.data))
        out_t = fn._out()
        shape, dtype = fn._out_meta
        out = Value(seq=out_t._seq if out_t is not None else None, shape=tuple(shape), dtype=dtype,
                    requires_grad=True, is_leaf=False,
                    retains_grad=bool(out_t is not None and out_t._retains_grad),
                    grad=None if out_t is None or out_t._grad is None else out_t._grad._data,
                    order=(fn._seq, 1, 0), ref=weakref.ref(out_t) if out_t is not None else None)
        # (a node with several outputs has no hand derivation: its pieces' gradients arrive together)
        step = Step(seq=fn._seq, name=fn.name(), op=None if user or outs else op, key=op.key, symbol=op.symbol,
                    latex=op.latex_for(fn._params or {}), dlatex=op.dlatex, params=dict(fn._params or {}),
                    inputs=inputs, out=out, cut_only=cut_only, fn=weakref.ref(fn), user=user, outputs=len(outs) if outs else 1)
        if out_t is not None:
            out.data = out_t._data
        elif fn._saved and fn._saved[-1] is not None:
            out.data = fn._saved[-1][0]
        else:
            out.data, out.replayed = replay(step), True
        self.by_fn[id(fn)] = step
        self.values.append(out)
        return step

    # backward runs
    def add_recording(self, rec, error=None):
        """Append the runs of a :func:`record` recording to the trace (the last one gets ``error``)."""
        runs, events = [], getattr(rec, "events", rec) or []
        for r in getattr(rec, "runs", None) or [None] * (1 + max((e.run for e in events), default=-1)):
            runs.append(Run(r.seed, r.retain_graph) if r is not None else Run(np.ones(()), False))
        for e in events:
            if e.run >= len(runs):
                continue
            if e.name == "AccumulateGrad":
                leaf = self.by_tensor.get(id(e.variable))
                if leaf is None:
                    continue
                runs[e.run].events.append(Event(e.run, e.step, e.name, leaf.seq, variable=leaf,
                                                grad_in=e.grad_in, grad_before=e.grad_before,
                                                grad_after=e.grad_after))
            else:
                step = self.by_fn.get(id(e.node))
                if step is None:
                    continue
                runs[e.run].events.append(Event(e.run, e.step, e.name, step.seq, node=step,
                                                grad_in=e.grad_in, grads_out=e.grads_out))
        if runs and error:
            runs[-1].error = error
        self.trace.runs.extend(runs)
        return runs


    # the engine, for the widget's live buttons
    def backward(self, gradient, retain_graph, observe=False):
        """Run ``root.backward()`` for real inside :func:`record`: the new runs and the error (or None).

        ``observe=True`` (animate()'s own pass): inside :func:`gradviz.autograd.grad_mode.observing`, so no
        hook of the user's runs, no ``.grad`` is written and a custom Function's ``backward`` is
        not run again for a gradient the user's own pass already took through it.
        """
        error = None
        with record() as rec, (grad_mode.observing() if observe else contextlib.nullcontext()):
            try:
                self.roots[0].backward(gradient, retain_graph=retain_graph)
            except Exception as exc:  # the engine's own message is the lesson: keep it, show it
                error = describe_error(exc)
        return self.add_recording(rec, error), error

    def stale(self):
        """Why ``backward()`` on the root would fail now, or None: ``"freed"`` (an earlier
        ``backward()`` without ``retain_graph`` freed what the nodes saved) or ``"modified"``
        (a value a node saved was changed in place since: a training step on a leaf)."""
        for s in folding.unfolded(self.trace.steps):     # (a folded layer: each of its ops)
            fn = s.fn() if s.fn is not None and not s.cut_only else None
            if fn is None:
                continue
            if fn._freed:
                return "freed"
            if any(e is not None and e[1][0] != e[2] for e in fn._saved or ()):
                return "modified"
        return None

    def forward_again(self):
        """Run the traced forward pass again from the leaves, as re-running the cell would.

        The widget's ``backward()`` button uses it once the graph was freed, so a second press
        shows accumulation instead of an error.  The trace keeps its steps: the new nodes are
        mapped onto them (and kept alive with the widget).  A layer folded by ``collapse=`` runs
        as its own ops (each is an op of the table: ``collapse=`` only changes the picture).
        So does a node of several outputs (split, unbind).  Returns None, or why it cannot: a
        custom Function's forward is the user's code, and is never run again here.  On success every value of the trace is the new pass's (the
        leaves' numbers as they are now).
        """
        made, fns, pieces = {}, [], {}
        layer_of = {id(m): fold for fold, _, _ in self.trace.folds for m in fold.members if m.out is fold.out}
        for s in folding.unfolded(self.trace.steps):
            if s.cut_only:
                continue
            if s.user:                   # a custom Function: the user's code
                return "user"
            args = []
            for i, inp in enumerate(s.inputs):
                if inp.kind == "leaf":
                    args.append(inp.src.tensor())
                elif inp.kind == "op":
                    args.append(pieces[id(inp.src)][inp.output_nr] if inp.output_nr else made[id(inp.src)])
                else:                    # a constant: the tensor the node kept, or its numbers
                    fn = s.fn() if s.fn is not None else None
                    t = fn._nograd_inputs.get(i) if fn is not None else None
                    args.append(t if t is not None else Tensor._wrap(np.array(inp.data, copy=True)))
            if s.outputs > 1:            # split, unbind: one node, a tensor per output (no hand derivation)
                pieces[id(s)] = apply_outputs(OPS[s.key], *args, **s.params)
                out = made[id(s)] = pieces[id(s)][0]
            else:
                made[id(s)] = out = apply(s.op, args, **s.params)
            if out._grad_fn is None:
                return "no graph"
            if id(s) in layer_of:        # a folded layer's last op: what later steps read as the layer's
                made[id(layer_of[id(s)])] = out
            fns.append((s, out, args))
        root = self.trace.root_step
        if root is None or id(root) not in made:
            return "no graph"
        for s, out, args in fns:         # the trace now holds the new pass: nodes and every value
            self.by_fn[id(out._grad_fn)] = s
            s.fn = weakref.ref(out._grad_fn)
            s.out.data, s.out.ref = out._data, weakref.ref(out)
            for k, v in s.pieces.items():
                v.ref = weakref.ref(pieces[id(s)][k])
                if v.data is not None:
                    v.data = pieces[id(s)][k]._data
            for inp, a in zip(s.inputs, args):
                if inp.kind != "const":
                    inp.data = a._data
        for fold, _, _ in self.trace.folds:      # and each layer's step: its inputs and last op
            fold.fn = next(m.fn for m in fold.members if m.out is fold.out)
            for inp in fold.inputs:
                if inp.kind == "leaf":
                    inp.data = inp.src.tensor()._data
                elif inp.kind == "op" and id(inp.src) in made:
                    inp.data = made[id(inp.src)]._data
        for v in self.trace.leaves:
            v.data = v.tensor()._data
        self.roots[0] = made[id(root)]
        self._again = getattr(self, "_again", []) + [self.roots[0]]   # ids in by_fn stay unique
        return None

    @staticmethod
    def _grad(t):
        return t._grad

    @staticmethod
    def _numbers(g):
        return g._data.copy()

    @staticmethod
    def _version(g):
        return g._vbox[0]

    @staticmethod
    def restore(saved):
        """Put every ``.grad`` back: the same tensor objects, with their old numbers."""
        for leaf, grad, data, version in saved.values():
            if grad is not None:
                grad._data[...] = data
                grad._vbox[0] = version
            leaf._grad = grad

    def seed(self, gradient):
        """The gradient a backward pass would start from; None if the engine would refuse it."""
        data = self.roots[0]._data
        if gradient is None:
            return np.ones_like(data)
        try:
            seed = np.asarray(getattr(gradient, "_data", gradient), dtype=data.dtype)
        except (TypeError, ValueError):
            return None                                            # the error frame says why
        return seed if seed.shape == data.shape else None
