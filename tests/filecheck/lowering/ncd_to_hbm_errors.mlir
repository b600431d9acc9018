// ncd-to-hbm refuses what has no streamed form with one line naming the function, the op
// and the reason; napkin-opt then exits non-zero without a traceback.
// RUN: napkin-opt %s --split-input-file --verify-diagnostics -p 'ncd-relabel{grid="i:4" stream="j:4"},ncd-to-hbm' | filecheck %s
// RUN: not napkin-opt %s -p 'ncd-relabel{grid="i:4" stream="j:4"},ncd-to-hbm' 2>&1 | filecheck %s --check-prefix=EXIT

// EXIT: napkin-opt: error: ncd-to-hbm: @two_pass: ncd.map sub (%e) uses %m, which depends on ncd.reduce max (%m)
// EXIT-NOT: Traceback
// EXIT-NOT: error

// A softmax written out by hand needs the row max before the exponentials: two passes.
func.func @two_pass(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %m = ncd.reduce max %x along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  %e = ncd.map sub %x, %m : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %e along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @two_pass: ncd.map sub (%e) uses %m, which depends on ncd.reduce max (%m) along the streamed axis 'j' and so is known only when the stream over 'j' ends: that would take a second pass over 'j'; write the normalisation as ncd.softmax or ncd.l2norm along 'j' for its online form

// -----
// What depends on a finished reduction is refused too, not just the reduction itself.
func.func @two_pass_later(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %n = ncd.reduce sum %x along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  %r = ncd.map neg %n : !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8 : f32>
  %e = ncd.map mul %x, %r : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %e along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @two_pass_later: ncd.map mul (%e) uses %r, which depends on ncd.reduce sum (%n) along the streamed axis 'j'

// -----
func.func @exp_of_softmax(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %e = ncd.map exp %p : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %e along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @exp_of_softmax: ncd.map exp (%e) is not linear in the values of ncd.softmax (%p) along 'j', which are known only up to a factor until the stream over 'j' ends; between a normalisation and a sum along the streamed axis only ops linear in its values can be streamed (casts, scalings, products with other values, masks that fill 0)

// -----
func.func @square_of_l2norm(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.l2norm %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %q = ncd.map mul %p, %p : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %q along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @square_of_l2norm: ncd.map mul (%q) multiplies together two tiles of the values of ncd.l2norm (%p) along 'j'

// -----
func.func @softmax_plus_input(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %q = ncd.map add %p, %x : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %q along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @softmax_plus_input: ncd.map add (%q) mixes other values with the values of ncd.softmax (%p) along 'j'

// -----
func.func @divide_by_softmax(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %q = ncd.map div %x, %p : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %q along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @divide_by_softmax: ncd.map div (%q) divides by the values of ncd.softmax (%p) along 'j'

// -----
func.func @mask_after_softmax(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %q = ncd.mask causal %p keep i >= j fill -1.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %q along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @mask_after_softmax: ncd.mask causal (%q) fills -1.0 among the values of ncd.softmax (%p) along 'j'

// -----
func.func @max_of_softmax(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce max %p along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @max_of_softmax: ncd.reduce max (%s) along 'j' takes the values of ncd.softmax (%p), which are known only up to a factor until the stream over 'j' ends; only sums of them can be rescaled as that factor changes

// -----
func.func @softmax_of_l2norm(%x: !ncd.tensor<i=8, j=16 : f32>, %v: !ncd.tensor<j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %n = ncd.l2norm %x along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %p = ncd.softmax %n along j : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %o = ncd.contract %p, %v over [j] : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %o : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @softmax_of_l2norm: ncd.softmax (%p) normalises the values of ncd.l2norm (%n), which are known only up to a factor until the stream over 'j' ends; a chain of normalisations along the streamed axis is not streamed

// -----
func.func @softmax_scale_zero(%x: !ncd.tensor<i=8, j=16 : f32>, %v: !ncd.tensor<j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along j scale 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %o = ncd.contract %p, %v over [j] : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %o : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @softmax_scale_zero: ncd.softmax (%p) along 'j' has scale 0: it weighs every position alike, so no value can keep the positions past the end out of it

// -----
// Masks that keep the streamed axis both above and below the diagonal.
func.func @mask_both_ways(%x: !ncd.tensor<i=8, j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %m = ncd.mask causal %x keep j >= i fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %n = ncd.mask causal %m keep i >= j fill 0.0 : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %s = ncd.reduce sum %n along [j] : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %s : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @mask_both_ways: masks along the streamed axis 'j' keep it both as rows and as columns; one direction a kernel is streamed

// -----
func.func @nothing_reduces(%x: !ncd.tensor<i=8, j=16 : f32>, %y: !ncd.tensor<i=8 : f32>) -> !ncd.tensor<i=8 : f32> {
  %e = ncd.map exp %x : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  func.return %y : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @nothing_reduces: nothing reduces along the streamed axis 'j' (a contraction over it, or a reduction along it)

// -----
// Each block sees one tile of a grid axis: a softmax along it would see a part of a row.
func.func @softmax_along_grid(%x: !ncd.tensor<i=8, j=16 : f32>, %v: !ncd.tensor<j=16 : f32>) -> !ncd.tensor<i=8 : f32> {
  %p = ncd.softmax %x along i : !ncd.tensor<i=8, j=16 : f32> -> !ncd.tensor<i=8, j=16 : f32>
  %o = ncd.contract %p, %v over [j] : !ncd.tensor<i=8, j=16 : f32>, !ncd.tensor<j=16 : f32> -> !ncd.tensor<i=8 : f32>
  func.return %o : !ncd.tensor<i=8 : f32>
}
// CHECK: ncd-to-hbm: @softmax_along_grid: ncd.softmax (%p) reduces along 'i', which is spread over the grid: each block sees only its tile of 'i', and only a sum (a contraction or a reduce sum) adds up from the blocks' parts; stream 'i' or keep it whole
