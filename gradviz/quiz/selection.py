"""Which questions to ask: ``ask="leaves" | "all" | ["x", "W1", ...] | callable``, as an instructor writes it.

>>> from types import SimpleNamespace as Q
>>> qs = [Q(name="x", kind="grad", leaf=True), Q(name="y", kind="received", leaf=False)]
>>> [q.name for q in select(qs, "leaves")], [q.name for q in select(qs, ["y"])]
(['x'], ['y'])
"""

__all__ = ["select", "ASK"]

ASK = ("leaves", "all")


def select(questions, ask, func="practice", strict=True):
    """The questions ``ask`` picks, in their order.

    ``"leaves"``: those about leaf tensors; ``"all"``: every one; a list of names: those about the
    tensors so named (a name the graph does not have is a ValueError naming the ones it has, unless
    ``strict`` is false: a later pass may reach fewer tensors than the one the names were checked on); a
    callable: those for which ``ask(question)`` is true (the question has ``name``, ``kind``,
    ``leaf``, ``node`` and ``text``).
    """
    questions = list(questions)
    if isinstance(ask, str):
        if ask not in ASK:
            raise ValueError(f"{func}(): ask must be 'leaves', 'all', a list of tensor names or a function, "
                             f"not {ask!r}")
        return [q for q in questions if ask == "all" or q.leaf]
    if callable(ask):
        return [q for q in questions if ask(q)]
    if isinstance(ask, (list, tuple, set, frozenset)):
        names = list(ask)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{func}(): ask= names tensors by their names (str), not {type(n).__name__}")
        known = list(dict.fromkeys(q.name for q in questions))
        unknown = [n for n in names if n not in known]
        if unknown and strict:
            raise ValueError(f"{func}(): ask names {', '.join(map(repr, unknown))}, which the graph does not "
                             f"have a question about; it has {', '.join(map(repr, known)) or 'none'}")
        return [q for q in questions if q.name in names]
    raise TypeError(f"{func}(): ask must be 'leaves', 'all', a list of tensor names or a function, "
                    f"not {type(ask).__name__}")
