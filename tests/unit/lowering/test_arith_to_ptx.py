"""convert-arith-to-ptx keeps the numbers: unsigned division and remainder by a constant,
strength-reduced to shifts, masks and high multiplies, agree with Python's on the whole
32-bit range (run by the `ptx` warp emulator), and the divisor forms are exact."""

from __future__ import annotations

import random

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, IntegerType
from xdsl.parser import Parser

from napkin_ir.dialects.ptx import ops as P
from napkin_ir.interpreters.ptx import run_kernel
from napkin_ir.lowering.arith_to_ptx import ConvertArithToPtxPass, unsigned_magic
from napkin_ir.registry import make_context

# powers of two (1, 2, 64, 2**30), plain multipliers (176 = 16 x 11, 3, 641), and odd
# divisors whose multiplier needs 33 bits (7; 0x7fffffff, the largest index constant)
DIVISORS = [1, 2, 64, 176, 3, 641, 7, 0x7FFFFFFF, 0x40000000]
THREADS, BLOCKS = 32, 16


def _divide_kernel() -> str:
    """x[i] // d and x[i] % d for each divisor, stored as out[2 k N + i] and out[(2 k + 1) N + i]."""
    n = THREADS * BLOCKS
    lines = [
        '%tid = ptx.sreg {reg = "tid.x"} : () -> !ptx.reg<b32>',
        '%cta = ptx.sreg {reg = "ctaid.x"} : () -> !ptx.reg<b32>',
        "%t = builtin.unrealized_conversion_cast %tid : !ptx.reg<b32> to index",
        "%b = builtin.unrealized_conversion_cast %cta : !ptx.reg<b32> to index",
        f"%c{THREADS} = arith.constant {THREADS} : index",
        f"%first = arith.muli %b, %c{THREADS} : index",
        "%i = arith.addi %first, %t : index",
        "%c4 = arith.constant 4 : i64",
        "%i64 = arith.index_cast %i : index to i64",
        "%off = arith.muli %i64, %c4 : i64",
        "%xa = arith.addi %xs, %off : i64",
        "%xr = builtin.unrealized_conversion_cast %xa : i64 to !ptx.reg<b64>",
        '%xv = ptx.ld [%xr] {space = "global", ty = "u32"} : !ptx.reg<b64> -> (!ptx.reg<b32>)',
        "%x = builtin.unrealized_conversion_cast %xv : !ptx.reg<b32> to index",
    ]
    for k, d in enumerate(DIVISORS):
        lines.append(f"%d{k} = arith.constant {d} : index")
        for j, op in enumerate(("divui", "remui")):
            v = f"%{op}{k}"
            lines += [
                f"{v} = arith.{op} %x, %d{k} : index",
                f"%at{k}_{j} = arith.constant {(2 * k + j) * n * 4} : i64",
                f"%o{k}_{j} = arith.addi %out, %at{k}_{j} : i64",
                f"%a{k}_{j} = arith.addi %o{k}_{j}, %off : i64",
                f"%ar{k}_{j} = builtin.unrealized_conversion_cast %a{k}_{j} : i64 to !ptx.reg<b64>",
                f"%vr{k}_{j} = builtin.unrealized_conversion_cast {v} : index to !ptx.reg<b32>",
                f'ptx.st [%ar{k}_{j}], (%vr{k}_{j}) {{space = "global", ty = "u32"}} : !ptx.reg<b64>, (!ptx.reg<b32>)',
            ]
    body = "\n  ".join(lines)
    return (f"func.func @divide(%xs: i64, %out: i64) attributes {{ptx.kernel, ptx.reqntid = [{THREADS} : i32]}} {{\n  "
            f"{body}\n  func.return\n}}")


def _inputs() -> np.ndarray:
    rng = random.Random(7)
    edges = [0, 1, 2, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1]
    near = [(q * d + e) % 2**32 for d in DIVISORS for q in (1, 3, 2**32 // d) for e in (-1, 0, 1)]
    xs = edges + near
    xs += [rng.randrange(2**32) for _ in range(THREADS * BLOCKS - len(xs))]
    return np.array(xs[:THREADS * BLOCKS], np.uint32)


def test_division_by_constants_runs_exact():
    ctx = make_context()
    module = Parser(ctx, _divide_kernel()).parse_module()
    ConvertArithToPtxPass().apply(ctx, module)
    (kernel,) = [op for op in module.walk() if isinstance(op, P.KernelOp)]
    # no division instruction is left: every divisor here has a cheaper form
    assert not [op for op in kernel.walk() if isinstance(op, P.DivOp | P.RemOp)]
    kernel.properties["napkin.grid"] = ArrayAttr([IntegerAttr(BLOCKS, IntegerType(32))])
    kernel.properties["napkin.smem_bytes"] = IntegerAttr(0, IntegerType(32))
    xs = _inputs()
    n = xs.size
    out = np.full(2 * len(DIVISORS) * n, 0xDEADBEEF, np.uint32)  # poisoned
    run_kernel(module, [xs, out], lazy=False, reverse=False)
    for k, d in enumerate(DIVISORS):
        x = xs.astype(np.uint64)
        np.testing.assert_array_equal(out[2 * k * n:(2 * k + 1) * n], x // d, err_msg=f"x // {d}")
        np.testing.assert_array_equal(out[(2 * k + 1) * n:(2 * k + 2) * n], x % d, err_msg=f"x % {d}")


@pytest.mark.parametrize("seed", range(4))
def test_unsigned_magic_is_exact(seed):
    """The three forms against Python's // on divisors of every kind and the dividends
    where a wrong multiplier first shows (just below a multiple, the top of the range)."""
    rng = random.Random(seed)
    divisors = list(range(1 + 1000 * seed, 1001 + 1000 * seed)) + [rng.randrange(1, 2**32) for _ in range(500)]
    for d in divisors:
        pre, m, post, add = unsigned_magic(d)
        for x in [0, 1, d - 1, d, d + 1, 2**32 - 1] + [(q * d - 1) % 2**32 for q in (2, 3, 2**32 // d)] \
                + [rng.randrange(2**32) for _ in range(20)]:
            if m == 0:
                q = x >> pre
            elif add:
                h = (x * m) >> 32
                q = (h + ((x - h) >> 1)) >> post
            else:
                q = (((x >> pre) * m) >> 32) >> post
            assert q == x // d, (d, x, (pre, m, post, add))
            assert m < 2**32


def test_unsigned_magic_refuses_what_is_not_a_divisor():
    for d in (0, -3, 2**32):
        with pytest.raises(ValueError):
            unsigned_magic(d)
