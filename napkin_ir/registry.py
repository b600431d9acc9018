"""What napkin's tools know: dialects, passes and targets, registered lazily.

One place lists them so that `napkin-opt`, `napkin-run` and the tests see the same set.
Factories import their module only when first used, as `xdsl.dialects.get_all_dialects`
does, so that `napkin-opt --help` stays quick. `UNIVERSE` offers the same to xDSL's own
tools: the `xdsl.universe` entry point in pyproject.toml names it, so `xdsl-opt` (and
anything else that asks `Universe.get_multiverse()`) reads napkin IR and runs its passes.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe

from napkin_ir.dialects.context import all_dialects, make_context, napkin_dialects

__all__ = ["UNIVERSE", "all_dialects", "make_context", "napkin_dialects", "napkin_passes", "napkin_targets"]


def _convert_arith_to_ptx() -> type[ModulePass]:
    from napkin_ir.lowering.arith_to_ptx import ConvertArithToPtxPass

    return ConvertArithToPtxPass


def _relabel() -> type[ModulePass]:
    from napkin_ir.passes.relabel import RelabelPass

    return RelabelPass


def _ncd_grad() -> type[ModulePass]:
    from napkin_ir.passes.grad import NcdGradPass

    return NcdGradPass


def _ncd_fold_casts() -> type[ModulePass]:
    from napkin_ir.passes.fold_casts import NcdFoldCastsPass

    return NcdFoldCastsPass


def _ncd_sink_scales() -> type[ModulePass]:
    from napkin_ir.passes.sink_scales import NcdSinkScalesPass

    return NcdSinkScalesPass


def _ncd_fold_log2e() -> type[ModulePass]:
    from napkin_ir.passes.fold_log2e import NcdFoldLog2ePass

    return NcdFoldLog2ePass


def _ncd_widen_results() -> type[ModulePass]:
    from napkin_ir.passes.widen_results import NcdWidenResultsPass

    return NcdWidenResultsPass


def _ncd_reassociate() -> type[ModulePass]:
    from napkin_ir.passes.reassociate import NcdReassociatePass

    return NcdReassociatePass


def _ncd_extract() -> type[ModulePass]:
    from napkin_ir.passes.extract import NcdExtractPass

    return NcdExtractPass


def _ncd_to_hbm() -> type[ModulePass]:
    from napkin_ir.lowering.ncd_to_hbm import NcdToHbmPass

    return NcdToHbmPass


def _hbm_to_smem() -> type[ModulePass]:
    from napkin_ir.lowering.hbm_to_smem import HbmToSmemPass

    return HbmToSmemPass


def _smem_to_reg() -> type[ModulePass]:
    from napkin_ir.lowering.smem_to_reg import SmemToRegPass

    return SmemToRegPass


def _reg_to_ptx() -> type[ModulePass]:
    from napkin_ir.lowering.reg_to_ptx import RegToPtxPass

    return RegToPtxPass


def _smem_unroll_stages() -> type[ModulePass]:
    from napkin_ir.passes.unroll_stages import SmemUnrollStagesPass

    return SmemUnrollStagesPass


def _reg_carry_fragments() -> type[ModulePass]:
    from napkin_ir.passes.carry_fragments import RegCarryFragmentsPass

    return RegCarryFragmentsPass


def _reg_prefetch() -> type[ModulePass]:
    from napkin_ir.passes.prefetch import RegPrefetchPass

    return RegPrefetchPass


def _reg_wgmma_overlap() -> type[ModulePass]:
    from napkin_ir.passes.wgmma_overlap import RegWgmmaOverlapPass

    return RegWgmmaOverlapPass


def _reg_hoist_loads() -> type[ModulePass]:
    from napkin_ir.passes.hoist_loads import RegHoistLoadsPass

    return RegHoistLoadsPass


def _reg_reload_loads() -> type[ModulePass]:
    from napkin_ir.passes.reload_loads import RegReloadLoadsPass

    return RegReloadLoadsPass


def _reg_early_reads() -> type[ModulePass]:
    from napkin_ir.passes.early_reads import RegEarlyReadsPass

    return RegEarlyReadsPass


def _reg_early_waits() -> type[ModulePass]:
    from napkin_ir.passes.early_waits import RegEarlyWaitsPass

    return RegEarlyWaitsPass


def _reg_partial_row_sums() -> type[ModulePass]:
    from napkin_ir.passes.partial_row_sums import RegPartialRowSumsPass

    return RegPartialRowSumsPass


def _reg_lazy_rescale() -> type[ModulePass]:
    from napkin_ir.passes.lazy_rescale import RegLazyRescalePass

    return RegLazyRescalePass


def _reg_wgmma_schedule() -> type[ModulePass]:
    from napkin_ir.passes.wgmma_schedule import RegWgmmaSchedulePass

    return RegWgmmaSchedulePass


def _reg_pingpong() -> type[ModulePass]:
    from napkin_ir.passes.pingpong import RegPingpongPass

    return RegPingpongPass


def _ncd_autotile() -> type[ModulePass]:
    from napkin_ir.passes.autotile import NcdAutotilePass

    return NcdAutotilePass


def _hbm_launch() -> type[ModulePass]:
    from napkin_ir.passes.launch import HbmLaunchPass

    return HbmLaunchPass


def _napkin_sm90() -> type[ModulePass]:
    from napkin_ir.pipelines import NapkinSm90Pass

    return NapkinSm90Pass


def _napkin_sm80() -> type[ModulePass]:
    from napkin_ir.pipelines import NapkinSm80Pass

    return NapkinSm80Pass


def napkin_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {
        "convert-arith-to-ptx": _convert_arith_to_ptx,
        "ncd-relabel": _relabel,
        "ncd-autotile": _ncd_autotile,
        "ncd-grad": _ncd_grad,
        "ncd-fold-casts": _ncd_fold_casts,
        "ncd-extract": _ncd_extract,
        "ncd-reassociate": _ncd_reassociate,
        "ncd-sink-scales": _ncd_sink_scales,
        "ncd-fold-log2e": _ncd_fold_log2e,
        "ncd-widen-results": _ncd_widen_results,
        "ncd-to-hbm": _ncd_to_hbm,
        "hbm-launch": _hbm_launch,
        "hbm-to-smem": _hbm_to_smem,
        "smem-to-reg": _smem_to_reg,
        "smem-unroll-stages": _smem_unroll_stages,
        "reg-carry-fragments": _reg_carry_fragments,
        "reg-prefetch": _reg_prefetch,
        "reg-wgmma-overlap": _reg_wgmma_overlap,
        "reg-hoist-loads": _reg_hoist_loads,
        "reg-wgmma-schedule": _reg_wgmma_schedule,
        "reg-pingpong": _reg_pingpong,
        "reg-reload-loads": _reg_reload_loads,
        "reg-early-reads": _reg_early_reads,
        "reg-early-waits": _reg_early_waits,
        "reg-partial-row-sums": _reg_partial_row_sums,
        "reg-lazy-rescale": _reg_lazy_rescale,
        "reg-to-ptx": _reg_to_ptx,
        "napkin-sm80": _napkin_sm80,
        "napkin-sm90": _napkin_sm90,
    }


def napkin_targets() -> dict[str, Callable[[], type]]:
    def ptx():
        from napkin_ir.dialects.ptx.printer import PtxTarget

        return PtxTarget

    def launch():
        from napkin_ir.launch_target import LaunchTarget

        return LaunchTarget

    return {"ptx": ptx, "launch": launch}


UNIVERSE = Universe(all_dialects=napkin_dialects(), all_passes=napkin_passes(), all_targets=napkin_targets())
