"""The launch contract of a compiled kernel: what another program needs to launch its PTX.

`napkin-sm80` and `napkin-sm90` leave on each `ptx.kernel` what a launch needs: the grid
(`napkin.grid`), the threads (`reqntid` or `maxntid`), the dynamic shared memory
(`napkin.smem_bytes`), the blocks per multiprocessor of a persistent grid
(`napkin.persistent`), the cluster (`napkin.cluster`) and, for parameters that are TMA
tensor maps, the box each copy moves (`napkin.tma`, of `#ptx.tma_box`): typed properties
that `ptx.kernel` verifies.
The PTX text keeps none of this, and the `ptx` level no longer knows the diagram's element
types and shapes; `LaunchContract` gathers both, the second from the module as it was
before lowering (`diagram_signature`). It is plain data: `to_json` writes it
(`napkin-opt -t launch`, `--launch-json`, the compile cache) and `from_json` reads it back,
so a program in any language can launch the kernel from the `.ptx` and `.json` files alone
(docs/launch.md). Nothing here calls CUDA.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from napkin_ir.errors import UserError

FORMAT = "napkin-launch/1"
# cuTensorMapEncodeTiled's data type for each element type a diagram may have
TMA_DATA_TYPES = {"bf16": "BFLOAT16", "f16": "FLOAT16", "f32": "FLOAT32"}


@dataclass(frozen=True)
class ArgSignature:
    """One global tensor of the diagram: its name, whether the kernel reads or writes it,
    its element type and its axes (row-major in this order) with their sizes."""

    name: str
    role: str  # "in" or "out"
    dtype: str  # "bf16", "f16", "f32"
    axes: tuple[str, ...]
    shape: tuple[int, ...]
    scale: float | None = None  # an output the caller multiplies by this once it is whole (`ncd.scale`)


@dataclass(frozen=True)
class TmaBox:
    """How a tensor-map parameter's map must be encoded: the box one copy moves (numpy
    order, outermost first) and its swizzle; the rest as `tensor_map_for` encodes it."""

    box: tuple[int, ...]
    swizzle: str  # "none", "32B", "64B", "128B"
    data_type: str = ""  # CU_TENSOR_MAP_DATA_TYPE_<data_type>, where the element type is known
    interleave: str = "NONE"
    l2_promotion: str = "NONE"
    oob_fill: str = "NONE"  # out-of-bounds elements read as zero


@dataclass(frozen=True)
class ParamContract:
    """One kernel parameter: its PTX name, the diagram's name for it (`matmul_a` -> `a`),
    how it is passed (`pointer`: the 8-byte device address of a C-contiguous array;
    `tensormap`: a 128-byte CUtensorMap by value) and, where the diagram says, the array it
    stands for. An output of role `accumulate` (a contraction split over the grid) is
    added into by every block, so it must hold zeros when the kernel starts. An output
    with a `scale` holds the diagram's result before a constant factor (`ncd-widen-results`
    left it to the caller, with the rounding): multiply it by `scale` once it is whole."""

    name: str
    arg: str
    kind: str  # "pointer", "tensormap", or a PTX scalar type ("u32", "f32" ...)
    role: str | None = None  # "in", "out", or "accumulate": an output the kernel adds into, zeroed before each launch
    dtype: str | None = None
    axes: tuple[str, ...] | None = None
    shape: tuple[int, ...] | None = None
    tma: TmaBox | None = None
    scale: float | None = None  # the output is the diagram's result divided by this: the caller multiplies it once it is whole

    def describe(self) -> str:
        """`bf16[m=512, k=256]`, or what is known of it."""
        if self.shape is None or self.axes is None:
            return f"{self.dtype or 'array'}"
        dims = ", ".join(f"{a}={s}" for a, s in zip(self.axes, self.shape))
        return f"{self.dtype}[{dims}]"


@dataclass(frozen=True)
class LaunchContract:
    """Everything a launch of the kernel needs besides the PTX. `grid` is the grid in
    blocks, except for a persistent kernel (`persistent` > 0 blocks per multiprocessor),
    where it is the number of tiles and the launch takes `launch_grid(multiprocessors)`."""

    kernel: str
    target: str
    params: tuple[ParamContract, ...]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem_bytes: int
    persistent: int = 0
    cluster: tuple[int, int, int] | None = None
    napkin_ir: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    # -- the grid rule -------------------------------------------------------------------
    def launch_grid(self, multiprocessors: int) -> tuple[int, int, int]:
        """The grid to launch on a device with `multiprocessors` SMs."""
        if not self.persistent:
            return self.grid
        blocks = min(self.grid[0], self.persistent * multiprocessors)
        return (blocks - blocks % self.cluster[0] if self.cluster else blocks, 1, 1)

    def grid_rule(self) -> str:
        if not self.persistent:
            return "launch grid as given"
        whole = f", rounded down to a whole number of clusters of {self.cluster[0]}" if self.cluster else ""
        return (f"persistent: grid.x = min({self.grid[0]}, {self.persistent} x the device's multiprocessor count){whole}; "
                "each block loops over the tiles")

    # -- names ---------------------------------------------------------------------------
    def arg_names(self) -> list[str]:
        return [p.arg for p in self.params]

    def param(self, arg: str) -> ParamContract:
        for p in self.params:
            if p.arg == arg:
                return p
        raise KeyError(arg)

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        params = []
        for p in self.params:
            d = {k: v for k, v in asdict(p).items() if v is not None}
            for k in ("axes", "shape"):
                if k in d:
                    d[k] = list(d[k])
            if p.tma is not None:
                d["tma"] = {**asdict(p.tma), "box": list(p.tma.box)}
            params.append(d)
        return {
            "format": FORMAT,
            "napkin_ir": self.napkin_ir,
            "kernel": self.kernel,
            "target": self.target,
            "params": params,
            "grid": list(self.grid),
            "persistent_blocks_per_sm": self.persistent,
            "grid_rule": self.grid_rule(),
            "block": list(self.block),
            "dynamic_smem_bytes": self.smem_bytes,
            "cluster": list(self.cluster) if self.cluster else None,
            **self.extra,
        }

    def to_json(self) -> str:
        """The contract as JSON, lists of numbers and names kept on one line."""
        text = json.dumps(self.to_dict(), indent=2)
        return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LaunchContract:
        if d.get("format") != FORMAT:
            raise UserError(f"not a napkin launch contract: format is {d.get('format')!r}, expected {FORMAT!r}")
        try:
            params = tuple(ParamContract(p["name"], p["arg"], p["kind"], p.get("role"), p.get("dtype"),
                                         tuple(p["axes"]) if "axes" in p else None,
                                         tuple(p["shape"]) if "shape" in p else None,
                                         TmaBox(**{**p["tma"], "box": tuple(p["tma"]["box"])}) if "tma" in p else None,
                                         float(p["scale"]) if "scale" in p else None)
                           for p in d["params"])
            known = {"format", "napkin_ir", "kernel", "target", "params", "grid", "persistent_blocks_per_sm", "grid_rule", "block",
                     "dynamic_smem_bytes", "cluster"}
            return cls(d["kernel"], d["target"], params, _dims(d["grid"]), _dims(d["block"]), int(d["dynamic_smem_bytes"]),
                       int(d.get("persistent_blocks_per_sm", 0)), _dims(d["cluster"]) if d.get("cluster") else None,
                       d.get("napkin_ir", ""), {k: v for k, v in d.items() if k not in known})
        except (KeyError, TypeError, ValueError) as e:
            raise UserError(f"a malformed napkin launch contract: {type(e).__name__}: {e}") from None

    @classmethod
    def from_json(cls, text: str) -> LaunchContract:
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as e:
            raise UserError(f"a launch contract must be JSON: {e}") from None


def _dims(values: Sequence[int]) -> tuple[int, int, int]:
    dims = [int(v) for v in values]
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"expected 1 to 3 dimensions, found {values!r}")
    return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]


# --------------------------------------------------------------------------------------
# reading a module
# --------------------------------------------------------------------------------------


def diagram_signature(module: Any) -> list[ArgSignature]:
    """The global tensors of the module's one function (`ncd` level) or kernel (`hbm`
    level), inputs then outputs, named as the lowering names the kernel's parameters
    (the arguments' names, then `out`, or `out0`, `out1` ...); [] where neither is found."""
    from xdsl.dialects import func

    from napkin_ir.dialects import hbm, ncd
    from napkin_ir.passes.widen_results import result_scales

    funcs = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    if len(funcs) == 1 and all(isinstance(t, ncd.TensorType) for t in (*funcs[0].function_type.inputs, *funcs[0].function_type.outputs)):
        f = funcs[0]
        outs = list(f.function_type.outputs.data)
        names = [a.name_hint or f"arg{n}" for n, a in enumerate(f.body.block.args)]
        names += ["out" if len(outs) == 1 else f"out{k}" for k in range(len(outs))]
        types = [*f.function_type.inputs.data, *outs]
        roles = ["in"] * len(f.body.block.args) + ["out"] * len(outs)
        scales = [None] * len(f.body.block.args) + result_scales(f)
        return [_signature(n, r, t, c) for n, r, t, c in zip(names, roles, types, scales)]
    kernels = [k for k in module.walk() if isinstance(k, hbm.KernelOp)]
    if len(kernels) == 1:
        k = kernels[0]
        globs = k.globals
        n_out = k.num_outputs.value.data
        roles = ["in"] * (len(globs) - n_out) + ["out"] * n_out
        return [_signature(g.name_hint or f"arg{n}", r, g.type) for n, (g, r) in enumerate(zip(globs, roles))]
    return []


def followed_signature(module: Any, signature: list[ArgSignature]) -> list[ArgSignature]:
    """The signature after a pass ran on `module`: the module's own while it is still a
    diagram (passes there may change the function: `ncd-grad`, `ncd-extract`, a result
    widened), else `signature` (lowering keeps the parameters and loses their types)."""
    from napkin_ir.dialects import hbm

    if any(isinstance(o, hbm.KernelOp) for o in module.walk()):
        return signature
    return diagram_signature(module) or signature


def _signature(name: str, role: str, t: Any, scale: float | None = None) -> ArgSignature:
    return ArgSignature(name, role, t.dtype, t.axis_names, t.dims, scale)


def launch_contract(module: Any, signature: Sequence[ArgSignature] = (), *, version: str = "", pipeline: str = "") -> LaunchContract:
    """The contract of the one `ptx.kernel` in `module` (lowered by napkin-sm80 or
    napkin-sm90), with the element types and shapes of `signature` (the module's
    `diagram_signature` before it was lowered) and, for the reader, the `pipeline` that
    compiled it."""
    from napkin_ir.dialects.ptx.ops import KernelOp
    from napkin_ir.dialects.ptx.printer import choose_target

    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    if len(kernels) != 1:
        raise UserError(f"a launch contract describes one kernel; the module has {len(kernels)} ptx.kernel ops"
                        + ("" if kernels else ": lower it to ptx first (-p napkin-sm80 or -p napkin-sm90)"))
    (kernel,) = kernels
    name = kernel.sym_name.data
    if kernel.launch_grid is None or kernel.smem_bytes is None:
        raise UserError(f"@{name} carries no launch configuration (napkin.grid, napkin.smem_bytes): "
                        "only kernels that napkin-sm80 or napkin-sm90 compiled have one")
    threads = kernel.reqntid or kernel.maxntid
    block = [a.value.data for a in threads.data] if threads else [1]
    boxes = {t.arg.data: (t.dims, t.swizzle.data) for t in (kernel.tma.data if kernel.tma else [])}
    zeroed = {z.data for z in (kernel.zeroed.data if kernel.zeroed else [])}
    sigs = {s.name: s for s in signature}
    params = []
    for pname, ptype in kernel.param_list():
        arg = pname.removeprefix(name + "_")
        sig = sigs.get(arg)
        kind = "tensormap" if ptype == "tensormap" else "pointer" if ptype == "u64" and (sig or not sigs) else ptype
        tma = None
        if arg in boxes:
            box, swizzle = boxes[arg]
            tma = TmaBox(box, swizzle, TMA_DATA_TYPES.get(sig.dtype, "") if sig else "")
        role = "accumulate" if pname in zeroed else sig.role if sig else None
        params.append(ParamContract(pname, arg, kind, role, sig.dtype if sig else None,
                                    sig.axes if sig else None, sig.shape if sig else None, tma, sig.scale if sig else None))
    persistent, cluster = kernel.persistent, kernel.cluster
    return LaunchContract(
        name, choose_target(module), tuple(params),
        _dims([a.value.data for a in kernel.launch_grid.data]),
        _dims(block), kernel.smem_bytes.value.data,
        persistent.value.data if persistent is not None else 0,
        _dims([a.value.data for a in cluster.data]) if cluster is not None else None,
        version, {"pipeline": pipeline} if pipeline else {})


def napkin_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("napkin-ir")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "0+unknown"


__all__ = ["FORMAT", "ArgSignature", "LaunchContract", "ParamContract", "TmaBox", "diagram_signature", "followed_signature",
           "launch_contract", "napkin_version"]
