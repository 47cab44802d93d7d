"""The package is layered: no module of gradviz imports, directly or through others, a module
that imports it back -- counting imports inside functions too.

Layers, lowest first (LAYERS below states them as rules): kernels; numbers and types; printing and
random draws; the op table; the engine; Tensor; PyTorch's packages (autograd, nn, optim, utils);
the package face; the trace; the drawing; the widget.  A module imports only from its own layer and
those below; the lazy imports are listed with their reasons (LAZY), and the package face's
``__getattr__`` (draw, animate, trace, watch) keeps ``import gradviz`` free of the drawing libraries.
Which layers may import the kernels, the trace and the libraries outside numpy is stated too.

Also stated: every module is under 1,000 lines; the engine opens with the lecture's five steps
(apply, record, run_backward, apply_node, accumulate) and stays under 500 lines, views, the hooks
and double backward being modules of their own; the drawing package's stages (graph, DOT text,
render, SVG, SVG ids, key, draw()) import only the stages before them; AutogradWidget's
``__init__`` hands the work to the widget's pipeline; and nothing is imported under another name.
"""

import ast
from pathlib import Path


PACKAGE = Path(__file__).resolve().parents[1] / "gradviz"


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module, node, is_package, files):
    """The gradviz modules an import statement loads: ``from . import x`` loads the submodule x
    (not the package, whose ``__init__`` is already running), ``from .m import f`` loads m."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "gradviz"]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "gradviz":
        return []
    submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in files]
    return submodules + ([target] if len(submodules) < len(node.names) else [])


def _lazy_face_import(module, node, parents):
    """``importlib.import_module(...)`` in the package face's ``__getattr__`` is not an ast import;
    any ``import`` statement inside a function named __getattr__ of gradviz/__init__ is allowed too."""
    return module == "gradviz" and any(isinstance(p, ast.FunctionDef) and p.name == "__getattr__" for p in parents)


def import_graph():
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps, stack = set(), [(tree, ())]
        while stack:
            node, parents = stack.pop()
            for child in ast.iter_child_nodes(node):
                stack.append((child, parents + (node,)))
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not _lazy_face_import(module, node, parents):
                # (an import inside a function counts: a lazy import that closes a cycle is still a cycle)
                deps.update(d for d in _resolve(module, node, path.name == "__init__.py", files) if d in files)
        # importing gradviz.x.y runs gradviz/x/__init__ first, but that is the package's own business
        graph[module] = deps - {module}
    return graph


def cycles(graph):
    """Every strongly connected component of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_is_too_long():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    assert max(sizes.values()) < 1000, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


# Everything that reproduces PyTorch's numerics sits behind gradviz.kernels, and is reached from the
# layers that compute: the op table (with its rule helpers and unbroadcast's sums), the nn ops, optim,
# and the creation of numbers (random draws, arange/linspace).  The package face re-exports
# set_num_threads.  The engine, Tensor, the graph, the trace and the widget show no kernel detail.
KERNEL_USERS = {"gradviz", "gradviz.ops", "gradviz._rules", "gradviz._broadcast", "gradviz._nn_ops", "gradviz._linalg_ops",
                "gradviz._blend_ops", "gradviz._activation_ops",
                "gradviz.optim.optimizer", "gradviz._cpu_generator", "gradviz._creation"}


def test_only_the_computing_layers_import_kernels():
    graph = import_graph()
    users = {m for m, deps in graph.items()
             if any(d == "gradviz.kernels" or d.startswith("gradviz.kernels.") for d in deps)
             and not m.startswith(("gradviz.kernels", "gradviz.nn", "gradviz.optim"))}
    assert users <= KERNEL_USERS, sorted(users - KERNEL_USERS)


def test_kernels_import_nothing_above_them():
    graph = import_graph()
    for module, deps in graph.items():
        if module.startswith("gradviz.kernels"):
            assert all(d.startswith("gradviz.kernels") for d in deps), (module, deps)


# The core's PyTorch packages (autograd, optim, utils, save/load) sit below the picture: a training
# loop never loads the trace, the drawing or the widget.
PICTURE = ("gradviz.trace", "gradviz.value_text", "gradviz.formula", "gradviz.chain_rule", "gradviz.drawing",
           "gradviz.widget", "gradviz.slides")


def test_the_core_packages_import_no_picture():
    graph = import_graph()
    core = [m for m in graph if m.startswith(("gradviz.autograd", "gradviz.optim", "gradviz.utils", "gradviz.nn"))
            or m in ("gradviz.serialization", "gradviz._hooks", "gradviz._keywords")]
    assert len(core) > 10
    for module in core:
        assert not [d for d in graph[module] if d.startswith(PICTURE)], module


def test_the_torch_import_paths_are_modules():
    import importlib
    for path in ("gradviz.autograd.functional", "gradviz.autograd.graph", "gradviz.linalg", "gradviz.optim.lr_scheduler",
                 "gradviz.optim.optimizer", "gradviz.utils.data", "gradviz.utils.hooks", "gradviz.serialization"):
        assert (PACKAGE.parent / (path.replace(".", "/") + ".py")).exists() or \
            (PACKAGE.parent / path.replace(".", "/") / "__init__.py").exists(), path
        assert importlib.import_module(path).__name__ == path


# --- the packages' order, as rules ----------------------------------------------------------------
# Lowest first: a module imports only from its own layer and the layers below it (imports inside
# functions count).  Each module belongs to the layer of the longest prefix that names it.
LAYERS = [
    ("kernels", ("gradviz.kernels",)),
    ("numbers and types", ("gradviz._dtype", "gradviz._types", "gradviz._keywords", "gradviz._devices", "gradviz._gc", "gradviz._lazy",
                           "gradviz._arrays", "gradviz._errstate", "gradviz._arg_errors", "gradviz._signatures")),
    ("printing and random draws", ("gradviz._format", "gradviz._cpu_generator")),
    ("the op table", ("gradviz._op", "gradviz._rules", "gradviz.ops", "gradviz._nn_ops", "gradviz._linalg_ops", "gradviz._blend_ops",
                      "gradviz._activation_ops", "gradviz._recorded",
                      "gradviz._strided", "gradviz._broadcast", "gradviz._layout")),
    ("the engine", ("gradviz.autograd.grad_mode", "gradviz.autograd.node", "gradviz.autograd.views",
                    "gradviz.autograd.received", "gradviz.autograd.watched", "gradviz.autograd.engine", "gradviz.autograd.multi_output",
                    "gradviz.autograd.double_backward",
                    "gradviz.autograd._backward_grad", "gradviz._hooks")),
    ("Tensor", ("gradviz.tensor", "gradviz._operands", "gradviz._inplace", "gradviz._indexing", "gradviz._deepcopy",
                "gradviz._blend", "gradviz._composites",
                "gradviz._matmul_and_joins", "gradviz._reduction_methods", "gradviz._linalg_norms", "gradviz._linalg_systems", "gradviz._sampling",
                "gradviz._table_methods", "gradviz._creation", "gradviz._activation_functions", "gradviz._legacy", "gradviz._table_functions",
                "gradviz.random", "gradviz.naming", "gradviz._check")),
    ("PyTorch's packages", ("gradviz.autograd", "gradviz.gradcheck", "gradviz.linalg", "gradviz.nn", "gradviz.optim", "gradviz.utils",
                            "gradviz.serialization", "gradviz.quiz")),
    ("the package face", ("gradviz",)),
    ("the trace", ("gradviz.trace",)),
    ("the drawing", ("gradviz.value_text", "gradviz.formula", "gradviz.chain_rule", "gradviz.drawing")),
    ("the widget", ("gradviz.widget", "gradviz.slides", "gradviz.__main__")),
]


def layer_of(module):
    """The index in LAYERS of the layer whose longest prefix names ``module`` (None: no layer)."""
    found = [(len(p), i) for i, (_, prefixes) in enumerate(LAYERS) for p in prefixes
             if module == p or module.startswith(p + ".")]
    return max(found)[1] if found else None


def test_every_module_has_a_layer():
    assert [m for m in import_graph() if layer_of(m) is None] == []


def test_no_module_imports_from_a_layer_above_its_own():
    graph = import_graph()
    upward = [(m, LAYERS[layer_of(m)][0], d, LAYERS[layer_of(d)][0]) for m in sorted(graph) for d in sorted(graph[m])
              if layer_of(d) > layer_of(m)]
    assert upward == []


def test_the_layer_rule_finds_an_upward_import():
    assert layer_of("gradviz.kernels._sleef") == 0 and layer_of("gradviz.widget.frames") == len(LAYERS) - 1
    assert layer_of("gradviz") == 7 and layer_of("gradviz.trace.model") == 8
    assert layer_of("gradviz.tensor") < layer_of("gradviz.trace") < layer_of("gradviz.drawing.graph")


# The drawing package in the order a picture is made: the graph model, its DOT text, Graphviz's
# layout and rendering, the SVG decorated, the SVG's ids; the key beside them; draw() runs them all.
# A stage imports only the stages before it (and nothing of the drawing package imports the widget).
DRAWING_STAGES = ("graph", "dot_text", "render", "svg", "svg_ids", "legend", "picture")


def test_the_drawing_runs_in_stages():
    graph = import_graph()
    modules = {m for m in graph if m.startswith("gradviz.drawing.")}
    assert modules == {f"gradviz.drawing.{s}" for s in DRAWING_STAGES}, sorted(modules)
    for k, stage in enumerate(DRAWING_STAGES):
        later = {f"gradviz.drawing.{s}" for s in DRAWING_STAGES[k:]} | {"gradviz.drawing"}
        assert not graph[f"gradviz.drawing.{stage}"] & later, (stage, sorted(graph[f"gradviz.drawing.{stage}"] & later))


def test_only_the_drawing_and_the_widget_read_the_trace():
    graph = import_graph()
    readers = {m for m, deps in graph.items() if any(d.startswith("gradviz.trace") for d in deps)
               and not m.startswith("gradviz.trace")}
    assert all(LAYERS[layer_of(m)][0] in ("the drawing", "the widget") for m in readers), readers


def _outside_imports():
    """{module: the top-level names of what it imports from outside gradviz and the standard library}."""
    import sys
    out = {}
    for path in PACKAGE.rglob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        out[_module_name(path)] = names - set(sys.stdlib_module_names) - {"gradviz", "numpy"}
    return out


# Who may import what lies outside numpy: the widget's libraries only the widget (and the decks),
# the graphviz package only the drawing, torch only the trace's PyTorch side -- so a numpy-only
# install runs the core, and ``import gradviz`` loads none of them.
OUTSIDE = {"anywidget": "gradviz.widget", "traitlets": "gradviz.widget", "latex2mathml": ("gradviz.widget",
           "gradviz.slides"), "nh3": "gradviz.widget", "nbformat": "gradviz.slides", "nbconvert": "gradviz.slides",
           "nbclient": "gradviz.slides", "jupyter_client": "gradviz.slides", "graphviz": "gradviz.drawing.picture",
           "torch": "gradviz.trace"}


def test_only_their_layers_import_the_outside_libraries():
    for module, names in _outside_imports().items():
        for name in names:
            assert name in OUTSIDE, (module, name)
            allowed = OUTSIDE[name] if isinstance(OUTSIDE[name], tuple) else (OUTSIDE[name],)
            assert module.startswith(allowed), (module, name)


# Imports inside functions, each for a reason (a new one is usually a layer in the wrong place).
LAZY = {
    ("gradviz.__main__", "gradviz.slides"): "the command line loads the deck builder (nbconvert) only for `slides`",
    ("gradviz.trace", "gradviz.trace.torch_engine"): "PyTorch's adapter only when handed torch tensors",
    ("gradviz.slides", "gradviz.widget.standalone"): "a deck inlines the widget's page only when it has widgets",
    ("gradviz.kernels._activations", "gradviz.kernels._onednn"):
        "oneDNN's gelu polynomials load with the first gelu that needs them, not at import gradviz (issue 16)",
    ("gradviz.kernels._activations", "gradviz.kernels._sleef_hyperbolic"):
        "SLEEF's tanh and expm1 load with the first activation that needs them (elu, mish...), not at import gradviz",
    ("gradviz._arg_errors", "gradviz._signatures"):
        "PyTorch's signatures (a 40 kB table) load when a call is first refused, not at import gradviz",
    ("gradviz.autograd._backward_grad", "gradviz.autograd.double_backward"):
        "create_graph=True's recorded steps (and _recorded's tensors) load on first use, not at import gradviz",
}


def test_every_lazy_import_is_one_of_the_known():
    found, files = set(), {_module_name(p) for p in PACKAGE.rglob("*.py")}
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or _lazy_face_import(module, fn, (fn,)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found.update((module, d) for d in _resolve(module, node, path.name == "__init__.py", files))
    assert found == set(LAZY), sorted(found ^ set(LAZY))


# --- honest names ---------------------------------------------------------------------------------
# A module is imported under its own name, so grep finds every use (``from . import _dtype``, then
# ``_dtype.promote``), and no short alias stands for two modules.  The exceptions, each for a reason:
RENAMED = {
    ("numpy", "np"): "the convention every numpy reader knows",
    ("builtins", "_builtins"): "the package face and _dtype define float, int, bool...: Python's own, kept private",
    ("importlib", "_importlib"): "the package face keeps its helpers out of dir(gradviz)",
    ("types.ModuleType", "_ModuleType"): "the package face keeps its helpers out of dir(gradviz)",
    ("kernels._powf.power", "pow"): "the kernels' face names each kernel as torch does (kernels.pow)",
    ("kernels._powf.powers", "pow_tensor"): "the kernels' face: torch.pow with a tensor exponent",
    ("kernels._reduce.torch_sum", "sum"): "the kernels' face names each kernel as torch does (kernels.sum)",
    ("kernels._libm.log", "c_log"): "the kernels' face says whose log it is: the C library's",
    ("kernels._libm.log1p", "c_log1p"): "the kernels' face says whose log1p it is: the C library's",
    ("kernels._sleef.exp", "sleef_exp"): "the kernels' face says whose exp it is: SLEEF's",
    ("kernels._sleef.log", "sleef_log"): "the kernels' face says whose log it is: SLEEF's",
    ("kernels._sleef.log1p", "sleef_log1p"): "the kernels' face says whose log1p it is: SLEEF's",
}


def test_nothing_is_imported_under_another_name():
    renamed = set()
    for path in PACKAGE.rglob("*.py"):
        package = _module_name(path).split(".")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for a in node.names:
                if a.asname is None or a.asname == a.name.split(".")[-1]:
                    continue
                if isinstance(node, ast.ImportFrom):
                    base = package[1:len(package) - node.level + (path.name == "__init__.py")] if node.level else []
                    source = ".".join(base + ([node.module] if node.module else []) + [a.name])
                else:
                    source = a.name
                renamed.add((source, a.asname))
    assert renamed <= set(RENAMED), sorted(renamed - set(RENAMED))


# --- the engine reads like the lecture; the widget class stays thin -------------------------------

def _top_level_functions(path):
    return [n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)]


def test_the_engine_opens_with_the_five_steps_in_teaching_order():
    engine = PACKAGE / "autograd" / "engine.py"
    names = _top_level_functions(engine)
    steps = ["apply", "record", "run_backward", "apply_node", "_accumulate"]
    assert [names.index(s) for s in steps] == sorted(names.index(s) for s in steps), names
    # (views, the hooks a node's gradient goes through and double backward are modules of their own)
    assert len(engine.read_text(encoding="utf-8").splitlines()) < 500


def test_the_widget_class_hands_its_pipeline_the_work():
    """AutogradWidget.__init__ checks, traces and hands over: build_animation makes every trait."""
    tree = ast.parse((PACKAGE / "widget" / "autograd_widget.py").read_text(encoding="utf-8"))
    widget = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AutogradWidget")
    init = next(n for n in widget.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert init.end_lineno - init.lineno < 15
    assert "build_animation" in {n.id for n in ast.walk(init) if isinstance(n, ast.Name)}
