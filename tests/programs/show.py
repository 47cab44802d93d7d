"""What the programs share: an error printed as a student sees it, its type and first line."""


def show(f):
    """Print ``f()``, or the error it raises (the programs go on after an error, as a notebook does)."""
    try:
        print(f())
    except Exception as e:
        print("ERROR", type(e).__name__, str(e).split("\n")[0])
