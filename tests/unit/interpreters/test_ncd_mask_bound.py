"""The ncd interpreter's bound mask and square root, on tiles as ncd-to-hbm leaves them."""

import numpy as np
from xdsl.interpreters.arith import ArithFunctions

from napkin_ir.interpreters.ncd import make_interpreter
from napkin_ir.interpreters.tensors import NamedArray

X = "!ncd.tensor<i=3, j=5 : f32>"


def _run(parse, body: str, x: np.ndarray) -> np.ndarray:
    module = parse(f"func.func @f(%x: {X}) -> {X} {{\n %c2 = arith.constant 2 : index\n {body}\n func.return %y : {X}\n}}")
    interpreter = make_interpreter(module)
    interpreter.register_implementations(ArithFunctions())  # the tile's start, an index constant
    (out,) = interpreter.call_op("f", (NamedArray(("i", "j"), x),))
    return out.data


def test_bound_mask_keeps_positions_below_the_bound(parse):
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    out = _run(parse, f"%y = ncd.mask_bound %x keep j < 3 fill -inf : {X} -> {X}", x)
    np.testing.assert_array_equal(out, np.where(np.arange(5)[None, :] < 3, x, -np.inf))


def test_bound_mask_counts_from_the_tile_start(parse):
    # a tile starting at j = 2: its columns are positions 2..6, of which 2 and 3 are below 4
    x = np.ones((3, 5), np.float32)
    out = _run(parse, f"%y = ncd.mask_bound %x keep j < 4 fill 0.0 at [%c2] : {X} -> {X}", x)
    np.testing.assert_array_equal(out, np.tile([1, 1, 0, 0, 0], (3, 1)))


def test_bound_mask_along_the_row_axis(parse):
    x = np.ones((3, 5), np.float32)
    out = _run(parse, f"%y = ncd.mask_bound %x keep i < 3 fill 7.0 at [%c2] : {X} -> {X}", x)
    np.testing.assert_array_equal(out[:, 0], [1, 7, 7])


def test_sqrt(parse):
    x = np.linspace(0, 4, 15, dtype=np.float32).reshape(3, 5)
    np.testing.assert_allclose(_run(parse, f"%y = ncd.map sqrt %x : {X} -> {X}", x), np.sqrt(x), rtol=1e-7)
