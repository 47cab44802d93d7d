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

from .. import _check
from .._gc import paused_gc
from ..trace import folding, make_adapter
from ..trace.torch_watch import module_calls
from ..draw import RANKDIRS
from ..graph import VIEWS
from ..value_text import summary
from . import practice_mode
from .frames import (BackwardCall, Ids, Scene, backward_frames, error_frame, forward_frames, note_frame, start_frame,
                     sync_frame, values_frame, zero_frame)
from .derivation import StepMath, UserCodeError, build_derivation, targets
from .drawing import clean_svg, draw_trace
from .i18n import LANGS, render, strings
from .model import WidgetModel
from .standalone import standalone_html, widget_module, widget_state
from ._lesson import Lesson

__all__ = ["AutogradWidget", "animate", "practice"]

STATIC = Path(__file__).parent / "static"


class AutogradWidget(anywidget.AnyWidget, WidgetModel):
    """The graph of ``root`` with its forward and backward passes, node by node, and the chain rule.

    ``AutogradWidget(o)`` shows a backward pass of ``o`` (``gradient`` its seed) through the adapter
    of ``o``'s engine (:mod:`gradviz.trace`) without acting on the user's program: in gradviz's
    engine inside :func:`gradviz.autograd.grad_mode.observing` (no user hook runs, no ``.grad`` is written, a
    custom Function's backward is not run twice for one ``backward()`` of the user's); under
    PyTorch with ``torch.autograd.grad`` and hooks on every node, the tensor hooks set aside
    (:meth:`gradviz.trace.torch_engine.TorchAdapter.backward`).  The notebook's own ``o.backward()``
    afterwards behaves as if the widget were not there.
    Pass ``backward=False`` to show the forward pass only, or ``recording=rec`` to show a
    recording of your own instead.  The ``backward()`` and ``zero_()`` buttons act on the real
    tensors: they change ``x.grad`` in the notebook too.
    """

    _esm, _css = widget_module()          # widget.js with practice.js, and their CSS


    def __init__(self, root, gradient=None, *, names=None, backward=True, recording=None, derivation=None,
                 expected=None, view="dataflow", rankdir="TB", lang="en", presenter=False, speed=1.0,
                 collapse=None, practice=None, _frame=None, _func=None, **kwargs):
        func = _func or ("animate" if _frame is not None else "AutogradWidget")
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
        asking = practice_mode.options(func, practice) if practice is not None and practice is not False else None
        start = kwargs.pop("frame", 0)
        self._root, self._gradient, self._expected = root, gradient, expected
        self._runs = 0             # backward() calls shown (frame["run"]), animate()'s own included
        self._calls = 0            # the user's own calls (buttons, recording=): what captions count
        self._recorded = {}        # frame["run"] -> (its Run, gradient given): for expand()
        caller = _frame if _frame is not None else sys._getframe(1)
        # one trace, read by the picture, the captions, the derivation and the frames
        self._engine = make_adapter([root], names=names, frame=caller, cuts=view == "dataflow")
        del caller
        trace = self._engine.trace
        before = self._engine.grads()
        runs, error = [], None
        if recording is not None:
            runs = self._engine.add_recording(recording)
        elif backward and root.requires_grad:
            runs, error = self._engine.backward(gradient, retain_graph=True, observe=True)
        if collapse is not None:               # each layer of the model as one step
            folding.collapse(trace, collapse, self._engine.found.modules,
                                   module_calls(s.fn() for s in trace.steps if s.fn is not None))
        self._engine.refresh()                 # drawn with the gradients in place (final slot sizes)
        drawing = draw_trace(trace, view, rankdir, lang)
        self._graph, self._drawing, self._drawn_lang = drawing.get("graph_obj"), drawing.get("drawing"), lang
        self._restored = recording is None and backward and root.requires_grad
        if self._restored:
            self._engine.restore(before)
        lesson = Lesson(trace)
        self._lesson, self._ids = lesson, drawing.get("ids") or Ids()
        seed = runs[0].seed if runs else self._engine.seed(gradient)
        problem = drawing.get("error", "")
        self._steps = derivation
        deriv, problem = self._derive(seed, problem)
        self._before = {seq: data for seq, (_, _, data, _) in before.items()}
        try:
            frames = [start_frame(lesson, self._ids, self._before, self._targets)]
            frames += forward_frames(lesson, self._ids)
            if recording is not None or (backward and root.requires_grad):
                # (without grad, the start frame already says there is no backward pass)
                frames += self._run_frames(runs, error, gradient_given=gradient is not None,
                                           replay=recording is None)
        except Exception as exc:  # a bug of ours must not become a traceback in a student's cell
            frames = [note_frame(lesson, "cap_start")]
            problem = problem or f"the animation could not be built ({type(exc).__name__}: {exc})"
        self._shown = dict(self._before)
        for run in runs:
            for e in run.events:
                if e.variable is not None:
                    self._shown[e.variable.seq] = e.grad_after
        svg, asked = drawing.get("svg", ""), {}
        if asking is not None:                                   # the questions asked before the steps
            asked = practice_mode.build(lesson, self._ids, frames, runs[0].events if runs else [], lesson.root_name,
                                        asking, func)
            if asked["questions"]:
                svg = practice_mode.scrub_svg(svg, frames[0])             # no answer left in the picture's hidden text
        # everything is known before the comm opens: the front end gets it in one message
        _check.whole_number(func, "frame", start, 0, len(frames) - 1, f"the widget has {len(frames)} steps")
        super().__init__(svg=svg, graph=drawing.get("graph", {}), frames=frames, frame=start,
                         derivation=deriv, lang=lang, strings=strings(lang), presenter=presenter,
                         speed=speed, error=problem, root_name=lesson.root_name, practice=asked,
                         score=practice_mode.score(asked, []), **kwargs)
        self.on_msg(self._on_msg)

    def _derive(self, seed, problem=""):
        """The hand derivation, the running product and the check targets at the trace's values now.

        Called again after the live ``backward()`` ran the forward pass anew: the check then
        compares like with like (the same values, the same ``gradient``).  Returns the derivation
        trait and ``problem`` (or why the instructor's closed form failed).
        """
        lesson, expected = self._lesson, self._expected
        self._formulas = {}
        try:
            deriv = build_derivation(lesson, seed, self._steps, expected, ids=self._ids, keep=self._formulas)
        except Exception as exc:  # a derivation that cannot be written must not hide the graph
            deriv = {"custom": [], "defs": [], "leaves": [], "error": f"{type(exc).__name__}: {exc}"}
        try:   # (a folded picture runs its ops a group at a time: no product per op to write)
            folded = self._graph is not None and self._graph.summarized
            self._math = None if folded else StepMath(lesson, seed, self._formulas.get("paths"), fmt=summary)
        except Exception:  # no running product then; the frames still play
            self._math = None
        try:
            # (a wrong expected= name raises here)
            self._targets = targets(lesson, seed, expected, self._formulas.get("chain"))
        except UserCodeError as exc:  # the instructor's own closed form failed: say so, keep the chain rule
            self._targets, problem = targets(lesson, seed), problem or str(exc)
        self._leaf_numbers = self._numbers_now()
        return deriv, problem

    def _numbers_now(self):
        """A copy of every leaf's numbers as they are now (to see a change made without a version bump)."""
        out = {}
        for v in self._lesson.leaves:
            t = v.tensor()
            out[v.seq] = None if t is None else self._engine._numbers(t)
        return out

    # -- running the engine ----------------------------------------------------------------------

    def _scene(self):
        """What the frames are made against: the lesson, the drawing's ids, the checked leaves."""
        return Scene(self._lesson, self._ids, self._targets)

    def _run_frames(self, runs, error, gradient_given, replay=False):
        """The frames of backward() calls; ``replay``: animate()'s own, not counted as the user's calls."""
        frames = []
        for r, run in enumerate(runs):
            self._runs += 1
            self._calls += 0 if replay else 1
            self._recorded[self._runs - 1] = (run, gradient_given)
            call = BackwardCall(run, self._runs - 1, 0 if replay else self._calls, gradient_given)
            frames += backward_frames(self._scene(), call, math=self._math)
        if not runs and error:
            self._runs += 1
            self._calls += 0 if replay else 1
            frames.append(error_frame(self._lesson, self._runs - 1, 0 if replay else self._calls, error))
        return frames

    def backward(self, retain_graph=None):
        """Run ``root.backward()`` for real (what the button does) and append its frames.

        ``retain_graph`` defaults to the widget's toggle.  An error (a freed graph...) becomes a
        frame with the engine's message; it is not raised.
        """
        retain = self.retain_graph if retain_graph is None else bool(retain_graph)
        new = self._sync_frame()
        new += self._forward_again_frames()
        runs, error = self._engine.backward(self._gradient, retain)   # (the gradient animate() was given)
        folding.fold_runs(self._engine.trace, runs)
        new += self._run_frames(runs, error, self._gradient is not None)
        self._shown = self._engine.grad_arrays()
        self._append(new)

    def _forward_again_frames(self):
        """Run the forward pass again from the leaves as they are now, when the graph shown is not
        theirs any more: freed, a saved value changed in place (a training step), or a leaf's numbers
        changed without a version bump (``p.data -= ...``).  Only if ``forward_again`` is on (off,
        the engine's error is the lesson).  Every value is then redrawn (one frame sets them all)
        and the derivation and its check targets are computed again at the new values."""
        stale = getattr(self._engine, "stale", None)
        why = stale() if stale is not None else None
        if why is None and any(not _same(a, self._leaf_numbers.get(k)) for k, a in self._numbers_now().items()):
            why = "modified"
        if why is None:
            return []
        if not self.forward_again:     # on purpose: the engine's error is the lesson (its hint says why)
            return []
        failed = self._engine.forward_again()
        if failed is not None:
            return [note_frame(self._lesson, "cap_forward_again_no_" + why)]
        deriv, problem = self._derive(self._engine.seed(self._gradient), self.error)
        self.derivation, self.error = deriv, problem
        return [values_frame(self._lesson, self._ids, "cap_forward_again_" + why)]

    def zero_grad(self):
        """``.grad.zero_()`` on every leaf that has a ``.grad`` (what the zero_() button does)."""
        new = self._sync_frame()
        before = self._engine.grad_arrays()
        self._engine.zero_grads()
        self._shown = self._engine.grad_arrays()
        new.append(zero_frame(self._lesson, self._ids, before, self._targets, self._shown))
        self._append(new)

    def _sync_frame(self):
        """A frame saying which ``.grad`` changed outside the widget since the last one shown.

        The first time, that is usually animate() itself, whose pass wrote no ``.grad`` (the
        picture showed the sums it would make); the caption says so.
        """
        now = self._engine.grad_arrays()
        changed = [t for t in self._lesson.leaves if not _same(now.get(t.seq), self._shown.get(t.seq))]
        restored = self._restored and all(_same(now.get(k), v) for k, v in self._before.items())
        self._restored = False
        if not changed:
            return []
        return [sync_frame(self._lesson, self._ids, changed, now, self._targets, restored=restored)]

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
            elif kind == "expand":            # a folded step, written out op by op (see expand())
                self.expand(content.get("frame"))
        except Exception as exc:  # never a traceback in the cell: the message goes into the widget
            self._append([error_frame(self._lesson, None, self._runs, f"{type(exc).__name__}: {exc}")])

    def expand(self, i=None):
        """Write out, op by op, the step ``i`` (default: the one shown) that a folded group stands for.

        A big graph's picture folds regions into groups, and their ops run as one step each way;
        this puts that step's own frames (two per op forward, one per event backward) in its place
        and shows the first.  Returns the new frames.
        """
        last = len(self.frames) - 1
        # (the frames may have been replaced by fewer since the frame was set)
        i = min(self.frame, len(self.frames) - 1) if i is None else _check.whole_number("expand", "i", i, 0, last, f"the widget has {last + 1} steps")
        f = self.frames[i]
        if "folded" not in f:
            raise ValueError(f"expand(): step {i} is not a folded step (only a group of a big graph's "
                             "picture runs as one step)")
        group = f["folded"]["group"]
        if f["phase"] == "forward":
            new = []
            for k, step in enumerate(self._lesson.nodes, 1):
                if self._ids.group(step) == group:
                    new += forward_frames(self._lesson, self._ids, [step], first=k, fold=False)
        else:
            run, gradient_given = self._recorded[f["run"]]
            call = BackwardCall(run, f["run"], f["run"] + 1, gradient_given)
            new = backward_frames(self._scene(), call, fold=False, only=group)
        with self.hold_sync():
            self.frames = self.frames[:i] + new + self.frames[i + 1:]
            self.frame = i
        return new

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
    def _lang_tooltips(self, change):
        """The graph's tooltips in the new language too (worded anew, no new layout)."""
        if getattr(self, "_drawing", None) is not None and change["new"] != self._drawn_lang:
            self._drawn_lang = change["new"]
            self.svg = self._unanswered(clean_svg(self._drawing.svg(words=strings(change["new"]))))

    def caption(self, i=None):
        """The words shown at step ``i`` (default: the current step), in the widget's language."""
        # (the frames may have been replaced by fewer since the frame was set)
        i = min(self.frame, len(self.frames) - 1) if i is None else _check.whole_number(
            "caption", "i", i, 0, len(self.frames) - 1, f"the widget has {len(self.frames)} steps")
        return render(self.lang, self.frames[i]["msg"])

    def _unanswered(self, svg):
        """The drawing without the answers' text when the widget asks questions (practice mode)."""
        if (self.practice or {}).get("questions") and self.frames:
            return practice_mode.scrub_svg(svg, self.frames[0])
        return svg

    def submit(self, text):
        """Answer the open question (practice mode) as the student's input box does; returns the verdict.

        The same checker as the page's (:func:`gradviz.quiz.check_answer`); the try is recorded in
        :attr:`answers` and :attr:`score`, and the widget moves on once the question is settled
        (right, or out of tries).  Text that cannot be read is no try: its verdict's ``ok`` is None.
        """
        return practice_mode.submit(self, text)

    def save_html(self, path, **options):
        """Write one self-contained HTML file (no network) that plays this widget: see :func:`standalone_html`."""
        _check.keywords("save_html", options, _SAVE_OPTIONS)
        if "lang" in options:
            _check.one_of("save_html", "lang", options["lang"], LANGS)
        if options.get("presenter") is not None:
            _check.boolean("save_html", "presenter", options["presenter"])
        if options.get("frame") is not None:
            _check.whole_number("save_html", "frame", options["frame"], 0, len(self.frames) - 1,
                                f"the widget has {len(self.frames)} steps")
        _check.path("save_html", "path", path)
        _check.text("save_html", "title", options.get("title"))
        _check.text("save_html", "element_id", options.get("element_id"))
        for option in ("include_script", "static_fallback"):
            if option in options:
                _check.boolean("save_html", option, options[option])
        source, lang = self, options.get("lang")
        if lang and lang != self._drawn_lang and self._drawing is not None:   # the tooltips in the page's language
            source = dict(widget_state(self), svg=self._unanswered(clean_svg(self._drawing.svg(words=strings(lang)))))
        Path(path).write_text(standalone_html(source, full_page=True, **options), encoding="utf-8")
        return path

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        try:
            data = dict(data)
            data["text/html"] = standalone_html(self, full_page=False)
        except Exception:  # the live widget still shows; only the fallback is missing
            pass
        return data, metadata


def animate(root, gradient=None, **options):
    """Show the graph of ``root`` and play its forward and backward passes, beside the chain rule.

    ``animate(o)`` shows what ``o.backward()`` does without doing it: no ``.grad`` is written and
    none of your tensor hooks runs (your own ``o.backward()`` afterwards gives the same numbers as
    without the widget; see :class:`AutogradWidget`).  ``gradient=`` is the seed, as in ``o.backward(gradient)``.  Options:
    ``names={"x": x}`` (default: the variables of the calling cell), ``derivation=[latex, ...]``
    and ``expected={"x": lambda x: 5 * (x + 1)}`` (the instructor's steps and closed forms),
    ``lang="ko"``, ``presenter=True``, ``view="pytorch"``, ``speed=2``, ``backward=False``,
    ``recording=rec``, ``collapse=model`` (each layer of an ``nn.Module`` as one node).  ``root`` may
    be a real ``torch.Tensor``: PyTorch's own engine is read and run (see the README, "With real
    PyTorch", and ``gradviz.watch()``).  Returns the :class:`AutogradWidget`.
    """
    with paused_gc():      # a big graph is many small objects that all stay: see gradviz._gc
        return AutogradWidget(root, gradient, _frame=sys._getframe(1), **options)


def practice(root, gradient=None, *, ask="leaves", kinds=None, tries=2, hints=True, hide_derivation=True,
             choices=False, lecture=False, when="step", **options):
    """:func:`animate`, but before a chosen step is revealed the widget asks the student for it.

    ``ask``: ``"leaves"`` (each leaf's ``.grad``), ``"all"`` (every node's forward value, local
    factors, the gradient each tensor receives, the leaves' ``.grad``), a list of tensor names
    (``["x", "W1"]``) or a function of a question (its ``name``, ``kind``, ``leaf``, ``node``).
    ``kinds``: which questions, among ``"forward"``, ``"received"``, ``"local"``, ``"sent"``,
    ``"grad"`` and ``"second"`` (``.grad`` after a second ``backward()`` without ``zero_()``).
    ``tries`` per question; ``hints`` after a wrong try (the local factor, then the incoming
    gradient); ``hide_derivation`` until every question is settled; ``choices=4`` for a pick
    among plausible wrong answers instead of typing; ``lecture=True`` for the projector (the
    room predicts, one key reveals).  ``when="step"`` asks each question just before the step that
    shows its answer; ``when="pass"`` asks them all before their pass starts (predict the whole
    backward pass first).  Other options are :func:`animate`'s.

    Answers come back as ``w.answers`` (a record per question: what was typed at each try,
    whether it was right, tries, time) and ``w.score``, synced live; a saved page keeps its own.
    """
    with paused_gc():
        return AutogradWidget(root, gradient, _frame=sys._getframe(1), _func="practice", practice={
            "ask": ask, "kinds": kinds, "tries": tries, "hints": hints, "hide_derivation": hide_derivation,
            "choices": choices, "lecture": lecture, "when": when}, **options)


# --- helpers -------------------------------------------------------------------------------------

# What animate() and AutogradWidget() take: their own options, and the traits one may start with.
_OPTIONS = ("gradient", "names", "backward", "recording", "derivation", "expected", "view", "rankdir", "lang", "collapse",
            "presenter", "speed", "practice")
_TRAIT_OPTIONS = ("frame", "playing", "retain_graph", "live", "layout", "tooltip", "tabbable")
_SAVE_OPTIONS = ("title", "lang", "presenter", "frame", "include_script", "static_fallback", "element_id")


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
