"""Real-browser fixtures: Debian's Chromium driven by Playwright, offline pages, a live JupyterLab 4.

Every test here is marked ``browser`` and skipped, saying why, when ``/usr/bin/chromium`` or the
``playwright`` package is missing (Playwright's own browser download cannot work on these machines).

Fixtures (use them from any test under ``tests/browser/``):

``browser_context``  one Chromium for the session: ``launch_persistent_context`` on a fresh temporary
                     profile, headless, with the flags in :data:`CHROMIUM_ARGS`.
``page``             a new tab whose console errors and page errors are collected in
                     ``page.gv_errors`` (a list of strings; assert it is empty).
``lab_page``         a tab that may reach the ``jupyterlab`` server and nothing else.
``notebook7``, ``notebook7_page``  the same for Jupyter Notebook 7 (skipped without the ``notebook`` package).
``offline_page``     the same as ``page``, with every request that is not ``file:``, ``data:``, ``blob:`` or
                     ``about:`` aborted and listed in ``page.gv_blocked``.
``jupyterlab``       a JupyterLab 4 server started for the session on ``127.0.0.1`` (a free port, a
                     known token, no browser, no update or news checks, a read-only extension
                     manager, ``window.jupyterapp`` exposed), serving a temporary root dir; see :class:`Lab` for its helpers
                     (``lab.copy_notebook(path)``, ``lab.new_notebook(name, cells)``, ``lab.url(path)``,
                     ``lab.open(page, name)``, ``lab.run_all(page)``, ``lab.run_notebook(page, name, widgets)``, ``lab.wait_executed(page)``,
                     ``lab.wait_idle(page)``, ``lab.wait_widgets(page, n)``, ``lab.command(page, id)``, ``lab.set_theme(page, name)``).
                     The server is shared by the whole session: give each test's notebook its own name.
``artifacts``        ``tests/artifacts/`` (git-ignored), for screenshots to look at.

Helpers: :func:`wait_ready` (the widget's ``data-gv-ready="1"`` marker), :func:`settle` (wait until
nothing on the page moves: no transition, fade or smooth scroll under way, no box changing size; use
it after an action whose result is drawn over several frames, never a fixed sleep), :func:`visible_nodes`
(how many graph nodes have a non-empty box: a blank page is a failure, not a pass), :func:`caption`,
:func:`open_saved` and :func:`step_through` (a saved page's captions are Python's, step by step).
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            # one worker runs them all, in order, with the session's one Chromium and JupyterLab
            # (pytest-xdist's loadgroup); the other workers share the rest of the suite
            item.add_marker(pytest.mark.xdist_group("browser"))


def deck_of(path, title, widgets, prefix="gv"):
    """Write a slide deck (``python -m gradviz slides``'s HTML) to ``path``: a title slide, then a
    slide per ``(heading, widget)`` whose cell shows the widget, its state as a notebook run saves it."""
    import nbformat

    from gradviz.slides import WIDGET_STATE, WIDGET_VIEW, deck_html

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}", metadata={"slideshow": {"slide_type": "slide"}})]
    states = {}
    for k, (heading, w) in enumerate(widgets):
        mid = f"{prefix}-{k}"
        states[mid] = {"model_name": "AnyModel", "model_module": "anywidget", "state": w.state()}
        cell = nbformat.v4.new_code_cell("gradviz.animate(s)", metadata={"slideshow": {"slide_type": "-"}})
        cell.outputs = [nbformat.v4.new_output("display_data", data={
            WIDGET_VIEW: {"model_id": mid, "version_major": 2, "version_minor": 1}, "text/plain": "AutogradWidget"})]
        nb.cells += [nbformat.v4.new_markdown_cell(f"## {heading}", metadata={"slideshow": {"slide_type": "slide"}}), cell]
    nb.metadata["widgets"] = {WIDGET_STATE: {"state": states, "version_major": 2, "version_minor": 0}}
    path.write_text(deck_html(nb), encoding="utf-8")
    return path


def _why_no_browser():
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (apt install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is missing (pip install playwright)"
    return None


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser_context():
    why = _why_no_browser()
    if why:
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="gv-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            user_data_dir=profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1200, "height": 900}, device_scale_factor=1)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


def _watch(page):
    page.gv_errors = []
    page.on("console", lambda m: page.gv_errors.append(f"console.{m.type}: {m.text}")
            if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda e: page.gv_errors.append(f"pageerror: {e}"))
    return page


@pytest.fixture
def page(browser_context):
    p = _watch(browser_context.new_page())
    yield p
    p.close()


@pytest.fixture
def offline_page(browser_context):
    """A tab that can load nothing from any network: the page must carry everything itself."""
    p = _watch(browser_context.new_page())
    p.gv_blocked = []

    def gate(route):
        url = route.request.url
        if url.startswith(LOCAL_SCHEMES):
            return route.continue_()
        p.gv_blocked.append(url)
        return route.abort()

    p.route("**/*", gate)
    yield p
    p.close()


def wait_ready(page_or_frame, scope="", timeout=20000):
    """Wait for a visible widget's ready marker (inside ``scope``, a CSS selector); return the first."""
    sel = f'{scope} .gv-widget[data-gv-ready="1"]'.strip()
    page_or_frame.wait_for_selector(sel, timeout=timeout)
    settle(page_or_frame.page if hasattr(page_or_frame, "page") else page_or_frame)
    return page_or_frame.locator(sel).filter(visible=True).first


# Everything that can still move after an action: running transitions and short animations (a
# fade, a slide transition; not the backward edges' flowing dashes nor reveal.js's bouncing arrow,
# which run for good), scroll positions and widget boxes, in the page and in slide decks' shadow roots.
_MOTION_JS = """() => {
    const moving = document.getAnimations().filter(a => a.playState === 'running'
        && a.effect && a.effect.getComputedTiming().endTime <= 5000).length;
    const roots = [document, ...[...document.querySelectorAll('.gv-fit')].map(b => b.shadowRoot).filter(Boolean)];
    const boxes = roots.flatMap(r => [...r.querySelectorAll('.gv-widget, .gv-widget [data-gv="derivation"], '
        + '.gv-widget .gv-caption, .gv-widget .gv-graph, .jp-WindowedPanel-outer, .jp-Notebook, .reveal .slides')])
        .map(e => { const r = e.getBoundingClientRect();
                    return [r.x, r.y, r.width, r.height, e.scrollTop, e.scrollLeft].map(Math.round).join(','); });
    return JSON.stringify([moving, scrollX, scrollY, boxes]);
}"""


def settle(page, quiet=4, timeout=15000):
    """Wait until the page has stopped moving: ``quiet`` looks in a row, one animation frame apart,
    find no animation or transition running and every widget box and scroll position unchanged.

    Under load (2 cores, JupyterLab and Chromium and pytest at once) a fade, a smooth scroll or a
    late re-layout takes longer than any fixed sleep; this waits for the thing itself."""
    page.wait_for_function("""quiet => new Promise(resolve => {
        const look = %s;
        let last = null, same = 0;
        const tick = () => {
            const now = look();
            same = now === last && JSON.parse(now)[0] === 0 ? same + 1 : 0;
            last = now;
            if (same >= quiet) resolve(true); else requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
    })""" % _MOTION_JS, arg=quiet, timeout=timeout)


def visible_nodes(widget):
    """How many nodes of a widget's graph have a non-zero box on screen."""
    return widget.evaluate("""w => [...w.querySelectorAll('svg .gv-node')]
        .filter(n => { const b = n.getBoundingClientRect(); return b.width > 2 && b.height > 2; }).length""")


def caption(widget):
    """The caption the widget shows now."""
    return widget.locator('[data-gv="caption"]').inner_text().strip()


def open_saved(page, w, path):
    """Open the page ``w.save_html(path)`` wrote; check every node is drawn and the first caption is
    Python's; return the widget."""
    page.goto(path.as_uri())
    widget = wait_ready(page)
    assert visible_nodes(widget) == len(w.graph["nodes"])
    assert caption(widget) == w.caption(0)
    return widget


def step_through(widget, w):
    """Press step to the end: every caption is the one Python wrote for that step."""
    for k in range(1, len(w.frames)):
        widget.locator('[data-gv="step"]').click()
        assert caption(widget) == w.caption(k), k


# --- a live JupyterLab ----------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab (or Notebook 7: the same front end, one notebook a page): where it is,
    what it serves, and how a test drives it."""

    def __init__(self, port, token, root_dir, proc, log, pages="lab/tree"):
        self.port, self.token, self.root_dir, self.proc, self.log = port, token, Path(root_dir), proc, log
        self.base = f"http://127.0.0.1:{port}"
        self.pages = pages

    def url(self, path=""):
        return f"{self.base}/{self.pages}/{path}?token={self.token}"

    def copy_notebook(self, path, name=None):
        """Put a copy of ``path`` in the server's root dir; returns its name there."""
        name = name or Path(path).name
        shutil.copy(path, self.root_dir / name)
        return name

    def new_notebook(self, name, cells):
        """Write a notebook of code cells (strings) into the root dir; returns its name."""
        import nbformat
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, self.root_dir / name)
        return name

    def shutdown_kernels(self):
        """Shut down every kernel an earlier test left running on this server (each test's notebook
        has its own: seven lessons' kernels at once would leave the machine to the oldest)."""
        def call(method, path):
            req = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read() or b"null")
        for session in call("GET", "sessions"):
            call("DELETE", f"sessions/{session['id']}")

    def open(self, page, name, timeout=90000):
        """Open notebook ``name`` alone (earlier tests' kernels shut down; in JupyterLab the workspace
        reset, so no earlier tab comes back) and wait until it is the current tab and its kernel is idle."""
        self.shutdown_kernels()
        page.goto(self.url(name) + ("&reset" if self.pages == "lab/tree" else ""))
        page.locator(".jp-NotebookPanel .jp-Cell").filter(visible=True).first.wait_for(timeout=timeout)
        page.wait_for_function(
            """(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                           return !!w && !!w.context && w.context.path.split('/').pop() === name; }""",
            arg=name, timeout=timeout)
        self.wait_idle(page, timeout)

    def wait_idle(self, page, timeout=90000):
        """Wait until the current notebook's kernel is started, connected and idle."""
        page.wait_for_function(
            """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                       const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
                       return !!k && k.status === 'idle' && k.connectionStatus === 'connected'; }""",
            timeout=timeout)
        settle(page, timeout=timeout)

    def wait_executed(self, page, timeout=120000):
        """Wait until every code cell of the current notebook has run (has an execution count)."""
        page.wait_for_function(
            """() => { const w = window.jupyterapp.shell.currentWidget;
                       const cells = w.content.model.sharedModel.cells.map(c => c.toJSON())
                                      .filter(c => c.cell_type === 'code');
                       return cells.length > 0 && cells.every(c => c.execution_count); }""",
            timeout=timeout)
        settle(page, timeout=timeout)     # (the outputs' widgets render, and the notebook lays out, after that)

    def wait_widgets(self, page, count, timeout=120000):
        """Wait until ``count`` widgets in the notebook's outputs are drawn (each renders on its own,
        after its cell has run); return their locator, in the notebook's order."""
        sel = '.jp-OutputArea-output .gv-widget[data-gv-ready="1"]'
        page.wait_for_function(f"n => document.querySelectorAll('{sel}').length >= n", arg=count, timeout=timeout)
        settle(page)
        return page.locator(sel)

    def run_notebook(self, page, name, widgets=0, timeout=120000):
        """Open notebook ``name``, Run All as a student would, and wait until every cell has run and
        ``widgets`` widgets are drawn (their locator is returned, in the notebook's order)."""
        self.open(page, name)
        self.run_all(page)
        self.wait_executed(page, timeout=timeout)
        return self.wait_widgets(page, widgets, timeout=timeout) if widgets else None

    def run_all(self, page):
        """Run > Run All Cells, through the menu bar as a student would."""
        page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu .lm-Menu-itemLabel", has_text="Run All Cells").first.click()

    def command(self, page, name, args=None):
        """Execute a JupyterLab command (``window.jupyterapp`` is exposed by this server)."""
        return page.evaluate("([n, a]) => window.jupyterapp.commands.execute(n, a)", [name, args or {}])

    def set_theme(self, page, theme):
        self.command(page, "apputils:change-theme", {"theme": theme})
        light = "true" if "Light" in theme else "false"
        page.wait_for_selector(f'body[data-jp-theme-light="{light}"]', state="attached", timeout=20000)


def _serve(app, app_args, pages):
    """Start ``jupyter <app>`` for the session on 127.0.0.1 (a free port, a known token, no browser,
    nothing that asks the network); yield its :class:`Lab`, then stop it and remove its dirs."""
    why = _why_no_browser()
    if why:
        pytest.skip(why)
    root_dir = Path(tempfile.mkdtemp(prefix=f"gv-{app}-root-"))
    settings = Path(tempfile.mkdtemp(prefix=f"gv-{app}-settings-"))
    runtime = Path(tempfile.mkdtemp(prefix=f"gv-{app}-runtime-"))
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    # no "would you like to get news?" toast, no update checks: nothing asks the network
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = free_port(), "gradviz-test-token"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               JUPYTER_RUNTIME_DIR=str(runtime), JUPYTER_CONFIG_DIR=str(runtime / "config"))
    log = open(runtime / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", app, "--no-browser", "--ServerApp.open_browser=False",
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root_dir}"]
        + [arg.format(settings=settings, runtime=runtime) for arg in app_args]
        + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
        cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
    lab = Lab(port, token, root_dir, proc, runtime / "server.log", pages)
    deadline = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{lab.base}/api/status?token={token}", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.fail(f"jupyter {app} did not start:\n" + lab.log.read_text()[-3000:])
        time.sleep(0.3)
    try:
        yield lab
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        for d in (root_dir, settings, runtime):
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def jupyterlab():
    yield from _serve("lab", [
        "--LabApp.user_settings_dir={settings}", "--LabApp.workspaces_dir={runtime}/workspaces",
        "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly"], "lab/tree")


@pytest.fixture(scope="session")
def notebook7():
    """Jupyter Notebook 7 (the ``notebook`` package), served like ``jupyterlab``; skipped without it."""
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed (pip install notebook)")
    yield from _serve("notebook", [
        "--JupyterNotebookApp.workspaces_dir={runtime}/workspaces",
        "--JupyterNotebookApp.expose_app_in_browser=True"], "notebooks")


def _server_page(browser_context, server):
    p = _watch(browser_context.new_page())
    p.gv_blocked = []

    def gate(route):
        url = route.request.url
        if url.startswith(LOCAL_SCHEMES) or url.startswith(server.base):
            return route.continue_()
        p.gv_blocked.append(url)
        return route.abort()

    p.route("**/*", gate)
    return p


@pytest.fixture
def lab_page(browser_context, jupyterlab):
    """A tab for the live JupyterLab: only 127.0.0.1 (and local schemes) may be reached."""
    p = _server_page(browser_context, jupyterlab)
    yield p
    p.close()


@pytest.fixture
def notebook7_page(browser_context, notebook7):
    """A tab for the live Notebook 7 server, gated like ``lab_page``."""
    p = _server_page(browser_context, notebook7)
    yield p
    p.close()
