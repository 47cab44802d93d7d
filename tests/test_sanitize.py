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
