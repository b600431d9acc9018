"""Details of the PTX printer that FileCheck tests do not pin down."""

import io
import struct

import pytest
from xdsl.parser import Parser

from napkin_ir import registry
from napkin_ir.dialects.ptx.ops import format_immediate
from napkin_ir.dialects.ptx.printer import PtxEmissionError, choose_target, print_ptx


@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, 0.125, -2.5, 3.4e38, 1e-30, float("inf"), float("-inf")])
def test_f32_immediates_are_exact_hex(value):
    text = format_immediate("f32", value)
    assert text.startswith("0f") and len(text) == 10
    assert struct.unpack("<f", struct.pack("<I", int(text[2:], 16)))[0] == struct.unpack("<f", struct.pack("<f", value))[0]


def test_f64_and_integer_immediates():
    assert format_immediate("f64", 1.0) == "0d3FF0000000000000"
    assert format_immediate("s32", -7) == "-7"
    with pytest.raises(ValueError, match="no .bf16 immediates"):
        format_immediate("bf16", 1.0)


def _module(text):
    m = Parser(registry.make_context(), text).parse_module()
    m.verify()
    return m


def test_target_follows_the_instructions_used():
    plain = _module('ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {\n ptx.ret\n}')
    hopper = _module('ptx.kernel attributes {sym_name = "k", params = [], param_types = []} {\n ptx.wgmma_fence : () -> ()\n ptx.ret\n}')
    assert choose_target(plain) == "sm_80"
    assert choose_target(hopper) == "sm_90a"
    assert choose_target(plain, "sm_90a") == "sm_90a"


def test_unlowered_module_is_refused_with_a_reason():
    m = _module("func.func @f() {\n func.return\n}")
    with pytest.raises(PtxEmissionError, match="no ptx.kernel to print"):
        print_ptx(m, io.StringIO())


def test_a_loops_carried_accumulators_are_written_in_place_when_read_after_the_loop():
    """A causal stream's loops (masked, then unmasked) carry the gradient's dK and dV
    accumulators, each loop's values read after it by the next: wgmma writes them in
    place, with no copy before each product (the copies kept two sets live: ptxas spilled
    816 bytes a thread at d=128), and the values stay right (tests/gpu)."""
    import re

    from napkin_ir.torch import attention_grad_kernel

    ptx = attention_grad_kernel("kv", "causal", None, 1, 2, 1024, 1024, 128, "bf16", (9, 0)).ptx
    products = ptx.count("wgmma.mma_async")
    assert products >= 16
    copied = re.findall(r"mov\.f32 %f\d+, %f\d+;\n\twgmma\.fence\.sync\.aligned;\n\twgmma\.mma_async", ptx)
    assert not copied, f"{len(copied)} of {products} products copy their accumulators first"
