"""gradviz.trace.record(): the backward events of the seed lesson, checked against numbers by hand.

    x = ones(2, requires_grad=True);  o = 0.5 * sum(5 * (x + 1) ** 2)

Forward: a = x + 1 = [2, 2];  b = a² = [4, 4];  c = 5b = [20, 20];  s = Σc = 40;  o = 0.5 s = 20.
Backward, node by node (grad_in -> what goes to each input; the constants 0.5 and 5 get None):
    MulBackward0 (o = 0.5 s)   1          -> ds = 0.5
    SumBackward0 (s = Σc)      0.5        -> dc = [0.5, 0.5]
    MulBackward0 (c = 5b)      [0.5, 0.5] -> db = 5 · 0.5 = [2.5, 2.5]
    PowBackward0 (b = a²)      [2.5, 2.5] -> da = 2a · 2.5 = [10, 10]
    AddBackward0 (a = x + 1)   [10, 10]   -> dx = [10, 10]
    AccumulateGrad (x.grad)    [10, 10]   :  None -> [10, 10], then on a second call [10, 10] -> [20, 20]
"""

import numpy as np
import pytest

import gradviz as torch
from gradviz.autograd import engine
from gradviz.trace import Recording, forward_nodes, record

ORDER = ["MulBackward0", "SumBackward0", "MulBackward0", "PowBackward0", "AddBackward0", "AccumulateGrad"]
GRAD_IN = [1.0, 0.5, [0.5, 0.5], [2.5, 2.5], [10.0, 10.0], [10.0, 10.0]]
GRADS_OUT = [(0.5, None), ([0.5, 0.5],), ([2.5, 2.5], None), ([10.0, 10.0],), ([10.0, 10.0], None), ()]


def seed_lesson():
    x = torch.ones(2, requires_grad=True)
    o = 0.5 * torch.sum(5 * (x + 1) ** 2)
    return x, o


def _plain(v):
    return None if v is None else np.asarray(v).tolist()


def test_event_order_and_numbers():
    x, o = seed_lesson()
    with record() as rec:
        o.backward()
    assert [e.name for e in rec.events] == ORDER
    assert [_plain(e.grad_in) for e in rec.events] == GRAD_IN
    assert [tuple(_plain(g) for g in e.grads_out) for e in rec.events] == GRADS_OUT
    assert [e.step for e in rec.events] == list(range(6)) and {e.run for e in rec.events} == {0}
    leaf = rec.events[-1]
    assert leaf.variable is x and leaf.grad_before is None and _plain(leaf.grad_after) == [10.0, 10.0]
    assert x.grad.tolist() == [10.0, 10.0]


def test_events_point_at_the_real_nodes():
    x, o = seed_lesson()
    with record() as rec:
        o.backward()
    assert rec.events[0].node is o.grad_fn
    assert rec.events[-1].node is o.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0] \
        .next_functions[0][0].next_functions[0][0]
    # seq numbers give the forward order back: the recorder runs backward in reverse creation order
    seqs = [e.seq for e in rec.events[:-1]]
    assert seqs == sorted(seqs, reverse=True)
    assert [n.name() for n in forward_nodes(o)] == ORDER[-2::-1]


def test_two_backward_calls_with_retain_graph():
    x, o = seed_lesson()
    with record() as rec:
        o.backward(retain_graph=True)
        o.backward()
    assert [e.name for e in rec.events] == ORDER * 2
    assert [e.run for e in rec.events] == [0] * 6 + [1] * 6
    first, second = rec.events[5], rec.events[11]
    assert first.grad_before is None and _plain(first.grad_after) == [10.0, 10.0]
    assert _plain(second.grad_before) == [10.0, 10.0] and _plain(second.grad_after) == [20.0, 20.0]
    assert [r.retain_graph for r in rec.runs] == [True, False]
    assert [_plain(s) for r in rec.runs for s in r.seeds] == [1.0, 1.0]


def test_recorded_arrays_are_copies():
    x, o = seed_lesson()
    with record() as rec:
        o.backward(retain_graph=True)
    x.grad.zero_()
    assert _plain(rec.events[-1].grad_after) == [10.0, 10.0]


def test_recording_is_off_outside_the_context(monkeypatch):
    x, o = seed_lesson()
    with record() as rec:
        pass
    assert engine._recorders == []

    def boom(*args):
        raise AssertionError("the engine called a recorder while none was active")

    for name in ("_begin", "_node", "_leaf", "_end"):
        monkeypatch.setattr(Recording, name, boom)
    o.backward()                    # no recorder active: the engine only checks an empty list
    assert rec.events == [] and x.grad.tolist() == [10.0, 10.0]


def test_nested_recordings_use_the_innermost():
    x, o = seed_lesson()
    with record() as outer:
        with record() as inner:
            o.backward(retain_graph=True)
        o.backward()
    assert len(inner.events) == 6 and len(outer.events) == 6
    assert _plain(outer.events[-1].grad_after) == [20.0, 20.0]


def test_recorder_is_removed_after_an_error():
    x, o = seed_lesson()
    o.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        with record():
            o.backward()
    assert engine._recorders == []
