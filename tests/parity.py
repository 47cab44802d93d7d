"""Run one program in PyTorch and in gradviz and return what each printed (warnings and errors
included), so a parity test is ``assert printed(gradviz, code) == printed(torch, code)``."""

import contextlib
import io
import re
import warnings


def printed(L, code, **names):
    """What ``code`` printed with ``torch`` bound to the library ``L``: stdout, each warning as
    ``WARNING <category>: <message>`` where it was raised, and an exception as ``ERROR <type>: <message>``
    (the last line).  Object addresses are masked and gradviz reads as torch."""
    buf = io.StringIO()
    program = compile(code, "<parity>", "exec")

    def show(message, category, *args, **kwargs):
        print(f"WARNING {category.__name__}: {message}", file=buf)

    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        try:
            exec(program, {"torch": L, **names})
        except Exception as e:  # noqa: BLE001 -- the message is part of what is compared
            print(f"ERROR {type(e).__name__}: {e}")
    text = re.sub(r"at 0x[0-9a-f]+", "at 0x?", buf.getvalue())
    return re.sub(r"\bgradviz(?=\.|::|\b)", "torch", text)


@contextlib.contextmanager
def same_threads(torch, n=1):
    """PyTorch and gradviz on ``n`` threads each (what a kernel's bits can depend on), then back."""
    import gradviz
    before, mine = torch.get_num_threads(), gradviz.get_num_threads()
    torch.set_num_threads(n)
    gradviz.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
        gradviz.set_num_threads(mine)
