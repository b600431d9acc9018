"""The `ncd` interpreter on the ops the gradients add: `map ge`, `logsumexp`, `constant`."""

import numpy as np

from napkin_ir.interpreters.run import find_function, run_function

MODULE = """
func.func @f(%x: !ncd.tensor<i=5, j=7 : f32>, %m: !ncd.tensor<i=5 : f32>) -> (!ncd.tensor<j=7, i=5 : f32>, !ncd.tensor<i=5, j=7 : f32>, !ncd.tensor<i=5 : f32>, !ncd.tensor<j=7 : f32>, !ncd.tensor<i=2, j=3 : bf16>) {
  %g = ncd.map ge %x, %m : !ncd.tensor<i=5, j=7 : f32>, !ncd.tensor<i=5 : f32> -> !ncd.tensor<j=7, i=5 : f32>
  %r = ncd.map ge %x by 0.25 : !ncd.tensor<i=5, j=7 : f32> -> !ncd.tensor<i=5, j=7 : f32>
  %l = ncd.logsumexp %x along j scale 0.5 : !ncd.tensor<i=5, j=7 : f32> -> !ncd.tensor<i=5 : f32>
  %c = ncd.logsumexp %x along i : !ncd.tensor<i=5, j=7 : f32> -> !ncd.tensor<j=7 : f32>
  %z = ncd.constant -1.5 : !ncd.tensor<i=2, j=3 : bf16>
  func.return %g, %r, %l, %c, %z : !ncd.tensor<j=7, i=5 : f32>, !ncd.tensor<i=5, j=7 : f32>, !ncd.tensor<i=5 : f32>, !ncd.tensor<j=7 : f32>, !ncd.tensor<i=2, j=3 : bf16>
}
"""


def test_ge_logsumexp_constant(parse):
    module = parse(MODULE)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    x[2, 3] = 0.25  # a tie with the constant counts as >=
    m = x[:, 3].copy()  # ties with the row's own element
    g, r, lse, lse_i, z = run_function(module, find_function(module), [x, m])
    np.testing.assert_array_equal(g, (x >= m[:, None]).astype(np.float32).T)
    assert g[3].tolist() == [1.0] * 5
    np.testing.assert_array_equal(r, (x >= 0.25).astype(np.float32))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(lse, np.log(np.exp(0.5 * x64).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(lse_i, np.log(np.exp(x64).sum(axis=0)), rtol=1e-6)
    np.testing.assert_array_equal(z, np.full((2, 3), -1.5, np.float32))


def test_logsumexp_large_and_masked_rows(parse):
    module = parse("""
func.func @f(%x: !ncd.tensor<i=3, j=4 : f32>) -> !ncd.tensor<i=3 : f32> {
  %l = ncd.logsumexp %x along j : !ncd.tensor<i=3, j=4 : f32> -> !ncd.tensor<i=3 : f32>
  func.return %l : !ncd.tensor<i=3 : f32>
}
""")
    x = np.array([[1000.0, 1000.0, -np.inf, 0.0], [-np.inf] * 4, [0.0, 0.0, 0.0, 0.0]], np.float32)
    (lse,) = run_function(module, find_function(module), [x])
    np.testing.assert_allclose(lse, [1000.0 + np.log(2.0), -np.inf, np.log(4.0)], rtol=1e-6)
