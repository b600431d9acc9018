"""Kernel plans: what each kernel gets, chosen once by a family's recipe and read by the
passes (`kernel_plan.KernelPlan`, `planner.plan_kernel`, `recipes/`). This package sits
above the passes and lowerings and below the front door (the named pipelines, `compile`,
the torch ops); it imports neither the registry nor the runtime."""
