"""Kernel families, one module each: how to recognise a diagram of the family by its
structure, which plans are legal on a target, and the default plan (`planner.RECIPES`)."""
