"""An out-of-package pass for napkin-ir: its package's `xdsl.universe` entry point names
`UNIVERSE`, and every tool that asks xDSL's multiverse for passes finds it (napkin-opt,
xdsl-opt, `napkin_ir.compile(pipeline=...)`). Nothing in napkin-ir changes.

The factory imports the pass on first use, as napkin's own registry does, so that
`napkin-opt --help` stays quick.
"""

from __future__ import annotations

from xdsl.universe import Universe


def _drop_unit_scale():
    from napkin_example_plugin.drop_unit_scale import DropUnitScalePass

    return DropUnitScalePass


UNIVERSE = Universe(all_passes={"ncd-drop-unit-scale": _drop_unit_scale})
