"""Diagrams built in Python, for tests, benchmarks and users who generate shapes."""

from __future__ import annotations


def gemm(m: int, n: int, k: int, dtype: str = "bf16", name: str = "matmul", *, batch: int = 0, b_nk: bool = False,
         out_dtype: str | None = None) -> str:
    """C[m, n] = A[m, k] B[k, n] as an ncd diagram (bf16, f16 or f32; f32 accumulation).
    `batch` > 0 adds a leading axis b of that size to all three; `b_nk` stores B as
    [n, k]; `out_dtype` gives C another element type than the inputs (f32: the
    accumulators as they are)."""
    lead = f"b={batch}, " if batch else ""
    a = f"!ncd.tensor<{lead}m={m}, k={k} : {dtype}>"
    b = f"!ncd.tensor<{lead}n={n}, k={k} : {dtype}>" if b_nk else f"!ncd.tensor<{lead}k={k}, n={n} : {dtype}>"
    c = f"!ncd.tensor<{lead}m={m}, n={n} : {out_dtype or dtype}>"
    return (f"func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}\n"
            f"  func.return %c : {c}\n}}\n")
