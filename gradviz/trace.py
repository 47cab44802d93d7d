"""What happened, as plain data: the ops in forward order, their values and names, the backward events.

One small model, read by the graph, the captions, the derivation and the frames, so that gradviz's
engine and PyTorch's are drawn by the same code.  Two adapters fill it: gradviz's (here:
:func:`record` around ``backward()`` and :class:`GradvizAdapter`) and PyTorch's
(:mod:`gradviz._torch_trace`, used only when a ``torch.Tensor`` is handed over).

>>> import gradviz as torch
>>> from gradviz.trace import record
>>> x = torch.ones(2, requires_grad=True)
>>> o = (3 * x).sum()
>>> with record() as rec:
...     o.backward()
>>> [e.name for e in rec.events]
['SumBackward0', 'MulBackward0', 'AccumulateGrad']
>>> from gradviz.adapters import trace_of
>>> t = trace_of(o, names={"x": x, "o": o}, recording=rec)
>>> [(s.name, s.out.name) for s in t.steps], [v.name for v in t.leaves]
([('MulBackward0', 'a'), ('SumBackward0', 'o')], ['x'])

Recording costs nothing when no ``record()`` is active: the engine checks one list.

The model:

* :class:`Value` -- one tensor: a leaf, a constant fed to an op, or an op's output.
* :class:`Step` -- one op (a ``grad_fn`` node): its PyTorch name, its op-table entry when the
  hand derivation knows it, its inputs (:class:`Input`, one per ``next_functions`` entry) and its
  output :class:`Value`.
* :class:`Run` -- one ``backward()`` call: the seed, ``retain_graph``, the engine's error, and its
  :class:`Event` list in the order the engine ran the nodes.
* :class:`Trace` -- all of it, for one root.
"""

import contextlib
import sys
import weakref
from dataclasses import dataclass, field

import numpy as np

from . import _engine, autograd
from .naming import auto_name, tensor_library

__all__ = ["record", "Recording", "BackwardEvent", "forward_nodes", "Trace", "Step", "Value", "Input",
           "Run", "Event", "replay", "no_derivation_latex", "describe_error", "array_of",
           "steps_reached", "EngineAdapter", "GradvizAdapter"]


# --- recording gradviz's engine -----------------------------------------------------------------

@dataclass
class BackwardEvent:
    """One step of a backward pass: a node ran, or a leaf's ``.grad`` was accumulated.

    ``grad_in`` is dL/d(output) arriving at the node (already summed over every use);
    ``grads_out[i]`` is what the node sends to its input ``i`` (``None`` where no grad is needed).
    For ``AccumulateGrad``, ``grad_before``/``grad_after`` are the leaf's ``.grad`` around the add.
    """

    run: int                     # which backward() call (0, 1, ...) within this recording
    step: int                    # position within that call
    name: str                    # PyTorch name: "MulBackward0", "AccumulateGrad"
    node: object = field(repr=False)
    seq: int = 0                 # the node's creation sequence number (forward order)
    grad_in: np.ndarray = None
    grads_out: tuple = ()
    variable: object = field(default=None, repr=False)
    grad_before: np.ndarray = None
    grad_after: np.ndarray = None


@dataclass
class _EngineRun:
    """One ``backward()`` call as the engine saw it: its roots, seed gradients and ``retain_graph``."""
    roots: list
    seeds: list
    retain_graph: bool
    error: str = None


class Recording:
    """Collects :class:`BackwardEvent` objects while active (a context manager)."""

    def __init__(self):
        self.events, self.runs = [], []

    def __enter__(self):
        _engine._recorders.append(self)
        return self

    def __exit__(self, *exc):
        _engine._recorders.remove(self)

    # called by the engine
    def _begin(self, roots, seeds, retain_graph):
        self.runs.append(_EngineRun(list(roots), [np.array(s, copy=True) for s in seeds], retain_graph))

    def _end(self):
        pass

    def _step(self):
        run = len(self.runs) - 1
        self._steps = 0 if not self.events or self.events[-1].run != run else self._steps + 1
        return run, self._steps

    def _node(self, node, g, grads):
        run, step = self._step()
        self.events.append(BackwardEvent(
            run, step, node.name(), node, node._seq, np.array(g, copy=True),
            tuple(None if x is None else np.array(x, copy=True) for x in grads)))

    def _leaf(self, var, g, before, after):
        run, step = self._step()
        acc = var._acc() if var._acc is not None else None
        self.events.append(BackwardEvent(
            run, step, "AccumulateGrad", acc, var._seq, np.array(g, copy=True), (),
            variable=var, grad_before=before, grad_after=after))


def record():
    """``with record() as rec: loss.backward()`` -- then read ``rec.events``."""
    return Recording()


def forward_nodes(*roots):
    """The grad_fn nodes behind ``roots`` in the order the forward pass created them."""
    return sorted((n for n in _engine.walk(t.grad_fn for t in roots) if n.op is not None), key=lambda n: n._seq)


# --- the engine-neutral model -------------------------------------------------------------------

@dataclass(eq=False)
class Value:
    """One tensor of the graph: a leaf, a constant an op read, or an op's output."""

    seq: int = None              # the tensor's own creation number (None: gone, or not known)
    shape: tuple = ()
    dtype: object = None         # a numpy dtype
    data: np.ndarray = None      # its numbers (None: not known)
    name: str = None
    auto: bool = False           # the name was made up (the picture shows none; captions use it)
    requires_grad: bool = False
    is_leaf: bool = True
    retains_grad: bool = False
    literal: bool = False        # a Python number wrapped for one op: the 1 in x + 1
    version: int = 0             # k > 0: the k-th value of one tensor changed in place (c += 1): c₁, c₂...
    replayed: bool = False       # its numbers were worked out again by the op table (replay)
    grad: np.ndarray = None      # its .grad when traced
    order: tuple = ()            # where it sorts among the steps (forward order)
    ref: object = field(default=None, repr=False)   # the engine's tensor (leaves) or a weakref (outputs)

    def tensor(self):
        """The engine's tensor, if it is still alive."""
        return self.ref() if isinstance(self.ref, weakref.ref) else self.ref


@dataclass(eq=False)
class Input:
    """Input ``i`` of a step: what ``next_functions[i]`` leads to, and the array the op read."""

    kind: str                    # "op" (another step), "leaf" (AccumulateGrad), "const" (no gradient)
    src: object                  # the Step, the leaf Value, or the constant's Value (None: unknown)
    shape: tuple = ()
    dtype: object = None
    data: np.ndarray = None
    output_nr: int = 0           # which output of a node with several (torch's split: one node, n outputs)


@dataclass(eq=False)
class Step:
    """One op of the forward pass (one ``grad_fn`` node) and its output."""

    seq: int                     # the engine's sequence number: forward order
    name: str                    # PyTorch's node name: "MulBackward0"
    op: object                   # the op-table entry whose rules the hand derivation may use, or None
    key: str = None              # op-table key ("mul"), for drawing hints; None for unknown nodes
    symbol: str = ""
    latex: str = ""              # the forward expression (@0, @1, @y, @param)
    dlatex: tuple = ()           # the local derivative per input
    params: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    out: Value = None
    cut_only: bool = False       # reached only across a detach()/no_grad() cut (drawn, not animated)
    fn: object = field(default=None, repr=False)    # a weakref to the engine's node
    user: bool = False           # a custom autograd.Function: its code is the user's, never re-run
    outputs: int = 1             # how many outputs the node has (torch's split: one node, several)
    pieces: dict = field(default_factory=dict)     # output_nr -> Value of a further output (q of p, q = split)

    @property
    def derivable(self):
        """Whether the op table's rules can write this step's derivative by hand."""
        return self.op is not None

    def piece(self, k, ref):
        """The Value of output ``k`` > 0 of a node with several: its own name (the caller's ``q``, not ``p``)."""
        v = self.pieces.get(k)
        if v is None:
            v = self.pieces[k] = Value(requires_grad=True, is_leaf=False, order=self.out.order, ref=ref)
        return v



@dataclass
class Event:
    """One step of a backward pass, engine-neutral: a step ran, or a leaf's ``.grad`` was accumulated."""

    run: int
    step: int
    name: str                    # "MulBackward0" or "AccumulateGrad"
    seq: int                     # the step's seq, or the leaf's
    node: Step = None            # the step that ran (None for AccumulateGrad)
    variable: Value = None       # the leaf (AccumulateGrad)
    grad_in: np.ndarray = None
    grads_out: tuple = ()
    grad_before: np.ndarray = None
    grad_after: np.ndarray = None


@dataclass
class Run:
    """One ``backward()`` call: seed, ``retain_graph``, the error it ended with, its events."""

    seed: np.ndarray
    retain_graph: bool
    events: list = field(default_factory=list)
    error: str = None
    notes: dict = field(default_factory=dict)    # {"hooks" | "rerun": message}: what the widget's pass ran


@dataclass(eq=False)
class Trace:
    """What happened behind one or more roots (see the module docstring)."""

    roots: list                  # Values (an op's output or a leaf)
    steps: list                  # Step, forward order (including cut-only history)
    leaves: list                 # Values that require grad, creation order
    values: list                 # every Value drawn (leaves, constants, outputs)
    cuts: list = field(default_factory=list)        # (data Value, origin Value, "detach()" | "no_grad()")
    runs: list = field(default_factory=list)
    engine: str = "gradviz"
    adapter: object = field(default=None, repr=False)
    folds: list = field(default_factory=list)      # layers collapsed into one step (gradviz.trace_modules)

    @property
    def root(self):
        return self.roots[0]

    @property
    def root_step(self):
        """The step that made the first root (None for a leaf)."""
        return self._made_by.get(id(self.roots[0])) if self.roots else None

    def __post_init__(self):
        self._made_by = {id(s.out): s for s in self.steps}

    def step_of(self, value):
        return self._made_by.get(id(value))

    def step_for(self, fn):
        """The step of an engine node (a ``grad_fn``), or None."""
        return next((s for s in self.steps if s.fn is not None and s.fn() is fn), None)

    def value_for(self, t):
        """The value of an engine tensor (a leaf, a constant, a live output), or None."""
        return next((v for v in self.values if v.tensor() is t), None)

    def recorded(self, step):
        """The first run's event for ``step`` (what the engine really computed), or None."""
        key = (len(self.runs), sum(len(r.events) for r in self.runs))
        if getattr(self, "_recorded_key", None) != key:     # an index, rebuilt when runs change
            self._recorded, self._recorded_key = {}, key
            for run in self.runs:
                for e in run.events:
                    if e.node is not None:
                        self._recorded.setdefault(id(e.node), e)
        return self._recorded.get(id(step))


def no_derivation_latex(name, n):
    r"""The formula of a node the op table does not know: ``\operatorname{Name}(@0, @1)``."""
    label = name.replace("_", r"\_")
    args = ", ".join(f"@{i}" for i in range(n))
    return rf"\operatorname{{{label}}}({args})", tuple(rf"\partial\,\operatorname{{{label}}}" for _ in range(max(n, 1)))


def replay(step):
    """The output of ``step`` computed again from its inputs by the op table's forward rule.

    The one place values are replayed: intermediate tensors are often gone by the time a graph is
    drawn (``y = 5 * (x + 1) ** 2`` keeps no ``x + 1``).  Never for a user's own Function (its
    code runs only when the user runs it); None when an input is unknown or the rule fails.
    """
    if step.op is None or step.user or any(i.data is None for i in step.inputs):
        return None
    arrays = [np.asarray(i.data).astype(i.dtype, copy=False) if i.dtype is not None else np.asarray(i.data)
              for i in step.inputs]
    try:
        with np.errstate(all="ignore"):      # the forward pass already warned, if at all
            return np.asarray(step.op.forward(*arrays, **step.params))
    except Exception:  # a value we cannot rebuild is shown as unknown, not an error
        return None


def in_place_versions(steps):
    """Number the values of one tensor changed in place (``c += c + 1``: c₁, c₂, c₃ in the code's
    order), and give each version but the last its own numbers: the tensor holds only the last.

    The earlier versions are worked out again from their inputs (:func:`replay`), and so is every
    value that was worked out from them.
    """
    groups = {}
    for s in steps:
        t = s.out.tensor()
        if t is not None and not s.cut_only:
            groups.setdefault(id(t), []).append(s)
    stale = set()
    for group in groups.values():
        if len(group) > 1:
            for k, s in enumerate(group, 1):
                s.out.version = k
            stale.update(id(s) for s in group[:-1])
    if not stale:
        return
    redone = set()
    for s in steps:                      # forward order: inputs first
        changed = False
        for inp in s.inputs:
            if inp.kind == "op" and not inp.output_nr and id(inp.src) in redone:
                inp.data = inp.src.out.data
                changed = True
        if id(s) in stale or (changed and s.out.replayed):
            v = replay(s)
            if v is not None:
                s.out.data, s.out.replayed = v, True
                redone.add(id(s))


_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def name_values(trace, found):
    """Names for the trace's values: ``found`` (id(tensor) -> name) first, then made-up letters.

    The one place tensors are named.  Leaves and op outputs without a name get a short letter that
    is not taken (marked ``auto``: the picture leaves them unnamed, captions use them); the root's
    output is ``out`` when free.
    """
    for v in trace.values:
        t = v.tensor()
        if t is not None and not v.literal and v.name is None:
            v.name = found.get(id(t))
    versioned = set()
    root_out = trace.roots[0] if trace.roots else None
    for s in trace.steps:               # one symbol, one value: c₁, c₂, c₃ for c changed in place
        if s.out.version and s.out.name is not None:
            versioned.add(s.out.name)   # (the root keeps its name: g.backward() is what the code says)
            if s.out is not root_out:
                s.out.name = s.out.name + str(s.out.version).translate(_SUBSCRIPT)
    taken = {v.name for v in trace.values if v.name} | getattr(found, "bound", set()) | versioned
    letters = auto_name(taken)
    for v in trace.leaves:
        if v.name is None:
            v.name, v.auto = next(letters), True
    root_out = trace.roots[0] if trace.roots else None
    for s in trace.steps:
        if s.cut_only or s.out.name is not None:
            continue
        if s.out is root_out and "out" not in taken:
            s.out.name = "out"
        else:
            s.out.name = next(letters)
        s.out.auto = True
    for s in trace.steps:               # a split's further outputs: named like any output
        for k in sorted(s.pieces):
            v, t = s.pieces[k], s.pieces[k].tensor()
            v.name = found.get(id(t)) if t is not None else None
            if v.name is None:
                v.name, v.auto = next(letters), True


# --- gradviz's adapter --------------------------------------------------------------------------

def _is_user_function(fn):
    return type(fn).__module__ == "gradviz.autograd.function"


def _cut_origins(t):
    """``[(tensor, "detach()" | "no_grad()")]``: what ``t`` was cut from, if those are still alive."""
    how, refs = getattr(t, "_cut", (None, ()))
    return [(o, how) for o in (r() for r in refs) if o is not None]


class EngineAdapter:
    """What the widget asks of an engine's tensors, whichever engine: their ``.grad``, kept and put back.

    An adapter says how to read a leaf's ``.grad`` (:meth:`_grad`), copy its numbers
    (:meth:`_numbers`) and its version counter (:meth:`_version`), and how to :meth:`restore` them.
    """

    def grads(self):
        """Each leaf's ``.grad`` tensor and a copy of its numbers, to put back later: ``{seq: (...)}``."""
        out = {}
        for v in self.trace.leaves:
            t = v.tensor()
            g = self._grad(t)
            out[v.seq] = (t, g, None if g is None else self._numbers(g), None if g is None else self._version(g))
        return out

    def grad_arrays(self):
        return {seq: data for seq, (_, _, data, _) in self.grads().items()}

    def zero_grads(self):
        """``.grad.zero_()`` on every leaf that has a ``.grad`` (the widget's zero_() button)."""
        for v in self.trace.leaves:
            if v.tensor().grad is not None:
                v.tensor().grad.zero_()

    def refresh(self):
        """Read each leaf's ``.grad`` again (after a backward pass) into the trace."""
        for v in self.trace.leaves:
            g = self._grad(v.tensor())
            v.grad = None if g is None else self._numbers(g)


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
        self.cuts = []
        seen, stack, fns = set(), [], []

        def visit(t):
            # depth first, with a stack of our own: a leaf cut from a leaf cut from ... can be
            # thousands deep.  A task is (tensor, the cut that led to it or None).
            todo = [(t, None)]
            while todo:
                t, cut = todo.pop()
                if cut is not None:
                    self.cuts.append(cut)
                if t._grad_fn is not None:
                    stack.append(t._grad_fn)
                elif cuts and id(t) not in seen:
                    seen.add(id(t))
                    todo.extend((origin, (t, origin, how)) for origin, how in reversed(_cut_origins(t)))

        # first the gradient graph alone (what backward() can reach), then the cut history
        grad_fns = {id(fn) for fn in _engine.walk(r._grad_fn for r in roots)
                    if not isinstance(fn, autograd.AccumulateGrad)}
        for r in roots:
            visit(r)
        while stack:
            fn = stack.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            if not isinstance(fn, autograd.AccumulateGrad):
                fns.append(fn)
            stack.extend(f for f, _ in fn.next_functions if f is not None)
            for t in (getattr(fn, "_nograd_inputs", None) or {}).values():
                if t is not None:
                    visit(t)
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
            shape, dtype = fn._metas[i]
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
                    latex=op.latex, dlatex=op.dlatex, params=dict(fn._params or {}), inputs=inputs, out=out,
                    cut_only=cut_only, fn=weakref.ref(fn), user=user, outputs=len(outs) if outs else 1)
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
            runs.append(Run(r.seeds[0] if r is not None and r.seeds else np.ones(()),
                            r.retain_graph if r is not None else False))
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

        ``observe=True`` (animate()'s own pass): inside :func:`gradviz._engine.observing`, so no
        hook of the user's runs, no ``.grad`` is written and a custom Function's ``backward`` is
        not run again for a gradient the user's own pass already took through it.
        """
        error = None
        with record() as rec, (_engine.observing() if observe else contextlib.nullcontext()):
            try:
                self.roots[0].backward(gradient, retain_graph=retain_graph)
            except Exception as exc:  # the engine's own message is the lesson: keep it, show it
                error = describe_error(exc)
        return self.add_recording(rec, error), error

    def stale(self):
        """Why ``backward()`` on the root would fail now, or None: ``"freed"`` (an earlier
        ``backward()`` without ``retain_graph`` freed what the nodes saved) or ``"modified"``
        (a value a node saved was changed in place since: a training step on a leaf)."""
        for s in self.trace.steps:
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
        mapped onto them (and kept alive with the widget).  Returns None, or why it cannot: a
        custom Function's forward is the user's code, and is never run again here.  On success
        every value of the trace is the new pass's (the leaves' numbers as they are now).
        """
        from .tensor import Tensor, apply
        made, fns = {}, []
        for s in self.trace.steps:
            if s.cut_only:
                continue
            if s.op is None:
                return "user"
            args = []
            for i, inp in enumerate(s.inputs):
                if inp.kind == "leaf":
                    args.append(inp.src.tensor())
                elif inp.kind == "op":
                    args.append(made[id(inp.src)])
                else:                    # a constant: the tensor the node kept, or its numbers
                    fn = s.fn() if s.fn is not None else None
                    t = fn._nograd_inputs.get(i) if fn is not None else None
                    args.append(t if t is not None else Tensor._wrap(np.array(inp.data, copy=True)))
            made[id(s)] = out = apply(s.op, args, **s.params)
            if out._grad_fn is None:
                return "no graph"
            fns.append((s, out, args))
        root = self.trace.root_step
        if root is None or id(root) not in made:
            return "no graph"
        for s, out, args in fns:         # the trace now holds the new pass: nodes and every value
            self.by_fn[id(out._grad_fn)] = s
            s.fn = weakref.ref(out._grad_fn)
            s.out.data, s.out.ref = out._data, weakref.ref(out)
            for inp, a in zip(s.inputs, args):
                if inp.kind != "const":
                    inp.data = a._data
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


def describe_error(exc):
    """An error's message for the widget, naming the user's own code when it raised there.

    The engine's messages (a freed graph, a shape mismatch) are the lesson and stay as they are;
    an error raised in a custom Function, a hook or any other code of the user's is said as
    "your Cube.backward raised ValueError: ..." so nobody takes it for gradviz's.
    """
    tb, last = exc.__traceback__, None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is not None and not _library_file(last.tb_frame.f_code.co_filename):
        code = last.tb_frame.f_code
        where = getattr(code, "co_qualname", code.co_name).rsplit("<locals>.", 1)[-1]
        return f"your {where} raised {type(exc).__name__}: {exc}"
    return str(exc)


def _library_file(path):
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.abspath(path)
    if path.startswith(here + os.sep):
        return True
    torch = sys.modules.get("torch")
    base = os.path.dirname(getattr(torch, "__file__", "") or "") if torch is not None else ""
    return bool(base) and path.startswith(base + os.sep)


def steps_reached(trace):
    """The steps a backward pass can run (not cut-only history), forward order."""
    return [s for s in trace.steps if not s.cut_only]


def array_of(x):
    """A gradviz or torch tensor (or anything array-like) as a numpy array."""
    data = getattr(x, "_data", None)
    if data is not None and tensor_library(x) == "gradviz":
        return data
    if tensor_library(x) == "torch":
        return x.detach().cpu().numpy()
    return x
