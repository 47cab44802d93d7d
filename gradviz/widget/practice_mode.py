"""Practice mode: before a chosen step is revealed, the widget asks the student for it (predict, then see).

The questions come from the same trace and recorded events as the frames: a node's forward
value, the gradient a tensor receives, the local factor of a step, what a step sends down an
edge, a leaf's ``.grad`` after the pass and after a second ``backward()`` without ``zero_()``.
Each question is plain data in the ``practice`` trait, with the frame it guards (``at``: it is
asked while frame ``at - 1`` is shown, and frame ``at`` shows the answer), its expected numbers,
the slips worth naming (:mod:`gradviz.quiz.mistakes`), its hints and, for a multiple choice, its
options.  ``static/practice.js`` asks and checks with no kernel (a saved page works the same);
each try is a record in the ``answers`` trait and ``score`` sums them up, synced to Python.

>>> import gradviz as torch, gradviz
>>> x = torch.ones(2, requires_grad=True)
>>> o = (1/2) * torch.sum(5 * (x + 1) ** 2)
>>> w = gradviz.practice(o)                            # doctest: +SKIP
>>> w.submit("[10, 10]")["ok"], w.score["correct"]     # doctest: +SKIP
(True, 1)
"""

import math
import re
import time
import zlib
import random

import numpy as np

from .. import _check
from ..formula import plain
from ..quiz import check_answer, distractors, select
from ..value_text import summary
from .i18n import render
from .derivation import forward_latex, local_derivative

__all__ = ["KINDS", "options", "questions", "build", "extend", "scrub_svg", "score", "record", "current", "submit"]

KINDS = ("forward", "received", "local", "sent", "grad", "second")
DEFAULT_KINDS = {"leaves": ("grad",), "all": ("forward", "local", "received", "grad")}
MAX_NUMBERS = 24        # a question asks for at most this many numbers (nobody types a 4×8 matrix)
_OPTIONS = ("ask", "kinds", "tries", "hints", "hide_derivation", "choices", "lecture", "when")
WHEN = ("step", "pass")
_SHARES = 8             # at most this many examples' own shares of a weight's gradient are named when typed
_GENERIC = ("sign", "double", "arith")      # slips any number allows (offered, never named in feedback)


def options(func, practice):
    """``practice=`` as a dict of checked options (True: the defaults; a dict: some of them)."""
    if practice is True:
        practice = {}
    if not isinstance(practice, dict):
        raise TypeError(f"{func}(): practice= takes True or a dict of practice options ({', '.join(_OPTIONS)}), "
                        f"not {type(practice).__name__}")
    _check.keywords(func, practice, _OPTIONS)
    ask = practice.get("ask", "leaves")
    kinds = practice.get("kinds")
    if kinds is None:
        kinds = KINDS if callable(ask) else DEFAULT_KINDS[ask] if isinstance(ask, str) and ask in DEFAULT_KINDS \
            else ("grad", "received")
    if isinstance(kinds, str):
        kinds = (kinds,)
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"{func}(): kinds= names questions {', '.join(map(repr, KINDS))}, not {k!r}")
    tries = _check.whole_number(func, "tries", practice.get("tries", 2), 1, 20)
    choices = practice.get("choices", False)
    if choices is True:
        choices = 4
    if choices is not False and choices is not None:
        choices = _check.whole_number(func, "choices", choices, 2, 6)
    _check.one_of(func, "when", practice.get("when", "step"), WHEN)
    return {"ask": ask, "kinds": tuple(kinds), "tries": tries, "choices": choices or 0, "when": practice.get("when", "step"),
            "hints": _check.boolean(func, "hints", practice.get("hints", True)),
            "hide_derivation": _check.boolean(func, "hide_derivation", practice.get("hide_derivation", True)),
            "lecture": _check.boolean(func, "lecture", practice.get("lecture", False))}


# --- numbers as JSON and as text -----------------------------------------------------------------

def _json(a):
    a = np.asarray(a, dtype=np.float64)
    def one(v):
        return v if math.isfinite(v) else str(v)        # ('nan', 'inf', '-inf': practice.js reads them back)
    return one(float(a)) if a.ndim == 0 else [_json(x) for x in a] if a.ndim > 1 else [one(float(v)) for v in a]


def answer_text(a):
    """Numbers as a student would type them (4 significant digits, nested lists): ``[10, 10]``, ``0.25``."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        v = float(a)
        if not math.isfinite(v):
            return str(v)
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}"
    return "[" + ", ".join(answer_text(x) for x in a) + "]"


def _dtype(a):
    return str(getattr(a, "dtype", "float32")).replace("torch.", "")


# --- the questions ------------------------------------------------------------------------------

class Question:
    """One question while it is built: what :func:`gradviz.quiz.select`'s ``ask`` callable sees.

    ``name`` (the tensor asked about), ``kind`` (one of :data:`KINDS`), ``leaf``, ``node`` (the op's
    grad_fn name, or the leaf's name) and ``expected`` (the engine's numbers).
    """

    def __init__(self, kind, name, leaf, node, expected, text, at, hints, mistakes, dtype):
        self.kind, self.name, self.leaf, self.node = kind, name, leaf, node
        self.expected, self.text, self.at, self.hints, self.mistakes, self.dtype = (
            expected, text, at, hints, mistakes, dtype)

    def __repr__(self):
        return f"<question {self.kind} {self.name}>"


def _first(frames, keys, start=0, phase=None):
    """The first frame from ``start`` that sets one of ``keys`` to something shown."""
    for k in range(start, len(frames)):
        f = frames[k]
        if phase is not None and f["phase"] != phase:
            continue
        s = f.get("set") or {}
        if any(s.get(key) not in (None, "") for key in keys):
            return k
    return None


def _scalars(lesson, node):
    """The plain numbers an op multiplies by (its scalar constants and parameters), 0 and ±1 aside."""
    out = []
    for kind, thing in lesson.kinds(node):
        data = getattr(thing, "data", None) if kind == "const" else None
        if data is not None and np.size(data) == 1:
            out.append(float(np.asarray(data).reshape(-1)[0]))
    if node.key == "mean" and node.inputs:                  # the 1/n of a mean
        n = int(np.prod(node.inputs[0].shape)) // max(1, int(np.prod(np.shape(lesson.output(node)) or (1,))))
        if n > 1:
            out.append(1.0 / n)
    for v in (node.params or {}).values():
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            out.append(float(v))
    return [v for v in out if math.isfinite(v) and v not in (0.0, 1.0, -1.0)]


def _product(lesson, node, i):
    """``(side, other)`` when input ``i`` of ``node`` is a factor of a 2-D matrix product (``@``, ``mm``,
    ``addmm``): its gradient is ``otherᵀ g`` (side ``"left"``: the weight after the batch, ``W.grad = Xᵀδ``)
    or ``g otherᵀ`` (``"right"``); else None."""
    sides = getattr(node.op, "matmul_sides", None) if node.op is not None else None
    if not sides or i >= len(sides) or sides[i] not in ("left", "right"):
        return None
    j = 3 - i if node.key == "addmm" else 1 - i
    ins = lesson.inputs(node)
    other = ins[j] if 0 <= j < len(ins) else None
    if other is None or np.ndim(other) != 2:
        return None
    return sides[i], np.asarray(other, dtype=np.float64)


def _product_slips(side, other, g, expected):
    """``(slips, more)``: the slips of a matrix product's gradient, the answer's shape first where one exists.

    ``side`` ``"left"`` (``expected = Aᵀ G``, A the other factor, its rows the batch): the transpose
    forgotten (``A G``, when A is square) or put on the wrong side (``Gᵀ A``, the answer transposed),
    the sum over the batch forgotten (the biggest example's share ``A[k]ᵀ G[k]``, the n shares stacked;
    ``more``: the other examples' shares, for the feedback on a typed answer, never offered first).
    ``"right"`` (``expected = G Bᵀ``): ``G B`` (B square) and ``B Gᵀ`` (transposed).
    """
    g = np.asarray(g, dtype=np.float64)
    want = np.shape(expected)
    if g.ndim != 2:
        return [], []
    a, out = other, []
    wrong = []
    if side == "left" and a.shape[0] == g.shape[0]:
        if a.shape[1] == g.shape[0]:
            wrong.append(a @ g)
        wrong.append(g.T @ a)
    elif side == "right" and a.shape[1] == g.shape[1]:
        if a.shape[0] == g.shape[1]:
            wrong.append(g @ a)
        wrong.append(a @ g.T)
    wrong.sort(key=lambda v: v.shape != want)               # (a slip of the answer's shape first: no giveaway)
    out += [("transpose", v) for v in wrong]
    if side == "left" and a.shape[0] == g.shape[0] > 1:
        shares = a[:, :, None] * g[:, None, :]              # what each example sends: A[k]ᵀ G[k]
        order = sorted(range(len(shares)), key=lambda k: -np.abs(shares[k]).sum())
        out.append(("no_batch_sum", shares[order[0]]))          # the biggest share: the one worth a choice
        out.append(("no_batch_sum", shares))
        rest = [("no_batch_sum", shares[k]) for k in order[1:_SHARES]]   # any other example's, when typed
        return out, rest
    return out, []


def _as_code(lesson, node):
    """``h @ W2``: a matrix product whose output has no name in the student's code (a letter made up
    here, shown in the picture only) as the cell writes it, so a hint names what the student can find
    in the cell; None for a named output or any other op (the hint then uses the name)."""
    if not getattr(node.out, "auto", False) or node.op is None or getattr(node.op, "symbol", None) != "@" \
            or len(node.inputs) != 2:
        return None
    for inp in node.inputs:             # (an operand named here too: the cell does not show it either)
        src = inp.src
        v = getattr(src, "pieces", {}).get(inp.output_nr) if inp.kind == "op" and inp.output_nr else getattr(src, "out", src)
        if v is None or getattr(v, "auto", False):
            return None
    a, b = (lesson.input_name(node, k) for k in (0, 1))
    return f"{a} @ {b}" if a and b else None


def _seed_at(frames, run):
    return next((k for k, f in enumerate(frames) if f["kind"] == "seed" and f.get("run") == run), None)


def questions(lesson, ids, frames, events, root_name, kinds, run=0):
    """Every question of ``kinds`` this graph can ask, in the order of the frames they guard.

    ``run``: the backward pass (``frame["run"]``) whose ``events`` these are.  A later pass (a live
    ``backward()`` press) is asked about its backward steps only (its forward pass is not replayed
    op by op), and a leaf's ``.grad`` then adds to what it held: the question says so.
    """
    out = []
    seed_at = _seed_at(frames, run)
    if run:
        kinds = tuple(k for k in kinds if k not in ("forward", "second"))
    by_node = {id(e.node): e for e in events if e.node is not None}
    by_leaf = {e.variable.seq: e for e in events if e.node is None and e.variable is not None}
    uses = lesson.consumers()
    name = lesson.name

    def use_hints(key, tname):
        got = uses.get(key, [])
        if len(got) == 1:
            c, i = got[0]
            local, product = local_derivative(lesson, c, i), _product(lesson, c, i)
            other = lesson.input_name(c, 3 - i if c.key == "addmm" else 1 - i) if product is not None else None
            code = _as_code(lesson, c)
            if product is not None and other and code:
                first = ["h_matmul_" + product[0] + "_code", {"code": code, "name": tname, "other": other}]
            elif product is not None and other:
                first = ["h_matmul_" + product[0], {"out": name(c), "name": tname, "other": other,
                                                    "expr": plain(forward_latex(lesson, c))}]
            elif local is not None:
                first = ["h_local", {"out": name(c), "inp": tname, "local": summary(local)}]
            else:
                first = ["h_expr", {"out": name(c), "expr": plain(forward_latex(lesson, c))}]
            e = by_node.get(id(c))
            return [first] + ([["h_incoming", {"out": code or name(c), "g": summary(e.grad_in)}]] if e is not None else [])
        listed = ", ".join(name(c) for c, _ in got)
        incoming = [["h_incoming", {"out": name(c), "g": summary(by_node[id(c)].grad_in)}]
                    for c, _ in got if id(c) in by_node]
        return [["h_uses", {"name": tname, "k": str(len(got)), "uses": listed}]] + (
            [["h_list", {"items": {"join": incoming}}]] if incoming else [])

    def grad_mistakes(key, value, expected):
        got = uses.get(key, [])
        m, more = product_slips(got, expected)     # (first: for a weight, the slips worth a choice)
        if value is not None:
            m.append(("forward", value))
        sent = [by_node[id(c)].grads_out[i] for c, i in got if id(c) in by_node
                and i < len(by_node[id(c)].grads_out) and by_node[id(c)].grads_out[i] is not None]
        if len(sent) > 1:
            m += [("not_accumulated", s) for s in sent]
        if len(got) == 1:
            c, i = got[0]
            e = by_node.get(id(c))
            local = local_derivative(lesson, c, i)
            if local is not None:
                m.append(("local_only", local))
            if e is not None and e.grad_in is not None:
                gin = np.asarray(e.grad_in)
                if gin.shape == np.shape(expected):
                    m.append(("incoming", gin))
                elif gin.ndim > np.ndim(expected) and gin.shape[gin.ndim - np.ndim(expected):] == np.shape(expected):
                    m.append(("no_batch_sum", gin))
            m += [("missing_factor", np.asarray(expected, np.float64) / k) for k in _scalars(lesson, c)]
        if np.ndim(expected) == 2 and not any(k == "transpose" for k, _ in m):
            m.append(("transpose", np.asarray(expected).T))
        return m + more

    def product_slips(got, expected):
        """A matrix product's slips when the tensor's one use is a factor of one (or its transpose is:
        nn.Linear's weight reaches addmm as Wᵀ, so the slips are transposed back)."""
        if len(got) != 1:
            return [], []
        c, i = got[0]
        flip = False
        if c.key in ("t", "transpose") and np.ndim(expected) == 2:
            after = uses.get(id(c), [])
            if len(after) != 1:
                return [], []
            c, i = after[0]
            flip = True
        e, product = by_node.get(id(c)), _product(lesson, c, i)
        if product is None or e is None or e.grad_in is None:
            return [], []
        want = np.asarray(expected).T if flip else expected
        return tuple([(k, np.swapaxes(v, -1, -2) if flip else v) for k, v in slips]
                     for slips in _product_slips(*product, e.grad_in, want))

    for node in lesson.nodes:
        if not ids.own_value(node):
            continue
        nname, value = name(node), lesson.output(node)
        expr = plain(forward_latex(lesson, node))
        inputs = ", ".join(f"{lesson.input_name(node, i) or '?'} = {summary(a)}"
                           for i, a in enumerate(lesson.inputs(node)) if a is not None)
        if "forward" in kinds and value is not None:
            at = _first(frames, [f"val:{ids.value(node)}"], phase="forward")
            if at is not None:
                m = [("input", a) for a in lesson.inputs(node) if a is not None]
                d = local_derivative(lesson, node, 0) if node.inputs else None
                if d is not None:
                    m.insert(0, ("derivative", d))
                out.append(Question("forward", nname, False, node.name, value,
                                    ["q_forward", {"out": nname, "expr": expr}], at,
                                    [["h_expr", {"out": nname, "expr": expr}], ["h_inputs", {"inputs": inputs}]],
                                    m, _dtype(value)))
        e = by_node.get(id(node))
        if e is None or seed_at is None:
            continue
        if "received" in kinds and node is not lesson.root_step and e.grad_in is not None:
            keys = [f"grad:{ids.value(node)}"] + [f"edge:{ids.edge_in(c, i)}" for c, i in uses.get(id(node), [])]
            at = _first(frames, keys, start=seed_at + 1)
            if at is not None:
                out.append(Question("received", nname, False, node.name, e.grad_in,
                                    ["q_received", {"name": nname, "root": root_name}], at,
                                    use_hints(id(node), nname), grad_mistakes(id(node), value, e.grad_in),
                                    _dtype(e.grad_in)))
        node_at = _first(frames, [f"cls:{ids.op(node)}"], start=seed_at + 1, phase="backward")
        if node_at is None:
            continue
        for i, gi in enumerate(e.grads_out):
            kind, thing = lesson.kinds(node)[i]
            if gi is None or kind == "const":
                continue
            inp = lesson.input_name(node, i) or "?"
            local = local_derivative(lesson, node, i)
            own = lesson.inputs(node)[i]
            if "local" in kinds and local is not None:
                m = [("forward", value)] + ([("input", own)] if own is not None else [])
                m += [("missing_factor", np.asarray(local, np.float64) / k) for k in _scalars(lesson, node)]
                out.append(Question("local", f"∂{nname}/∂{inp}", False, node.name, local,
                                    ["q_local", {"out": nname, "inp": inp, "expr": expr}], node_at,
                                    [["h_expr", {"out": nname, "expr": expr}], ["h_inputs", {"inputs": inputs}]],
                                    m, _dtype(local)))
            if "sent" in kinds:
                m = [("incoming", e.grad_in)] if np.shape(e.grad_in) == np.shape(gi) else []
                m += [("local_only", local)] if local is not None else []
                m += [("forward", own)] if own is not None else []
                hints = ([["h_local", {"out": nname, "inp": inp, "local": summary(local)}]] if local is not None
                         else [["h_expr", {"out": nname, "expr": expr}]])
                hints.append(["h_incoming", {"out": nname, "g": summary(e.grad_in)}])
                out.append(Question("sent", inp, kind == "leaf", node.name, gi,
                                    ["q_sent", {"out": nname, "inp": inp}], node_at, hints, m, _dtype(gi)))
    if seed_at is not None:
        for leaf in lesson.leaves:
            e = by_leaf.get(leaf.seq)
            if e is None or e.grad_after is None:
                continue
            lname = name(leaf)
            key = id(leaf)
            if "grad" in kinds:
                keys = [f"grad:{ids.leaf(leaf)}"] + [f"edge:{ids.edge_in(c, i)}" for c, i in uses.get(key, [])]
                at = _first(frames, keys, start=seed_at + 1)
                if at is not None:
                    m = grad_mistakes(key, leaf.data, e.grad_after)
                    if e.grad_before is not None:
                        m.insert(0, ("not_accumulated", e.grad_in))
                    text = (["q_grad_again", {"name": lname, "root": root_name, "before": summary(e.grad_before)}]
                            if run and e.grad_before is not None else ["q_grad", {"name": lname, "root": root_name}])
                    out.append(Question("grad", lname, True, lname, e.grad_after, text, at,
                                        use_hints(key, lname), m, _dtype(e.grad_after)))
            if "second" in kinds and e.grad_in is not None:
                after = np.asarray(e.grad_after)
                twice = after + np.asarray(e.grad_in, dtype=after.dtype)     # AccumulateGrad: .grad += g
                out.append(Question("second", lname, True, lname, twice,
                                    ["q_second", {"name": lname, "root": root_name}], len(frames),
                                    [["h_accumulate", {"name": lname}], ["h_first", {"name": lname, "g": summary(after)}]],
                                    [("not_accumulated", after), ("forward", leaf.data)], _dtype(after)))
    out = [q for q in out if np.size(q.expected) <= MAX_NUMBERS]
    return sorted(out, key=lambda q: q.at)          # (stable: a frame's questions in the order above)


def build(lesson, ids, frames, events, root_name, opts, func="practice"):
    """The ``practice`` trait: the chosen questions as data, and the instructor's settings."""
    found = questions(lesson, ids, frames, events, root_name, opts["kinds"])
    chosen = select(found, opts["ask"], func)
    if opts.get("when") == "pass":      # every question before its pass starts: predict the whole pass
        seed_at = _seed_at(frames, 0)
        first = next((k for k, f in enumerate(frames) if f["phase"] == "forward"), None)
        for q in chosen:
            if q.kind == "forward" and first is not None:
                q.at = first
            elif q.kind != "second" and seed_at is not None:
                q.at = seed_at
        chosen = sorted(chosen, key=lambda q: q.at)
    return {"questions": [_entry(q, n, opts) for n, q in enumerate(chosen)], "tries": opts["tries"],
            "lecture": opts["lecture"], "hide_derivation": opts["hide_derivation"]}


def _entry(q, n, opts):
    """Question ``q`` as the trait holds it, with id ``q<n>``."""
    expected = np.asarray(q.expected, dtype=np.float64)
    slips = distractors(expected, q.mistakes, q.dtype, k=len(q.mistakes) + 3)
    entry = {"id": f"q{n}", "kind": q.kind, "name": q.name, "node": q.node, "leaf": q.leaf, "at": q.at,
             "text": q.text, "expected": _json(expected), "shape": list(expected.shape), "dtype": q.dtype,
             "answer": answer_text(expected), "hints": q.hints if opts["hints"] else [],
             "mistakes": [[k, _json(v)] for k, v in slips if k not in _GENERIC]}
    if opts["choices"]:
        # named slips of the answer's shape first (one of another shape is told apart without
        # thinking), then named ones of other shapes, then the generic ones (sign, double, arith)
        picks = [answer_text(v) for _, v in sorted(slips, key=lambda kv: (kv[0] in _GENERIC,
                                                                          kv[1].shape != expected.shape))]
        picks = [t for t in dict.fromkeys(picks) if not check_answer(t, expected, q.dtype)["ok"]]
        options_ = [entry["answer"]] + picks[:opts["choices"] - 1]
        random.Random(zlib.crc32(f"{q.kind}:{q.name}:{n}".encode())).shuffle(options_)
        entry["choices"] = options_
    return entry


def extend(practice, answers, opts, lesson, ids, frames, base, runs, func="practice"):
    """The ``practice`` trait after a live press appended ``frames[base:]`` holding the passes ``runs``.

    Each new pass asks what the first one asked of its backward steps (a leaf's ``.grad`` now adds
    to what it held, and the question says what that was).  A ``.grad`` "after a second backward()
    without zero_()" question not yet settled is asked in the new pass when that pass is this second
    call (its answer is what the pass gives), and waits for the next press when this one only repeated
    the pass it followed; a press that makes it untrue (zero_(), other numbers, a call that failed)
    drops it.  Questions already settled stay as they were.
    """
    qs = list(practice.get("questions") or [])
    tries = practice.get("tries", 2)
    by_id = {a.get("id"): a for a in answers or []}
    kept, second = [], {}
    for q in qs:
        if q["kind"] == "second" and q["at"] >= base and not _settled(by_id.get(q["id"], {}), tries):
            second[q["name"]] = q              # (answered in the new pass, or dropped)
            continue
        kept.append(q)
    n, last = 1 + max([int(q["id"][1:]) for q in qs if q["id"][1:].isdigit()] or [-1]), None
    for run in sorted({f.get("run") for f in frames[base:] if f["kind"] == "seed"} - {None}):
        events = next((r.events for idx, r in runs if idx == run), None)
        if events is None:
            continue
        found = questions(lesson, ids, frames, events, lesson.root_name, tuple(opts["kinds"]) + ("grad",), run=run)
        for q in found:
            old = second.get(q.name) if q.kind == "grad" else None
            if old is not None and _same_numbers(old, q):
                del second[q.name]            # the second call it asked about: asked before it shows
                kept.append(dict(old, at=_seed_at(frames, run) if opts.get("when") == "pass" else q.at))
        chosen = [q for q in select(found, opts["ask"], func, strict=False) if q.kind in opts["kinds"]]
        if opts.get("when") == "pass":
            for q in chosen:
                q.at = _seed_at(frames, run)
        for q in sorted(chosen, key=lambda q: q.at):
            if any(k["kind"] == "second" and k["name"] == q.name and k["at"] == q.at for k in kept):
                continue                      # (asked once, as the second call)
            kept.append(_entry(q, n, opts))
            n += 1
        last = events
    if second and last is not None:      # a press that repeated the first pass: the next one is the second call
        by_leaf = {e.variable.seq: e for e in last if e.node is None and e.variable is not None}
        for leaf in lesson.leaves:
            q, e = second.pop(lesson.name(leaf), None), by_leaf.get(leaf.seq)
            if q is None or e is None or e.grad_after is None or e.grad_in is None:
                continue
            then = np.asarray(e.grad_after, dtype=np.float64) + np.asarray(e.grad_in, dtype=np.float64)
            if _same_numbers(q, then):
                kept.append(dict(q, at=len(frames)))
    return dict(practice, questions=sorted(kept, key=lambda q: q["at"]))


def _same_numbers(entry, q):
    want = np.asarray(getattr(q, "expected", q), dtype=np.float64)
    got = _expected(entry)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-6, atol=1e-9, equal_nan=True))


# --- the picture without the answers -------------------------------------------------------------

_TEXT = re.compile(r'(<text\b[^>]*\bid="gv-(?P<id>[ne]\d+)-(?P<slot>grad|val)-\d+"[^>]*>)[^<]*(</text>)')
_TITLE = re.compile(r"<title>([^<:]*?)(?::\s*)?tensor\([^<]*grad_fn=[^<]*</title>")


def scrub_svg(svg, start):
    """The drawing with every value the start frame hides blanked (its text only: the layout stays).

    The SVG is laid out once with the final values in place; a page with questions must not hold
    the answers in text that is merely hidden, nor in a result's tooltip (``tensor(..., grad_fn=...)``).
    """
    hidden = {k for k, v in (start.get("set") or {}).items() if v == ""}

    def blank(m):
        slot = {"grad": "grad", "val": "val"}[m.group("slot")]
        key = f"{'edge' if m.group('id')[0] == 'e' else slot}:{m.group('id')}"
        return m.group(1) + "?" + m.group(4) if key in hidden else m.group(0)

    svg = _TEXT.sub(blank, svg)
    return _TITLE.sub(lambda m: f"<title>{m.group(1)}</title>", svg)


# --- answering ----------------------------------------------------------------------------------

def score(practice, answers):
    """The ``score`` trait: how many questions, answered, right (at the first try), tries, revealed."""
    qs = practice.get("questions") or []
    tries = practice.get("tries", 2)
    by_id = {a.get("id"): a for a in answers or []}
    done = [by_id[q["id"]] for q in qs if q["id"] in by_id and _settled(by_id[q["id"]], tries)]
    return {"asked": len(qs), "answered": len(done),
            "correct": sum(1 for a in done if a.get("correct") is True),
            "first_try": sum(1 for a in done if a.get("correct") is True and a.get("tries") == 1),
            "tries": sum(a.get("tries", 0) for a in (answers or [])),
            "revealed": sum(1 for a in done if a.get("revealed"))}


def _settled(a, tries):
    return a.get("correct") is True or a.get("revealed") or a.get("tries", 0) >= tries


def current(practice, answers, frame=None):
    """The question to answer now: the first one not settled (None when every one is)."""
    tries = practice.get("tries", 2)
    by_id = {a.get("id"): a for a in answers or []}
    for q in practice.get("questions") or []:
        a = by_id.get(q["id"])
        if a is None or not _settled(a, tries):
            return q
    return None


def _expected(q):
    def back(v):
        if isinstance(v, list):
            return [back(x) for x in v]
        return float(v)
    return np.asarray(back(q["expected"]), dtype=np.float64)


def record(practice, answers, q, text, words, now=None):
    """``(answers, verdict)``: ``answers`` with try ``text`` at question ``q`` recorded (as practice.js does).

    An answer that cannot be read is no try (the verdict's ``ok`` is None; nothing is recorded).
    """
    verdict = check_answer(text, _expected(q), q["dtype"], mistakes=[(k, _expected({"expected": v}))
                                                                      for k, v in q["mistakes"]])
    if verdict["ok"] is None:
        return answers, verdict
    now = time.time() if now is None else now
    answers = [dict(a) for a in answers or []]
    rec = next((a for a in answers if a.get("id") == q["id"]), None)
    if rec is None:
        rec = {"id": q["id"], "node": q["node"], "name": q["name"], "kind": q["kind"],
               "question": words(q["text"]), "typed": "", "attempts": [], "correct": None, "tries": 0,
               "time": 0.0, "started": now, "revealed": False}
        answers.append(rec)
    rec["attempts"] = rec["attempts"] + [{"typed": text, "ok": verdict["ok"], "key": verdict["key"],
                                          "mistake": verdict["mistake"], "at": now}]
    rec["typed"], rec["correct"], rec["tries"] = text, verdict["ok"], rec["tries"] + 1
    rec["time"] = round(now - rec.get("started", now), 3)
    return answers, verdict


def submit(widget, text):
    """Answer the open question of ``widget`` from Python, as its input box does (see AutogradWidget.submit)."""
    if not isinstance(text, str):
        raise TypeError(f"submit() takes the answer as typed, a str, not {type(text).__name__}")
    q = current(widget.practice, widget.answers)
    if q is None:
        raise ValueError("submit(): no question is open" + (" (every question is answered)" if widget.practice.get("questions")
                                                            else " (the widget is not in practice mode: gradviz.practice(o))"))
    answers, verdict = record(widget.practice, widget.answers, q, text, lambda msg: render(widget.lang, msg))
    if verdict["ok"] is None:
        return verdict
    last = len(widget.frames) - 1
    rec = next(a for a in answers if a["id"] == q["id"])
    settled = _settled(rec, widget.practice.get("tries", 2))
    with widget.hold_sync():
        widget.answers = answers
        widget.score = score(widget.practice, answers)
        widget.playing = False
        widget.frame = min(last, q["at"] if settled else max(0, q["at"] - 1))
    return verdict
