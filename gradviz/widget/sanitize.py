"""Markup that cannot run anything: MathML, the graph's SVG, and notebook HTML as JupyterLab cleans it.

The derivation panel puts MathML into the page as markup (``innerHTML``), and that MathML is made
from LaTeX that may hold what a user wrote (variable names, an instructor's steps).  So every
piece of it passes through :func:`sanitize_mathml`: tags outside MathML (``<script>``, ``<img>``,
``<svg>``, ``<annotation-xml>``...) are dropped with their text kept as escaped text, and only
presentation attributes survive (no ``on*`` handlers, no ``href``/``src``, so no ``javascript:``
URLs).

The graph's SVG (:func:`sanitize_svg`) and the HTML of markdown cells in a slide deck
(:func:`sanitize_html`) go through ``nh3`` (the Rust sanitiser ammonia) with allowlists: for SVG
what Graphviz and gradviz draw, for HTML JupyterLab's own (``@jupyterlab/apputils``'
``sanitizer.ts``, the one it applies to an untrusted notebook), less what would load something from
the network when the page opens (remote ``src``, CSS that takes a ``url()``): a deck works offline.
Their hostile-input tests are ``tests/widget/test_sanitize.py``.
"""

import html
import re
from html.parser import HTMLParser

import nh3

from ..drawing.svg import CSS

__all__ = ["sanitize_mathml", "sanitize_html", "sanitize_svg", "TAGS", "ATTRS", "HTML_TAGS", "HTML_ATTRS",
           "STYLE_PROPERTIES", "SVG_TAGS", "SVG_ATTRS"]

TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot", "msub",
        "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle",
        "mpadded", "mphantom", "menclose", "mmultiscripts", "mprescripts", "none", "semantics",
        "merror", "mlabeledtr"}
ATTRS = {"display", "mathvariant", "stretchy", "fence", "form", "separator", "lspace", "rspace",
         "accent", "accentunder", "columnalign", "rowspacing", "columnspacing", "width", "height",
         "depth", "displaystyle", "scriptlevel", "notation", "linethickness", "minsize", "maxsize",
         "movablelimits", "largeop", "symmetric", "columnlines", "rowlines", "frame", "align",
         "rowalign", "mathsize", "class"}


class _Cleaner(HTMLParser):
    """Keeps whitelisted MathML tags and attributes; everything else becomes escaped text."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.out, self.open = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            return
        kept = []
        for k, v in attrs:
            if k in ATTRS and v is not None:      # (no xmlns: HTML puts <math> in MathML's namespace)
                kept.append(f' {k}="{html.escape(v, quote=True)}"')
        self.out.append(f"<{tag}{''.join(kept)}>")
        self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in TAGS:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            while self.open:
                t = self.open.pop()
                self.out.append(f"</{t}>")
                if t == tag:
                    break

    def handle_data(self, data):
        self.out.append(html.escape(data, quote=False))

    def handle_charref(self, name):
        if re.fullmatch(r"x[0-9a-fA-F]+|[0-9]+", name):
            self.out.append(f"&#{name};")

    def handle_entityref(self, name):
        self.out.append(html.escape(html.unescape(f"&{name};"), quote=False))

    def result(self):
        self.close()
        while self.open:
            self.out.append(f"</{self.open.pop()}>")
        return "".join(self.out)


def sanitize_mathml(markup):
    """Only MathML survives: other tags are dropped (their text kept, escaped), no event handlers.

    >>> sanitize_mathml('<math><mtext><script>alert(1)</script></mtext></math>')
    '<math><mtext>alert(1)</mtext></math>'
    """
    cleaner = _Cleaner()
    cleaner.feed(markup)
    return cleaner.result()


# --- HTML, as JupyterLab shows an untrusted notebook --------------------------------------------

# JupyterLab's allowedTags and allowedAttributes (sanitizer.ts, from Google Caja)
HTML_TAGS = {
    "a", "abbr", "acronym", "address", "area", "article", "aside", "audio", "b", "bdi", "bdo", "big",
    "blockquote", "br", "button", "canvas", "caption", "center", "cite", "code", "col", "colgroup",
    "command", "data", "datalist", "dd", "del", "details", "dfn", "dir", "div", "dl", "dt", "em",
    "fieldset", "figcaption", "figure", "font", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hgroup", "hr", "i", "img", "input", "ins", "kbd", "label", "legend", "li", "map", "mark",
    "menu", "meter", "nav", "nobr", "ol", "optgroup", "option", "output", "p", "pre", "progress", "q",
    "s", "samp", "section", "select", "small", "source", "span", "strike", "strong", "sub", "summary",
    "sup", "table", "tbody", "td", "textarea", "tfoot", "th", "thead", "time", "tr", "track", "tt", "u",
    "ul", "var", "video", "wbr"}
_CELL = {"abbr", "align", "axis", "bgcolor", "char", "charoff", "colspan", "headers", "height", "nowrap",
         "rowspan", "scope", "valign", "width"}
HTML_ATTRS = {
    "*": {"class", "dir", "draggable", "hidden", "id", "inert", "itemprop", "itemref", "itemscope", "lang",
          "spellcheck", "style", "title", "translate"},
    "a": {"accesskey", "coords", "href", "hreflang", "name", "shape", "tabindex", "target", "type"},
    "area": {"accesskey", "alt", "coords", "href", "nohref", "shape", "tabindex"},
    "audio": {"autoplay", "controls", "loop", "mediagroup", "muted", "preload", "src"},
    "bdo": {"dir"}, "blockquote": {"cite"}, "br": {"clear"},
    "button": {"accesskey", "disabled", "name", "tabindex", "type", "value"},
    "canvas": {"height", "width"}, "caption": {"align"},
    "col": {"align", "char", "charoff", "span", "valign", "width"},
    "colgroup": {"align", "char", "charoff", "span", "valign", "width"},
    "command": {"checked", "command", "disabled", "icon", "label", "radiogroup", "type"},
    "data": {"value"}, "del": {"cite", "datetime"}, "details": {"open"}, "dir": {"compact"},
    "div": {"align"}, "dl": {"compact"}, "fieldset": {"disabled"}, "font": {"color", "face", "size"},
    "form": {"accept", "autocomplete", "enctype", "method", "name", "novalidate"},
    **{f"h{i}": {"align"} for i in range(1, 7)},
    "hr": {"align", "noshade", "size", "width"},
    "img": {"align", "alt", "border", "height", "hspace", "ismap", "name", "src", "usemap", "vspace", "width"},
    "input": {"accept", "accesskey", "align", "alt", "autocomplete", "checked", "disabled", "inputmode",
              "ismap", "list", "max", "maxlength", "min", "multiple", "name", "placeholder", "readonly",
              "required", "size", "src", "step", "tabindex", "type", "usemap", "value"},
    "ins": {"cite", "datetime"}, "label": {"accesskey", "for"}, "legend": {"accesskey", "align"},
    "li": {"type", "value"}, "map": {"name"}, "menu": {"compact", "label", "type"},
    "meter": {"high", "low", "max", "min", "value"}, "ol": {"compact", "reversed", "start", "type"},
    "optgroup": {"disabled", "label"}, "option": {"disabled", "label", "selected", "value"},
    "output": {"for", "name"}, "p": {"align"}, "pre": {"width"}, "progress": {"max", "min", "value"},
    "q": {"cite"}, "select": {"autocomplete", "disabled", "multiple", "name", "required", "size", "tabindex"},
    "source": {"type"},
    "table": {"align", "bgcolor", "border", "cellpadding", "cellspacing", "frame", "rules", "summary", "width"},
    "tbody": {"align", "char", "charoff", "valign"}, "td": _CELL, "th": _CELL,
    "textarea": {"accesskey", "autocomplete", "cols", "disabled", "inputmode", "name", "placeholder",
                 "readonly", "required", "rows", "tabindex", "wrap"},
    "tfoot": {"align", "char", "charoff", "valign"}, "thead": {"align", "char", "charoff", "valign"},
    "tr": {"align", "bgcolor", "char", "charoff", "valign"},
    "track": {"default", "kind", "label", "srclang"}, "ul": {"compact", "type"},
    "video": {"autoplay", "controls", "height", "loop", "mediagroup", "muted", "poster", "preload", "src",
              "width"},
}
# JupyterLab's allowedStyles, less the properties whose values may be a url() (background,
# background-image, cursor, list-style, list-style-image): a deck loads nothing
STYLE_PROPERTIES = {
    "backface-visibility", "background-attachment", "background-clip", "background-color",
    "background-origin", "background-position", "background-repeat", "background-size", "border",
    "border-bottom", "border-bottom-color", "border-bottom-left-radius", "border-bottom-right-radius",
    "border-bottom-style", "border-bottom-width", "border-collapse", "border-color", "border-left",
    "border-left-color", "border-left-style", "border-left-width", "border-radius", "border-right",
    "border-right-color", "border-right-style", "border-right-width", "border-spacing", "border-style",
    "border-top", "border-top-color", "border-top-left-radius", "border-top-right-radius",
    "border-top-style", "border-top-width", "border-width", "bottom", "box", "box-shadow", "box-sizing",
    "caption-side", "clear", "clip", "color", "direction", "display", "display-inside", "display-outside",
    "elevation", "empty-cells", "float", "font", "font-family", "font-size", "font-stretch", "font-style",
    "font-variant", "font-weight", "height", "left", "letter-spacing", "line-height",
    "list-style-position", "list-style-type", "margin", "margin-bottom", "margin-left", "margin-right",
    "margin-top", "max-height", "max-width", "min-height", "min-width", "opacity", "outline",
    "outline-color", "outline-style", "outline-width", "overflow", "overflow-wrap", "overflow-x",
    "overflow-y", "padding", "padding-bottom", "padding-left", "padding-right", "padding-top",
    "page-break-after", "page-break-before", "page-break-inside", "pause-after", "perspective", "pitch",
    "pitch-range", "position", "quotes", "resize", "richness", "right", "speak", "speak-header",
    "speak-numeral", "speak-punctuation", "speech-rate", "stress", "table-layout", "text-align",
    "text-decoration", "text-indent", "text-overflow", "text-shadow", "text-transform", "text-wrap", "top",
    "unicode-bidi", "vertical-align", "visibility", "volume", "white-space", "width", "word-break",
    "word-spacing", "word-wrap", "z-index", "zoom"}
_POSITIONS = {"static", "relative", "absolute"}          # JupyterLab's: nothing fixed over the page
_LINKS = {"http", "https", "mailto", "tel", "ftp"}        # where a link may go when clicked
_LOADS = {"src", "poster", "srcset"}                      # what a page fetches by itself


def _local(value):
    """A URL the page may load by itself: embedded data or a file beside it, never a server."""
    v = value.strip()
    if v.lower().startswith("data:"):
        return True
    return not re.match(r"^([a-z][a-z0-9+.\-]*:|[/\\]{2})", v, re.I)


def _style(value):
    kept = []
    for decl in value.split(";"):
        name, _, val = decl.partition(":")
        name, val = name.strip().lower(), val.strip()
        if name not in STYLE_PROPERTIES or not val or re.search(r"[\\(@]|url|expression|image", val, re.I):
            continue     # (no functions at all, so no url(), image(), var() or escapes that spell one)
        if name == "position" and val.lower() not in _POSITIONS:
            continue
        kept.append(f"{name}: {val}")
    return "; ".join(kept) or None


def _html_attribute(tag, name, value):
    if name == "style":
        return _style(value)
    if name in _LOADS:
        return value if _local(value) and name != "srcset" else None
    if name in ("href", "cite") and value.strip().lower().startswith("data:"):
        return None
    return value


def sanitize_html(markup):
    """Notebook HTML as JupyterLab shows an untrusted notebook: its allowlist, through nh3.

    No scripts, event handlers, ``javascript:`` links, frames, forms that post, or styles that
    fetch; ``<input>`` is disabled; links get ``rel="noopener noreferrer"``.

    >>> sanitize_html('<p onclick="x()">hi <a href="javascript:alert(1)">link</a><script>alert(1)</script></p>')
    '<p>hi <a rel="noopener noreferrer">link</a></p>'
    >>> sanitize_html('<img src="http://x/y.png" alt="y"><span style="color: red; background: url(http://x)">s</span>')
    '<img alt="y"><span style="color: red">s</span>'
    """
    return nh3.clean(markup, tags=HTML_TAGS, attributes=HTML_ATTRS, attribute_filter=_html_attribute,
                     url_schemes=_LINKS | {"data"}, clean_content_tags={"script", "style"},
                     set_tag_attribute_values={"input": {"disabled": "disabled"}})


# --- the graph's SVG ----------------------------------------------------------------------------

# what Graphviz's SVG output and gradviz's decoration of it (gradviz.drawing.svg.decorate_svg) use
SVG_TAGS = {"svg", "g", "title", "desc", "text", "tspan", "path", "polygon", "polyline", "ellipse", "circle",
            "rect", "line", "defs", "linearGradient", "radialGradient", "stop"}
SVG_ATTRS = {"xmlns", "id", "class", "width", "height", "viewBox", "transform", "d", "points", "x", "y",
             "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "dx", "dy", "fill", "fill-opacity", "stroke",
             "stroke-width", "stroke-dasharray", "stroke-opacity", "stroke-linecap", "stroke-linejoin",
             "opacity", "text-anchor", "font-family", "font-size", "font-weight", "font-style",
             "offset", "stop-color", "stop-opacity", "gradientUnits", "role", "aria-label"}


def _svg_attribute(tag, name, value):
    if name in ("d", "points", "transform") or re.fullmatch(r"url\(#[\w.-]+\)", value.strip()):
        return value                     # (a gradient: only one of this drawing's own)
    return None if re.search(r"url|expression|[\\(]", value, re.I) else value


def sanitize_svg(markup):
    """The graph's SVG with nothing that runs or loads: its drawing elements only, and gradviz's own CSS.

    A saved widget state (a notebook from someone else) may carry any SVG; what is left is what
    gradviz draws.  The ``<style>`` kept is the one :mod:`gradviz.drawing.svg` puts in, if it is that one.

    >>> sanitize_svg('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><g class="n">'
    ...              '<text>a&#160;b</text><a href="javascript:x"><path d="M0 0"/></a></g></svg>')
    '<svg xmlns="http://www.w3.org/2000/svg"><g class="n"><text xml:space="preserve">a&#160;b</text><path d="M0 0"></path></g></svg>'
    """
    ours = html.escape(CSS, quote=False)
    mark = "gvgraphcss7f3a"        # gradviz's own <style>, through nh3 as a word of text
    markup = re.sub(r"<style>(.*?)</style>", lambda m: mark if m.group(1) in (ours, CSS) else m.group(0), markup,
                    flags=re.S)
    clean = nh3.clean(markup, tags=SVG_TAGS, attributes={"*": SVG_ATTRS}, attribute_filter=_svg_attribute,
                      generic_attribute_prefixes={"data-gv-"}, clean_content_tags={"script", "style"},
                      url_schemes=set(), link_rel=None)
    # XML, as widget.js parses it: no HTML-only entity; Graphviz's spacing of labels kept
    clean = clean.replace("&nbsp;", "&#160;").replace("<text", '<text xml:space="preserve"')
    return clean.replace(mark, f"<style>{ours}</style>")
