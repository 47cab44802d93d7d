"""The teaching widget: a graph's forward and backward passes animated node by node, beside the chain rule.

>>> import gradviz as torch, gradviz
>>> x = torch.ones(2, requires_grad=True)
>>> o = (1/2) * torch.sum(5 * (x + 1) ** 2)
>>> w = gradviz.animate(o)              # doctest: +SKIP
>>> w.save_html("figure.html")          # doctest: +SKIP

``animate(o)`` returns an :class:`AutogradWidget` (anywidget); ``standalone_html(widget)`` is the
same animation as one self-contained HTML page or fragment, for slides and static sites.
"""

from .autograd_widget import AutogradWidget, animate
from .standalone import save_html, standalone_html, standalone_html_from_state, widget_state

__all__ = ["AutogradWidget", "animate", "standalone_html", "standalone_html_from_state", "save_html",
           "widget_state"]
