"""CUDA driver calls: error checking, the context, pointers.

cuda-bindings is imported on first use, so this module imports on machines without a GPU
or driver; whatever needs the driver raises `CudaError` (or `DriverUnavailableError`)
there instead. Every driver call goes through `check`, which turns a failing CUresult
into a `CudaError` that names the error and what was being attempted. This is the bottom
of the runtime: device arrays, tensor maps, parameter binding and the modules and kernels
of `kernels.py` build on it.
"""

from __future__ import annotations

from typing import Any

from napkin_ir.errors import SystemFault, UserError


class CudaError(SystemFault, RuntimeError):
    """A CUDA driver call failed, or the driver is needed and cannot be used: the system's
    fault as napkin-ir sorts errors (a `NapkinError`; a RuntimeError too, as before).

    `name` is the CUresult name (e.g. "CUDA_ERROR_INVALID_VALUE"), `what` the operation
    that failed and `log` the JIT compiler's error log when a module failed to load.
    """

    def __init__(self, what: str, name: str, description: str = "", code: int | None = None, log: str = "") -> None:
        self.what, self.name, self.description, self.code, self.log = what, name, description, code, log
        message = f"{what} failed: {name}"
        if description:
            message += f" ({description})"
        if log:
            message += f"\nJIT log:\n{log}"
        super().__init__(message)


class DriverUnavailableError(CudaError):
    """cuda-bindings or the NVIDIA driver library (libcuda) is missing on this machine."""


class ArgumentError(UserError, ValueError):
    """Kernel arguments or a launch configuration that cannot be right, refused before launch."""


# --- the driver module ------------------------------------------------------------------

_cuda_module: Any = None
_initialized = False


def cuda() -> Any:
    """The `cuda.bindings.driver` module, imported on first use."""
    global _cuda_module
    if _cuda_module is None:
        try:
            from cuda.bindings import driver
        except ImportError as exc:
            raise DriverUnavailableError(
                "importing cuda.bindings.driver", "cuda-bindings is not installed",
                f"the runtime needs the cuda-bindings package and an NVIDIA driver: {exc}") from exc
        _cuda_module = driver
    return _cuda_module


def init() -> None:
    """Initialise the driver (cuInit) once; raise DriverUnavailableError where there is none."""
    global _initialized
    if _initialized:
        return
    drv = cuda()
    try:
        result = drv.cuInit(0)
    except Exception as exc:  # cuda-bindings raises its own loader errors when libcuda is absent
        raise DriverUnavailableError(
            "initialising the CUDA driver (cuInit)", "NVIDIA driver not found",
            f"the NVIDIA driver library (libcuda) could not be loaded, so nothing can run on a GPU here: {exc}") from exc
    check(result, "initialising the CUDA driver (cuInit)")
    _initialized = True


def error_name(code: Any) -> tuple[str, str]:
    """The CUresult's name and description, from the driver when it can tell."""
    drv = cuda()
    name = getattr(code, "name", None) or f"CUresult {int(code)}"
    description = ""
    try:
        err, raw = drv.cuGetErrorName(code)
        if int(err) == 0 and raw:
            name = raw.decode()
        err, raw = drv.cuGetErrorString(code)
        if int(err) == 0 and raw:
            description = raw.decode()
    except Exception:  # no driver to ask: the enum's own name is as good
        pass
    return name, description


def check(result: Any, what: str, *, log: str = "") -> Any:
    """Unpack a cuda-bindings result `(CUresult, values...)`; raise CudaError unless success.

    Returns None, the single value, or a tuple of the values.
    """
    if not isinstance(result, tuple):
        result = (result,)
    code, values = result[0], result[1:]
    if int(code) != 0:
        name, description = error_name(code)
        raise CudaError(what, name, description, int(code), log)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


# --- context ----------------------------------------------------------------------------

class Context:
    """The primary context of one device (the one torch and cupy use too, so pointers mix)."""

    def __init__(self, ordinal: int) -> None:
        init()
        drv = cuda()
        self.ordinal = ordinal
        self.device = check(drv.cuDeviceGet(ordinal), f"getting CUDA device {ordinal}")
        self.handle = check(drv.cuDevicePrimaryCtxRetain(self.device), f"retaining the primary context of device {ordinal}")
        self.activate()

    def activate(self) -> None:
        # cheap, and keeps us right when another library switched contexts in between
        check(cuda().cuCtxSetCurrent(self.handle), f"making device {self.ordinal}'s context current")

    def attribute(self, name: str) -> int:
        """A device attribute by its short name, e.g. "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"."""
        drv = cuda()
        attr = getattr(drv.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
        return int(check(drv.cuDeviceGetAttribute(attr, self.device), f"reading device attribute {name}"))

    def compute_capability(self) -> tuple[int, int]:
        """(major, minor), e.g. (9, 0) for an H100."""
        return self.attribute("COMPUTE_CAPABILITY_MAJOR"), self.attribute("COMPUTE_CAPABILITY_MINOR")

    def synchronize(self) -> None:
        self.activate()
        check(cuda().cuCtxSynchronize(), f"synchronising device {self.ordinal}")


_contexts: dict[int, Context] = {}


def get_context(device: int = 0) -> Context:
    """The (cached) primary context of `device`, made current."""
    ctx = _contexts.get(device)
    if ctx is None:
        ctx = _contexts[device] = Context(device)
    else:
        ctx.activate()
    return ctx


# --- pointers ---------------------------------------------------------------------------

def pointer_device(pointer: int) -> int | None:
    """The ordinal of the device whose memory `pointer` is in; None where the driver cannot tell."""
    drv = cuda()
    try:
        err, ordinal = drv.cuPointerGetAttribute(drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer)
    except Exception:
        return None
    return int(ordinal) if int(err) == 0 else None
