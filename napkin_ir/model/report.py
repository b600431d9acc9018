"""The napkin cost report: a table per kernel or function, or the same as a JSON dict.

`model_report(module, hw)` gathers the analysis and the prediction for every kernel and
function of a module; `report_dict` makes it plain data (what `napkin-model --json`
prints) and `format_report` text for people.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from napkin_ir.model.analysis import FunctionCost, KernelCost, analyse_module
from napkin_ir.model.hardware import Hardware
from napkin_ir.model.ptxas import PtxasResources
from napkin_ir.model import l2
from napkin_ir.model.timing import (
    BOUND_NAMES,
    Prediction,
    fused_floor,
    launch_registers,
    op_times,
    predict,
    register_budget,
)

US = 1e6


@dataclass
class KernelReport:
    cost: KernelCost
    prediction: Prediction
    ptxas: PtxasResources | None = None  # what ptxas reported for the kernel (`napkin-model --ptxas`)

    @property
    def ptxas_registers(self) -> int | None:
        return self.ptxas.registers if self.ptxas else None


@dataclass
class Report:
    hardware: Hardware
    level: str
    kernels: list[KernelReport]
    functions: list[FunctionCost]


def model_report(module: ModuleOp, hw: Hardware, instruction: str | None = None,
                 ptxas: dict[str, PtxasResources] | None = None) -> Report:
    """Analyse and predict every kernel and function of `module` on `hw`. `ptxas` (kernel
    name -> what ptxas reported) replaces the register estimate where ptxas has counted
    them, and its spills and serialized wgmma are reported beside it."""
    cost = analyse_module(module)
    measured = ptxas or {}
    kernels = []
    for k in cost.kernels:
        found = measured.get(k.name)
        kernels.append(KernelReport(k, predict(k, hw, found.registers if found else None, instruction, edge=True), found))
    return Report(hw, cost.level, kernels, cost.functions)


# --------------------------------------------------------------------------------------
# plain data
# --------------------------------------------------------------------------------------


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def dram_caveats(c: KernelCost, p: Prediction) -> list[str]:
    """Where the DRAM estimate (`napkin_ir.model.l2`) is least sure, for this kernel on this
    GPU: its reuse at the cache's edge (`Prediction.dram_edge`, where predicted), several
    blocks an SM whose estimate moves with how they share it (`Prediction.dram_in_step`),
    the partitions not measured."""
    notes = []
    total = sum(p.dram.values())
    smaller, larger = p.dram_edge or (total, total)
    if total and smaller - larger > 0.1 * total:
        notes.append(f"with an L2 {l2.L2_EDGE_SPREAD:.0%} smaller or larger the DRAM estimate is {_n(smaller)} or {_n(larger)} bytes: "
                     "the kernel's reuse sits at the cache's edge, and the estimate is no surer than that")
    per_sm = p.occupancy.blocks_per_sm
    _, k = l2.resident(c.n_blocks, p.hardware.sms * per_sm, per_sm)  # a small grid holds fewer
    if k > 1 and p.dram_in_step is None:
        notes.append(f"{k} blocks an SM drift apart in ways the replay's schedule does not follow: "
                     "the DRAM estimate is least certain for such kernels (docs/model.md)")
    elif k > 1 and abs(p.dram_in_step - total) > 0.1 * total:
        notes.append(f"with the {k} blocks of an SM in step rather than staggered the DRAM estimate is {_n(p.dram_in_step)} "
                     "bytes: which the GPU settles into is not read off the kernel, and the estimate is no surer than that "
                     "(docs/model.md)")
    if p.hardware.l2_partition is None:
        notes.append(f"which L2 partition each SM of the {p.hardware.name} reads through is not measured: "
                     "the DRAM estimate deals the SMs to them at random")
    return notes


def kernel_dict(r: KernelReport) -> dict:
    c, p = r.cost, r.prediction
    smem_traffic = c.smem_read + c.smem_written
    dram = sum(p.dram.values())
    return {
        "name": c.name, "level": c.level, "grid": c.grid, "blocks": c.blocks, "n_blocks": c.n_blocks,
        "warps_per_block": c.warps, "warps_assumed": c.warps_assumed,
        "hbm": {"read": c.hbm_read, "written": c.hbm_written, "total": c.hbm_bytes,
                "dram_estimate": p.dram, "dram_total": dram, "dirty_at_end": p.dirty_at_end,
                "dram_edge": ({"l2_change": l2.L2_EDGE_SPREAD, "l2_smaller": p.dram_edge[0], "l2_larger": p.dram_edge[1]}
                              if p.dram_edge else None),
                "dram_in_step": p.dram_in_step,
                "dram_caveats": dram_caveats(c, p)},
        "work": {"tensor_flops": c.work.tensor_flops, "alu_ops": c.work.alu_ops, "sfu_ops": c.work.sfu_ops,
                 "instruction": p.instruction, "instruction_assumed": p.instruction_assumed},
        "smem": {"per_block": c.smem_per_block, "assumed": c.smem_assumed, "read": c.smem_read, "written": c.smem_written},
        "registers": {"estimate": c.registers.total if c.registers else None,
                      "fragments": c.registers.fragments if c.registers else None,
                      "overhead": c.registers.overhead if c.registers else None,
                      "ptxas": r.ptxas_registers, "used": p.registers,
                      "ptxas_spill_bytes": r.ptxas.spill_stores if r.ptxas else None,
                      "ptxas_serialized_wgmma": r.ptxas.serialized_wgmma if r.ptxas else None},
        "occupancy": {"blocks_per_sm": p.occupancy.blocks_per_sm, "warps_per_sm": p.occupancy.warps_per_sm,
                      "limits": p.occupancy.limits, "limiter": p.occupancy.limiter},
        "intensity": {"flop_per_hbm_byte": _ratio(c.work.flops, c.hbm_bytes), "flop_per_dram_byte": _ratio(c.work.flops, dram),
                      "flop_per_smem_byte": _ratio(c.work.flops, smem_traffic)},
        "times_s": p.times, "waves": p.waves, "tail": p.tail, "predicted_s": p.seconds, "bound": p.bound,
        "estimated_ops": c.estimated_ops,
    }


def function_dict(f: FunctionCost, hw: Hardware) -> dict:
    ops = []
    for o in f.ops:
        t = op_times(o, hw)
        bound = max(t, key=lambda k: t[k])
        ops.append({"op": o.name, "result": o.result, "read": o.read, "written": o.written,
                    "tensor_flops": o.work.tensor_flops, "alu_ops": o.work.alu_ops, "sfu_ops": o.work.sfu_ops,
                    "time_s": t[bound], "bound": bound, "estimated": o.estimated})
    return {
        "name": f.name, "level": "ncd", "ops": ops, "inputs": f.inputs, "outputs": f.outputs,
        "unfused_bytes": f.unfused_bytes, "fused_bytes": f.fused_bytes, "saving_bytes": f.unfused_bytes - f.fused_bytes,
        "unfused_time_s": sum(o["time_s"] for o in ops), "fused_floor_s": fused_floor(f, hw),
    }


def report_dict(r: Report) -> dict:
    return {"hardware": {"key": r.hardware.key, "name": r.hardware.name, "sms": r.hardware.sms}, "level": r.level,
            "kernels": [kernel_dict(k) for k in r.kernels], "functions": [function_dict(f, r.hardware) for f in r.functions]}


# --------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------


def _table(rows: Sequence[Sequence[object]], indent: str = "  ") -> list[str]:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells if i < len(r)) for i in range(max(len(r) for r in cells))]
    numeric = [all(_is_number(r[i]) for r in cells[1:] if i < len(r) and r[i]) for i in range(len(widths))]
    out = []
    for r in cells:
        parts = [c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        out.append((indent + "  ".join(parts)).rstrip())
    return out


def _is_number(text: str) -> bool:
    return text.replace(".", "", 1).replace("-", "", 1).isdigit()


def _n(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def _us(s: float) -> str:
    return f"{s * US:.3f}"


def _kernel_text(r: KernelReport) -> list[str]:
    d = kernel_dict(r)
    c, p = r.cost, r.prediction
    hw = p.hardware
    lines = [f"@{c.name}: {c.level} level, on the {hw.name} ({hw.sms} SMs)"]
    shape = " x ".join(str(b) for b in c.blocks.values()) or "1"
    grid = ", ".join(f"{a}:{t}" for a, t in c.grid.items()) or "none"
    assumed = " (assumed: decided at the reg level)" if c.warps_assumed else ""
    lines.append(f"  grid {grid}: {shape} = {c.n_blocks} blocks of {c.warps} warps{assumed}")
    rows: list[list[object]] = [["HBM traffic (bytes)", "napkin", "DRAM est."]]
    rows += [[f"{name} read", _n(v), _n(p.dram.get(name))] for name, v in c.hbm_read.items()]
    rows += [[f"{name} written", _n(v), "" if name in c.hbm_read else _n(p.dram.get(name))] for name, v in c.hbm_written.items()]
    rows.append(["total", _n(c.hbm_bytes), _n(d["hbm"]["dram_total"])])
    lines += _table(rows)
    dirty = {name: v for name, v in p.dirty_at_end.items() if v}  # whole bytes (l2.dram_estimate)
    if dirty:
        held = ", ".join(f"{name} {_n(v)}" for name, v in dirty.items())
        lines.append(f"  still dirty in the L2 when the kernel ends (bytes; written back after it, not in the estimate): {held}")
    lines += [f"  note: {note}" for note in d["hbm"]["dram_caveats"]]
    instr = f"{p.instruction}{', assumed' if p.instruction_assumed else ''}"
    lines += _table([["work", "count"], [f"tensor-core FLOPs ({instr})", _n(c.work.tensor_flops)],
                     ["other f32 ops", _n(c.work.alu_ops)], ["special functions", _n(c.work.sfu_ops)]])
    for name, n in c.estimated_ops.items():
        lines.append(f"  note: {name} ({n}x) counted as one f32 op per element")
    staged = " (assumed: each loaded tile staged once)" if c.smem_assumed else ""
    lines.append(f"  shared memory: {c.smem_per_block} bytes per block{staged}; "
                 f"{_n(c.smem_written)} bytes written, {_n(c.smem_read)} read")
    lines.append("  registers: " + _registers_text(r))
    o = p.occupancy
    limits = ", ".join(f"{k} {v}" for k, v in o.limits.items())
    lines.append(f"  occupancy: {o.describe()} ({limits})")
    it = d["intensity"]
    lines.append("  intensity (FLOP/byte): " + ", ".join(f"{k} {v:.1f}" for k, v in
                 (("HBM", it["flop_per_hbm_byte"]), ("DRAM", it["flop_per_dram_byte"]), ("smem", it["flop_per_smem_byte"])) if v))
    lines += _table([["time (us)", *p.times], ["", *(_us(t) for t in p.times.values())]])
    lines.append(f"  waves: {p.waves} ({c.n_blocks} blocks on {hw.sms} SMs x {o.blocks_per_sm}); tail factor {p.tail:.2f}")
    lines.append(f"  predicted: {_us(p.seconds)} us, bound by {BOUND_NAMES[p.bound]}")
    return lines


def _registers_text(r: KernelReport) -> str:
    est = r.cost.registers
    if est is None:
        return "not known above the reg level (not limiting occupancy)"
    text = f"{est.total} per thread estimated (fragments {est.fragments} + overhead {est.overhead})"
    if r.cost.producer_warps:
        hw = r.prediction.hardware
        text = (f"{est.total} per consumer thread estimated (fragments {est.fragments} + overhead {est.overhead}), "
                f"{register_budget(r.cost, hw)} given them by setmaxnreg; {launch_registers(r.cost, hw)} a thread at launch")
    if r.ptxas is not None:
        text += f"; ptxas: {r.ptxas.registers} (used)"
        if r.ptxas.spills:
            text += f", {r.ptxas.spill_stores} bytes spilled a thread"
        if r.ptxas.serialized_wgmma:
            text += ", its wgmma serialized for want of registers (C7512)"
    return text


def _function_text(f: FunctionCost, hw: Hardware) -> list[str]:
    d = function_dict(f, hw)
    lines = [f"@{f.name}: ncd level, unfused (each op a kernel of its own), on the {hw.name}"]
    rows: list[list[object]] = [["op", "result", "read", "written", "tensor FLOPs", "f32 ops", "special", "time (us)", "bound"]]
    for o in d["ops"]:
        rows.append([o["op"], o["result"], o["read"], o["written"], _n(o["tensor_flops"]), _n(o["alu_ops"]),
                     _n(o["sfu_ops"]), _us(o["time_s"]), o["bound"]])
    w = f.work
    rows.append(["total", "", sum(o["read"] for o in d["ops"]), sum(o["written"] for o in d["ops"]),
                 _n(w.tensor_flops), _n(w.alu_ops), _n(w.sfu_ops), _us(d["unfused_time_s"]), ""])
    lines += _table(rows)
    saving = d["saving_bytes"]
    share = saving / f.unfused_bytes * 100 if f.unfused_bytes else 0.0
    lines.append(f"  HBM bytes: unfused {f.unfused_bytes}, fused {f.fused_bytes} (arguments read once, results "
                 f"written once): fusion saves {saving} ({share:.1f}%)")
    lines.append(f"  predicted: unfused {_us(d['unfused_time_s'])} us (the ops one after another), "
                 f"fused floor {_us(d['fused_floor_s'])} us")
    for o in d["ops"]:
        if o["estimated"]:
            lines.append(f"  note: {o['op']} counted as one f32 op per element")
    return lines


def format_report(r: Report) -> str:
    blocks = [_kernel_text(k) for k in r.kernels] + [_function_text(f, r.hardware) for f in r.functions]
    return "\n\n".join("\n".join(b) for b in blocks) + "\n"
