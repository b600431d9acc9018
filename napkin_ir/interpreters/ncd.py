"""Numpy implementations of the `ncd` ops for xDSL's interpreter.

Each op computes in float32 and rounds to its result's element type (bf16, f16 with
`ml_dtypes`), the reference semantics that every lower level is checked against.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.func import FuncFunctions

from napkin_ir.dialects import ncd
from napkin_ir.interpreters.tensors import NamedArray, round_to


def _result(op: ncd.NcdOp, data: np.ndarray) -> NamedArray:
    t = op.results[0].type
    assert isinstance(t, ncd.TensorType)
    return NamedArray(t.axis_names, round_to(t.dtype, data))


def _letters(axes: list[str]) -> dict[str, str]:
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if len(axes) > len(letters):
        raise ValueError("too many distinct axes for einsum")
    return {a: letters[n] for n, a in enumerate(axes)}


_UNARY = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log2": np.log2,
    "neg": np.negative,
    "sqrt": np.sqrt,
    "cast": lambda x: x,
}
_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "ge": lambda x, y: np.greater_equal(x, y).astype(np.float32),
}


@register_impls
class NcdFunctions(InterpreterFunctions):
    @impl(ncd.ContractOp)
    def run_contract(self, interpreter: Interpreter, op: ncd.ContractOp, args: tuple[Any, ...]):
        lhs, rhs = args
        out_axes = op.result.type.axis_names
        names = _letters(list(dict.fromkeys([*lhs.axes, *rhs.axes])))
        spec = "".join(names[a] for a in lhs.axes) + "," + "".join(names[a] for a in rhs.axes)
        spec += "->" + "".join(names[a] for a in out_axes)
        return (_result(op, np.einsum(spec, lhs.data, rhs.data, dtype=np.float32)),)

    @impl(ncd.MapOp)
    def run_map(self, interpreter: Interpreter, op: ncd.MapOp, args: tuple[Any, ...]):
        axes = op.result.type.axis_names
        xs = [a.aligned(axes) for a in args]
        fn = op.fn.data
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if fn == "scale":
                assert op.by is not None
                y = xs[0] * np.float32(op.by.value.data)
            elif fn in _UNARY:
                y = _UNARY[fn](xs[0])
            else:  # the second operand a tensor, or the constant `by`
                y = _BINARY[fn](xs[0], xs[1] if len(xs) > 1 else np.float32(op.by.value.data))  # type: ignore[union-attr]
        return (_result(op, np.broadcast_to(y, [op.result.type.shape[a] for a in axes])),)

    @impl(ncd.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: ncd.ReduceOp, args: tuple[Any, ...]):
        (x,) = args
        out_axes = op.result.type.axis_names
        along = tuple(x.axes.index(a) for a in op.along_axes)
        red = np.sum if op.kind.data == "sum" else np.max
        kept = [a for a in x.axes if a not in op.along_axes]
        y = NamedArray(tuple(kept), red(x.data, axis=along))
        return (_result(op, y.aligned(out_axes)),)

    @impl(ncd.RenameOp)
    def run_rename(self, interpreter: Interpreter, op: ncd.RenameOp, args: tuple[Any, ...]):
        (x,) = args
        renames = op.renames
        return (NamedArray(tuple(renames.get(a, a) for a in x.axes), x.data),)

    @impl(ncd.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: ncd.SoftmaxOp, args: tuple[Any, ...]):
        (x,) = args
        ax = x.axes.index(op.axis.data)
        s = x.data * np.float32(op.scale_value)
        with np.errstate(invalid="ignore"):
            e = np.exp(s - np.max(s, axis=ax, keepdims=True))
            p = e / np.sum(e, axis=ax, keepdims=True)
        return (_result(op, NamedArray(x.axes, p).aligned(op.result.type.axis_names)),)

    @impl(ncd.L2NormOp)
    def run_l2norm(self, interpreter: Interpreter, op: ncd.L2NormOp, args: tuple[Any, ...]):
        (x,) = args
        ax = x.axes.index(op.axis.data)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = x.data / np.sqrt(np.sum(x.data * x.data, axis=ax, keepdims=True))
        return (_result(op, NamedArray(x.axes, y).aligned(op.result.type.axis_names)),)

    @impl(ncd.LogSumExpOp)
    def run_logsumexp(self, interpreter: Interpreter, op: ncd.LogSumExpOp, args: tuple[Any, ...]):
        (x,) = args
        ax = x.axes.index(op.axis.data)
        s = x.data * np.float32(op.scale_value)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.max(s, axis=ax, keepdims=True)
            m = np.where(np.isfinite(m), m, np.float32(0))  # a row of -inf gives log(0) = -inf, not NaN
            lse = np.squeeze(m, ax) + np.log(np.sum(np.exp(s - m), axis=ax))
        kept = tuple(a for a in x.axes if a != op.axis.data)
        return (_result(op, NamedArray(kept, lse).aligned(op.result.type.axis_names)),)

    @impl(ncd.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: ncd.ConstantOp, args: tuple[Any, ...]):
        t = op.result.type
        return (_result(op, np.full(t.dims, np.float32(op.value.value.data), np.float32)),)

    @impl(ncd.MaskOp)
    def run_mask(self, interpreter: Interpreter, op: ncd.MaskOp, args: tuple[Any, ...]):
        x, *offsets = args
        r0, c0 = offsets or (0, 0)
        keep = _positions(x, op.row.data, r0) >= _positions(x, op.col.data, c0)
        return (_masked(op, x, keep),)

    @impl(ncd.MaskBoundOp)
    def run_mask_bound(self, interpreter: Interpreter, op: ncd.MaskBoundOp, args: tuple[Any, ...]):
        x, *offsets = args
        keep = _positions(x, op.axis.data, offsets[0] if offsets else 0) < op.bound.data
        return (_masked(op, x, keep),)


def _positions(x: NamedArray, axis: str, start: int) -> np.ndarray:
    """The position of each element along `axis`, shaped to broadcast against `x`."""
    return NamedArray((axis,), start + np.arange(x.shape[axis])).aligned(x.axes)


def _masked(op: ncd.FillOutsideOp, x: NamedArray, keep: np.ndarray) -> NamedArray:
    y = np.where(keep, x.data, np.float32(op.fill.value.data))
    return _result(op, NamedArray(x.axes, y).aligned(op.result.type.axis_names))


def make_interpreter(module: ModuleOp) -> Interpreter:
    interp = Interpreter(module)
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(NcdFunctions())
    return interp
