"""The contexts an op runs in: blocks, loop iterations whose count depends on the block,
branches taken by some blocks only; and a clear error where an index cannot be followed."""

import pytest

from napkin_ir.errors import UserError
from napkin_ir.model.analysis import analyse_module

G = "!hbm.global<m=512, k=64 : f32>"
T = "!ncd.tensor<m=128, k=64 : f32>"


def _kernel(body: str) -> str:
    return f"""
hbm.kernel attributes {{sym_name = "copy", grid = #hbm.labels<m=128>, num_outputs = 1 : i32}} {{
^bb0(%a: {G}, %out: {G}, %m0: index):
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
{body}
  hbm.return
}}
"""


TILE = 128 * 64 * 4


def test_a_branch_counts_only_the_blocks_that_take_it(parse):
    body = f"""
  %first = arith.cmpi ult, %m0, %c128 : index
  scf.if %first {{
    %t = hbm.load %a[%m0, %c0] : {G} -> {T}
    hbm.store %t, %out[%m0, %c0] : {T}, {G}
  }} else {{
    %t2 = hbm.load %a[%c0, %c0] : {G} -> {T}
    %t3 = hbm.load %a[%c128, %c0] : {G} -> {T}
    hbm.store %t2, %out[%m0, %c0] : {T}, {G}
  }}"""
    (k,) = analyse_module(parse(_kernel(body))).kernels
    # 4 blocks: the first takes the branch (one load), the other three the else (two each)
    assert k.hbm_read == {"a": TILE * (1 + 3 * 2)}
    assert k.hbm_written == {"out": TILE * 4}


def test_a_loop_whose_trip_count_depends_on_the_block(parse):
    body = f"""
  %c1 = arith.constant 1 : index
  %blk = arith.divui %m0, %c128 : index
  %n = arith.addi %blk, %c1 : index
  scf.for %r = %c0 to %n step %c1 {{
    %t = hbm.load %a[%m0, %c0] : {G} -> {T}
    scf.yield
  }}"""
    (k,) = analyse_module(parse(_kernel(body))).kernels
    assert k.hbm_read == {"a": TILE * (1 + 2 + 3 + 4)}


def test_a_loop_inside_a_branch_counts_the_blocks_that_take_it(parse):
    body = f"""
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c256 = arith.constant 256 : index
  %first = arith.cmpi ult, %m0, %c256 : index
  scf.if %first {{
    scf.for %r = %c0 to %c3 step %c1 {{
      %t = hbm.load %a[%m0, %c0] : {G} -> {T}
      scf.yield
    }}
  }}"""
    (k,) = analyse_module(parse(_kernel(body))).kernels
    # the first 2 of 4 blocks take the branch and load 3 times each
    assert k.hbm_read == {"a": TILE * 2 * 3}


def test_a_tile_past_the_edge_reads_nothing(parse):
    body = f"""
  %c512 = arith.constant 512 : index
  %past = arith.addi %m0, %c512 : index
  %t = hbm.load %a[%past, %c0] : {G} -> {T}
  %c448 = arith.constant 448 : index
  %half = hbm.load %a[%c448, %c0] : {G} -> {T}"""
    (k,) = analyse_module(parse(_kernel(body))).kernels
    assert k.hbm_read == {"a": 4 * (64 * 64 * 4)}  # only the 64 rows of the second tile inside


def test_an_index_the_model_cannot_follow_is_named(parse):
    body = f"""
  %c1 = arith.constant 1 : index
  %last = scf.for %r = %c0 to %c128 step %c1 iter_args(%x = %c0) -> (index) {{
    %y = arith.addi %x, %c1 : index
    scf.yield %y : index
  }}
  %t = hbm.load %a[%last, %c0] : {G} -> {T}"""
    with pytest.raises(UserError, match="cannot evaluate an offset into 'a' \\(a value from scf.for\\)"):
        analyse_module(parse(_kernel(body)))


def test_grouped_launch_order():
    from napkin_ir.model.space import grouped_ids

    # 5 block rows in bands of 2 (the last band 1 high), 3 columns, each band column by column
    assert grouped_ids(5, 3, 2).tolist() == [[0, 2, 4], [1, 3, 5], [6, 8, 10], [7, 9, 11], [12, 13, 14]]


def test_grouping_keeps_a_wave_on_fewer_tiles_of_a():
    from xdsl.dialects.builtin import IntegerAttr, i32

    from napkin_ir.diagrams import gemm
    from napkin_ir.dialects import hbm
    from napkin_ir.model.l2 import dram_bytes
    from napkin_ir.passmanager import run_pipeline

    module = run_pipeline(gemm(2048, 2048, 64), 'ncd-relabel{grid="m:128,n:128" stream="k:64"},ncd-to-hbm')
    (plain,) = analyse_module(module).kernels
    (kernel,) = [k for k in module.walk() if isinstance(k, hbm.KernelOp)]
    kernel.properties["hbm.group"] = IntegerAttr(4, i32)
    (grouped,) = analyse_module(module).kernels
    # 16 x 16 blocks in waves of 32, the tensors too big for the L2 share: in plain order a
    # wave covers 2 block columns and all 16 block rows; grouped, a 4-row band 8 columns wide
    tile = 128 * 64 * 2
    assert dram_bytes(plain, 32, 0)["a"] == 8 * 16 * tile
    assert dram_bytes(grouped, 32, 0)["a"] == 8 * 4 * tile
    assert dram_bytes(plain, 32, 0)["b"] == 8 * 2 * tile
    assert dram_bytes(grouped, 32, 0)["b"] == 8 * 8 * tile
