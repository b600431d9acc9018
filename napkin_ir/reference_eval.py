"""The diagram evaluated in float64 with numpy: what `napkin-run --check` compares against.

Written apart from the interpreters (`napkin_ir/interpreters`), from the ops' stated
semantics, so that a fault shared by the interpreters and the lowerings they check is not
hidden by a reference built from the same code: each ncd op below is a few lines of numpy
on float64 arrays whose axes are named by the op's types. Casts keep the float64 value
(the reference is the exact math; the tolerances in `napkin_ir.reference.TOLERANCE` allow
for the kernel's roundings). It takes any function whatever it is called; named
references (`napkin_ir.reference.REFERENCES`) remain for `--reference NAME` and for
kernels with no diagram left to evaluate.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from napkin_ir.dialects import ncd
from napkin_ir.errors import UserError

Named = tuple[tuple[str, ...], np.ndarray]  # (axis names, float64 array with those axes in that order)


def _axes(value: SSAValue) -> tuple[str, ...]:
    t = value.type
    if not isinstance(t, ncd.TensorType):
        raise UserError(f"the float64 reference evaluates !ncd.tensor values, found {t}")
    return tuple(t.axis_names)


def _aligned(x: Named, axes: Sequence[str]) -> np.ndarray:
    """`x` with its axes in the order `axes`, broadcast (size 1) over those it lacks."""
    names, arr = x
    missing = [a for a in names if a not in axes]
    if missing:
        raise UserError(f"the float64 reference cannot broadcast axes {missing} away")
    order = [names.index(a) for a in axes if a in names]
    arr = np.transpose(arr, order)
    shape = [arr.shape[order.index(names.index(a))] if a in names else 1 for a in axes]
    return arr.reshape(shape)


def _contract(op: ncd.ContractOp, a: Named, b: Named) -> np.ndarray:
    letters = {}
    for name in (*a[0], *b[0]):
        letters.setdefault(name, string.ascii_letters[len(letters)])
    out = _axes(op.results[0])
    spec = f"{''.join(letters[n] for n in a[0])},{''.join(letters[n] for n in b[0])}->{''.join(letters[n] for n in out)}"
    return np.einsum(spec, a[1], b[1], optimize=True)


UNARY = {"exp": np.exp, "exp2": np.exp2, "log2": np.log2, "neg": np.negative, "sqrt": np.sqrt, "cast": lambda x: x}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
          "ge": lambda x, y: (x >= y).astype(np.float64)}


def _map(op: ncd.MapOp, args: list[Named]) -> np.ndarray:
    out = _axes(op.results[0])
    fn = op.fn.data
    xs = [_aligned(x, out) for x in args]
    by = None if op.by is None else float(op.by.value.data)
    if fn == "scale":
        y = xs[0] * by
    elif fn in UNARY:
        y = UNARY[fn](xs[0])
    else:
        y = BINARY[fn](xs[0], xs[1] if len(xs) > 1 else np.float64(by))
    return np.broadcast_to(y, op.results[0].type.dims)  # type: ignore[attr-defined]


def _along(x: Named, axis: str) -> tuple[np.ndarray, int]:
    return x[1], x[0].index(axis)


def _softmax(x: np.ndarray, k: int, scale: float) -> np.ndarray:
    s = x * scale
    top = np.max(s, axis=k, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(s - top)
    return e / np.sum(e, axis=k, keepdims=True)


def _fill_outside(op: Operation, x: Named) -> np.ndarray:
    if getattr(op, "offsets", None):
        raise UserError(f"the float64 reference evaluates whole diagrams; {op.name} on a tile (with `at`) is below the ncd level")
    names, arr = x
    fill = float(op.fill.value.data)  # type: ignore[attr-defined]
    if isinstance(op, ncd.MaskOp):
        r, c = names.index(op.row.data), names.index(op.col.data)
        rows = np.arange(arr.shape[r]).reshape([-1 if n == r else 1 for n in range(arr.ndim)])
        cols = np.arange(arr.shape[c]).reshape([-1 if n == c else 1 for n in range(arr.ndim)])
        return np.where(rows >= cols, arr, fill)
    k = names.index(op.axis.data)  # type: ignore[attr-defined]
    pos = np.arange(arr.shape[k]).reshape([-1 if n == k else 1 for n in range(arr.ndim)])
    return np.where(pos < op.bound.data, arr, fill)  # type: ignore[attr-defined]


def _evaluate(op: Operation, args: list[Named]) -> np.ndarray:
    if isinstance(op, ncd.ContractOp):
        return _contract(op, *args)
    if isinstance(op, ncd.MapOp):
        return _map(op, args)
    if isinstance(op, ncd.ReduceOp):
        names, arr = args[0]
        ks = tuple(names.index(a.data) for a in op.along.data)
        return (np.sum if op.kind.data == "sum" else np.max)(arr, axis=ks)
    if isinstance(op, ncd.RenameOp):  # the same array, its axes in the same order
        return args[0][1]
    if isinstance(op, ncd.SoftmaxOp):
        arr, k = _along(args[0], op.axis.data)
        return _softmax(arr, k, 1.0 if op.scale is None else float(op.scale.value.data))
    if isinstance(op, ncd.L2NormOp):
        arr, k = _along(args[0], op.axis.data)
        return arr / np.sqrt(np.sum(arr * arr, axis=k, keepdims=True))
    if op.name == "ncd.logsumexp":
        arr, k = _along(args[0], op.axis.data)  # type: ignore[attr-defined]
        scale = 1.0 if op.scale is None else float(op.scale.value.data)  # type: ignore[attr-defined]
        s = arr * scale
        top = np.max(s, axis=k, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        return np.squeeze(top, k) + np.log(np.sum(np.exp(s - top), axis=k))
    if op.name == "ncd.constant":
        return np.full(op.results[0].type.dims, float(op.value.value.data))  # type: ignore[attr-defined]
    if isinstance(op, (ncd.MaskOp, ncd.MaskBoundOp)):
        return _fill_outside(op, args[0])
    raise UserError(f"the float64 reference does not evaluate {op.name}; name a reference with --reference")


def evaluate(f: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`f`'s results in float64 from `inputs` (arrays in its arguments' axis order), each in
    its result type's axis order."""
    args = f.body.blocks[0].args
    if len(inputs) != len(args):
        raise UserError(f"@{f.sym_name.data} takes {len(args)} arguments, got {len(inputs)}")
    values: dict[SSAValue, Named] = {}
    for arg, x in zip(args, inputs):
        values[arg] = (_axes(arg), np.asarray(x, np.float64))
    for op in f.body.blocks[0].ops:
        if isinstance(op, func.ReturnOp):
            return [_aligned(values[v], _axes(v)) for v in op.arguments]
        result = _evaluate(op, [values[v] for v in op.operands])
        (res,) = op.results
        out = _axes(res)
        want = tuple(res.type.dims)  # type: ignore[attr-defined]
        if result.shape != want:
            raise UserError(f"{op.name}: the float64 reference made shape {result.shape}, the type says {want}")
        values[res] = (out, np.asarray(result, np.float64))
    raise UserError(f"@{f.sym_name.data} has no func.return")


def macs(f: func.FuncOp) -> int:
    """Multiply-adds of `f`'s contractions: each one's whole iteration space."""
    total = 0
    for op in f.walk():
        if isinstance(op, ncd.ContractOp):
            sizes = {}
            for v in op.operands:
                sizes.update(zip(_axes(v), v.type.dims))  # type: ignore[attr-defined]
            total += math.prod(sizes.values())
    return total


__all__ = ["evaluate", "macs"]
