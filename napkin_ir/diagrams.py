"""Diagrams built in Python, for tests, benchmarks and users who generate shapes."""

from __future__ import annotations


def gemm(m: int, n: int, k: int, dtype: str = "bf16", name: str = "matmul", *, batch: int = 0, b_nk: bool = False,
         out_dtype: str | None = None, bias: str = "", bias_dtype: str = "f32", relu: bool = False) -> str:
    """C[m, n] = A[m, k] B[k, n] as an ncd diagram (bf16, f16 or f32; f32 accumulation).
    `batch` > 0 adds a leading axis b of that size to all three; `b_nk` stores B as
    [n, k]; `out_dtype` gives C another element type than the inputs (f32: the
    accumulators as they are). An epilogue on the f32 product: `bias="n"` adds a vector
    bias[n] to every row (`"m"`: bias[m] to every column), of `bias_dtype` (cast to f32
    first where it is not), then `relu` takes max(x, 0); C is the result rounded."""
    lead = f"b={batch}, " if batch else ""
    a = f"!ncd.tensor<{lead}m={m}, k={k} : {dtype}>"
    b = f"!ncd.tensor<{lead}n={n}, k={k} : {dtype}>" if b_nk else f"!ncd.tensor<{lead}k={k}, n={n} : {dtype}>"
    c = f"!ncd.tensor<{lead}m={m}, n={n} : {out_dtype or dtype}>"
    if not bias and not relu:
        return (f"func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n"
                f"  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}\n"
                f"  func.return %c : {c}\n}}\n")
    acc = f"!ncd.tensor<{lead}m={m}, n={n} : f32>"
    args = [f"%a: {a}", f"%b: {b}"]
    body = [f"%c = ncd.contract %a, %b over [k] : {a}, {b} -> {acc}"]
    last = "%c"
    if bias:
        if bias not in ("m", "n"):
            raise ValueError(f"bias runs along m (a value per row) or n (per column), got {bias!r}")
        vec = f"!ncd.tensor<{bias}={m if bias == 'm' else n} : {bias_dtype}>"
        args.append(f"%bias: {vec}")
        v = "%bias"
        if bias_dtype != "f32":
            f32_vec = vec.replace(f": {bias_dtype}>", ": f32>")
            body.append(f"%bias32 = ncd.map cast %bias : {vec} -> {f32_vec}")
            v, vec = "%bias32", f32_vec
        body.append(f"%y = ncd.map add {last}, {v} : {acc}, {vec} -> {acc}")
        last = "%y"
    if relu:
        body.append(f"%r = ncd.map max {last} by 0.0 : {acc} -> {acc}")
        last = "%r"
    if c != acc:
        body.append(f"%o = ncd.map cast {last} : {acc} -> {c}")
        last = "%o"
    lines = [f"func.func @{name}({', '.join(args)}) -> {c} {{", *(f"  {x}" for x in body), f"  func.return {last} : {c}", "}"]
    return "\n".join(lines) + "\n"
