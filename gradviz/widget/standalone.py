"""The widget as one self-contained HTML page or fragment: its ES module, CSS and state inlined, no network.

The same ``static/widget.js`` that runs in Jupyter plays the saved traits here, through a small
stand-in for the anywidget model.  Each fragment boots only its own element, so several widgets
on one page stay independent.  Without JavaScript (GitHub's notebook viewer) the fragment still
shows the drawn graph and the derivation.

>>> page = standalone_html({"svg": "<svg></svg>", "frames": [], "root_name": "o"})
>>> page.startswith("<!DOCTYPE html>") and "http://" not in page.replace('xmlns="http://', "")
True
"""

import html
import json
import re
import uuid
from pathlib import Path

from .i18n import PRACTICE_KEYS, fmt, strings
from .model import SYNCED
from .sanitize import sanitize_mathml, sanitize_svg

__all__ = ["SYNCED", "widget_state", "standalone_html", "standalone_html_from_state", "save_html",
           "standalone_assets", "widget_module"]

STATIC = Path(__file__).parent / "static"

_WIDGET_ID = "gradviz.widget.autograd_widget.AutogradWidget"


def widget_state(widget):
    """The synced traits of an :class:`AutogradWidget` as plain data."""
    return widget.state()


def _state(obj):
    if hasattr(obj, "frames") and hasattr(obj, "svg"):
        state = obj.state()                  # made here, from escaped names: as it is
    elif isinstance(obj, dict) and isinstance(obj.get("state"), dict):
        state = _cleaned(dict(obj["state"]))           # a saved widget-state entry (nbclient, JupyterLab)
    elif isinstance(obj, dict):
        state = _cleaned(dict(obj))
    else:
        raise TypeError(f"standalone_html() takes an AutogradWidget or its state, not {type(obj).__name__}")
    state = {k: state[k] for k in SYNCED if k in state}
    state.setdefault("lang", "en")
    state.setdefault("strings", strings(state["lang"]))
    state.setdefault("frames", [])
    state.setdefault("frame", 0)
    state.setdefault("speed", 1.0)
    state["live"] = False                    # no kernel behind a saved page
    state["playing"] = False
    return state


def _cleaned(state):
    """A saved state with its markup cleaned again: it may come from a notebook nobody here wrote.

    The SVG keeps only what gradviz draws (it is also the page's picture without scripts) and every
    MathML string only MathML; widget.js cleans both once more before they become markup.
    """
    for key in ("svg", "svg_lr"):
        if isinstance(state.get(key), str):
            state[key] = sanitize_svg(state[key])

    def walk(value):
        if isinstance(value, dict):
            return {k: sanitize_mathml(v) if k == "mathml" and isinstance(v, str) else walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value
    for key in ("derivation", "frames"):
        if key in state:
            state[key] = walk(state[key])
    return state


def widget_module(practice=True):
    """``(js, css)``: the widget's ES module as Jupyter loads it (``widget.js`` then its practice mode,
    ``practice.js``, one module) and its CSS; ``practice=False`` leaves practice mode out."""
    parts = ("widget", "practice") if practice else ("widget",)
    js = "\n".join((STATIC / f"{name}.js").read_text(encoding="utf-8") for name in parts)
    css = "\n".join((STATIC / f"{name}.css").read_text(encoding="utf-8") for name in parts)
    return js, css


def standalone_assets(practice=True):
    """``(js, css)``: the widget's ES module rewritten as a classic-free inline module, and its CSS
    (``practice=False``: without practice mode, for a page whose widgets ask nothing)."""
    js, css = widget_module(practice)
    js = js.replace("export default ", "const __gvDefault = ", 1)
    js = re.sub(r"^export (?=function|const|class|async)", "", js, flags=re.M)
    return js.replace("</script", "<\\/script"), css.replace("</style", "<\\/style")


def _json(state):
    text = json.dumps(state, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def standalone_html(widget_or_state, *, full_page=True, title=None, lang=None, presenter=None, frame=None,
                    include_script=True, static_fallback=True, element_id=None):
    """The widget as self-contained HTML: a whole page (``full_page=True``) or a fragment for a page.

    ``widget_or_state``: an :class:`AutogradWidget`, its :func:`widget_state`, or a saved
    widget-state entry (``{"model_name": ..., "state": {...}}``).  ``lang``, ``presenter`` and
    ``frame`` override the saved values.  A fragment carries its own CSS and script unless
    ``include_script=False`` (then put ``standalone_assets()`` on the page once and call
    ``bootStandalone(root)``: every ``[data-gv-standalone]`` element under ``root`` is booted).
    ``static_fallback=False`` leaves out the picture shown to readers without scripts (it doubles
    the SVG; the state always has it).  Nothing is loaded from the network.
    """
    state = _state(widget_or_state)
    if lang is not None:
        state["lang"], state["strings"] = lang, strings(lang)
    if presenter is not None:
        state["presenter"] = bool(presenter)
    if frame is not None:
        state["frame"] = int(frame)
    eid = element_id or "gv-" + uuid.uuid4().hex[:12]
    asks = bool((state.get("practice") or {}).get("questions"))
    if not asks:                 # a page that asks nothing carries no practice mode, nor its words
        state["strings"] = {k: v for k, v in state["strings"].items() if k not in PRACTICE_KEYS}
    js, css = standalone_assets(practice=asks) if include_script else ("", "")
    lang = state["lang"]
    # for readers without scripts (GitHub's notebook viewer): the picture, drawn as is
    static = (f'<div class="gv-static">{state.get("svg") or ""}'
              f'<p class="gv-static-note">{html.escape(fmt(lang, "no_js"))}</p></div>') if static_fallback else ""
    parts = [f'<div class="gv-host" id="{html.escape(eid, quote=True)}" data-gv-standalone="1" '
             f'lang="{html.escape(lang, quote=True)}">']
    if include_script:
        parts.append(f"<style>{css}</style>")
    if static:
        parts.append(static)
    parts.append(f'<script type="application/json" class="gv-state">{_json(state)}</script>')
    if include_script:
        parts.append(f'<script type="module">{js}\nbootStandalone(document);\n</script>')
    parts.append("</div>")
    fragment = "".join(parts)
    if not full_page:
        return fragment
    title = title or fmt(lang, "widget_label", root=state.get("root_name") or "")
    return ("<!DOCTYPE html>\n"
            f'<html lang="{html.escape(lang, quote=True)}">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="color-scheme" content="light dark">\n'
            f"<title>{html.escape(title)}</title>\n"
            "<style>html,body{margin:0}body{padding:12px;background:Canvas;color:CanvasText;"
            "font-family:system-ui,-apple-system,'Segoe UI',sans-serif}</style>\n"
            f"</head>\n<body>\n{fragment}\n</body>\n</html>\n")


def standalone_html_from_state(model_id, states, **options):
    """The whole page for widget ``model_id`` of a notebook's saved widget states (or None if not ours).

    ``states`` is ``nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]``.
    """
    entry = (states or {}).get(model_id)
    if not isinstance(entry, dict):
        return None
    state = entry.get("state", entry)
    if state.get("_anywidget_id") not in (None, _WIDGET_ID) or "frames" not in state or "svg" not in state:
        return None
    return standalone_html(entry, full_page=True, **options)


def save_html(widget_or_state, path, **options):
    """Write :func:`standalone_html` to ``path`` (one file; open it in any browser, offline)."""
    Path(path).write_text(standalone_html(widget_or_state, **options), encoding="utf-8")
    return path
