"""What happened, as plain data: the ops in forward order, their values and names, the backward events.

One small model, read by the graph, the captions, the derivation and the frames, so that gradviz's
engine and PyTorch's are drawn by the same code.  Two adapters fill it: gradviz's
(:mod:`gradviz.trace.gradviz_engine`) and PyTorch's (:mod:`gradviz.trace.torch_engine`, used only
when a ``torch.Tensor`` is handed over).

* :class:`Value` -- one tensor: a leaf, a constant fed to an op, or an op's output.
* :class:`Step` -- one op (a ``grad_fn`` node): its PyTorch name, its op-table entry when the
  hand derivation knows it, its inputs (:class:`Input`, one per ``next_functions`` entry) and its
  output :class:`Value`.
* :class:`Run` -- one ``backward()`` call: the seed, ``retain_graph``, the engine's error, and its
  :class:`Event` list in the order the engine ran the nodes.
* :class:`Trace` -- all of it, for one root.
* :class:`EngineAdapter` -- what the widget asks of either engine's tensors (their ``.grad``).
"""

import sys
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..naming import auto_name, tensor_library

__all__ = ["Value", "Input", "Step", "Event", "Run", "Trace", "replay", "in_place_versions", "name_values",
           "no_derivation_latex", "EngineAdapter", "describe_error", "steps_reached", "array_of"]


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
    """One step of a backward pass: a step ran, or a leaf's ``.grad`` was accumulated.

    ``grad_in`` is dL/d(output) arriving at the node (already summed over every use);
    ``grads_out[i]`` is what the node sends to its input ``i`` (``None`` where no grad is needed);
    for ``AccumulateGrad``, ``grad_before``/``grad_after`` are the leaf's ``.grad`` around the add.
    In a trace, ``node`` is the :class:`Step` that ran (None for AccumulateGrad) and ``variable`` the
    leaf's :class:`Value`; as :func:`gradviz.trace.record` hands them over, the engine's own node and tensor.
    """

    run: int                     # which backward() call (0, 1, ...)
    step: int                    # position within that call
    name: str                    # "MulBackward0" or "AccumulateGrad"
    seq: int                     # the step's seq, or the leaf's
    node: object = field(default=None, repr=False)
    variable: object = field(default=None, repr=False)
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
    seeds: list = field(default_factory=list)    # every root's seed, when backward() had several (seed: the first)


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
    folds: list = field(default_factory=list)      # layers collapsed into one step (gradviz.trace.folding)

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

    def recorded(self, step, grad_in=None):
        """The latest run's event for ``step`` (what the engine really computed), or None: after the
        widget ran the forward pass again, the numbers of the pass at the values as they are now.
        With ``grad_in``: the latest whose gradient arriving at the step was that one."""
        key = (len(self.runs), sum(len(r.events) for r in self.runs))
        if getattr(self, "_recorded_key", None) != key:     # an index, rebuilt when runs change
            self._recorded, self._recorded_key = {}, key
            for run in reversed(self.runs):
                for e in run.events:
                    if e.node is not None:
                        self._recorded.setdefault(id(e.node), []).append(e)
        events = self._recorded.get(id(step), [])
        if grad_in is not None:
            g = np.asarray(grad_in, np.float64)
            events = [e for e in events if np.shape(e.grad_in) == g.shape and
                      np.allclose(g, np.asarray(e.grad_in, np.float64), rtol=1e-5, atol=1e-8)]
        return events[0] if events else None


def no_derivation_latex(name, n, numbers=()):
    r"""The formula of a node the op table does not know: ``\operatorname{Name}(@0, @1)``, its numbers
    after its inputs (``numbers``: ``(name, value)`` pairs, ``\operatorname{lerp}(@0, @1, \mathrm{weight} = 0.3)``)."""
    label = name.replace("_", r"\_")
    args = ", ".join([f"@{i}" for i in range(n)] + [rf"\mathrm{{{k.replace('_', chr(92) + '_')}}} = {v:g}"
                                                     for k, v in numbers])
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


# --- what the widget asks of an engine -------------------------------------------------------------

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

    def leaf_numbers(self):
        """A copy of each leaf's numbers as they are now (``{seq: array}``, None for a leaf gone): what
        the widget compares to see a change made without a version bump (``p.data -= ...``)."""
        out = {}
        for v in self.trace.leaves:
            t = v.tensor()
            out[v.seq] = None if t is None else self._numbers(t)
        return out

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


# --- reading values and errors ---------------------------------------------------------------------

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
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # gradviz/
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
