"""Diagrams built in Python, for tests, benchmarks and users who generate shapes.

The builders check their arguments and name the one that is wrong (a `UserError`), so
that a bad size or type is refused here rather than by the parser or a pass later.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any

from napkin_ir.errors import BadArgument

DTYPES = ("bf16", "f16", "f32")
INT64_MAX = 2**63 - 1


def positive_int(where: str, arg: str, value: Any, *, zero: bool = False) -> int:
    """`value` if it is an int of at least 1 (or 0, with `zero`) that fits in int64."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)  # Python's and numpy's integers, not floats
    except TypeError:
        raise BadArgument(f"{where}: {arg} must be an integer, found {type(value).__name__} {value!r}") from None
    if value < (0 if zero else 1) or value > INT64_MAX:
        least = "non-negative" if zero else "positive"
        raise BadArgument(f"{where}: {arg} must be a {least} integer that fits in int64, found {value}")
    return value


def element_type(where: str, arg: str, value: Any) -> str:
    if value not in DTYPES:
        raise BadArgument(f"{where}: {arg} must be one of {', '.join(map(repr, DTYPES))}, found {value!r}")
    return value


def symbol(where: str, arg: str, value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", value):
        raise BadArgument(f"{where}: {arg} must be a function name (letters, digits, _ $ .), found {value!r}")
    return value


def finite_float(where: str, arg: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadArgument(f"{where}: {arg} must be a finite number, found {value!r}")
    return float(value)


def scaled(rows: int, cols: int, scale: float, dtype: str = "f32", out_dtype: str = "bf16", name: str = "scaled") -> str:
    """out[r, c] = scale * x[r, c], x of `dtype`, rounded to `out_dtype`: maps alone, which
    napkin compiles as a rows kernel (whole lines of `cols` a lane group). The attention
    backward's dQ, added up in f32 across key blocks, leaves through it once: its scale and
    rounding in one pass, 16 bytes a lane."""
    positive_int("scaled", "rows", rows)
    positive_int("scaled", "cols", cols)
    scale = finite_float("scaled", "scale", scale)
    element_type("scaled", "dtype", dtype)
    element_type("scaled", "out_dtype", out_dtype)
    symbol("scaled", "name", name)
    src, dst = (f"!ncd.tensor<r={rows}, c={cols} : {t}>" for t in (dtype, out_dtype))
    body = [f"  %y = ncd.map scale %x by {scale!r} : {src} -> {dst}"] if dtype == out_dtype else [
        f"  %s = ncd.map scale %x by {scale!r} : {src} -> {src}", f"  %y = ncd.map cast %s : {src} -> {dst}"]
    return "\n".join([f"func.func @{name}(%x: {src}) -> {dst} {{", *body, f"  func.return %y : {dst}", "}"]) + "\n"


def gemm(m: int, n: int, k: int, dtype: str = "bf16", name: str = "matmul", *, batch: int = 0, b_nk: bool = False,
         out_dtype: str | None = None, bias: str = "", bias_dtype: str = "f32", relu: bool = False,
         transposed: bool = False, residual: bool = False) -> str:
    """C[m, n] = A[m, k] B[k, n] as an ncd diagram (bf16, f16 or f32; f32 accumulation).
    `batch` > 0 adds a leading axis b of that size to all three; `b_nk` stores B as
    [n, k]; `out_dtype` gives C another element type than the inputs (f32: the
    accumulators as they are). An epilogue on the f32 product: `bias="n"` adds a vector
    bias[n] to every row (`"m"`: bias[m] to every column), of `bias_dtype` (cast to f32
    first where it is not), `residual` adds a tensor r[m, n] of the inputs' element type
    (a residual connection's: cast to f32), then `relu` takes max(x, 0); C is the result
    rounded.
    `transposed` writes the product transposed, C^T[n, m] = B^T A^T (no epilogue): B's
    columns are then the output's rows, those the tensor cores' 64-row tiles take, which
    a decode-sized M (a few rows) could not fill."""
    for arg, value in (("m", m), ("n", n), ("k", k)):
        positive_int("gemm", arg, value)
    positive_int("gemm", "batch", batch, zero=True)
    element_type("gemm", "dtype", dtype)
    symbol("gemm", "name", name)
    if out_dtype is not None:
        element_type("gemm", "out_dtype", out_dtype)
    element_type("gemm", "bias_dtype", bias_dtype)
    lead = f"b={batch}, " if batch else ""
    a = f"!ncd.tensor<{lead}m={m}, k={k} : {dtype}>"
    b = f"!ncd.tensor<{lead}n={n}, k={k} : {dtype}>" if b_nk else f"!ncd.tensor<{lead}k={k}, n={n} : {dtype}>"
    c = f"!ncd.tensor<{lead}m={m}, n={n} : {out_dtype or dtype}>"
    if transposed:
        if bias or relu or b_nk or batch or residual:
            raise BadArgument("gemm: transposed=True writes C^T = B^T A^T of a plain GEMM: no batch, bias, residual, relu or b_nk")
        c = f"!ncd.tensor<n={n}, m={m} : {out_dtype or dtype}>"
        return (f"func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n"
                f"  %c = ncd.contract %b, %a over [k] : {b}, {a} -> {c}\n"
                f"  func.return %c : {c}\n}}\n")
    if not bias and not relu and not residual:
        return (f"func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n"
                f"  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}\n"
                f"  func.return %c : {c}\n}}\n")
    acc = f"!ncd.tensor<{lead}m={m}, n={n} : f32>"
    args = [f"%a: {a}", f"%b: {b}"]
    body = [f"%c = ncd.contract %a, %b over [k] : {a}, {b} -> {acc}"]
    last = "%c"
    if bias:
        if bias not in ("m", "n"):
            raise BadArgument(f"gemm: bias runs along m (a value per row) or n (per column), got {bias!r}")
        vec = f"!ncd.tensor<{bias}={m if bias == 'm' else n} : {bias_dtype}>"
        args.append(f"%bias: {vec}")
        v = "%bias"
        if bias_dtype != "f32":
            f32_vec = vec.replace(f": {bias_dtype}>", ": f32>")
            body.append(f"%bias32 = ncd.map cast %bias : {vec} -> {f32_vec}")
            v, vec = "%bias32", f32_vec
        body.append(f"%y = ncd.map add {last}, {v} : {acc}, {vec} -> {acc}")
        last = "%y"
    if residual:
        res, r = f"!ncd.tensor<{lead}m={m}, n={n} : {dtype}>", "%res"
        args.append(f"%res: {res}")
        if res != acc:
            body.append(f"%res32 = ncd.map cast %res : {res} -> {acc}")
            r = "%res32"
        body.append(f"%z = ncd.map add {last}, {r} : {acc}, {acc} -> {acc}")
        last = "%z"
    if relu:
        body.append(f"%r = ncd.map max {last} by 0.0 : {acc} -> {acc}")
        last = "%r"
    if c != acc:
        body.append(f"%o = ncd.map cast {last} : {acc} -> {c}")
        last = "%o"
    lines = [f"func.func @{name}({', '.join(args)}) -> {c} {{", *(f"  {x}" for x in body), f"  func.return {last} : {c}", "}"]
    return "\n".join(lines) + "\n"
