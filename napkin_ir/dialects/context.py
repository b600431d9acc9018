"""napkin's dialects, loaded lazily, and a context that knows them and xDSL's.

Anything that parses IR (the tools, the planner's search, the tests) asks `make_context`;
the registry (`napkin_ir.registry`) adds napkin's passes and targets on top. Factories
import their dialect only when first used, as `xdsl.dialects.get_all_dialects` does.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.ir import Dialect


def _ncd() -> Dialect:
    from napkin_ir.dialects.ncd import NCD

    return NCD


def _hbm() -> Dialect:
    from napkin_ir.dialects.hbm import HBM

    return HBM


def _smem() -> Dialect:
    from napkin_ir.dialects.smem import SMEM

    return SMEM


def _reg() -> Dialect:
    from napkin_ir.dialects.reg import REG

    return REG


def _ptx() -> Dialect:
    from napkin_ir.dialects.ptx import PTX

    return PTX


def napkin_dialects() -> dict[str, Callable[[], Dialect]]:
    return {"ncd": _ncd, "hbm": _hbm, "smem": _smem, "reg": _reg, "ptx": _ptx}


def all_dialects() -> dict[str, Callable[[], Dialect]]:
    return {**get_all_dialects(), **napkin_dialects()}


def make_context() -> Context:
    """A context with xDSL's dialects and napkin's, for tools and tests."""
    ctx = Context()
    for name, factory in all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
