"""The README's first screen, rendered as GitHub renders it (mistune's HTML, GitHub's markdown body
sizes: 16 px text, 1.5 line height, 32 px padding, a column of at most 980 px): at 1366x768 the
picture and the two set-up commands are on screen without scrolling, and the picture plays.

Screenshot: tests/artifacts/readme-first-screen.png (look at it).
"""

from pathlib import Path

import mistune

ROOT = Path(__file__).resolve().parents[2]

GITHUB_LIKE = """
body { margin: 0; background: #fff; color: #1f2328;
       font: 16px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.markdown-body { box-sizing: border-box; max-width: 980px; margin: 0 auto; padding: 32px; }
h1 { font-size: 2em; margin: .67em 0 16px; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; line-height: 1.25; }
h2 { font-size: 1.5em; margin: 24px 0 16px; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; line-height: 1.25; }
p, pre, table { margin: 0 0 16px; }
img { max-width: 100%; box-sizing: content-box; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #818b981f;
       padding: .2em .4em; border-radius: 6px; }
pre { padding: 16px; background: #f6f8fa; border-radius: 6px; overflow: auto; line-height: 1.45; }
pre code { background: none; padding: 0; font-size: 85%; }
a { color: #0969da; }
"""


def readme_page(tmp_path):
    body = mistune.html((ROOT / "README.md").read_text(encoding="utf-8"))
    page = tmp_path / "README.html"
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><base href="{ROOT.as_uri()}/">'
                    f"<style>{GITHUB_LIKE}</style></head><body><article class=\"markdown-body\">{body}"
                    "</article></body></html>", encoding="utf-8")
    return page


def test_the_first_screen_shows_the_picture_and_the_two_commands(offline_page, tmp_path, artifacts):
    page = offline_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(readme_page(tmp_path).as_uri())
    page.wait_for_function("() => [...document.images].every((i) => i.complete && i.naturalWidth > 0)")
    page.screenshot(path=str(artifacts / "readme-first-screen.png"))
    boxes = page.evaluate("""() => {
        const box = (el) => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, w: r.width}; };
        const pre = [...document.querySelectorAll('pre')].filter((p) => /venv/.test(p.textContent)).slice(0, 1);
        return {img: box(document.querySelector('img[src$="widget.apng"]')), commands: pre.map(box),
                texts: pre.map((p) => p.textContent.trim())}; }""")
    assert boxes["img"]["w"] >= 600 and boxes["img"]["bottom"] <= 768, boxes
    assert boxes["commands"][0]["bottom"] <= 768, boxes            # the block holding both commands
    assert "gradviz lab" in boxes["texts"][0] and "-m pytest" in boxes["texts"][0]
    assert page.evaluate("() => document.scrollingElement.scrollTop") == 0
    # an animated picture: two screenshots of it a few steps apart differ
    img = page.locator('img[src$="widget.apng"]')
    first = img.screenshot()
    page.wait_for_timeout(4500)
    assert img.screenshot() != first, "the picture does not move"
