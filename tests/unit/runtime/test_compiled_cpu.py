"""A compiled kernel's launch contract and its argument checks, without a GPU.

The checks read what each array says of itself (`__cuda_array_interface__`, DLPack), so
fakes that claim device memory stand in for torch and cupy; a driver that fails the test
when touched proves that every refusal comes before any CUDA call.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from napkin_ir.diagrams import gemm
from napkin_ir.runtime import driver as drvmod
from napkin_ir.build import compile_kernel
from napkin_ir.runtime.compiled import CompiledKernel, check_arguments
from napkin_ir.runtime.contract import FORMAT, LaunchContract, launch_contract
from napkin_ir.runtime.driver import ArgumentError
from napkin_ir.errors import UserError

M, N, K = 128, 256, 64
ALIGNED = 1 << 20  # a fake device address, 16-byte aligned


class Cai:
    """Device memory as cupy (and torch, for non-bf16 types) presents it."""

    def __init__(self, shape: tuple[int, ...], typestr: str = "<f2", ptr: int = ALIGNED, strides: Any = None, readonly: bool = False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly), "strides": strides, "version": 3}


class Dlpack:
    """Device memory as DLPack presents it, with the device it lives on (numpy's capsule,
    never dereferenced: numpy has no bf16 for DLPack, so the kernels here are f16)."""

    def __init__(self, array: np.ndarray, device_id: int = 0):
        self.array, self.device_id = array, device_id

    def __dlpack__(self, stream: Any = None) -> Any:
        return self.array.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self.device_id)


def f16(*shape: int, device_id: int = 0) -> Dlpack:
    return Dlpack(np.zeros(shape, np.float16), device_id)


class CudaCalled(BaseException):
    """Raised by the stand-in driver; a BaseException, so no `except Exception` hides it."""


class NoDriver:
    def __getattr__(self, name: str) -> Any:
        raise CudaCalled(name)


@pytest.fixture(scope="module")
def sm80() -> CompiledKernel:
    return compile_kernel(gemm(M, N, K, "f16"), 'napkin-sm80{block="128,128,32"}')


@pytest.fixture(scope="module")
def sm90() -> CompiledKernel:
    return compile_kernel(gemm(M, N, K, "f16"), 'napkin-sm90{block="128,256,64"}')


@pytest.fixture
def no_driver(monkeypatch):
    monkeypatch.setattr(drvmod, "_cuda_module", NoDriver())


def good() -> dict[str, Any]:
    return {"a": f16(M, K), "b": f16(K, N), "out": f16(M, N)}


# --- the contract -----------------------------------------------------------------------

def test_contract_names_every_parameter_with_the_diagram_types(sm80, sm90):
    c = sm80.contract
    assert [p.arg for p in c.params] == ["a", "b", "out"]
    assert [(p.kind, p.role, p.dtype, p.axes, p.shape) for p in c.params] == [
        ("pointer", "in", "f16", ("m", "k"), (M, K)), ("pointer", "in", "f16", ("k", "n"), (K, N)),
        ("pointer", "out", "f16", ("m", "n"), (M, N))]
    assert (c.grid, c.block, c.target, c.persistent, c.cluster) == ((1, 2, 1), (128, 1, 1), "sm_80", 0, None)
    d = sm90.contract
    assert d.target == "sm_90a" and d.persistent == 1 and d.block == (384, 1, 1) and d.smem_bytes > 48 * 1024
    assert [(p.kind, p.tma.box, p.tma.swizzle, p.tma.data_type) for p in d.params] == [  # type: ignore[union-attr]
        ("tensormap", (128, 64), "128B", "FLOAT16"), ("tensormap", (64, 64), "128B", "FLOAT16"),
        ("tensormap", (128, 64), "128B", "FLOAT16")]


def test_contract_json_round_trips_and_says_the_grid_rule(sm90):
    text = sm90.contract.to_json()
    d = json.loads(text)
    assert d["format"] == FORMAT and d["kernel"] == "matmul" and d["target"] == "sm_90a"
    assert d["grid"] == [1, 1, 1] and d["persistent_blocks_per_sm"] == 1 and d["dynamic_smem_bytes"] == sm90.smem
    assert "multiprocessor" in d["grid_rule"] and d["pipeline"] == 'napkin-sm90{block="128,256,64"}'
    assert d["params"][0] == {"name": "matmul_a", "arg": "a", "kind": "tensormap", "role": "in", "dtype": "f16",
                              "axes": ["m", "k"], "shape": [M, K],
                              "tma": {"box": [128, 64], "swizzle": "128B", "data_type": "FLOAT16", "interleave": "NONE",
                                      "l2_promotion": "NONE", "oob_fill": "NONE"}}
    assert LaunchContract.from_json(text) == sm90.contract


def test_persistent_grid_rule():
    c = LaunchContract("k", "sm_90a", (), (500, 1, 1), (384, 1, 1), 0, persistent=2)
    assert c.launch_grid(132) == (264, 1, 1) and c.launch_grid(1000) == (500, 1, 1)
    plain = LaunchContract("k", "sm_80", (), (4, 3, 1), (128, 1, 1), 0)
    assert plain.launch_grid(132) == (4, 3, 1)
    # persistent clusters of 2: whole clusters only, the rule says so
    pairs = LaunchContract("k", "sm_90a", (), (500, 1, 1), (384, 1, 1), 0, persistent=1, cluster=(2, 1, 1))
    assert pairs.launch_grid(133) == (132, 1, 1) and pairs.launch_grid(1000) == (500, 1, 1)
    assert "whole number of clusters of 2" in pairs.grid_rule()


def test_contract_refuses_what_is_not_a_contract():
    with pytest.raises(UserError, match="not a napkin launch contract"):
        LaunchContract.from_json('{"format": "other"}')
    with pytest.raises(UserError, match="must be JSON"):
        LaunchContract.from_json("{")
    with pytest.raises(UserError, match="malformed"):
        LaunchContract.from_json(json.dumps({"format": FORMAT, "kernel": "k"}))


def test_contract_needs_a_compiled_kernel(parse):
    with pytest.raises(UserError, match="0 ptx.kernel ops: lower it to ptx first"):
        launch_contract(parse(gemm(M, N, K, "f16")))


def test_save_and_load(sm90, tmp_path):
    ptx, js = sm90.save(tmp_path / "matmul")
    assert ptx.read_text() == sm90.ptx and js.name == "matmul.json"
    again = CompiledKernel.load(tmp_path / "matmul")
    assert again.contract == sm90.contract and again.ptx == sm90.ptx


# --- the argument checks ----------------------------------------------------------------

def test_good_arguments_pass_the_checks_and_reach_the_driver(sm80, no_driver):
    views, device = check_arguments(sm80.contract, good())
    assert device == 0 and [v.shape for v in views.values()] == [(M, K), (K, N), (M, N)]
    with pytest.raises(CudaCalled):
        sm80(**good())


@pytest.mark.parametrize("change, message", [
    ({"b": Dlpack(np.zeros((7, 7), np.float32))}, r"argument 'b': expected f16\[k=64, n=256\] \(float16\), found float32"),
    ({"a": f16(K, M)}, r"argument 'a': expected shape \[128, 64\] \(f16\[m=128, k=64\]\), found \[64, 128\]"),
    ({"out": Cai((M, N), strides=(2, 2 * M))}, r"argument 'out': expected a C-contiguous array, found strides \[2, 256\]"),
    ({"a": np.zeros((M, K), np.float16)}, r"argument 'a': a host \(numpy\) array; the kernel reads device memory"),
    ({"b": Dlpack.__new__(Dlpack)}, None),
    ({"out": f16(M, N, device_id=1)}, r"argument 'a' lives on CUDA device 0, argument 'out' on device 1"),
    ({"out": Cai((M, N), readonly=True)}, r"argument 'out': the kernel writes this array, but its __cuda_array_interface__"),
    ({"a": Cai((M, K), ptr=ALIGNED + 2)}, r"argument 'a': the kernel needs 16-byte aligned memory"),
    ({"b": [1, 2, 3]}, r"argument 'b': expected a device array \(f16\[k=64, n=256\]: torch, cupy"),
    ({"c": f16(M, N)}, r"has no argument named 'c'; it takes a, b, out"),
])
def test_bad_arguments_are_refused_before_any_cuda_call(sm80, sm90, no_driver, change, message):
    if message is None:  # a host DLPack producer (a CPU torch tensor)
        change = {"b": HostDlpack(np.zeros((K, N), np.float16))}
        message = r"argument 'b': the array lives in host memory"
    for kernel in (sm80, sm90):
        with pytest.raises(ArgumentError, match=message):
            kernel(**{**good(), **change})


class HostDlpack(Dlpack):
    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def test_missing_arguments_and_the_device_asked_for(sm80, no_driver):
    with pytest.raises(ArgumentError, match="no array given for out"):
        sm80(a=f16(M, K), b=f16(K, N))
    with pytest.raises(ArgumentError, match="argument 'a': the array lives on CUDA device 0, the kernel runs on device 1"):
        sm80(device=1, **good())
    _, device = check_arguments(sm80.contract, {k: f16(*v.array.shape, device_id=2) for k, v in good().items()})
    assert device == 2
