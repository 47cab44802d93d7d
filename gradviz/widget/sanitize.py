"""MathML that cannot run anything: a whitelist of MathML tags and attributes, everything else text.

The derivation panel puts MathML into the page as markup (``innerHTML``), and that MathML is made
from LaTeX that may hold what a user wrote (variable names, an instructor's steps).  So every
piece of it passes through :func:`sanitize_mathml`: tags outside MathML (``<script>``, ``<img>``,
``<svg>``, ``<annotation-xml>``...) are dropped with their text kept as escaped text, and only
presentation attributes survive (no ``on*`` handlers, no ``href``/``src``, so no ``javascript:``
URLs).  Its hostile-input tests are ``tests/test_sanitize.py``.
"""

import html
import re
from html.parser import HTMLParser

__all__ = ["sanitize_mathml", "TAGS", "ATTRS"]

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
