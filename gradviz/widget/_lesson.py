"""What the widget knows about one graph: a view of its :class:`gradviz.trace.Trace` for the frames and the derivation.

The trace (either engine's) holds the ops in forward order, every value and every name; this
module only answers the questions the captions and the derivation ask of it.
"""

import numpy as np

from ..drawing.graph import latex_name
from ..value_text import format_line, format_number
from ..trace import steps_reached

__all__ = ["Lesson", "latex_name"]

class Lesson:
    """The graph behind a trace's root: steps in forward order, inputs, values, leaves and names.

    ``Lesson(trace)`` (a :class:`gradviz.trace.Trace`, traced once by whoever draws it): every
    tensor without a name has a made-up letter, so captions can talk about all of them.
    """

    def __init__(self, trace):
        self.trace = trace
        self.root = self.trace.root
        self.root_step = self.trace.root_step
        self.nodes = steps_reached(self.trace)
        self.leaves = self.trace.leaves

    # -- values --------------------------------------------------------------------------------

    def inputs(self, node):
        """The arrays ``node``'s op read in the forward pass, one per input."""
        return [i.data for i in node.inputs]

    def output(self, node):
        return node.out.data

    def kinds(self, node):
        """One ``(kind, thing)`` per input: ``("op", step)``, ``("leaf", value)``, ``("const", value)``."""
        return [(i.kind, i.src) for i in node.inputs]

    def consumers(self):
        """For each step or leaf (by id): the ``(step, i)`` uses of its output, in forward order.

        (The uses of a further output of a step with several are under ``(id(step), output_nr)``.)
        """
        uses = {}
        for node in self.nodes:
            for i, inp in enumerate(node.inputs):
                if inp.kind != "const":
                    key = (id(inp.src), inp.output_nr) if inp.output_nr else id(inp.src)
                    uses.setdefault(key, []).append((node, i))
        return uses

    # -- names ---------------------------------------------------------------------------------

    def name(self, thing):
        """The name of a leaf or constant value, or of a step's output (None if it has none)."""
        if thing is None:
            return None
        out = getattr(thing, "out", None)
        return (out if out is not None else thing).name

    @property
    def root_name(self):
        return self.root.name or "out"

    def input_name(self, node, i):
        """How a caption names input ``i`` of ``node``: :meth:`input_text`, but a further output of a
        node with several is its own variable (``q`` of ``p, q = a.split(2)``, not ``p``)."""
        inp = node.inputs[i]
        piece = getattr(inp.src, "pieces", {}).get(inp.output_nr) if inp.kind == "op" and inp.output_nr else None
        return piece.name if piece is not None and piece.name else self.input_text(inp.kind, inp.src)

    def input_text(self, kind, thing):
        """How a caption names an input: its name, or a constant's value."""
        if kind == "const":
            if thing is None:
                return "?"
            if thing.name:
                return thing.name
            if thing.data is None:
                return "?"
            a = np.asarray(thing.data)
            return format_number(a[()]) if a.ndim == 0 else format_line(a)
        return self.name(thing)
