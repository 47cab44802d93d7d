"""Write ``gradviz/_signatures.py``: PyTorch's Python signatures of the functions and Tensor methods
gradviz has, as PyTorch's argument parser is given them, for :mod:`gradviz._arg_errors`.

The strings come from ``torchgen`` (shipped in the torch wheel), as PyTorch's own code generator
makes them (``gen_python_functions.py``: the overloads grouped, sorted, with their out= twins).
Each name is then checked against the installed torch: a set of wrong calls is made in torch and
replayed by :mod:`gradviz._arg_errors`; a name is kept only where every verdict and every message
agree (so a method PyTorch binds by hand, or writes in Python, is left out).

Run with a Python that has torch (gradviz itself never imports torch)::

    PYTHONPATH=. python tools/gen_signatures.py
"""

import os
import pprint
import sys

import torch
import torchgen
import torchgen.packaged.autograd.gen_python_functions as gpf
from torchgen.gen import parse_native_yaml

import gradviz
from gradviz import _arg_errors, _table_functions

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, os.pardir, "gradviz", "_signatures.py")

# The wrong calls each name is checked with ("T": a 2x3 float tensor)
PROBES = [((), {}), (("a",), {}), ((None,), {}), (([1.0, 2.0],), {}), (((1.0,),), {}), ((2,), {}),
          ((1.5,), {}), (("T", "a"), {}), (("T", None), {}), (("a", "b", "c", "d", "e", "f", "g"), {}),
          (("T",), {"bogus": 1}), ((), {"dim": "a"}), (("T", "T", "T", "T", "T", "T", "T", "T"), {})]
FUNCTION_PROBES = [(("T", *args), kwargs) for args, kwargs in PROBES] + PROBES


def torchgen_signatures():
    """name -> [signature string, ...] for Tensor methods and ``torch.*`` functions, as PyTorch makes them."""
    base = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
    natives = parse_native_yaml(os.path.join(base, "ATen", "native", "native_functions.yaml"),
                                os.path.join(base, "ATen", "native", "tags.yaml")).native_functions
    natives = [f for f in natives if gpf.should_generate_py_binding(f)]
    deprecated = os.path.join(base, "autograd", "deprecated.yaml")
    tables = {}
    for method, pred in ((True, gpf.is_py_variable_method), (False, gpf.is_py_torch_function)):
        grouped = gpf.group_filter_overloads(gpf.load_signatures(natives, deprecated, method=method), pred)
        tables[method] = {str(name): [o.signature.signature_str(symint=True) for o in gpf.group_overloads(overloads)]
                          for name, overloads in grouped.items()}
    return tables


def _verdict(call):
    try:
        call()
    except TypeError as e:
        return "TypeError: " + str(e).replace("torch.", "gradviz.")
    except Exception:
        return "accepted"      # (the parser took the arguments; the kernel refused them)
    return "accepted"


def agrees(name, sigs, method):
    """Does replaying ``sigs`` give torch's verdict and message for every probe?"""
    _arg_errors._parser.cache_clear()
    table = _signatures_module.METHODS if method else _signatures_module.FUNCTIONS
    table.clear()
    table[name] = sigs
    for args, kwargs in (PROBES if method else FUNCTION_PROBES):
        def real(v, lib):
            return lib.ones(2, 3) if isinstance(v, str) and v == "T" else v
        t_args = [real(a, torch) for a in args]
        g_args = [real(a, gradviz) for a in args]
        if method:
            expected = _verdict(lambda: getattr(torch.ones(2, 3), name)(*t_args, **kwargs))
        else:
            expected = _verdict(lambda: getattr(torch, name)(*t_args, **kwargs))
        try:
            _arg_errors.check(name, g_args, kwargs, method=method)
            got = "accepted"
        except TypeError as e:
            got = "TypeError: " + str(e)
        if got != expected:
            return False
    return True


class _Table:
    METHODS, FUNCTIONS = {}, {}


_signatures_module = _Table


def main():
    tables = torchgen_signatures()
    sys.modules["gradviz._signatures"] = _Table
    method_names = sorted(n for n in dir(gradviz.Tensor) if not n.startswith("__") and n in tables[True]
                          and type(getattr(torch.Tensor, n, None)).__name__ == "method_descriptor")
    function_names = sorted(n for n in set(_table_functions.NAMES) | set(dir(gradviz))
                            if n in tables[False] and getattr(torch, n, None) is getattr(torch._C._VariableFunctions, n, 0))
    kept, dropped = {True: {}, False: {}}, []
    for method, names in ((True, method_names), (False, function_names)):
        for name in names:
            sigs = tables[method][name]
            if agrees(name, sigs, method):
                kept[method][name] = tuple(sigs)
            else:
                dropped.append(("Tensor." if method else "torch.") + name)
    with open(OUT, "w") as f:
        f.write('"""PyTorch\'s Python signatures of the Tensor methods (:data:`METHODS`, self left out) and\n'
                '``torch.*`` functions (:data:`FUNCTIONS`) that gradviz has, in the order PyTorch\'s argument\n'
                'parser is given them (``|deprecated`` and ``|hidden`` ones are tried but never shown), for\n'
                ':mod:`gradviz._arg_errors`.  Generated by ``tools/gen_signatures.py`` from torchgen and\n'
                f'checked against torch {torch.__version__.split("+")[0]}: do not edit.\n"""\n\n')
        f.write('__all__ = ["METHODS", "FUNCTIONS"]\n\n')
        f.write("METHODS = " + pprint.pformat(kept[True], width=120, compact=True) + "\n\n")
        f.write("FUNCTIONS = " + pprint.pformat(kept[False], width=120, compact=True) + "\n")
    print(f"{len(kept[True])} methods, {len(kept[False])} functions written; left out (torch binds them "
          f"otherwise): {', '.join(dropped)}")


if __name__ == "__main__":
    main()
