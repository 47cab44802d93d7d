"""The widget's Python side as one pipeline: a traced graph in, the widget's traits out.

:func:`build_animation` runs the stages in order, each reading what the one before made::

    options checked  ->  the pass shown, recorded  ->  layers folded  ->  the drawing
      ->  the user's .grad restored  ->  the lesson (the trace's view)  ->  the derivation
      ->  the frames  ->  the practice questions  ->  the traits

and returns an :class:`Animation`: the traits the front end plays (``animation.traits``) and
what the live ``backward()``, ``zero_()`` and ``expand`` buttons need to append frames later.
:class:`~gradviz.widget.AutogradWidget` only hands the traits to anywidget and the buttons to
the animation.
"""

from dataclasses import dataclass, field

import numpy as np

from .. import _check
from ..drawing.graph import VIEWS
from ..drawing.svg_ids import Ids
from ..trace import folding
from ..trace.torch_watch import module_calls
from ..value_text import summary
from . import practice_mode
from ._lesson import Lesson
from .derivation import StepMath, UserCodeError, build_derivation, targets
from .drawing import WIDGET_RANKDIRS, draw_trace
from .frames import (BackwardCall, Scene, backward_frames, error_frame, forward_frames, note_frame, start_frame,
                     sync_frame, values_frame, zero_frame)
from .i18n import LANGS, strings

__all__ = ["Options", "check_options", "build_animation", "Animation", "OPTIONS", "TRAIT_OPTIONS"]

# What animate() and AutogradWidget() take: their own options, and the traits one may start with.
OPTIONS = ("gradient", "names", "backward", "recording", "derivation", "expected", "view", "rankdir", "lang", "collapse",
           "presenter", "speed", "practice")
TRAIT_OPTIONS = ("frame", "playing", "retain_graph", "live", "layout", "tooltip", "tabbable")


@dataclass(frozen=True)
class Options:
    """What ``animate()``, ``AutogradWidget()`` or ``practice()`` (``func``) was asked, checked."""
    func: str
    root: object                     # the tensor whose graph is shown
    gradient: object = None
    names: dict = None
    backward: bool = True
    recording: object = None
    derivation: list = None
    expected: dict = None
    view: str = "dataflow"
    rankdir: str = "auto"
    lang: str = "en"
    presenter: bool = False
    speed: float = 1.0
    collapse: object = None
    asking: dict = None              # practice mode's questions (None: none asked)
    frame: int = 0                   # the step shown first
    traits: dict = field(default_factory=dict)      # the other traits to start with (playing=...)


def check_options(func, root, gradient=None, given=None):
    """Stage 0: the options as :class:`Options`, each checked (PyTorch-style errors naming ``func``)."""
    given = dict(given or {})
    _check.keywords(func, given, OPTIONS + TRAIT_OPTIONS)
    _check.root(func, root)
    names, derivation = _check.names(func, given.pop("names", None)), _check.steps(func, given.pop("derivation", None))
    expected = _check.expected(func, given.pop("expected", None))
    view, rankdir, lang = given.pop("view", "dataflow"), given.pop("rankdir", "auto"), given.pop("lang", "en")
    _check.one_of(func, "view", view, VIEWS)
    _check.one_of(func, "rankdir", rankdir, WIDGET_RANKDIRS)
    _check.one_of(func, "lang", lang, LANGS)
    backward = _check.boolean(func, "backward", given.pop("backward", True))
    presenter = _check.boolean(func, "presenter", given.pop("presenter", False))
    speed = _check.positive_number(func, "speed", given.pop("speed", 1.0))
    recording = given.pop("recording", None)
    _check.recording(func, recording)
    practice = given.pop("practice", None)
    asking = practice_mode.options(func, practice) if practice is not None and practice is not False else None
    return Options(func, root, gradient, names, backward, recording, derivation, expected, view, rankdir, lang, presenter,
                   speed, given.pop("collapse", None), asking, given.pop("frame", 0), given)


def build_animation(adapter, options):
    """Every trait of the widget for the graph ``adapter.trace`` (``adapter``: the trace with its
    engine, :func:`gradviz.trace.make_adapter`), stage after stage; returns the :class:`Animation`."""
    trace = adapter.trace
    before = adapter.grads()
    runs, error = _the_pass(adapter, options)
    if options.collapse is not None:               # each layer of the model as one step
        folding.collapse(trace, options.collapse, adapter.found.modules,
                         module_calls(s.fn() for s in trace.steps if s.fn is not None))
    adapter.refresh()                              # drawn with the gradients in place (final slot sizes)
    drawing = draw_trace(trace, options.view, options.rankdir, options.lang)
    shows_pass = options.recording is not None or (options.backward and options.root.requires_grad)
    restored = options.recording is None and options.backward and options.root.requires_grad
    if restored:                                   # the widget's pass leaves the user's .grad as it was
        adapter.restore(before)
    animation = Animation(adapter, Lesson(trace), drawing, options, before, restored)
    seed = runs[0].seed if runs else adapter.seed(options.gradient)
    derivation, problem = animation.derive(seed, drawing.get("error", ""))
    frames, problem = animation.first_frames(runs, error, shows_pass, problem)
    for run in runs:
        for e in run.events:
            if e.variable is not None:
                animation.shown[e.variable.seq] = e.grad_after
    svg, svg_lr, asked = drawing.get("svg", ""), drawing.get("svg_lr", ""), {}
    if options.asking is not None:                 # the questions asked before the steps
        lesson = animation.lesson
        asked = practice_mode.build(lesson, animation.ids, frames, runs[0].events if runs else [], lesson.root_name,
                                    options.asking, options.func)
        if asked["questions"]:
            # no answer left in the picture's hidden text
            svg, svg_lr = practice_mode.scrub_svg(svg, frames[0]), svg_lr and practice_mode.scrub_svg(svg_lr, frames[0])
    # everything is known before the comm opens: the front end gets it in one message
    _check.whole_number(options.func, "frame", options.frame, 0, len(frames) - 1, f"the widget has {len(frames)} steps")
    animation.traits = dict(svg=svg, svg_lr=svg_lr, rankdir=options.rankdir, graph=drawing.get("graph", {}),
                            frames=frames, frame=options.frame,
                            derivation=derivation, lang=options.lang, strings=strings(options.lang),
                            presenter=options.presenter, speed=options.speed, error=problem,
                            root_name=animation.lesson.root_name, practice=asked,
                            score=practice_mode.score(asked, []), **options.traits)
    return animation


def _the_pass(adapter, options):
    """The backward pass the widget shows: the user's recording, or one run in observing mode
    (no hook runs, no ``.grad`` is written: see :meth:`gradviz.trace.EngineAdapter.backward`)."""
    if options.recording is not None:
        return adapter.add_recording(options.recording), None
    if options.backward and options.root.requires_grad:
        return adapter.backward(options.gradient, retain_graph=True, observe=True)
    return [], None


class Animation:
    """One widget's animation: its traits (``traits``, set once by :func:`build_animation`) and the
    state its live buttons read and move on (the engine's adapter, the lesson, the drawing's ids,
    the derivation's check targets, the passes shown so far)."""

    def __init__(self, adapter, lesson, drawing, options, before, restored):
        self.adapter, self.lesson, self.options = adapter, lesson, options
        self.root, self.gradient, self.expected, self.steps = options.root, options.gradient, options.expected, options.derivation
        self.graph, self.drawing, self.drawn_lang = drawing.get("graph_obj"), drawing.get("drawing"), options.lang
        self.drawing_lr = drawing.get("drawing_lr")    # the same graph left to right (rankdir="auto"), or None
        self.ids = drawing.get("ids") or Ids()
        self.restored = restored   # animate()'s pass was undone: the first sync frame says so
        self.runs = 0              # backward() calls shown (frame["run"]), animate()'s own included
        self.calls = 0             # the user's own calls (buttons, recording=): what captions count
        self.recorded = {}         # frame["run"] -> (its Run, gradient given): for expand()
        self.before = {seq: data for seq, (_, _, data, _) in before.items()}
        self.shown = dict(self.before)             # the .grad each leaf shows now
        self.traits = {}

    def derive(self, seed, problem=""):
        """The hand derivation, the running product and the check targets at the trace's values now.

        Called again after the live ``backward()`` ran the forward pass anew: the check then
        compares like with like (the same values, the same ``gradient``).  Returns the derivation
        trait and ``problem`` (or why the instructor's closed form failed).
        """
        lesson, expected = self.lesson, self.expected
        self.formulas = {}
        try:
            deriv = build_derivation(lesson, seed, self.steps, expected, ids=self.ids, keep=self.formulas)
        except Exception as exc:  # a derivation that cannot be written must not hide the graph
            deriv = {"custom": [], "defs": [], "leaves": [], "error": f"{type(exc).__name__}: {exc}"}
        try:   # (a folded picture runs its ops a group at a time: no product per op to write)
            folded = self.graph is not None and self.graph.summarized
            self.math = None if folded else StepMath(lesson, seed, self.formulas.get("paths"), fmt=summary)
        except Exception:  # no running product then; the frames still play
            self.math = None
        try:
            # (a wrong expected= name raises here)
            self.targets = targets(lesson, seed, expected, self.formulas.get("chain"))
        except UserCodeError as exc:  # the instructor's own closed form failed: say so, keep the chain rule
            self.targets, problem = targets(lesson, seed), problem or str(exc)
        self.leaf_numbers = self.adapter.leaf_numbers()
        return deriv, problem

    def first_frames(self, runs, error, shows_pass, problem):
        """The start frame, the forward pass and the pass shown; ``problem`` if they could not be built."""
        lesson = self.lesson
        try:
            frames = [start_frame(lesson, self.ids, self.before, self.targets)]
            frames += forward_frames(lesson, self.ids)
            if shows_pass:    # (without grad, the start frame already says there is no backward pass)
                frames += self.run_frames(runs, error, gradient_given=self.gradient is not None,
                                          replay=self.options.recording is None)
        except Exception as exc:  # a bug of ours must not become a traceback in a student's cell
            frames = [note_frame(lesson, "cap_start")]
            problem = problem or f"the animation could not be built ({type(exc).__name__}: {exc})"
        return frames, problem

    def scene(self):
        """What the frames are made against: the lesson, the drawing's ids, the checked leaves."""
        return Scene(self.lesson, self.ids, self.targets)

    def run_frames(self, runs, error, gradient_given, replay=False):
        """The frames of backward() calls; ``replay``: animate()'s own, not counted as the user's calls."""
        frames = []
        for run in runs:
            self.runs += 1
            self.calls += 0 if replay else 1
            self.recorded[self.runs - 1] = (run, gradient_given)
            call = BackwardCall(run, self.runs - 1, 0 if replay else self.calls, gradient_given)
            frames += backward_frames(self.scene(), call, math=self.math)
        if not runs and error:
            self.runs += 1
            self.calls += 0 if replay else 1
            frames.append(error_frame(self.lesson, self.runs - 1, 0 if replay else self.calls, error))
        return frames

    # -- the live buttons: each returns the frames to append ------------------------------------

    def backward(self, retain_graph, forward_again, error):
        """``root.backward()`` for real: ``(new frames, None or the (derivation, error) traits anew)``.

        ``forward_again`` and ``error`` are the widget's traits of those names.
        """
        new = self.sync_frame()
        again, redone, blocked = self._forward_again_frames(forward_again, error)
        new += again
        if blocked:   # the graph cannot run backward() again, nor be built again: said in words, not run
            return new, redone
        runs, failed = self.adapter.backward(self.gradient, retain_graph)   # (the gradient animate() was given)
        folding.fold_runs(self.adapter.trace, runs)
        if redone is not None and runs and any(s.op is None and not getattr(s, "members", None)
                                               for s in self.lesson.nodes):
            # a step without a hand rule (split) ran again: its numbers are the engine's in this run
            redone = self.derive(self.adapter.seed(self.gradient), error)
        new += self.run_frames(runs, failed, self.gradient is not None)
        self.shown = self.adapter.grad_arrays()
        return new, redone

    def _forward_again_frames(self, forward_again, error):
        """Run the forward pass again from the leaves as they are now, when the graph shown is not
        theirs any more: freed, a saved value changed in place (a training step), or a leaf's numbers
        changed without a version bump (``p.data -= ...``).  Only if ``forward_again`` is on (off,
        the engine's error is the lesson).  Every value is then redrawn (one frame sets them all)
        and the derivation and its check targets are computed again at the new values.

        A layer folded by ``collapse=`` runs as its own ops, and a constant PyTorch did not keep is
        no obstacle while no gradient reads it (see the adapters' ``forward_again``).

        Returns ``(frames, redone, blocked)``: ``blocked`` when the forward pass cannot run again
        (a custom Function's forward is the user's own code; a value PyTorch did not keep that a
        gradient reads; an op the widget cannot call) and the graph cannot run backward either
        (freed, or a saved value changed in place): the engine would only refuse, so the press ends
        on a note that says what cannot be checked and why, with nothing run."""
        stale = getattr(self.adapter, "stale", None)
        unusable = stale() if stale is not None else None
        why = unusable
        if why is None and any(not _same(a, self.leaf_numbers.get(k)) for k, a in self.adapter.leaf_numbers().items()):
            why = "modified"
        if why is None or not forward_again:    # (off on purpose: the engine's error is the lesson)
            return [], None, False
        cannot = self.adapter.forward_again()
        if cannot is not None:
            reason = ["why_" + cannot.replace(" ", "_"), {}]
            if unusable is None:    # (the old graph still runs: on the values it was built with)
                return [note_frame(self.lesson, "cap_forward_again_no_" + why, reason=reason)], None, False
            note = note_frame(self.lesson, "cap_not_run_" + unusable, reason=reason)
            note["unchecked"] = True        # (the widget's caption says so: no new call, nothing to check)
            return [note], None, True
        redone = self.derive(self.adapter.seed(self.gradient), error)
        return [values_frame(self.lesson, self.ids, "cap_forward_again_" + why)], redone, False

    def zero_grad(self):
        """``.grad.zero_()`` on every leaf that has a ``.grad``: the frames saying so."""
        new = self.sync_frame()
        before = self.adapter.grad_arrays()
        self.adapter.zero_grads()
        self.shown = self.adapter.grad_arrays()
        new.append(zero_frame(self.lesson, self.ids, before, self.targets, self.shown))
        return new

    def sync_frame(self):
        """A frame saying which ``.grad`` changed outside the widget since the last one shown.

        The first time, that is usually animate() itself, whose pass wrote no ``.grad`` (the
        picture showed the sums it would make); the caption says so.
        """
        now = self.adapter.grad_arrays()
        changed = [t for t in self.lesson.leaves if not _same(now.get(t.seq), self.shown.get(t.seq))]
        restored = self.restored and all(_same(now.get(k), v) for k, v in self.before.items())
        self.restored = False
        if not changed:
            return []
        return [sync_frame(self.lesson, self.ids, changed, now, self.targets, restored=restored)]

    def expanded(self, frame):
        """The frames of the folded step ``frame`` (a frame dict with ``"folded"``), op by op."""
        group = frame["folded"]["group"]
        if frame["phase"] == "forward":
            new = []
            for k, step in enumerate(self.lesson.nodes, 1):
                if self.ids.group(step) == group:
                    new += forward_frames(self.lesson, self.ids, [step], first=k, fold=False)
            return new
        run, gradient_given = self.recorded[frame["run"]]
        call = BackwardCall(run, frame["run"], frame["run"] + 1, gradient_given)
        return backward_frames(self.scene(), call, fold=False, only=group)


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
