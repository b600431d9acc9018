"""A GEMM whose contraction is split over the grid (`split=S`) on the GPU: every block adds
its part of the sum into the f32 output with red.global.add; the launch zeroes that output
first, so a NaN-poisoned buffer, launched into twice, a CUDA graph replayed, all give the
sum once. napkin-sm80 and napkin-sm90, square and ragged, against float64; a 16-bit output's
parts summed in the kernel, through a global scratch or in a cluster's shared memory."""

from __future__ import annotations

import numpy as np
import pytest

from napkin_ir import reference
from napkin_ir.diagrams import gemm

pytestmark = pytest.mark.gpu

F32 = 1e-5  # bf16 products are exact in f32; what is left is f32 summation in another order


def _replay_three_times(torch, kernel, arrays) -> None:
    """The bound kernel captured in a CUDA graph on a side stream (after one launch outside
    the capture) and replayed three times."""
    bound = kernel.bind(arrays)
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        kernel(bound=bound, stream=stream.cuda_stream)
        stream.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            kernel(bound=bound, stream=stream.cuda_stream)
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()


@pytest.mark.parametrize("shape, split", [((256, 512, 4096), 4), ((136, 264, 2000), 3), ((64, 128, 8192), 16)],
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_split_sums_match_float64(target, shape, split):
    torch = pytest.importorskip("torch")
    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k = shape
    block = (64, 128, 32) if target == "sm80" else (64, 128, 64)
    kernel = napkin_ir.compile(gemm(m, n, k, "bf16", out_dtype="f32"), target=target, cache=False, split=split, block=block)
    assert kernel.contract.param("out").role == "accumulate"
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)  # fresh: no seed
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    for _ in range(2):  # launched twice: zeroed each time, the sum not doubled
        kernel(a=a, b=b, out=out, sync=True)
        got = out.double().cpu().numpy()
        assert np.isfinite(got).all(), "some output was not written"
        assert reference.relative_error(got, want) <= F32
    out.fill_(float("nan"))
    _replay_three_times(torch, kernel, {"a": a, "b": b, "out": out})
    assert reference.relative_error(out.double().cpu().numpy(), want) <= F32


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_ordered_split_sums_give_the_same_bits_every_run(target):
    """deterministic=true: each tile's parts added in a fixed order (a turn counter a tile),
    the first part written over whatever the output held: the same bits on every launch,
    from a CUDA graph too, within f32 rounding of float64."""
    torch = pytest.importorskip("torch")
    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k, split = 520, 1032, 8192, 8
    block = (64, 128, 32) if target == "sm80" else (128, 128, 64)
    kernel = napkin_ir.compile(gemm(m, n, k, "bf16", out_dtype="f32"), target=target, cache=False, split=split, block=block,
                               deterministic=True)
    assert kernel.contract.param("out").role == "out"  # nothing to zero
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    runs = []
    for _ in range(4):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
        kernel(a=a, b=b, out=out, sync=True)
        runs.append(out.clone())
    assert reference.relative_error(runs[0].double().cpu().numpy(), want) <= F32
    assert all(torch.equal(runs[0], r) for r in runs[1:]), "the sums differ between runs"
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    _replay_three_times(torch, kernel, {"a": a, "b": b, "out": out})
    assert torch.equal(out, runs[0])


@pytest.mark.parametrize("shape, split", [((16, 4096, 4096), 4), ((136, 264, 2000), 3), ((128, 8192, 8192), 2), ((64, 1032, 8192), 8)],
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_a_split_bf16_output_is_rounded_by_its_last_part(target, shape, split):
    """A bf16 output split over the grid: each tile's parts sum in turn in the kernel's f32
    scratch and the last rounds the whole sum into the output: one launch, nothing zeroed,
    every output element written (a NaN-poisoned buffer), the same bits on every launch and
    from a CUDA graph, within bf16 rounding of float64 (the rounding of the f32 sum)."""
    torch = pytest.importorskip("torch")
    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k = shape
    block = (64, 128, 32) if target == "sm80" else (64 if m <= 64 else 128, 128, 64)
    kernel = napkin_ir.compile(gemm(m, n, k, "bf16"), target=target, cache=False, split=split, block=block)
    out_param = kernel.contract.param("out")
    assert (out_param.role, out_param.dtype) == ("out", "bf16") and "red.global.add" not in kernel.ptx
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    want = a.double() @ b.double()
    wide = (a.float() @ b.float()).to(torch.bfloat16)  # the f32 sum rounded once (cuBLAS's order)
    runs = []
    for _ in range(3):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(a=a, b=b, out=out, sync=True)
        runs.append(out.clone())
    assert not runs[0].isnan().any(), "some output was not written"
    assert reference.relative_error(runs[0].double().cpu().numpy(), want.cpu().numpy()) <= 8e-3
    assert (runs[0].double() - wide.double()).abs().max() <= 2 ** -7 * want.abs().max()  # one rounding, not one a part
    assert all(torch.equal(runs[0], r) for r in runs[1:]), "the sums differ between runs"
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    _replay_three_times(torch, kernel, {"a": a, "b": b, "out": out})
    assert torch.equal(out, runs[0])


@pytest.mark.parametrize("shape, split, rows", [((16, 4096, 4096), 2, 64), ((136, 264, 2000), 3, 128), ((128, 8192, 8192), 2, 128),
                                               ((72, 264, 1000), 4, 64)],
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
def test_split_parts_in_a_cluster_give_the_bits_of_the_global_sum(shape, split, rows):
    """split=S cluster=S on napkin-sm90: each tile's parts add their sums in each other's
    shared memory, in the parts' order, as the global scratch's last part adds them: the
    same bits as that kernel, on every launch, from a CUDA graph, and through the op's
    launch (the driver's cuLaunchKernelEx by ctypes) on two streams; every element written
    into a NaN-poisoned output, within bf16 rounding of float64."""
    torch = pytest.importorskip("torch")
    import napkin_ir

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k = shape
    options = {"split": split, "block": (rows, 128 if n % 128 == 0 or n > 256 else 64, 64)}
    kernel = napkin_ir.compile(gemm(m, n, k, "bf16"), target="sm90", cache=False, cluster=split, **options)
    scratch = napkin_ir.compile(gemm(m, n, k, "bf16"), target="sm90", cache=False, **options)
    assert kernel.contract.cluster == (1, 1, split) and "mapa.shared::cluster" in kernel.ptx and "_parts" not in kernel.ptx
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    want = (a.double() @ b.double()).cpu().numpy()
    base = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    scratch(a=a, b=b, out=base, sync=True)
    for _ in range(2):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(a=a, b=b, out=out, sync=True)
        assert not out.isnan().any(), "some output was not written"
        assert reference.relative_error(out.double().cpu().numpy(), want) <= 8e-3
        assert torch.equal(out, base), "the cluster's sums differ from the global scratch's"
    out.fill_(float("nan"))
    _replay_three_times(torch, kernel, {"a": a, "b": b, "out": out})
    assert torch.equal(out, base)
    launcher = kernel.launcher(torch.cuda.current_device())
    assert launcher._direct is not None  # the driver's cuLaunchKernelEx through ctypes
    pointers, _ = kernel.pointers({"a": a, "b": b, "out": out})
    for stream in (torch.cuda.Stream(), torch.cuda.current_stream()):
        out.fill_(float("nan"))
        torch.cuda.synchronize()
        launcher.launch(pointers, stream.cuda_stream)
        torch.cuda.synchronize()
        assert torch.equal(out, base)


def test_a_launcher_zeroes_and_launches_through_the_driver_directly():
    """What the torch op calls (`Launcher.launch` on a stream handle): the zeroing and the
    launch through the driver's own functions (ctypes), not cuda-bindings' wrappers; the
    output poisoned before each of three launches into the same buffer, the sum once each
    time, on torch's current stream and on a side stream."""
    torch = pytest.importorskip("torch")
    import napkin_ir

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k = 192, 384, 4096
    kernel = napkin_ir.compile(gemm(m, n, k, "bf16", out_dtype="f32"), target="sm90", cache=False, split=4, block=(64, 128, 64))
    launcher = kernel.launcher(torch.cuda.current_device())
    assert launcher.zeroed and launcher._memset is not None and launcher._direct is not None
    assert launcher.direct is None  # a bound call must not skip the zeroing
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    out = torch.empty((m, n), device="cuda", dtype=torch.float32)
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    pointers, _ = kernel.pointers({"a": a, "b": b, "out": out})
    side = torch.cuda.Stream()
    for stream in (torch.cuda.current_stream(), side, torch.cuda.current_stream()):
        out.fill_(float("nan"))
        torch.cuda.synchronize()
        launcher.launch(pointers, stream.cuda_stream)
        torch.cuda.synchronize()
        got = out.double().cpu().numpy()
        assert np.isfinite(got).all(), "some output was not written"
        assert reference.relative_error(got, want) <= F32


@pytest.mark.sanitize
@pytest.mark.parametrize("target, cluster", [("sm80", 1), ("sm90", 1), ("sm90", 3)], ids=["sm80", "sm90", "sm90-cluster"])
def test_a_small_rounded_split_for_the_sanitizer(target, cluster):
    """A small bf16 split (72 x 264 x 1000 in 3 parts, ragged; on sm90 its parts summed
    through the scratch, or in clusters of three in shared memory): small enough for
    compute-sanitizer's memcheck, racecheck and synccheck (`tools/gpu_check.py`), launched
    twice into a poisoned output, the same bits each time, within bf16 of float64."""
    torch = pytest.importorskip("torch")
    import napkin_ir

    if target == "sm90" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a kernels need a Hopper GPU")
    m, n, k = 72, 264, 1000
    block = (64, 128, 32) if target == "sm80" else (64, 128, 64)
    kernel = napkin_ir.compile(gemm(m, n, k, "bf16"), target=target, cache=False, split=3, block=block,
                               **({"cluster": cluster} if cluster > 1 else {}))
    assert (kernel.contract.cluster is not None) == (cluster > 1)
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    runs = []
    for _ in range(2):
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(a=a, b=b, out=out, sync=True)
        runs.append(out)
    want = (a.double() @ b.double()).cpu().numpy()
    assert reference.relative_error(runs[0].double().cpu().numpy(), want) <= 8e-3
    assert torch.equal(runs[0], runs[1])
