"""The key to a drawn graph (what dashed, blue, green, ``[2]`` mean), shown under ``draw()``'s picture.

A ``<details>`` element: closed, it is one line ("Key"); a click opens it, with no script.  The
colours are the drawing's palette (:data:`gradviz.drawing.dot_text.PALETTE`).  The widget draws the same
key in its own front end, from the words in ``gradviz/widget/i18n.py`` (keys ``key_*``).

>>> "leaf tensor" in legend_html()
True
"""

import html

from .dot_text import PALETTE

__all__ = ["LEGEND", "legend_html"]

# (what the swatch shows, what it means); the swatch is drawn by _swatch
LEGEND = (
    ("leaf", "leaf tensor (requires_grad=True)"),
    ("const", "constant or data: no gradient flows into it"),
    ("root", "output: backward() starts here"),
    ("op", "op, named by the grad_fn it records"),
    ("shape", "the tensor's shape ([2] = two numbers; scalar = none)"),
    ("grad", "a gradient: .grad of a leaf, or what flows back along an edge"),
)


def _swatch(kind):
    border, fill = {"leaf": PALETTE["leaf"], "const": PALETTE["const"], "root": PALETTE["root"],
                    "op": PALETTE["op"]}.get(kind, (PALETTE["muted"], "none"))
    if kind == "op":
        shape = f'<ellipse cx="15" cy="10" rx="13" ry="7" fill="{fill}" stroke="{border}" stroke-width="1.5"/>'
    elif kind in ("shape", "grad"):
        colour, text = (PALETTE["muted"], "[2]") if kind == "shape" else (PALETTE["grad"], "0.5")
        shape = (f'<text x="15" y="14" text-anchor="middle" font-family="monospace" font-size="11" '
                 f'fill="{colour}">{text}</text>')
    else:
        dash = ' stroke-dasharray="4 2"' if kind == "const" else ""
        width = "2.5" if kind == "root" else "1.5"
        shape = (f'<rect x="2" y="3" width="26" height="14" rx="4" fill="{fill}" stroke="{border}" '
                 f'stroke-width="{width}"{dash}/>')
    return f'<svg width="30" height="20" viewBox="0 0 30 20" aria-hidden="true">{shape}</svg>'


def legend_html(title="Key"):
    """The key as a closed ``<details>`` (HTML, no script, no external resource)."""
    rows = "".join(f'<div style="display:flex;align-items:center;gap:6px">{_swatch(kind)}'
                   f"<span>{html.escape(words)}</span></div>" for kind, words in LEGEND)
    return (f'<details class="gv-key" style="font:12px sans-serif;margin-top:4px">'
            f'<summary style="cursor:pointer">{html.escape(title)}</summary>{rows}</details>')
