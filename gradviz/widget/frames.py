"""The animation as plain data: one frame per thing a student should see happen.

The forward pass: for each op in the order it ran, its inputs light up, then its output appears.
The backward pass comes from the engine's recorded events (:mod:`gradviz.trace`), never from a
re-simulation: the seed, then for every event in the order the engine ran it, the gradient that
arrived, what was sent to each input, the sum where a tensor fed several ops, and each leaf's
``.grad`` before and after it was accumulated.

A frame is a dict::

    {"phase": "start" | "forward" | "backward" | "zero" | "error" | "note",
     "kind":  "start" | "fwd_in" | "fwd_out" | "seed" | "sum" | "node" | "acc" | "done" | ...,
     "run":   which backward() call (0, 1, ...) or None,
     "msg":   [caption key, {arg: text}]            (worded by i18n.render / widget.js),
     "focus": [node id], "lit": [node id], "edges": [edge id],    (highlighted in this frame only)
     "set":   {slot: text},                         (kept until a later frame changes it)
     "event": the recorded Event's numbers, or None}
    (a failed call adds "error": the engine's message; a live press the widget did not run, since the
    graph can neither run backward again nor be built again, adds "unchecked": True)

Slots are ``val:<node id>``, ``grad:<node id>``, ``edge:<edge id>``, ``cls:<node id>``
(``pending``/``fwd``/``bwd``) and ``check:<leaf name>`` (the derivation's check mark).

A big graph's picture folds regions into ``group`` nodes (``gradviz.drawing.graph``); the ops a group
folds run as one step forward (``fwd_group``) and one backward (``bwd_group``), so a 20,000-op
chain has a few dozen frames, not 60,000.  ``"folded": {"group", "count"}`` says which group
such a frame stands for (``AutogradWidget.expand(i)`` writes its ops out one by one).
"""

import math
import re
from dataclasses import dataclass

import numpy as np

from ..drawing.svg_ids import Ids
from ..formula import Rule, fill, plain
from ..trace.model import array_of
from ..value_text import format_line, node_text, short, summary      # the one writer of numbers
from .i18n import STRINGS
from .derivation import MAX_LEAVES, check, forward_latex, local_derivative, objective, operand_mark, seed_name

__all__ = ["start_frame", "forward_frames", "backward_frames", "zero_frame", "sync_frame",
           "error_frame", "note_frame", "values_frame", "event_data", "expr_text"]

MAX_EXACT = 256        # arrays up to this size carry their exact numbers in the frame
MAX_LISTED = 8         # leaves listed by name in a caption (the rest are counted)
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


# --- small helpers -----------------------------------------------------------------------------

def _exact(a):
    """An array's numbers for JSON (None when too big); NaN and infinities as text."""
    if a is None:
        return None
    a = np.asarray(a)
    if a.size > MAX_EXACT:
        return None
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        return _json_safe(a.tolist())
    return a.tolist()


def _json_safe(v):
    if isinstance(v, list):
        return [_json_safe(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def event_data(e):
    """The numbers of one recorded event, as JSON: what the tests compare with ``rec.events``."""
    return {
        "run": e.run, "step": e.step, "name": e.name, "seq": e.seq,
        "grad_in": _exact(e.grad_in),
        "grads_out": [None if g is None else _exact(g) for g in e.grads_out],
        "grad_before": _exact(e.grad_before), "grad_after": _exact(e.grad_after),
    }


def expr_text(template, names, params):
    """An op's forward LaTeX as plain words for a caption: ``x + 1``, ``a²``, ``Σ y``."""
    subs = {str(i): n for i, n in enumerate(names)}
    for key, v in (params or {}).items():
        subs.setdefault(key, short(v) if isinstance(v, (int, float, np.number)) else str(v))
    return plain(re.sub(r"@\d+", "?", fill(template, subs)))


def _val_slot(value):
    return "?" if value is None else node_text(value)


def _grad_slot(value, leaf):
    """A gradient as the drawing writes it: ``.grad [..]`` for a leaf, ``grad [..]`` flowing past."""
    if value is None:
        return ""
    prefix = ".grad " if leaf else "grad "
    return prefix + node_text(value).replace("\n", "\n" + " " * len(prefix))


def _ids(items):
    return list(dict.fromkeys(i for i in items if i))      # a group may stand for thousands of nodes


def _frame(phase, kind, msg, run=None, focus=(), lit=(), edges=(), set=None, event=None):
    return {"phase": phase, "kind": kind, "run": run, "msg": msg, "focus": _ids(focus),
            "lit": _ids(lit), "edges": _ids(edges), "set": set or {}, "event": event}


def _by_group(items, group_of, rank):
    """``items`` as ``(group id or None, [items])`` steps: all the items of a group in one step.

    Groups come in ``rank`` order (by depth: a group only needs groups before it); an item drawn
    on its own comes after every group met before it, so it still follows what it needs.
    """
    buckets, after, latest = {}, {}, None
    for item in items:
        g = group_of(item)
        if g is None:
            after.setdefault(latest, []).append(item)
            continue
        buckets.setdefault(g, []).append(item)
        if latest is None or rank(g) > rank(latest):
            latest = g
    out = [(None, [item]) for item in after.get(None, [])]
    for g in sorted(buckets, key=rank):
        out.append((g, buckets[g]))
        out += [(None, [item]) for item in after.get(g, [])]
    return out


def _op_counts(steps):
    counts = {}
    for st in steps:
        counts[st.name] = counts.get(st.name, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} ×{v}" for k, v in top[:3]) + (", …" if len(top) > 3 else "")


# --- the frames --------------------------------------------------------------------------------

def start_frame(lesson, ids, grads, targets):
    """Frame 0: every slot at its starting state (leaves and constants show their values)."""
    s = {}
    for node in lesson.nodes:
        s[f"cls:{ids.op(node)}"] = "pending"
        if ids.own_value(node):         # (a group's text is its summary: no value is written into it)
            s[f"val:{ids.value(node)}"] = ""
            s[f"cls:{ids.value(node)}"] = "pending"
            s[f"grad:{ids.value(node)}"] = ""
    for e in ids.all_edges():
        s[f"edge:{e}"] = ""
    for t in lesson.leaves:
        g = grads.get(t.seq)
        if ids.group_of_leaf(t) is None:
            s[f"val:{ids.leaf(t)}"] = _val_slot(t.data)
            s[f"cls:{ids.leaf(t)}"] = ""
            s[f"grad:{ids.leaf(t)}"] = _grad_slot(g, True)
        if _written(lesson, t):         # (a .grad from before: the notebook's code, maybe at other values)
            s[f"check:{lesson.name(t)}"] = _check_slot(g, targets.get(t.seq), t, lesson, known=False)
    for node in lesson.nodes:           # names the widget made up, so captions can point at them
        if node.out.auto and ids.group(node) is None and ids.value(node) != ids.op(node):
            s[f"name:{ids.value(node)}"] = lesson.name(node)
    # a leaf that requires grad has no ops, but backward() on it still runs (it fills its .grad)
    key = "cap_start" if lesson.nodes else "cap_leaf" if lesson.root.requires_grad else "cap_no_grad"
    return _frame("start", "start", [key, {"root": lesson.root_name}], set=s,
                  focus=[ids.leaf(t) for t in lesson.leaves])


def _check_slot(grad, want, leaf, lesson, added=None, before=None, known=True):
    """The check mark of a leaf: its ``.grad`` against the hand derivation.

    After a backward() call the gradient it ``added`` is what the derivation stands for (the
    ``.grad`` also holds what was there ``before``: the notebook's own calls, with their own
    ``gradient=``), so that is what is compared.  ``known=False``: the ``.grad`` came from code the
    widget did not see; a difference is then no error of the engine's, and no mark is shown.
    """
    slot = {"grad": "None" if grad is None else format_line(grad)}
    have = added if added is not None else grad
    slot.update(check(have, want) if want is not None and have is not None else {"ok": None, "diff": ""})
    if added is not None and before is not None and np.any(np.asarray(before) != 0):
        slot["added"], slot["now"] = summary(added), summary(grad)     # (summaries: a big matrix twice is unreadable)
        total = check(grad, want) if want is not None and grad is not None else {}
        if total.get("times", 0) >= 2:        # .grad holds k calls' worth: accumulation, said as such
            slot["total_times"] = total["times"]
    if not known and slot["ok"] is False and "times" not in slot:
        slot.update(ok=None, diff="")
    return slot


def forward_frames(lesson, ids, steps=None, first=1, fold=True):
    """Two frames per op, in the order the ops ran: its inputs light up, then its output appears.

    The ops folded into one group of the picture run as one frame, the groups inputs first
    (``fold=False``: each op its own two, for :meth:`AutogradWidget.expand`).  ``steps``: only
    these ops, the first being op ``first``.
    """
    steps = lesson.nodes if steps is None else steps
    frames, n, k = [], len(lesson.nodes), first - 1
    pairs = _by_group(steps, ids.group, ids.band) if fold else [(None, [st]) for st in steps]
    for group, steps in pairs:
        if group is not None:
            frames.append(_forward_group(lesson, ids, group, steps, n))
            k += len(steps)
            continue
        node = steps[0]
        k += 1
        kinds = lesson.kinds(node)
        names = [lesson.input_name(node, i) or "?" for i in range(len(kinds))]
        expr = plain(forward_latex(lesson, node))      # as the definitions write it: 5 b, tanh(b)
        inputs = [ids.input(lesson, node, i) for i in range(len(kinds))]
        edges = [ids.edge_in(node, i) for i in range(len(kinds))]
        listed = [f"{names[i]} = {summary(a) if a is not None else '?'}" if kinds[i][0] != "const" or getattr(
            kinds[i][1], "name", None) else names[i] for i, a in enumerate(lesson.inputs(node))]
        frames.append(_frame("forward", "fwd_in", ["cap_fwd_in", {
            "k": str(k), "n": str(n), "node": node.name, "op": op_words(node), "expr": expr,
            "inputs": ", ".join(listed)}],
            focus=[ids.op(node)], lit=inputs, edges=edges, set={f"cls:{ids.op(node)}": "fwd"}))
        out, value = ids.value(node), lesson.output(node)      # None: a value PyTorch did not keep
        frames.append(_frame("forward", "fwd_out", ["cap_fwd_out", {
            "out": lesson.name(node), "expr": expr, "value": summary(value) if value is not None else "?",
            "node": node.name}],
            focus=[out], lit=[ids.op(node)], edges=[ids.edge_out(node)],
            set={f"val:{out}": _val_slot(lesson.output(node)), f"cls:{out}": "fwd"} if ids.own_value(node)
            else {f"cls:{out}": "fwd"}))
    return frames


def _forward_group(lesson, ids, group, steps, n):
    """One frame for ``steps``, run one after the other inside the group node ``group``."""
    last = steps[-1]
    s = {f"cls:{group}": "fwd"}
    for st in steps:               # a named output drawn on its own gets its value
        if ids.own_value(st):
            s[f"val:{ids.value(st)}"] = _val_slot(lesson.output(st))
            s[f"cls:{ids.value(st)}"] = "fwd"
    f = _frame("forward", "fwd_group", ["cap_fwd_group", {
        "n": str(n), "count": str(len(steps)),
        "ops": _op_counts(steps), "out": lesson.name(last), "value": short(lesson.output(last))}],
        focus=[group], lit=[ids.value(st) for st in steps if ids.own_value(st)], set=s)
    f["folded"] = {"group": group, "count": len(steps)}
    return f


@dataclass(frozen=True)
class Scene:
    """What every frame of one widget is made against: the lesson (its trace, read for the frames),
    the SVG ids of the drawing, and the leaves whose ``.grad`` the derivation checks."""
    lesson: object
    ids: Ids
    targets: dict


@dataclass(frozen=True)
class BackwardCall:
    """One ``backward()`` call to animate: the trace's :class:`~gradviz.trace.Run` (its events in the
    engine's order, seed, ``retain_graph``, error and notes), its place among the widget's passes
    (``frame["run"]``), the user's call number (0: animate()'s own pass) and whether a gradient was given."""
    run: object
    index: int
    number: int
    gradient_given: bool


def backward_frames(scene, call, math=None, fold=True, only=None):
    """The frames of one recorded ``backward()`` call (a :class:`BackwardCall`), in the engine's order.

    animate()'s own pass (number 0) says in its last frame the hooks it could not keep from
    running and a custom Function it had to run again (:attr:`gradviz.trace.Run.notes`).
    ``math`` (a :class:`~gradviz.widget.derivation.StepMath`) adds to each frame its ``chain``:
    the factors of the written chain rule this step applies and the product so far.
    The events of ops (and leaves) folded into one group of the picture are one frame, the groups
    deepest first.  ``fold=False, only=group``: just the frames of that group's events, each its own
    (:meth:`AutogradWidget.expand`).
    """
    lesson, ids, targets = scene.lesson, scene.ids, scene.targets
    run, run_number, gradient_given = call.index, call.number, call.gradient_given
    events, seed, retain_graph, error, notes = (call.run.events, call.run.seed, call.run.retain_graph,
                                                call.run.error, call.run.notes)
    root = lesson.root_step
    rname = lesson.root_name
    reset = {f"edge:{e}": "" for e in ids.all_edges()}
    for node in lesson.nodes:
        if ids.own_value(node):
            reset[f"grad:{ids.value(node)}"] = ""
        reset[f"cls:{ids.op(node)}"] = "fwd"
    args = ["retain_graph=True" if retain_graph else "retain_graph=False"]
    if gradient_given:
        args.insert(0, "gradient=" + summary(seed))
    root_value = ids.value(root) if root is not None else None
    reset[f"grad:{root_value}"] = _grad_slot(seed, False)
    # backward(gradient=v) differentiates L = Σ v ⊙ z: every ∂ of its captions is ∂L/∂…, as the derivation's
    dname = objective(lesson, seed)[1] if seed is not None else rname
    key = "cap_seed" if dname == rname else "cap_seed_v"
    frames = [_frame("backward", "seed", [key + "_replay" if run_number == 0 else key, {
        "run": str(run_number), "args": ", ".join(args), "root": rname, "seed": summary(seed), "L": dname,
        "v": seed_name(lesson)[1]}],
        run=run, focus=[root_value], set=reset)]
    if math is not None and root is not None:
        _chain(frames[-1], math.seed_factors(), [math.total(id(root), rname, seed)])

    uses = lesson.consumers()
    sent = {}                                   # (consumer seq, i) -> the gradient it sent, this run

    def group_of(e):
        return ids.group_of_leaf(e.variable) if e.node is None else ids.group(e.node)

    if fold:                                    # backwards: the deepest groups first
        pairs = _by_group(events, group_of, lambda g: -ids.band(g))
    else:
        pairs = [(None, [e]) for e in events]
    for group, folded in pairs:
        if group is not None or (only is not None and group_of(folded[0]) != only):
            for e in folded:            # what was sent still counts for the sums further down
                for i, gi in enumerate(e.grads_out):
                    if gi is not None and e.node is not None:
                        sent[(e.node.seq, i)] = gi
            if group is not None:
                frames.append(_backward_group(lesson, ids, run, group, folded, rname))
            continue
        e = folded[0]
        node = e.node
        is_leaf = e.name == "AccumulateGrad"
        if is_leaf:
            leaf = e.variable
            key, target, name = id(leaf), ids.leaf(leaf), lesson.name(leaf)
        else:
            key, target, name = id(node), ids.value(node), lesson.name(node)
        got = [(c, i) for c, i in uses.get(key, []) if (c.seq, i) in sent]
        if len(got) > 1:
            terms = [sent[(c.seq, i)] for c, i in got]
            # a leaf's slot is its .grad, which changes only when AccumulateGrad runs (next frame)
            total = {} if is_leaf or not ids.own_value(node) else {f"grad:{target}": _grad_slot(e.grad_in, False)}
            frames.append(_frame("backward", "sum", ["cap_sum", {
                "name": name, "k": str(len(got)), "terms": " + ".join(summary(t) for t in terms),
                "total": summary(e.grad_in)}], run=run, focus=[target],
                edges=[ids.edge_in(c, i) for c, i in got], set=total))
            if math is not None:
                _chain(frames[-1], [], [math.total(key, name, e.grad_in)])
        if is_leaf:
            want = targets.get(leaf.seq)
            s = {f"grad:{target}": _grad_slot(e.grad_after, True), f"cls:{target}": "bwd",
                 f"check:{name}": _check_slot(e.grad_after, want, leaf, lesson, added=e.grad_in,
                                              before=e.grad_before)}
            if e.grad_before is None:
                msg = ["cap_acc_new", {"leaf": name, "after": summary(e.grad_after)}]
            else:
                msg = ["cap_acc_add", {"leaf": name, "g": summary(e.grad_in), "before": summary(e.grad_before),
                                       "after": summary(e.grad_after)}]
            frames.append(_frame("backward", "acc", msg, run=run, focus=[target],
                                 edges=[ids.edge_in(c, i) for c, i in got], set=s, event=event_data(e)))
            if math is not None:
                _chain(frames[-1], [], [math.total(key, name, e.grad_in)])
            continue
        kinds = lesson.kinds(node)
        sends, s, edges, lit = [], {f"cls:{ids.op(node)}": "bwd"}, [], []
        if ids.own_value(node):             # (a group's text is its summary)
            s[f"grad:{target}"] = _grad_slot(e.grad_in, False)
        for i, gi in enumerate(e.grads_out):
            kind, thing = kinds[i]
            mark = operand_mark(lesson, node, i)        # y * y: y⁽¹⁾ and y⁽²⁾
            inp = (lesson.input_name(node, i) or "?") + (f"⁽{str(mark).translate(_SUPERSCRIPT)}⁾" if mark else "")
            if gi is None:
                if not (kind == "const" and (thing is None or thing.literal)):
                    sends.append(["cap_send_none", {"inp": inp}])
                continue
            sent[(node.seq, i)] = gi
            edge = ids.edge_in(node, i)
            edges.append(edge)
            lit.append(ids.input(lesson, node, i))
            if edge:
                s[f"edge:{edge}"] = _val_slot(gi)
            local = local_derivative(lesson, node, i)
            formula = _formula_text(math, node, i) if local is None else None
            if local is not None:
                sends.append(["cap_send", {"out": name, "inp": inp, "local": summary(local), "grad": summary(gi)}])
            elif formula is not None:        # softmax & co, a collapsed layer: the formula, as derived
                sends.append(["cap_send_formula", {"root": dname, "inp": inp, "formula": formula,
                                                   "grad": summary(gi)}])
            elif getattr(node, "members", None):      # a layer collapsed into one step
                sends.append(["cap_send_layer", {"inp": inp, "grad": summary(gi)}])
            elif node.op is None and (node.key is None or node.user):   # a custom Function, a node the table lacks
                sends.append(["cap_send_engine", {"inp": inp, "grad": summary(gi), "node": node.name}])
            else:
                sends.append(["cap_send_vjp", {"rule": expr_text(node.dlatex[min(i, len(node.dlatex) - 1)],
                                                                 [lesson.input_text(*k) or "?" for k in kinds],
                                                                 node.params),
                                               "inp": inp, "grad": summary(gi)}])
        frames.append(_frame("backward", "node", ["cap_node", {
            "node": node.name, "root": dname, "out": name, "gin": summary(e.grad_in),
            "sends": {"join": sends}}], run=run, focus=[ids.op(node)], lit=[target] + lit, edges=edges,
            set=s, event=event_data(e)))
        if math is not None:
            got_sent = [i for i, gi in enumerate(e.grads_out) if gi is not None]
            _chain(frames[-1], [f for i in got_sent for f in math.factors(node, i)],
                   [math.sent(node, i, e.grads_out[i]) for i in got_sent])
    if only is not None:
        return frames[1:]                   # (not the seed)
    if error is not None:
        frames.append(error_frame(lesson, run, run_number, error))
    else:
        final = {e.variable.seq: e.grad_after for e in events if e.name == "AccumulateGrad"}
        grads = [f"{lesson.name(t)}.grad = {summary(final[t.seq])}" for t in lesson.leaves if t.seq in final]
        if len(grads) > MAX_LISTED:
            grads = grads[:MAX_LISTED] + [f"… ({len(grads) - MAX_LISTED} more)"]
        words = {"run": str(run_number), "grads": ", ".join(grads) or "–", "root": rname}
        if run_number == 0:         # what the widget's own pass could not keep from running
            words.update(hooks=(notes or {}).get("hooks", ""), rerun=(notes or {}).get("rerun", ""))
        frames.append(_frame("backward", "done", ["cap_done_replay" if run_number == 0 else "cap_done", words],
            run=run, focus=[ids.leaf(t) for t in lesson.leaves], set=_after_pass(lesson, ids, events, observed=run_number == 0)))
    return frames


def op_words(node):
    """The forward op in words for a caption (``["op_mul", {}]``: "multiply", "곱셈"), not its backward node."""
    if node.key is not None and f"op_{node.key}" in STRINGS["en"]:
        return [f"op_{node.key}", {}]
    if node.op is not None and node.key:
        return node.key.rstrip("_").replace("_", " ")
    return node.symbol or node.name         # a collapsed layer (model.0), a node the table lacks


def _formula_text(math, node, i, limit=80):
    """What ``node`` sends to input ``i`` as the running product writes it, in plain words (None: too
    long for a caption, or no hand formula)."""
    e = math.edge.get((id(node), i)) if math is not None else None
    if e is None or isinstance(e, Rule):
        return None
    try:
        text = plain(e.latex())
    except Exception:  # a formula a caption cannot write: the caption says what was sent
        return None
    return text if len(text) <= limit and "\\" not in text and "{" not in text else None


def _after_pass(lesson, ids, events, observed=False):
    """When a pass ends, the gradients that flowed through intermediate tensors are gone, as in
    PyTorch: only leaves (and ``retain_grad()`` tensors) keep a ``.grad`` -- the tensor's own, or
    for animate()'s pass (``observed``: it writes none) the gradient that arrived.  The edges keep
    their labels: the end frame shows every gradient that flowed, each arrow pointing to the input."""
    s = {}     # the edges keep the gradient each carried, drawn pointing the way it went (widget.js)
    arrived = {id(e.node): e.grad_in for e in events if e.node is not None}
    for node in lesson.nodes:
        out = node.out
        if not ids.own_value(node):          # folded into a group: no slot of its own
            continue
        if out is not None and out.retains_grad and id(node) in arrived:
            now = None if observed or out.tensor() is None else out.tensor().grad     # (it retains its grad)
            g = array_of(now) if now is not None else arrived[id(node)]
            s[f"grad:{ids.value(node)}"] = _grad_slot(g, True)
        else:
            s[f"grad:{ids.value(node)}"] = ""
    return s


def _chain(frame, factors, so_far):
    """The derivation-in-step data of a backward frame (see /work/wt/front-teach-contract.md)."""
    so_far = [x for x in so_far if x is not None]
    if factors or so_far:
        frame["chain"] = {"factors": factors, "so_far": so_far}


def _hint(message):
    """A word of explanation after the engine's own message (which stays as PyTorch says it)."""
    if "only for scalar outputs" in message:
        return ["hint_scalar", {}]
    if "backward through the graph a second time" in message:
        return ["hint_freed", {}]
    return ""


def _backward_group(lesson, ids, run, group, events, rname):
    """One frame for consecutive backward events of the ops (and leaves) a group folds."""
    steps = [e.node for e in events if e.node is not None]
    leaves = [e for e in events if e.node is None]
    s = {f"cls:{group}": "bwd"}
    for e in events:
        if e.node is not None and ids.own_value(e.node):
            s[f"grad:{ids.value(e.node)}"] = _grad_slot(e.grad_in, False)
    first, last = events[0], ([e for e in events if e.node is not None] or events)[-1]
    f = _frame("backward", "bwd_group", ["cap_bwd_group", {
        "count": str(len(steps)), "ops": _op_counts(steps) or "–", "root": rname,
        "first": lesson.name(first.node if first.node is not None else first.variable),
        "gin": summary(first.grad_in), "last": lesson.name(last.node if last.node is not None else last.variable),
        "leaves": str(len(leaves))}], run=run, focus=[group], set=s)
    f["folded"] = {"group": group, "count": len(events)}
    return f


def error_frame(lesson, run, run_number, message):
    """A backward() call that failed: the engine's message (``run_number`` 0: animate()'s own call)."""
    f = _frame("error", "error", ["cap_error_replay" if run_number == 0 else "cap_error",
                                  {"run": str(run_number), "message": message, "root": lesson.root_name,
                                   "hint": _hint(message)}], run=run)
    f["error"] = message
    return f


def note_frame(lesson, key, **args):
    """A frame that only says something: caption ``key`` (its fields ``root`` and ``args``)."""
    return _frame("note", "note", [key, {"root": lesson.root_name, **args}])


def values_frame(lesson, ids, key):
    """The forward pass ran again (the live backward() button): every value drawn anew at once."""
    s = {}
    for t in lesson.leaves:
        if ids.group_of_leaf(t) is None:
            s[f"val:{ids.leaf(t)}"] = _val_slot(t.data)
    for node in lesson.nodes:
        if ids.own_value(node):
            s[f"val:{ids.value(node)}"] = _val_slot(lesson.output(node))
            s[f"cls:{ids.value(node)}"] = "fwd"
        s[f"cls:{ids.op(node)}"] = "fwd"
    root = lesson.root_step
    value = lesson.output(root) if root is not None else lesson.root.data
    return _frame("note", "forward_again", [key, {"root": lesson.root_name,
                                                  "value": summary(value) if value is not None else "?"}],
                  focus=[ids.value(root)] if root is not None else [], set=s)


def _written(lesson, leaf):
    """Whether the derivation writes this leaf out (and so shows a check mark for it)."""
    return any(t is leaf for t in lesson.leaves[:MAX_LEAVES])


def _listed(parts):
    """The first :data:`MAX_LISTED` items of a caption's list, and how many more (3,000 leaves...)."""
    return parts if len(parts) <= MAX_LISTED else parts[:MAX_LISTED] + [f"… (+{len(parts) - MAX_LISTED})"]


def zero_frame(lesson, ids, before, targets, after=None):
    """``.grad.zero_()`` on every leaf: one frame, the before and after of each."""
    parts, s = [], {}
    for t in lesson.leaves:
        name = lesson.name(t)
        b = before.get(t.seq)
        if b is None:
            parts.append(["cap_zero_none", {"leaf": name}])
            continue
        after_ = (after or {}).get(t.seq)
        parts.append(["cap_zero", {"leaf": name, "before": summary(b), "after": summary(after_)}])
        s[f"grad:{ids.leaf(t)}"] = _grad_slot(after_, True)
        if _written(lesson, t):
            s[f"check:{name}"] = _check_slot(after_, targets.get(t.seq), t, lesson)
    f = _frame("zero", "zero", ["cap_list", {"items": {"join": _listed(parts)}}],
               focus=[ids.leaf(t) for t in lesson.leaves], set=s)
    return f


def sync_frame(lesson, ids, changed, now, targets, restored=False):
    """``.grad`` changed outside the widget (a notebook cell ran backward or zero_): show it as it is."""
    parts, s = [], {}
    for t in changed:
        name, g = lesson.name(t), now.get(t.seq)
        parts.append(["cap_sync_item", {"leaf": name, "value": summary(g) if g is not None else "None"}])
        s[f"grad:{ids.leaf(t)}"] = _grad_slot(g, True)
        if _written(lesson, t):
            s[f"check:{name}"] = _check_slot(g, targets.get(t.seq), t, lesson, known=False)
    key = "cap_restored" if restored else "cap_sync"
    return _frame("note", "sync", [key, {"items": {"join": _listed(parts)}, "root": lesson.root_name}],
                  focus=[ids.leaf(t) for t in changed], set=s)
