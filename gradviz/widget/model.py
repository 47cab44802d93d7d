"""The widget's synced traits -- the whole truth of what it shows -- apart from the widget machinery.

``static/widget.js`` plays exactly these (its ``Model`` typedef names them; a test holds the two
together), in Jupyter through anywidget and in a saved page through a stand-in model, so the
standalone pages and decks read this class, never the anywidget one.
"""

import traitlets

from .i18n import LANGS, strings

__all__ = ["WidgetModel", "SYNCED"]


class WidgetModel(traitlets.HasTraits):
    """The traits :class:`~gradviz.widget.AutogradWidget` syncs to the front end."""

    svg = traitlets.Unicode("", help="The graph as SVG, laid out once at its final size (nothing moves while it plays).").tag(sync=True)
    svg_lr = traitlets.Unicode("", help="The same graph laid out left to right, when rankdir is 'auto' and that picture "
                               "could show it larger in a 16:9 box ('' otherwise, as for every lesson's graph): "
                               "the page shows, for its box, the one whose whole graph is larger.").tag(sync=True)
    rankdir = traitlets.Unicode("auto", help="The layout direction asked: 'auto' (svg top to bottom, and svg_lr when "
                                "there is one), or the Graphviz direction svg is drawn in: 'TB', 'LR', 'BT', 'RL'.").tag(sync=True)
    graph = traitlets.Dict(help="The drawn graph's nodes and edges (gradviz.drawing.graph.Graph.to_dict()).").tag(sync=True)
    frames = traitlets.List(help="The animation: one dict per step (see gradviz.widget.frames).").tag(sync=True)
    frame = traitlets.Int(0, help="The step shown now, an index into frames.").tag(sync=True)
    playing = traitlets.Bool(False, help="Whether the front end is stepping through the frames by itself.").tag(sync=True)
    speed = traitlets.Float(1.0, help="Playback speed in steps per second.").tag(sync=True)
    derivation = traitlets.Dict(help="The hand derivation: instructor's steps, forward definitions and, per leaf, "
                             "the chain rule along every path (LaTeX and MathML).").tag(sync=True)
    lang = traitlets.Enum(LANGS, default_value="en", help="The language of every word shown: 'en' or 'ko'.").tag(sync=True)
    strings = traitlets.Dict(help="Every word of the widget in lang: labels and caption templates (gradviz.widget.i18n).").tag(sync=True)
    presenter = traitlets.Bool(False, help="Larger type, for slides and projectors.").tag(sync=True)
    retain_graph = traitlets.Bool(False, help="The retain_graph= that the backward() button passes.").tag(sync=True)
    forward_again = traitlets.Bool(True, help="Whether the backward() button first runs the forward pass again from the "
                                      "leaves when the graph was freed (as re-running the cell would); False "
                                      "shows PyTorch's freed-graph error instead.").tag(sync=True)
    live = traitlets.Bool(True, help="Whether the backward() and zero_() buttons can reach Python (False in saved pages).").tag(sync=True)
    error = traitlets.Unicode("", help="Why the graph could not be drawn ('' when it was); shown inside the widget.").tag(sync=True)
    root_name = traitlets.Unicode("", help="The name of the tensor whose graph is shown.").tag(sync=True)
    practice = traitlets.Dict(help="Practice mode: the questions asked before the steps that answer them, with their "
                           "expected numbers, hints and options, and the instructor's settings "
                           "(gradviz.widget.practice); {} when the widget only plays.").tag(sync=True)
    answers = traitlets.List(help="One record per question answered: id, node, name, kind, question, typed (the last "
                          "try), attempts (every try), correct, tries, time (seconds), revealed.").tag(sync=True)
    score = traitlets.Dict(help="The answers summed up: asked, answered, correct, first_try, tries, revealed.").tag(sync=True)

    @traitlets.observe("lang")
    def _lang_changed(self, change):
        self.strings = strings(change["new"])

    def state(self):
        """The synced traits as plain data: everything a saved page needs to play."""
        return {name: getattr(self, name) for name in SYNCED}


# A trait added above is saved in pages and decks too.
SYNCED = tuple(name for name, trait in WidgetModel.class_own_traits().items() if trait.metadata.get("sync"))
