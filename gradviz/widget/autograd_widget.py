"""AutogradWidget: the computation graph, its forward and backward passes animated, beside the hand derivation.

The traits are the whole truth: the drawing, every frame of the animation, the derivation, the
step shown, the language.  ``static/widget.js`` plays them without asking Python (so a saved
page animates with no kernel); Python is needed only for the live ``backward()`` and ``zero_()``
buttons, which run the real engine and append what it did as new frames.
"""

import sys
from pathlib import Path

import anywidget
import traitlets

from .. import _check
from .._gc import paused_gc
from ..trace import make_adapter
from . import practice_mode
from .drawing import clean_svg
from .frames import error_frame
from .i18n import LANGS, render, strings
from .model import WidgetModel
from .pipeline import build_animation, check_options
from .standalone import standalone_html, widget_module, widget_state

__all__ = ["AutogradWidget", "animate", "practice"]

STATIC = Path(__file__).parent / "static"


class AutogradWidget(anywidget.AnyWidget, WidgetModel):
    """The graph of ``root`` with its forward and backward passes, node by node, and the chain rule.

    ``AutogradWidget(o)`` shows a backward pass of ``o`` (``gradient`` its seed) through the adapter
    of ``o``'s engine (:mod:`gradviz.trace`) without acting on the user's program: in gradviz's
    engine inside :func:`gradviz.autograd.grad_mode.observing` (no user hook runs, no ``.grad`` is written, a
    custom Function's backward is not run twice for one ``backward()`` of the user's); under
    PyTorch by running its engine's loop node by node without any hook (:mod:`gradviz.trace.torch_backward`,
    :meth:`gradviz.trace.torch_engine.TorchAdapter.backward`).  The notebook's own ``o.backward()``
    afterwards behaves as if the widget were not there.
    Pass ``backward=False`` to show the forward pass only, or ``recording=rec`` to show a
    recording of your own instead.  The ``backward()`` and ``zero_()`` buttons act on the real
    tensors: they change ``x.grad`` in the notebook too.
    """

    _esm, _css = widget_module()          # widget.js with practice.js, and their CSS

    def __init__(self, root, gradient=None, *, _frame=None, _func=None, **options):
        options = check_options(_func or ("animate" if _frame is not None else "AutogradWidget"), root, gradient,
                                options)
        caller = _frame if _frame is not None else sys._getframe(1)
        # one trace, read by the picture, the captions, the derivation and the frames
        adapter = make_adapter([root], names=options.names, frame=caller, cuts=options.view == "dataflow")
        del caller
        self._animation = build_animation(adapter, options)
        super().__init__(**self._animation.traits)
        self.on_msg(self._on_msg)

    # -- the live buttons ------------------------------------------------------------------------

    def backward(self, retain_graph=None, forward_again=None):
        """Run ``root.backward()`` for real (what the button does) and append its frames.

        ``retain_graph`` and ``forward_again`` default to the widget's toggles (the button sends
        both as they were when it was pressed: a toggle's own update may still be on its way, held
        back by ipywidgets behind the last one).  An error (a freed graph...) becomes a frame with
        the engine's message; it is not raised.
        """
        retain = self.retain_graph if retain_graph is None else bool(retain_graph)
        again = self.forward_again if forward_again is None else bool(forward_again)
        animation = self._animation
        first = animation.runs
        new, redone = animation.backward(retain, again, self.error)
        if redone is not None:        # the forward pass ran again: the derivation at the new values
            self.derivation, self.error = redone
        self._append(new, [(k, animation.recorded[k][0]) for k in range(first, animation.runs) if k in animation.recorded])

    def zero_grad(self):
        """``.grad.zero_()`` on every leaf that has a ``.grad`` (what the zero_() button does)."""
        self._append(self._animation.zero_grad())

    def _append(self, new, runs=()):
        """Append frames ``new`` (holding the passes ``runs``: ``(frame["run"], Run)``) and play them;
        in practice mode, the new passes' steps are asked too (:func:`practice_mode.extend`)."""
        if not new:
            return
        animation = self._animation
        with self.hold_sync():
            start = len(self.frames)
            frames = self.frames + new
            if animation.options.asking is not None:
                asked = practice_mode.extend(self.practice, self.answers, animation.options.asking, animation.lesson,
                                             animation.ids, frames, start, runs, animation.options.func)
                if asked != self.practice:
                    self.practice = asked
                    self.score = practice_mode.score(asked, self.answers)
            self.frames = frames
            self.frame = start
            self.playing = True

    def _on_msg(self, widget, content, buffers):
        kind = content.get("type") if isinstance(content, dict) else None
        try:
            if kind == "backward":
                self.backward(content.get("retain_graph"), content.get("forward_again"))
            elif kind == "zero":
                self.zero_grad()
            elif kind == "expand":            # a folded step, written out op by op (see expand())
                self.expand(content.get("frame"))
        except Exception as exc:  # never a traceback in the cell: the message goes into the widget
            self._append([error_frame(self._animation.lesson, None, self._animation.runs,
                                      f"{type(exc).__name__}: {exc}")])

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
        new = self._animation.expanded(f)
        practice = self.practice
        if (practice or {}).get("questions") and len(new) != 1:   # the steps after it move: so do their questions
            practice = dict(practice, questions=[dict(q, at=q["at"] + len(new) - 1) if q["at"] > i else q
                                                 for q in practice["questions"]])
        with self.hold_sync():
            self.frames = self.frames[:i] + new + self.frames[i + 1:]
            if practice is not self.practice:
                self.practice = practice
            self.frame = i
        return new

    # -- reading it ------------------------------------------------------------------------------

    @traitlets.validate("frame")
    def _valid_frame(self, proposal):
        try:
            return _check.whole_number(None, "AutogradWidget.frame", proposal["value"], 0,
                                       max(0, len(self.frames) - 1), f"the widget has {len(self.frames)} steps")
        except (TypeError, ValueError) as exc:
            raise traitlets.TraitError(str(exc)) from None

    @traitlets.validate("speed")
    def _valid_speed(self, proposal):
        try:
            return _check.positive_number(None, "AutogradWidget.speed", proposal["value"])
        except (TypeError, ValueError) as exc:
            raise traitlets.TraitError(str(exc)) from None

    @traitlets.observe("lang")
    def _lang_tooltips(self, change):
        """The graph's tooltips in the new language too (worded anew, no new layout)."""
        animation = getattr(self, "_animation", None)
        if animation is not None and animation.drawing is not None and change["new"] != animation.drawn_lang:
            animation.drawn_lang = change["new"]
            with self.hold_sync():
                self.svg, self.svg_lr = self._pictures(strings(change["new"]))

    def caption(self, i=None):
        """The words shown at step ``i`` (default: the current step), in the widget's language."""
        # (the frames may have been replaced by fewer since the frame was set)
        i = min(self.frame, len(self.frames) - 1) if i is None else _check.whole_number(
            "caption", "i", i, 0, len(self.frames) - 1, f"the widget has {len(self.frames)} steps")
        return render(self.lang, self.frames[i]["msg"])

    def _pictures(self, words):
        """``(svg, svg_lr)`` worded in ``words``' language (no new layout), without the answers' text."""
        animation = self._animation
        lr = animation.drawing_lr
        return (self._unanswered(clean_svg(animation.drawing.svg(words=words))),
                self._unanswered(clean_svg(lr.svg(words=words))) if lr is not None and self.svg_lr else self.svg_lr)

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
        drawing = self._animation.drawing
        if lang and lang != self._animation.drawn_lang and drawing is not None:   # the tooltips in the page's language
            svg, svg_lr = self._pictures(strings(lang))
            source = dict(widget_state(self), svg=svg, svg_lr=svg_lr)
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
    none of your hooks runs (your own ``o.backward()`` afterwards gives the same numbers as
    without the widget; see :class:`AutogradWidget`).  ``gradient=`` is the seed, as in ``o.backward(gradient)``.  Options:
    ``names={"x": x}`` (default: the variables of the calling cell), ``derivation=[latex, ...]``
    and ``expected={"x": lambda x: 5 * (x + 1)}`` (the instructor's steps and closed forms),
    ``lang="ko"``, ``presenter=True``, ``view="pytorch"``, ``rankdir="LR"`` (default ``"auto"``: top
    to bottom, or left to right where that shows the whole graph larger in the widget's box),
    ``speed=2``, ``backward=False``,
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

_SAVE_OPTIONS = ("title", "lang", "presenter", "frame", "include_script", "static_fallback", "element_id")
