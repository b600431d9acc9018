"""Fixtures the unit and GPU tests share."""

import pytest


@pytest.fixture
def below_autograd_calls(monkeypatch):
    """A list that gets an entry each time `napkin_ir.torch`'s wrappers dispatch a call below
    the autograd key (`_below_autograd` spied on)."""
    import torch

    import napkin_ir.torch as nt

    seen = []
    real = torch._C._AutoDispatchBelowAutograd

    def spy():
        seen.append(True)
        return real()

    monkeypatch.setattr(nt, "_below_autograd", spy)
    return seen
