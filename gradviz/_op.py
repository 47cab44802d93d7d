"""The form of an op-table entry (:class:`Op`), the table itself (``OPS``) and :func:`op`, which
declares an entry.  The entries are in :mod:`gradviz.ops` (and the losses' and layers' in
:mod:`gradviz._nn_ops`); read the contract there.
"""

import warnings
from typing import Callable

import numpy as np

from ._rules import _own_doc, _scalar_as_vector

__all__ = ["Op", "Meta", "OPS", "op", "call"]

# PyTorch makes nan and inf silently. Ops that make them from ordinary inputs (log(-1), 1/0) run
# under np.errstate (_quiet below), and so does every backward pass; overflow can come from any
# op (a training run that diverges), so numpy's RuntimeWarnings raised inside gradviz's own
# modules are also filtered out here, at no cost per op. (A `warnings.catch_warnings()` block
# around `import gradviz` drops that filter again when it ends; pytest's collection is one.)
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradviz\.")


class Op:
    """One primitive: how to compute it, how to differentiate it, how to show it, how to reach it.

    Its fields are listed below, each with its default; ``Op(key, name, symbol, forward, vjps, uses,
    latex, dlatex, **others)`` makes one, and an entry never changes once made.  (Written out
    rather than a frozen dataclass: generating that class and its 33-argument ``__init__`` cost
    about 2 ms of ``import gradviz``, issue 16.)
    """

    key: str                     # short name used in the table and the tests
    name: str                    # PyTorch grad_fn class name, e.g. "MulBackward0"
    symbol: str                  # what the graph node shows, e.g. "×"
    forward: Callable            # (*arrays, **params) -> array
    vjps: tuple                  # one rule per input (the last one repeats for variadic ops)
    uses: tuple                  # per input: which saved values its rule reads
    latex: str                   # the forward expression
    dlatex: tuple                # the local derivative ∂y/∂x_i, one per input
    doc: str = ""
    variadic: bool = False       # cat/stack: any number of inputs, rule gets i=
    is_view: bool = False        # the output shares storage (and the version counter) with input 0
    # -- how a student reaches it (Tensor methods, in-place twins and gradviz.* functions are made from these)
    method: str = None           # the Tensor method that records this node: x.atan()
    aliases: tuple = ()          # other names of that method: x.arctan()
    inplace: bool = False        # an in-place twin exists: x.atan_() (the method, written back into x)
    writes_out: bool = False     # forward(*arrays, out=a) writes its result into a: an in-place twin that
    #                              records nothing computes straight into the tensor's storage (p -= lr * g)
    function: object = False     # True: gradviz.atan(x) as well; a name: the function that records it
    integers: str = "float"      # what integer inputs get: "float" (computed in the default float dtype),
    #                              "same" (their own dtype: abs, relu), "copy" (already whole: floor)
    # -- how it is tested (tests/strategies.py draws inputs of this kind, inside the domain)
    inputs: str = "unary"
    domain: tuple = (-3.0, 3.0)  # where tests draw inputs from (kept away from kinks and poles)
    params: dict = None          # parameter values used by the table-driven tests ({} when not given)
    # -- how it is drawn and written
    operand: tuple = None        # (param, position, symbol): a number drawn as an operand (x ** 2: n, 1, "^")
    coefficient_first: bool = False  # commutative, its constant operand drawn and written first (5 * u)
    precedence: int = 4          # how tightly its LaTeX binds (1: + −, 2: ×, 3: powers, 4: calls, 5: delimited)
    elementwise: bool = True     # False for matrix products: no per-element local derivative to show
    # -- how the hand derivation writes its gradient (gradviz.chain_rule reads these)
    category: str = None         # "elementwise" (g · f'(x), summed where broadcast), "reduction" (g copied
    #                              back, times its derivative), "reshape", "transpose", "matmul", "join"
    #                              (each input its own part of g: stack, cat); None: the op's own rule, named and applied
    matmul_sides: tuple = None   # a matmul's inputs: "right" (g Bᵀ), "left" (Aᵀ g), "outer" (g ⊗ b), None (Σ g)
    latex_fn: str = None         # written as a function applied, tanh²(u): its LaTeX name, r"\tanh"
    latex_of: Callable = None    # ``latex`` where the parameters change it, ``latex_of(**params)`` (a
    #                              layer norm without weight is not written ⊙ 1): read through latex_for
    numpy: Callable = None       # the numpy function that computes it in float64: a formula's value, and
    #                              what a rule's np.exp(...) records under create_graph=True
    contiguous: bool = False     # its result is row-major whatever the inputs' layout (PyTorch allocates it so)
    column_major: bool = False   # its result is column-major, as LAPACK writes it and PyTorch returns it (inv, solve)
    # -- what the node shows as grad_fn._saved_<name> (PyTorch's names): an input's position, "o" for
    #    the result, "@param" for a parameter ("@alpha=1": 1 when not given; "@s.start": its attribute;
    #    a dim as written, _types.Wrapped), "#i" for input i's sizes,
    #    "%i" for its element count. A tensor the rule did not need is not saved (None), as in PyTorch,
    #    and after backward() the saved tensors are freed (the autograd-mechanics notes read these).
    saved: dict = None           # ({} when not given)
    multi_output: bool = False   # forward returns a list of arrays (split); the rule gets one gradient per output
    in_rules: bool = False       # reached only from other entries' rules (``call("tanh_backward", g, y)``):
    #                              a node of the gradient's own graph under create_graph=True

    def __init__(self, key, name, symbol, forward, vjps, uses, latex, dlatex, **others):
        if not _FIELD_NAMES.issuperset(others):
            for field in others:
                if field not in _FIELD_NAMES and field not in type(self).__annotations__:   # (a subclass's own fields)
                    raise TypeError(f"Op.__init__() got an unexpected keyword argument '{field}'")
        fields = vars(self)     # (every field in the entry's own dict, defaults too: CPython 3.11 reads an
        fields.update(_DEFAULTS.get(type(self)) or _defaults(type(self)))   # instance's own attribute fast,
        fields.update(key=key, name=name, symbol=symbol, forward=forward, vjps=vjps, uses=uses, latex=latex,
                      dlatex=dlatex, params={}, saved={})   # one left to its class slowly: op.is_view...)
        fields.update(others)

    def __setattr__(self, field, value):
        raise AttributeError(f"cannot assign to field '{field}': an op-table entry does not change")

    __delattr__ = __setattr__

    def __repr__(self):
        return f"Op({self.key!r}, {self.name!r})"

    def vjp(self, i):
        return self.vjps[min(i, len(self.vjps) - 1)]

    def latex_for(self, params):
        """The forward expression for these parameters: ``latex``, unless the entry says it depends on them."""
        return self.latex if self.latex_of is None else self.latex_of(**params)

    def renamed(self, name, **changes):
        """The same maths under another PyTorch name (``reshape`` vs ``view``...)."""
        fields = dict(vars(self), name=name, **changes)
        return type(self)(*[fields.pop(f) for f in _FIELDS[:8]], **fields)


_FIELDS = tuple(Op.__annotations__)    # key, name, ..., in_rules: what Op() takes, in order
_FIELD_NAMES = frozenset(_FIELDS)      # (checked for each of the ~180 entries at import gradviz)
_DEFAULTS = {}     # class -> {field: its default}: Op's, or a subclass's (its own fields and defaults)


def _defaults(cls):
    fields = _FIELDS + tuple(f for f in cls.__annotations__ if f not in _FIELD_NAMES)
    _DEFAULTS[cls] = {f: getattr(cls, f) for f in fields if hasattr(cls, f)}
    return _DEFAULTS[cls]


class Meta:
    """Stands in for a value that was not saved: only its shape and dtype are known."""

    __slots__ = ("shape", "dtype", "strides")

    def __init__(self, shape, dtype, strides=None):
        # (the layout too where the engine knows it: mm's rules multiply as PyTorch's do for that layout)
        self.shape, self.dtype, self.strides = shape, dtype, strides

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))


OPS = {}


def op(key, *, grad_fn, forward, vjps, uses, latex, dlatex, symbol=None, doc=None, along_dim=False, **how):
    """Declare one primitive: ``op("atan", grad_fn="AtanBackward0", forward=np.arctan, vjps=[...], ...)``.

    The keywords after ``dlatex`` are the fields of :class:`Op` that say how it is reached,
    tested and drawn; the symbol defaults to the key, the doc to the forward's docstring.
    ``along_dim=True``: the op works along a dim, which a 0-d input has too (as one element).
    """
    if along_dim:
        doc = _own_doc(forward) if doc is None else doc
        forward, vjps = _scalar_as_vector(forward), [_scalar_as_vector(v) for v in vjps]
    OPS[key] = Op(key, grad_fn, key if symbol is None else symbol, forward, tuple(vjps), tuple(uses), latex,
                  tuple(dlatex), doc=_own_doc(forward) if doc is None else doc, **how)
    return OPS[key]


def call(key, *args, **params):
    """Op ``key`` used inside another op's gradient rule (``call("mm", g, b.T)``): its forward on arrays.

    Under ``create_graph=True`` the rule receives recorded values (:mod:`gradviz._recorded`) and the
    op is recorded instead, with its own name and rules -- so a rule that PyTorch writes as a call of
    another op (``tanh_backward``, ``mm``) is differentiated twice as PyTorch does it.
    """
    for a in args:
        if type(a) is not np.ndarray and hasattr(a, "record_op"):
            return a.record_op(key, args, params)
    forward = OPS[key].forward
    return forward(*args, **params) if params else forward(*args)   # (no keywords: the quicker call)
