"""A sum of products into one tile (K dG + V dA + K dG^T, a gradient's dK written as one
kernel: the products family streams every operand a stage, each product adding into an
accumulator of its own) keeps its numbers at every level of both pipelines, with the
product that shares K's tile coming last. On napkin-sm90 K's and dG^T's stages are
released on one empty ring after the last product, V's on another after the second: the
producer waits on K's ring again before dG^T's copy (the buffers a wait frees are those
copied after it up to the next wait), where the smem and reg interpreters had found dG^T's
stage read after its release."""

from __future__ import annotations

import pytest

import napkin_ir
from tests.unit.lowering.levels import every_pipeline_level_keeps


def _t(dt: str = "bf16", **axes: int) -> str:
    return "!ncd.tensor<" + ", ".join(f"{a}={n}" for a, n in axes.items()) + f" : {dt}>"


def _text(j: int = 200, x: int = 128, c: int = 96) -> str:
    k, dg, dgt, out = _t(j=j, c=c), _t(x=x, c=c), _t(c=c, x=x), _t("f32", j=j, x=x)
    return (f"func.func @dk(%k: {k}, %dg: {dg}, %dgt: {dgt}, %v: {k}, %da: {dg}) -> {_t(j=j, x=x)} {{\n"
            f"  %p1 = ncd.contract %k, %dg over [c] : {k}, {dg} -> {out}\n"
            f"  %p2 = ncd.contract %v, %da over [c] : {k}, {dg} -> {out}\n"
            f"  %p3 = ncd.contract %k, %dgt over [c] : {k}, {dgt} -> {out}\n"
            f"  %s1 = ncd.map add %p1, %p2 : {out}, {out} -> {out}\n"
            f"  %s2 = ncd.map add %s1, %p3 : {out}, {out} -> {out}\n"
            f"  %o = ncd.map cast %s2 : {out} -> {_t(j=j, x=x)}\n"
            f"  func.return %o : {_t(j=j, x=x)}\n}}\n")


@pytest.mark.parametrize("pipeline", ["napkin-sm80", "napkin-sm90"])
@pytest.mark.parametrize("shape", [(200, 128, 96), (256, 64, 128)], ids=["ragged", "even"])
def test_every_level_gives_the_diagrams_numbers(pipeline, shape):
    every_pipeline_level_keeps(_text(*shape), pipeline, sum(shape))


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_the_sum_compiles_taking_k_once(target):
    """K, which two of the products read, is one parameter of the kernel (and one buffer)."""
    kernel = napkin_ir.compile(_text(), target=target, cache=False)
    assert kernel.arg_names() == ["k", "dg", "dgt", "v", "da", "out"]
