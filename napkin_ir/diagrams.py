"""Diagrams built in Python, for tests, benchmarks and users who generate shapes."""

from __future__ import annotations


def gemm(m: int, n: int, k: int, dtype: str = "bf16", name: str = "matmul") -> str:
    """C[m, n] = A[m, k] B[k, n] as an ncd diagram (bf16, f16 or f32; f32 accumulation)."""
    a, b, c = (f"!ncd.tensor<{s} : {dtype}>" for s in (f"m={m}, k={k}", f"k={k}, n={n}", f"m={m}, n={n}"))
    return (f"func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %c = ncd.contract %a, %b over [k] : {a}, {b} -> {c}\n"
            f"  func.return %c : {c}\n}}\n")
