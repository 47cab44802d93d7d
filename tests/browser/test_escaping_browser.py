"""What a user writes cannot run as script: hostile names, derivation steps and titles in a real Chromium.

The Python-side tests check the markup; this one checks the outcome.  Every way text gets into a
saved page -- tensor names, an instructor's derivation steps and closed form, the drawing's title --
carries a payload that would call ``window.gvPwned()`` if it ever ran.  The page is stepped through
both passes (captions and the derivation are written while it plays), then we ask whether it ran.
"""

import gradviz as torch
from browser.conftest import settle, visible_nodes, wait_ready
from gradviz.widget import AutogradWidget

PAYLOADS = [
    '<img src=x onerror="gvPwned(1)">',
    "</script><script>gvPwned(2)</script>",
    '"><svg onload="gvPwned(3)">',
    "<style>*{display:none}</style>",
]


def hostile_widget():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    o = (x * w).sum()
    names = {PAYLOADS[0]: x, PAYLOADS[1]: w, PAYLOADS[2]: o}
    return AutogradWidget(
        o, names=names,
        derivation=[r"\text{" + PAYLOADS[0] + "}", r"\mathrm{" + PAYLOADS[3] + "} = 1"],
        expected={PAYLOADS[0]: (r"\text{" + PAYLOADS[1] + "}", lambda v: 3 + 0 * v)})


def test_hostile_text_stays_text(offline_page, tmp_path, artifacts):
    page = offline_page
    page.add_init_script("window.gvRan = []; window.gvPwned = (n) => window.gvRan.push(n);")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    widget_obj = hostile_widget()
    path = tmp_path / "hostile.html"
    widget_obj.save_html(path)
    page.goto(path.as_uri())
    widget = wait_ready(page)
    assert visible_nodes(widget) == len(widget_obj.graph["nodes"])    # the picture is there...
    for _ in range(len(widget_obj.frames)):                           # ...and every frame is shown
        widget.locator('[data-gv="step"]').click()
    settle(page)
    page.screenshot(path=str(artifacts / "hostile-names.png"), full_page=True)
    assert page.evaluate("window.gvRan") == [] and dialogs == []
    assert page.gv_errors == []
    # the names are shown as the text they are
    text = widget.inner_text()
    assert "onerror" in text and "gvPwned(2)" in text
    assert page.locator("img").count() == 0
    assert not page.evaluate("[...document.querySelectorAll('style')].some(s => s.textContent.includes("
                             "'*{display:none}'))")
    assert widget.is_visible()
