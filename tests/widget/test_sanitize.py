"""The MathML sanitiser against hostile input: only MathML markup survives, everything else is text."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from gradviz.widget.derivation import mathml
from gradviz.widget.sanitize import ATTRS, TAGS, sanitize_mathml


def tags_and_attrs(markup):
    """Every tag name and attribute name in ``markup`` (as a browser's tokenizer would see them)."""
    tags = re.findall(r"<\s*/?\s*([A-Za-z][^\s/>]*)", markup)
    attrs = re.findall(r"\s([^\s=/>]+)\s*=", "".join(re.findall(r"<[^>]*>", markup)))
    return {t.lower() for t in tags}, {a.lower() for a in attrs}


HOSTILE = [
    '<script>alert(1)</script>',
    '<SCRIPT SRC=//evil/x.js></SCRIPT>',
    '<img src=x onerror=alert(1)>',
    '<math><mi onclick="alert(1)" onmouseover=alert(2)>a</mi></math>',
    '<math><mi href="javascript:alert(1)">a</mi></math>',
    '<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>',
    '<math><semantics><annotation-xml encoding="text/html"><img src=x onerror=alert(1)></annotation-xml></semantics></math>',
    '<math><mtext><svg><foreignObject><iframe src="javascript:alert(1)"></iframe></foreignObject></svg></mtext></math>',
    '<math><mglyph src="javascript:alert(1)"/></math>',
    '<math><mi style="background:url(javascript:alert(1))">a</mi></math>',
    '<a href="javascript:alert(1)">click</a>',
    '<math><mtext><style>*{display:none}</style></mtext></math>',
    '<![CDATA[<script>alert(1)</script>]]>',
    '<!--<script>alert(1)</script>-->',
    '<math><mi>&lt;script&gt;alert(1)&lt;/script&gt;</mi></math>',
    '<math><mi class="x" CLASS="y" OnLoad=alert(1)>a</mi></math>',
    '<math><mi\nonclick=alert(1)>a</mi></math>',
    '<object data="javascript:alert(1)"></object><embed src=x><form action=x><input>',
    '<math><mtext><template><script>alert(1)</script></template></mtext></math>',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    '<math><mi>a</mi>',                       # unclosed: closed for it
    '</mi></math><script>alert(1)</script>',  # stray closing tags
]


@pytest.mark.parametrize("markup", HOSTILE)
def test_only_mathml_tags_and_presentation_attributes_survive(markup):
    clean = sanitize_mathml(markup)
    tags, attrs = tags_and_attrs(clean)
    assert tags <= TAGS, tags - TAGS
    assert attrs <= ATTRS, attrs - ATTRS
    assert "javascript:" not in clean.lower() or "javascript:" in re.sub(r"<[^>]*>", "", clean).lower()
    assert not re.search(r"<[^>]*\bon\w+\s*=", clean, re.I)
    assert clean.count("<") == clean.count(">")         # every < that is left opens or closes a tag


def test_dropped_tags_keep_their_text_as_text():
    assert sanitize_mathml('<math><mtext><script>alert(1)</script></mtext></math>') == \
        '<math><mtext>alert(1)</mtext></math>'
    assert sanitize_mathml('<math><mi onclick="x()" mathvariant="bold">a</mi></math>') == \
        '<math><mi mathvariant="bold">a</mi></math>'
    assert sanitize_mathml('<math><mi>&lt;b&gt;</mi><mo>&#x02202;</mo></math>') == \
        '<math><mi>&lt;b&gt;</mi><mo>&#x02202;</mo></math>'


def test_attribute_values_are_quoted_and_escaped():
    clean = sanitize_mathml('<math><mi mathvariant=\'bold" onclick="alert(1)\'>a</mi></math>')
    assert clean == '<math><mi mathvariant="bold&quot; onclick=&quot;alert(1)">a</mi></math>'


def test_unclosed_and_stray_tags_are_balanced():
    assert sanitize_mathml("<math><mrow><mi>a</mi>") == "<math><mrow><mi>a</mi></mrow></math>"
    assert sanitize_mathml("</mi>b</math>") == "b"


@settings(deadline=None)        # no timing in tests: a busy machine is not a failure
@given(st.lists(st.sampled_from(list("<>/=\"' &;#xamiscrptonlerfhvjv:") + ["<script>", "<mi ", "<math>",
                                                                             " onload=", "</", "<!--"]),
                max_size=40).map("".join))
def test_any_text_comes_out_as_mathml_only(text):
    clean = sanitize_mathml(text)
    tags, attrs = tags_and_attrs(clean)
    assert tags <= TAGS and attrs <= ATTRS


def test_latex_with_markup_in_it_becomes_text():
    m = mathml(r"\text{<script>alert(1)</script><img src=x onerror=alert(2)>} x")["mathml"]
    assert "<script" not in m and "<img" not in m and "onerror=" not in m
    assert "alert(1)" in m                                   # the text stays, as text


# --- notebook HTML (decks) and the graph's SVG, through nh3 ----------------------------------------

from gradviz.widget.sanitize import HTML_TAGS, SVG_TAGS, sanitize_html, sanitize_svg  # noqa: E402

HTML_HOSTILE = HOSTILE + [
    '<details open ontoggle=alert(1)><summary>s</summary></details>',
    '<a href=" javascript:alert(1)">x</a><a href="JaVaScRiPt:alert(1)">y</a><a href="&#106;avascript:alert(1)">z</a>',
    '<a href="data:text/html,<script>alert(1)</script>">d</a>',
    '<img src="http://evil.invalid/x.png"><img src="//evil.invalid/y.png"><video poster="https://evil.invalid/p">',
    '<img srcset="http://evil.invalid/1.png 1x">',
    '<span style="background-image:url(http://evil.invalid/a)">a</span><p style="background: url(x)">b</p>',
    '<p style="color: red; width: expression(alert(1)); list-style: url(x); position: fixed">c</p>',
    '<p style="color: u\\72l(http://evil.invalid)">e</p>',
    '<link rel=stylesheet href="http://evil.invalid/x.css"><meta http-equiv="refresh" content="0;url=http://x">',
    '<form action="javascript:alert(1)"><button formaction="javascript:alert(2)">go</button></form>',
    '<base href="http://evil.invalid/">',
]


@pytest.mark.parametrize("markup", HTML_HOSTILE)
def test_notebook_html_keeps_jupyterlabs_tags_and_nothing_that_runs_or_loads(markup):
    clean = sanitize_html(markup)
    tags, attrs = tags_and_attrs(clean)
    assert tags <= HTML_TAGS, tags - HTML_TAGS
    assert not any(a.startswith("on") or a in ("formaction", "action", "srcset") for a in attrs), attrs
    assert "javascript:" not in clean.lower() and "data:text" not in clean
    assert not re.search(r'(src|poster)="(https?:)?//', clean), clean
    assert "url(" not in clean and "expression" not in clean and "fixed" not in clean and "\\" not in clean


def test_notebook_html_keeps_what_jupyterlab_shows():
    html = ('<h2 id="Why">Why <a class="anchor-link" href="#Why">¶</a></h2><table><tr><td colspan="2" '
            'style="text-align: center; color: #c00">x</td></tr></table><img src="data:image/png;base64,AAAA" '
            'alt="a"><img src="figure.png"><a href="https://pytorch.org" title="t">link</a><input type="checkbox">')
    clean = sanitize_html(html)
    for kept in ('id="Why"', 'href="#Why"', 'class="anchor-link"', 'colspan="2"', "text-align: center; color: #c00",
                 'src="data:image/png;base64,AAAA"', 'src="figure.png"', 'href="https://pytorch.org"',
                 'disabled="disabled"'):
        assert kept in clean, (kept, clean)


SVG_HOSTILE = [
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>',
    '<svg><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>',
    '<svg><a href="javascript:alert(1)"><text>x</text></a><a xlink:href="javascript:alert(1)">y</a></svg>',
    '<svg><image href="http://evil.invalid/a.png"/><use href="http://evil.invalid/s.svg#a"/></svg>',
    '<svg><set attributeName="onmouseover" to="alert(1)"/><animate attributeName="href" values="javascript:alert(1)"/></svg>',
    '<svg><style>svg{background:url(http://evil.invalid/x)}</style><rect fill="url(http://evil.invalid/#g)"/></svg>',
    '<svg><g style="background:url(http://evil.invalid/x)" filter="url(http://evil.invalid/f)"><path d="M0 0"/></g></svg>',
]


@pytest.mark.parametrize("markup", SVG_HOSTILE)
def test_the_graphs_svg_keeps_drawing_elements_only(markup):
    clean = sanitize_svg(markup)
    tags, attrs = tags_and_attrs(clean)
    assert tags <= {t.lower() for t in SVG_TAGS}, tags
    assert not any(a.startswith("on") or "href" in a or a in ("style", "filter") for a in attrs), attrs
    assert "http://evil" not in clean and "javascript" not in clean and "<style" not in clean


def test_the_graphs_own_svg_survives_cleaning():
    import xml.dom.minidom
    import gradviz as torch
    from gradviz.widget import AutogradWidget
    x = torch.ones(2, requires_grad=True)
    svg = AutogradWidget((0.5 * torch.sum(5 * (x + 1) ** 2))).svg

    def tree(markup):
        out = []

        def walk(node):
            for ch in node.childNodes:
                if ch.nodeType == ch.ELEMENT_NODE:
                    out.append((ch.tagName, sorted(ch.attributes.items())))
                    walk(ch)
                elif ch.nodeType == ch.TEXT_NODE and ch.data.strip():
                    out.append(ch.data)
        walk(xml.dom.minidom.parseString(markup.encode("utf-8")))
        return out
    assert tree(sanitize_svg(svg)) == tree(svg)          # the same picture, style included; and still XML
