"""A kernel the pipelines compiled, ready to launch on named arrays.

`napkin-sm80` and `napkin-sm90` leave on each `ptx.kernel` what a launch needs: the grid
(`napkin.grid`), the threads (`reqntid` or `maxntid`), the dynamic shared memory
(`napkin.smem_bytes`) and, for parameters that are TMA tensor maps, the box each copy
moves (`napkin.tma`, entries `name:ROWSxCOLS:SWIZZLE`). `compile_kernel` reads them, so a
caller passes arrays by the diagram's argument names and nothing else:

    gemm = compile_kernel(text, "napkin-sm90")
    gemm(a=a, b=b, out=c)
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from napkin_ir.runtime.arrays import Param
from napkin_ir.runtime.driver import ArgumentError, Kernel, load_ptx
from napkin_ir.runtime.tensormap import TensorMap, tensor_map_for


@dataclass(frozen=True)
class TmaBox:
    """The box one TMA copy moves from a global (numpy order) and its swizzle."""

    name: str
    rows: int
    cols: int
    swizzle: str

    @classmethod
    def parse(cls, text: str) -> "TmaBox":
        try:
            name, box, swizzle = text.split(":")
            rows, cols = (int(x) for x in box.split("x"))
        except ValueError:
            raise ArgumentError(f"napkin.tma entry '{text}' is not name:ROWSxCOLS:SWIZZLE") from None
        return cls(name, rows, cols, swizzle)


@dataclass
class CompiledKernel:
    ptx: str
    name: str
    params: list[tuple[str, str]]  # (parameter name, PTX type)
    grid: list[int]
    block: list[int]
    smem: int
    boxes: dict[str, TmaBox]
    persistent: int = 0  # blocks per multiprocessor of a persistent kernel (0: one block per tile)
    cluster: list[int] | None = None  # blocks per cluster along x, y, z
    _kernel: Kernel | None = None

    def launch_grid(self) -> list[int]:
        """The grid; a persistent kernel gets as many blocks as the device holds at once."""
        if not self.persistent:
            return self.grid
        from napkin_ir.runtime.driver import get_context

        return [min(self.grid[0], self.persistent * get_context().attribute("MULTIPROCESSOR_COUNT"))]

    def arg_names(self) -> list[str]:
        """The diagram's names for the parameters (`matmul_a` -> `a`)."""
        return [p.removeprefix(self.name + "_") for p, _ in self.params]

    def kernel(self) -> Kernel:
        if self._kernel is None:
            specs = [Param.tensor_map() if t == "tensormap" else Param.scalar("u64") for _, t in self.params]
            self._kernel = load_ptx(self.ptx).kernel(self.name, specs)
        return self._kernel

    def bind(self, arrays: dict[str, Any]) -> list[Any]:
        """Launch arguments from device arrays by name: tensor maps built for TMA inputs,
        device addresses for the rest."""
        from napkin_ir.runtime.arrays import device_view

        missing = [n for n in self.arg_names() if n not in arrays]
        if missing:
            raise ArgumentError(f"{self.name}: no array given for {', '.join(missing)}")
        out: list[Any] = []
        for n, (_, t) in zip(self.arg_names(), self.params):
            if t == "tensormap":
                box = self.boxes[n]
                out.append(tensor_map_for(arrays[n], (box.rows, box.cols), swizzle=box.swizzle))
            else:
                view = device_view(arrays[n], f"{self.name}: {n}")
                if not hasattr(view, "pointer"):
                    raise ArgumentError(f"{self.name}: {n} must be a device array (torch, cupy, DeviceArray), found {type(arrays[n]).__name__}")
                out.append(view.pointer)  # type: ignore[union-attr]
        return out

    def __call__(self, *, sync: bool = True, bound: list[Any] | None = None, **arrays: Any) -> None:
        args = bound if bound is not None else self.bind(arrays)
        self.kernel().launch(grid=self.launch_grid(), block=self.block, smem=self.smem, args=args, sync=sync, cluster=self.cluster)


def compile_kernel(text: str, pipeline: str) -> CompiledKernel:
    """Compile a diagram (or a module at any level) with `pipeline` and get its one kernel."""
    from napkin_ir.dialects.ptx.ops import KernelOp
    from napkin_ir.dialects.ptx.printer import print_ptx
    from napkin_ir.pipelines import launch_config, run_pipeline

    module = run_pipeline(text, pipeline)
    out = io.StringIO()
    print_ptx(module, out)
    cfg = launch_config(module)
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    boxes = {b.name: b for b in (TmaBox.parse(s) for s in cfg["tma"])}  # type: ignore[attr-defined]
    attr = kernel.attributes.get("napkin.persistent")
    persistent = attr.value.data if attr is not None else 0  # type: ignore[attr-defined]
    cluster_attr = kernel.attributes.get("napkin.cluster")
    cluster = [a.value.data for a in cluster_attr.data] if cluster_attr is not None else None  # type: ignore[attr-defined]
    return CompiledKernel(out.getvalue(), cfg["name"], kernel.param_list(), cfg["grid"], cfg["block"], cfg["smem"], boxes,  # type: ignore[arg-type]
                          persistent, cluster)


__all__ = ["CompiledKernel", "TensorMap", "TmaBox", "compile_kernel"]
