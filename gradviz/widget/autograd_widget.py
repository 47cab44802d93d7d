"""AutogradWidget: the computation graph, its forward and backward passes animated, beside the hand derivation.

The traits are the whole truth: the drawing, every frame of the animation, the derivation, the
step shown, the language.  ``static/widget.js`` plays them without asking Python (so a saved
page animates with no kernel); Python is needed only for the live ``backward()`` and ``zero_()``
buttons, which run the real engine and append what it did as new frames.
"""

import sys
from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

from .. import _check, trace
from ..draw import RANKDIRS
from ..graph import VIEWS
from . import frames as F
from .derivation import build_derivation, targets
from .i18n import LANGS, render, strings
from ._lesson import Lesson

__all__ = ["AutogradWidget", "animate"]

STATIC = Path(__file__).parent / "static"


class AutogradWidget(anywidget.AnyWidget):
    """The graph of ``root`` with its forward and backward passes, node by node, and the chain rule.

    ``AutogradWidget(o)`` records ``o.backward(gradient, retain_graph=True)`` with
    :func:`gradviz.trace.record` (the engine's real steps), then puts every ``.grad`` back as it
    was, so the notebook's own ``o.backward()`` afterwards behaves as if the widget were not there.
    Pass ``backward=False`` to show the forward pass only, or ``recording=rec`` to show a
    recording of your own instead.  The ``backward()`` and ``zero_()`` buttons act on the real
    tensors: they change ``x.grad`` in the notebook too.
    """

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    svg = t.Unicode("", help="The graph as SVG, laid out once at its final size (nothing moves while it plays).").tag(sync=True)
    graph = t.Dict(help="The drawn graph's nodes and edges (gradviz.graph.Graph.to_dict()).").tag(sync=True)
    frames = t.List(help="The animation: one dict per step (see gradviz.widget.frames).").tag(sync=True)
    frame = t.Int(0, help="The step shown now, an index into frames.").tag(sync=True)
    playing = t.Bool(False, help="Whether the front end is stepping through the frames by itself.").tag(sync=True)
    speed = t.Float(1.0, help="Playback speed in steps per second.").tag(sync=True)
    derivation = t.Dict(help="The hand derivation: instructor's steps, forward definitions and, per leaf, "
                             "the chain rule along every path (LaTeX and MathML).").tag(sync=True)
    lang = t.Enum(LANGS, default_value="en", help="The language of every word shown: 'en' or 'ko'.").tag(sync=True)
    strings = t.Dict(help="Every word of the widget in lang: labels and caption templates (gradviz.widget.i18n).").tag(sync=True)
    presenter = t.Bool(False, help="Larger type, for slides and projectors.").tag(sync=True)
    retain_graph = t.Bool(False, help="The retain_graph= that the backward() button passes.").tag(sync=True)
    live = t.Bool(True, help="Whether the backward() and zero_() buttons can reach Python (False in saved pages).").tag(sync=True)
    error = t.Unicode("", help="Why the graph could not be drawn ('' when it was); shown inside the widget.").tag(sync=True)
    root_name = t.Unicode("", help="The name of the tensor whose graph is shown.").tag(sync=True)

    def __init__(self, root, gradient=None, *, names=None, backward=True, recording=None, derivation=None,
                 expected=None, view="dataflow", rankdir="TB", lang="en", presenter=False, speed=1.0,
                 _frame=None, **kwargs):
        func = "animate" if _frame is not None else "AutogradWidget"
        _check.keywords(func, kwargs, _OPTIONS + _TRAIT_OPTIONS)
        _check.root(func, root)
        names, derivation = _check.names(func, names), _check.steps(func, derivation)
        expected = _check.expected(func, expected)
        _check.one_of(func, "view", view, VIEWS)
        _check.one_of(func, "rankdir", rankdir, RANKDIRS)
        _check.one_of(func, "lang", lang, LANGS)
        backward, presenter = _check.boolean(func, "backward", backward), _check.boolean(func, "presenter", presenter)
        speed = _check.positive_number(func, "speed", speed)
        _check.recording(func, recording)
        start = kwargs.pop("frame", 0)
        self._root, self._gradient, self._expected = root, gradient, expected
        self._runs = 0
        caller = _frame if _frame is not None else sys._getframe(1)
        before = _grads(root)
        rec, error = None, None
        if recording is not None:
            rec = recording
        elif backward and root.requires_grad:
            rec, error = self._record(retain_graph=True)
        drawing = _draw(root, view, names, caller, rec, rankdir)   # drawn with the gradients in place
        self._graph = drawing.get("graph_obj")
        self._restored = rec is not None and recording is None
        if self._restored:
            _restore(before)
        lesson = Lesson(root, drawing.get("names") or _names(names))
        self._lesson, self._ids = lesson, drawing.get("ids") or F.Ids()
        seed = _seed(rec, root, gradient)
        self._targets = targets(lesson, seed, expected)      # a wrong expected= name raises here
        self._before = _grad_arrays(before)
        problem = drawing.get("error", "")
        try:
            frames = [F.start_frame(lesson, self._ids, self._before, self._targets)]
            frames += F.forward_frames(lesson, self._ids)
            if rec is not None:   # (without grad, the start frame already says there is no backward pass)
                frames += self._run_frames(rec, error, gradient_given=gradient is not None)
        except Exception as exc:  # a bug of ours must not become a traceback in a student's cell
            frames = [F.note_frame(lesson, "cap_start")]
            problem = problem or f"the animation could not be built ({type(exc).__name__}: {exc})"
        try:
            deriv = build_derivation(lesson, seed, derivation, expected)
        except Exception as exc:  # a derivation that cannot be written must not hide the graph
            deriv = {"custom": [], "defs": [], "leaves": [], "error": f"{type(exc).__name__}: {exc}"}
        self._shown = self._after_runs(rec, self._before) if rec is not None else dict(self._before)
        # everything is known before the comm opens: the front end gets it in one message
        _check.whole_number(func, "frame", start, 0, len(frames) - 1, f"the widget has {len(frames)} steps")
        super().__init__(svg=drawing.get("svg", ""), graph=drawing.get("graph", {}), frames=frames, frame=start,
                         derivation=deriv, lang=lang, strings=strings(lang), presenter=presenter,
                         speed=speed, error=problem, root_name=lesson.root_name, **kwargs)
        self.on_msg(self._on_msg)

    # -- running the engine ----------------------------------------------------------------------

    def _record(self, retain_graph):
        """Run ``root.backward()`` inside ``trace.record()``; returns the recording and any error."""
        error = None
        with trace.record() as rec:
            try:
                self._root.backward(self._gradient, retain_graph=retain_graph)
            except Exception as exc:  # the engine's own message is the lesson: keep it, show it
                error = str(exc)
        return rec, error

    def _run_frames(self, rec, error, gradient_given):
        frames = []
        runs = rec.runs or []
        by_run = {}
        for e in rec.events:
            by_run.setdefault(e.run, []).append(e)
        for r, run in enumerate(runs):
            self._runs += 1
            last = r == len(runs) - 1
            frames += F.backward_frames(self._lesson, self._ids, self._runs - 1, by_run.get(r, []),
                                        run.seeds[0] if run.seeds else np.ones(()), run.retain_graph,
                                        gradient_given, self._targets, self._runs,
                                        error=error if last else None)
        if not runs and error:
            self._runs += 1
            frames.append(F.error_frame(self._lesson, self._runs - 1, self._runs, error))
        return frames

    def _after_runs(self, rec, shown):
        shown = dict(shown)
        for e in rec.events:
            if e.name == "AccumulateGrad" and e.variable is not None:
                shown[e.variable._seq] = e.grad_after
        return shown

    def backward(self, retain_graph=None):
        """Run ``root.backward()`` for real (what the button does) and append its frames.

        ``retain_graph`` defaults to the widget's toggle.  An error (a freed graph...) becomes a
        frame with the engine's message; it is not raised.
        """
        retain = self.retain_graph if retain_graph is None else bool(retain_graph)
        new = self._sync_frame()
        rec, error = self._record(retain)
        new += self._run_frames(rec, error, self._gradient is not None)
        self._shown = _grad_arrays(_grads(self._root, self._lesson.leaves))
        self._append(new)

    def zero_grad(self):
        """``.grad.zero_()`` on every leaf that has a ``.grad`` (what the zero_() button does)."""
        new = self._sync_frame()
        before = _grad_arrays(_grads(self._root, self._lesson.leaves))
        for leaf in self._lesson.leaves:
            if leaf.grad is not None:
                leaf.grad.zero_()
        new.append(F.zero_frame(self._lesson, self._ids, before, self._targets))
        self._shown = _grad_arrays(_grads(self._root, self._lesson.leaves))
        self._append(new)

    def _sync_frame(self):
        """A frame saying which ``.grad`` changed outside the widget since the last one shown.

        The first time, that is usually animate() itself, which put every ``.grad`` back after
        recording its pass; the caption says so.
        """
        now = _grad_arrays(_grads(self._root, self._lesson.leaves))
        changed = [t for t in self._lesson.leaves if not _same(now.get(t._seq), self._shown.get(t._seq))]
        restored = self._restored and all(_same(now.get(k), v) for k, v in self._before.items())
        self._restored = False
        if not changed:
            return []
        return [F.sync_frame(self._lesson, self._ids, changed, now, self._targets, restored=restored)]

    def _append(self, new):
        if not new:
            return
        with self.hold_sync():
            start = len(self.frames)
            self.frames = self.frames + new
            self.frame = start
            self.playing = True

    def _on_msg(self, widget, content, buffers):
        kind = content.get("type") if isinstance(content, dict) else None
        try:
            if kind == "backward":
                self.backward(content.get("retain_graph"))
            elif kind == "zero":
                self.zero_grad()
        except Exception as exc:  # never a traceback in the cell: the message goes into the widget
            self._append([F.error_frame(self._lesson, None, self._runs, f"{type(exc).__name__}: {exc}")])

    # -- reading it ------------------------------------------------------------------------------

    @t.validate("frame")
    def _valid_frame(self, proposal):
        try:
            return _check.whole_number(None, "AutogradWidget.frame", proposal["value"], 0,
                                       max(0, len(self.frames) - 1), f"the widget has {len(self.frames)} steps")
        except (TypeError, ValueError) as exc:
            raise t.TraitError(str(exc)) from None

    @t.validate("speed")
    def _valid_speed(self, proposal):
        try:
            return _check.positive_number(None, "AutogradWidget.speed", proposal["value"])
        except (TypeError, ValueError) as exc:
            raise t.TraitError(str(exc)) from None

    @t.observe("lang")
    def _lang_changed(self, change):
        self.strings = strings(change["new"])

    def caption(self, i=None):
        """The words shown at step ``i`` (default: the current step), in the widget's language."""
        i = self.frame if i is None else _check.whole_number(
            "caption", "i", i, 0, len(self.frames) - 1, f"the widget has {len(self.frames)} steps")
        return render(self.lang, self.frames[i]["msg"])

    def state(self):
        """The synced traits as plain data: everything a saved page needs to play."""
        from .standalone import widget_state
        return widget_state(self)

    def save_html(self, path, **options):
        """Write one self-contained HTML file (no network) that plays this widget: see :func:`standalone_html`."""
        from .standalone import standalone_html
        _check.keywords("save_html", options, _SAVE_OPTIONS)
        if "lang" in options:
            _check.one_of("save_html", "lang", options["lang"], LANGS)
        if options.get("presenter") is not None:
            _check.boolean("save_html", "presenter", options["presenter"])
        if options.get("frame") is not None:
            _check.whole_number("save_html", "frame", options["frame"], 0, len(self.frames) - 1,
                                f"the widget has {len(self.frames)} steps")
        _check.text("save_html", "title", options.get("title"))
        Path(path).write_text(standalone_html(self, full_page=True, **options), encoding="utf-8")
        return path

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        try:
            from .standalone import standalone_html
            data = dict(data)
            data["text/html"] = standalone_html(self, full_page=False)
        except Exception:  # the live widget still shows; only the fallback is missing
            pass
        return data, metadata


def animate(root, gradient=None, **options):
    """Show the graph of ``root`` and play its forward and backward passes, beside the chain rule.

    ``animate(o)`` records ``o.backward(retain_graph=True)`` with the engine's recorder, then puts
    every ``.grad`` back as it was (your own ``o.backward()`` afterwards gives the same numbers as
    without the widget).  ``gradient=`` is the seed, as in ``o.backward(gradient)``.  Options:
    ``names={"x": x}`` (default: the variables of the calling cell), ``derivation=[latex, ...]``
    and ``expected={"x": lambda x: 5 * (x + 1)}`` (the instructor's steps and closed forms),
    ``lang="ko"``, ``presenter=True``, ``view="pytorch"``, ``speed=2``, ``backward=False``,
    ``recording=rec``.  Returns the :class:`AutogradWidget`.
    """
    return AutogradWidget(root, gradient, _frame=sys._getframe(1), **options)


# --- helpers -------------------------------------------------------------------------------------

# What animate() and AutogradWidget() take: their own options, and the traits one may start with.
_OPTIONS = ("gradient", "names", "backward", "recording", "derivation", "expected", "view", "rankdir", "lang",
            "presenter", "speed")
_TRAIT_OPTIONS = ("frame", "playing", "retain_graph", "live", "layout", "tooltip", "tabbable")
_SAVE_OPTIONS = ("title", "lang", "presenter", "frame", "include_script", "static_fallback", "element_id")


def _names(names):
    return dict(names or {})


def _grads(root, leaves=None):
    """Each leaf's ``.grad`` tensor and a copy of its numbers, to put back later."""
    if leaves is None:
        leaves = Lesson(root).leaves if root.grad_fn is not None or root.requires_grad else []
    return {t._seq: (t, t._grad, None if t._grad is None else t._grad._data.copy(),
                     None if t._grad is None else t._grad._vbox[0]) for t in leaves}


def _grad_arrays(saved):
    return {seq: data for seq, (_, _, data, _) in saved.items()}


def _restore(saved):
    """Put every ``.grad`` back: the same tensor objects, with their old numbers."""
    for leaf, grad, data, version in saved.values():
        if grad is not None:
            grad._data[...] = data
            grad._vbox[0] = version
        leaf._grad = grad


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))


def _seed(rec, root, gradient):
    """The gradient the backward pass starts from, as the engine took it; None if it refused it."""
    if rec is not None and rec.runs and rec.runs[0].seeds:
        return rec.runs[0].seeds[0]
    if gradient is None:
        return np.ones_like(root._data)
    try:
        seed = np.asarray(getattr(gradient, "_data", gradient), dtype=root._data.dtype)
    except (TypeError, ValueError):
        return None                                            # the error frame says why
    return seed if seed.shape == root._data.shape else None


def _draw(root, view, names, caller, rec, rankdir):
    """The graph and its SVG, or the reason they could not be made (shown in the widget)."""
    from .drawing import draw
    return draw(root, view=view, names=names, frame=caller, recording=rec, rankdir=rankdir)
