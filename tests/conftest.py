"""Fixtures shared by several test files."""

import pytest

import gradviz as torch


@pytest.fixture
def tanh_chain():
    """``tanh_chain(n)``: ``(loss, w)`` for n layers of ``h = tanh(h * w + 1)`` -- a graph too big to
    draw in full (about 7 nodes a layer), for the tests of summarized pictures."""
    def make(steps):
        w = torch.ones(3, requires_grad=True)
        h = torch.ones(3, requires_grad=True)
        for _ in range(steps):
            h = (h * w + 1).tanh()
        return h.sum(), w
    return make
