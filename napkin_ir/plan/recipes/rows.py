"""The rows family: reductions with no product (a row softmax, an L2 norm, a sum or a
max along the last axis), each block a tile of whole rows."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from napkin_ir.plan.kernel_plan import KernelPlan
from napkin_ir.plan.request import PlanRequest
from napkin_ir.target import Target

NAME = "rows"


def recognise(module: ModuleOp) -> None:
    return None


def plan(module: ModuleOp, shape: object, target: Target, req: PlanRequest) -> KernelPlan:
    raise req.fail("row reductions are not planned yet")
