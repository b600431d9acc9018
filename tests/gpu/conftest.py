"""Skip tests marked `gpu` where no NVIDIA GPU and driver can be used.

The probe (cuInit, then cuDeviceGetCount) runs once, at the first such test, and any
failure, including a missing libcuda or cuda-bindings, becomes the skip reason.
"""

from __future__ import annotations

import functools

import pytest


@functools.cache
def _no_gpu_reason() -> str | None:
    try:
        from cuda.bindings import driver
    except Exception as exc:
        return f"cuda-bindings is not importable: {exc}"
    try:
        (err,) = driver.cuInit(0)
        if int(err) != 0:
            return f"cuInit failed: {getattr(err, 'name', err)}"
        err, count = driver.cuDeviceGetCount()
    except Exception as exc:  # libcuda missing or unloadable
        return f"the NVIDIA driver cannot be used: {exc}"
    if int(err) != 0:
        return f"cuDeviceGetCount failed: {getattr(err, 'name', err)}"
    if count < 1:
        return "no CUDA device"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        reason = _no_gpu_reason()
        if reason is not None:
            pytest.skip(f"no usable GPU: {reason}")
