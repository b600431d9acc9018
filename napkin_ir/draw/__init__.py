"""Pictures of napkin's modules: the diagram at each level, what a block holds, the roofline.

`napkin-draw` (`napkin_ir.cli.draw`) and `napkin-model --plot` use these; they need
matplotlib (`pip install 'napkin-ir[draw]'`). `levels` lowers a module to the level
drawn; `circuit` draws the diagram; `anatomy` a block's shared memory and warps;
`numbers` the napkin model's numbers beside them; `figure` puts them together;
`roofline` places a kernel under its GPU's ceilings.
"""
