"""The `ncd` interpreter against numpy references written from the mathematics."""

import ml_dtypes
import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.interpreters.run import find_function, random_inputs, run_function

ATTENTION = """
func.func @{name}(%q: !ncd.tensor<b={b}, i={n}, d={d} : {t}>, %k: !ncd.tensor<b={b}, j={m}, d={d} : {t}>, %v: !ncd.tensor<b={b}, j={m}, d={d} : {t}>) -> !ncd.tensor<b={b}, i={n}, d={d} : {t}> {{
  %s = ncd.contract %q, %k over [d] : !ncd.tensor<b={b}, i={n}, d={d} : {t}>, !ncd.tensor<b={b}, j={m}, d={d} : {t}> -> !ncd.tensor<b={b}, i={n}, j={m} : f32>
  {body}
  %p16 = ncd.map cast %p : !ncd.tensor<b={b}, i={n}, j={m} : f32> -> !ncd.tensor<b={b}, i={n}, j={m} : {t}>
  %o = ncd.contract %p16, %v over [j] : !ncd.tensor<b={b}, i={n}, j={m} : {t}>, !ncd.tensor<b={b}, j={m}, d={d} : {t}> -> !ncd.tensor<b={b}, i={n}, d={d} : {t}>
  func.return %o : !ncd.tensor<b={b}, i={n}, d={d} : {t}>
}}
"""
S = "!ncd.tensor<b={b}, i={n}, j={m} : f32>"
BODIES = {
    "attention": "%p = ncd.softmax %s along j scale {scale} : " + S + " -> " + S,
    "causal_attention": "%sm = ncd.mask causal %s keep i >= j fill -inf : " + S + " -> " + S
    + "\n  %p = ncd.softmax %sm along j scale {scale} : " + S + " -> " + S,
    "spherical_attention": "%p = ncd.l2norm %s along j : " + S + " -> " + S,
}


def _attention(parse, name, b, n, m, d, t):
    body = BODIES[name].format(b=b, n=n, m=m, scale=repr(float(1 / np.sqrt(d))))
    return parse(ATTENTION.format(name=name, b=b, n=n, m=m, d=d, t=t, body=body))


def _run(module, seed):
    f = find_function(module)
    xs = random_inputs(f, seed)
    return xs, run_function(module, f, xs)[0]


@pytest.mark.parametrize("t", ["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 5, 3), (64, 48, 80), (33, 128, 17)])
def test_matmul(parse, t, shape):
    m, k, n = shape
    module = parse(f"""
    func.func @matmul(%a: !ncd.tensor<m={m}, k={k} : {t}>, %b: !ncd.tensor<k={k}, n={n} : {t}>) -> !ncd.tensor<m={m}, n={n} : {t}> {{
      %c = ncd.contract %a, %b over [k] : !ncd.tensor<m={m}, k={k} : {t}>, !ncd.tensor<k={k}, n={n} : {t}> -> !ncd.tensor<m={m}, n={n} : {t}>
      func.return %c : !ncd.tensor<m={m}, n={n} : {t}>
    }}""")
    (a, b), out = _run(module, seed=m * 1000 + n)
    ref = reference.matmul(a, b)
    assert out.shape == (m, n)
    assert reference.relative_error(out, ref) <= reference.TOLERANCE[t]
    if t == "bf16":  # the result is rounded to bf16: every value is representable
        assert np.array_equal(out, out.astype(ml_dtypes.bfloat16).astype(np.float32))


@pytest.mark.parametrize("name", list(BODIES))
@pytest.mark.parametrize("t", ["bf16", "f16"])
@pytest.mark.parametrize("dims", [(1, 16, 16, 8), (2, 37, 53, 16), (3, 64, 64, 32)])
def test_attention_variants(parse, name, t, dims):
    b, n, m, d = dims
    module = _attention(parse, name, b, n, m, d, t)
    (q, k, v), out = _run(module, seed=n * 7 + m)
    ref = reference.REFERENCES[name](q, k, v)
    assert out.shape == (b, n, d)
    err = reference.relative_error(out, ref)
    assert err <= reference.TOLERANCE[t], err


def test_causal_first_row_sees_only_first_key(parse):
    module = _attention(parse, "causal_attention", 1, 8, 8, 4, "f32")
    (q, k, v), out = _run(module, seed=5)
    # query 0 sees key 0 alone: its output is exactly v[0] (up to f32 rounding)
    np.testing.assert_allclose(out[0, 0], v[0, 0], rtol=1e-6)


def test_spherical_rows_have_unit_norm(parse):
    x = "!ncd.tensor<i=5, j=9 : f32>"
    module = parse(f"func.func @f(%x: {x}) -> {x} {{\n %p = ncd.l2norm %x along j : {x} -> {x}\n func.return %p : {x}\n}}")
    f = find_function(module)
    (xs,) = random_inputs(f, 1)
    (out,) = run_function(module, f, [xs])
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(out, xs / np.linalg.norm(xs.astype(np.float64), axis=1, keepdims=True), rtol=1e-5)


def test_map_broadcasts_by_name_and_reduces(parse):
    module = parse("""
    func.func @f(%x: !ncd.tensor<i=3, j=4 : f32>, %r: !ncd.tensor<j=4 : f32>) -> !ncd.tensor<j=4, i=3 : f32> {
      %m = ncd.reduce max %x along [j] : !ncd.tensor<i=3, j=4 : f32> -> !ncd.tensor<i=3 : f32>
      %d = ncd.map sub %x, %m : !ncd.tensor<i=3, j=4 : f32>, !ncd.tensor<i=3 : f32> -> !ncd.tensor<i=3, j=4 : f32>
      %e = ncd.map mul %r, %d : !ncd.tensor<j=4 : f32>, !ncd.tensor<i=3, j=4 : f32> -> !ncd.tensor<j=4, i=3 : f32>
      func.return %e : !ncd.tensor<j=4, i=3 : f32>
    }""")
    f = find_function(module)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) ** 1.5
    r = np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)
    (out,) = run_function(module, f, [x, r])
    expected = ((x - x.max(axis=1, keepdims=True)) * r[None, :]).T
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("fn,np_fn", [("exp", np.exp), ("exp2", np.exp2), ("neg", np.negative)])
def test_unary_maps(parse, fn, np_fn):
    x = "!ncd.tensor<i=6 : f32>"
    module = parse(f"func.func @f(%x: {x}) -> {x} {{\n %y = ncd.map {fn} %x : {x} -> {x}\n func.return %y : {x}\n}}")
    v = np.linspace(-3, 3, 6, dtype=np.float32)
    (out,) = run_function(module, find_function(module), [v])
    np.testing.assert_allclose(out, np_fn(v.astype(np.float64)), rtol=1e-6)


def test_mask_keeps_lower_triangle(parse):
    x = "!ncd.tensor<i=4, j=6 : f32>"
    module = parse(f"func.func @f(%x: {x}) -> {x} {{\n %y = ncd.mask causal %x keep i >= j fill -7.0 : {x} -> {x}\n func.return %y : {x}\n}}")
    v = np.ones((4, 6), np.float32)
    (out,) = run_function(module, find_function(module), [v])
    expected = np.where(np.arange(4)[:, None] >= np.arange(6)[None, :], 1.0, -7.0)
    np.testing.assert_array_equal(out, expected)


def test_wrong_input_shape_is_a_user_error(parse):
    from napkin_ir.errors import UserError

    x = "!ncd.tensor<i=4 : f32>"
    module = parse(f"func.func @f(%x: {x}) -> {x} {{\n func.return %x : {x}\n}}")
    with pytest.raises(UserError, match=r"argument #0 should have shape \(4,\), got \(5,\)"):
        run_function(module, find_function(module), [np.zeros(5, np.float32)])


@pytest.mark.parametrize("fn,by,np_fn", [("max", 0.0, np.maximum), ("add", 1.5, np.add), ("mul", -2.0, np.multiply),
                                         ("sub", 0.25, np.subtract), ("div", 4.0, np.divide)])
def test_binary_maps_with_a_constant(parse, fn, by, np_fn):
    """A binary map of one tensor takes the constant `by` as its second operand."""
    x = "!ncd.tensor<i=6 : f32>"
    module = parse(f"func.func @f(%x: {x}) -> {x} {{\n %y = ncd.map {fn} %x by {by} : {x} -> {x}\n func.return %y : {x}\n}}")
    v = np.linspace(-3, 3, 6, dtype=np.float32)
    (out,) = run_function(module, find_function(module), [v])
    np.testing.assert_allclose(out, np_fn(v.astype(np.float64), by), rtol=1e-6)
