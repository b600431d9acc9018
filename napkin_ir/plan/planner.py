"""The planner: one way for every named pipeline to choose a kernel's plan.

`plan_kernel(module, target, request)` asks each family's recipe in turn whether it
recognises the diagram by its structure; the first that does plans it for the target as
the request asks. A new family is a recipe module added to `RECIPES`: the pipelines do
not change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from napkin_ir.dialects import ncd
from napkin_ir.plan.kernel_plan import KernelPlan, ProductEngine
from napkin_ir.plan.recipes import attention, products, rows
from napkin_ir.plan.request import PlanRequest
from napkin_ir.target import Target


@dataclass(frozen=True)
class Recipe:
    """A family: `recognise(module)` gives its shape of the diagram or None; `plan(module,
    shape, target, request)` its plan; `what` says what the family compiles, for the
    error when no recipe recognises a diagram."""

    name: str
    recognise: Callable[[ModuleOp], Any]
    plan: Callable[[ModuleOp, Any, Target, PlanRequest], KernelPlan]
    what: str


# in the order asked: attention is also two products, so it comes before them
RECIPES: tuple[Recipe, ...] = (
    Recipe(attention.NAME, attention.recognise, attention.plan,
           "attention (two contractions, the second over the first's keys; softmax, causal, spherical, grouped-query)"),
    Recipe(products.NAME, products.recognise, products.plan,
           "products over one shared axis (a GEMM, batched or not, or several of one operand, with an elementwise epilogue)"),
    Recipe(rows.NAME, rows.recognise, rows.plan,
           "row reductions with no product (a row softmax, L2 norm, sum or max along the last axis, a sum down the columns, maps alone)"),
)


def recipe_for(module: ModuleOp) -> tuple[Recipe, Any] | None:
    """The first recipe that recognises `module`, with its shape."""
    for recipe in RECIPES:
        shape = recipe.recognise(module)
        if shape is not None:
            return recipe, shape
    return None


def plan_kernel(module: ModuleOp, target: Target, request: PlanRequest) -> KernelPlan:
    """The plan of the kernel that `module`'s one function becomes on `target`."""
    found = recipe_for(module)
    if found is None:
        products = sum(isinstance(op, ncd.ContractOp) for op in module.walk())
        hint = (f" (its {products} products are no one kernel's: `napkin_ir.plan.program.kernel_program` cuts it into a "
                "program of kernels, each of which these pipelines compile)") if products > 2 else ""
        raise request.fail("compiles one function of " + "; or ".join(r.what for r in RECIPES) + ". This diagram is none of them"
                           + hint)
    recipe, shape = found
    plan = recipe.plan(module, shape, target, request)
    if request.schedule is not None and request.schedule != plan.schedule:
        if plan.product is not ProductEngine.WGMMA:
            raise request.fail(f"schedule={request.given.get('schedule', str(request.schedule).lower())} orders wgmma groups; "
                               f"this kernel's products are {'mma.sync' if plan.product else 'none (a row reduction)'}")
        plan = replace(plan, schedule=request.schedule)
    if request.early_waits is not None and request.early_waits != (plan.early_waits or "none"):
        if not plan.overlap and request.early_waits != "none":
            raise request.fail(f"early_waits={request.early_waits} moves a wait in the stream loops that overlap pipelines "
                               f"(an attention forward's); this kernel has none")
        plan = replace(plan, early_waits="" if request.early_waits == "none" else request.early_waits)
    for name, what in KEPT_ROW_STATISTICS:  # the attention recipe honours them where the kernel keeps the statistic
        if getattr(request, name) and not getattr(plan, name):
            raise request.fail(f"{name}=true keeps {what}; this kernel has none")
    return plan


# the options that rewrite a running row statistic the kernel keeps across its stream, and what it is
KEPT_ROW_STATISTICS = (
    ("partial_sums", "a running row sum (an attention forward's softmax denominator, or spherical attention's) as each "
                     "lane's part"),
    ("lazy_rescale", "a running row max (a softmax attention forward's) until a row outgrows it"),
)
