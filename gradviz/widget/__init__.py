"""The teaching widget: a graph's forward and backward passes animated node by node, beside the chain rule.

>>> import gradviz as torch, gradviz
>>> x = torch.ones(2, requires_grad=True)
>>> o = (1/2) * torch.sum(5 * (x + 1) ** 2)
>>> w = gradviz.animate(o)              # doctest: +SKIP
>>> w.save_html("figure.html")          # doctest: +SKIP

``animate(o)`` returns an :class:`AutogradWidget` (anywidget); ``standalone_html(widget)`` is the
same animation as one self-contained HTML page or fragment, for slides and static sites.
"""

# the libraries of the `widget` extra; without them, say how to get them (not a bare ModuleNotFoundError)
_EXTRAS = {"anywidget", "ipywidgets", "traitlets", "graphviz", "graphviz_pure", "latex2mathml", "nh3"}

try:
    from .autograd_widget import AutogradWidget, animate, practice
    from .standalone import save_html, standalone_html, standalone_html_from_state, widget_state
except ModuleNotFoundError as e:
    missing = (e.name or "").split(".")[0]
    if missing not in _EXTRAS:
        raise
    raise ModuleNotFoundError(f"cannot animate the graph: the widget needs the module {missing!r}, which is not "
                              'installed. Add the widget extra from your clone of gradviz: pip install -e ".[widget]"',
                              name=missing) from None

__all__ = ["AutogradWidget", "animate", "practice", "standalone_html", "standalone_html_from_state", "save_html",
           "widget_state"]
