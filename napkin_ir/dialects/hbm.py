"""The `hbm` dialect: the diagram cut into tiles of global tensors spread over a grid.

Below `ncd-relabel` and `ncd-to-hbm`, a computation is an `hbm.kernel` whose body runs
once per thread block: its block arguments are the global tensors (`!hbm.global`, in
HBM) and the origin of this block's tile along each grid axis. `hbm.load` reads a tile
of a global tensor (an `!ncd.tensor` of the tile's shape; elements past the edge read
as zero), `hbm.store` writes the part of a tile that lies inside, and the ncd ops
compute on tiles. A streamed axis is an `scf.for` over tile origins carrying its
accumulators (marked `hbm.stream = #hbm.stream<k>`); where masks touch some tiles (the diagonal
of a causal mask, a ragged last tile) it is two such loops in a row carrying the same
state, the first over the tiles no mask touches and without masks, the second masked,
and the loop bounds may depend on the block's origin (tiles a causal mask fills wholly
are not visited). What this level decides is the HBM traffic: which tiles are read,
and how often.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import prod

from xdsl.utils.exceptions import VerifyException
from xdsl.dialects.builtin import I32, ArrayAttr, FloatAttr, Float32Type, IndexType, IntAttr, IntegerAttr, StringAttr, UnitAttr, f32, i32
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, SymbolOpInterface

from napkin_ir.dialects.loop_facts import StreamAttr, verify_loop_facts
from napkin_ir.dialects.ncd import NamedAxesType, TensorType, axis_names_problem, parameters_hash, parse_axis_integers, same_parameters
from napkin_ir.dialects.utils import require

MAX_CLUSTER = 8  # the most blocks a cluster may portably take (CUDA's guarantee on sm_90)
# hbm.order with the last grid axis fastest: walked from its end, or from its start
ORDERS_LAST = ("last", "last_from_start")


@irdl_attr_definition
class GlobalType(NamedAxesType):
    """A tensor in global memory, e.g. `!hbm.global<m=4096, k=4096 : bf16>`, row-major in
    the order of its axes."""

    name = "hbm.global"
    __eq__ = same_parameters
    __hash__ = parameters_hash


@irdl_attr_definition
class LabelsAttr(ParametrizedAttribute):
    """Axis names, in order, each with a non-negative integer: `#hbm.labels<m=128, n=64>`.

    The facts passes hand down about axes: a kernel's grid (axis and tile size, in grid
    order), the warps along each axis (`reg.warps`), the labels `ncd-relabel` writes on a
    function (`ncd.grid`, `ncd.stream`), and the element offsets of a fragment within its
    tile (`at`). Names are unique; a number is at least 0, as an offset may be; where a
    number is a size (tiles, warps), the op that holds it checks that it is positive.
    """

    name = "hbm.labels"
    axes: ArrayAttr[StringAttr]
    values: ArrayAttr[IntAttr]

    def __init__(self, labels: Mapping[str, int]):
        super().__init__(ArrayAttr([StringAttr(a) for a in labels]), ArrayAttr([IntAttr(n) for n in labels.values()]))

    @property
    def labels(self) -> dict[str, int]:
        return {a.data: n.data for a, n in zip(self.axes.data, self.values.data, strict=True)}

    @staticmethod
    def problem(axes: Sequence[str], values: Sequence[int]) -> str | None:
        problem = axis_names_problem(axes, values, "numbers")
        if problem:
            return problem
        for a, n in zip(axes, values):
            if n < 0:
                return f"axis '{a}' has {n}; sizes and offsets are at least 0"
        return None

    def verify(self) -> None:
        problem = self.problem([a.data for a in self.axes.data], [n.data for n in self.values.data])
        if problem:
            raise VerifyException(f"#{self.name}: {problem}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + ", ".join(f"{a}={n}" for a, n in self.labels.items()) + ">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<", f" to open #{cls.name}")
        start = parser.pos
        axes: list[str] = []
        values: list[int] = []
        if parser.parse_optional_punctuation(">") is None:
            axes, values = parse_axis_integers(parser, "the number for")
            parser.parse_punctuation(">", f" to close #{cls.name}")
        problem = cls.problem(axes, values)
        if problem:
            parser.raise_error(f"#{cls.name}: {problem}", start, parser.pos)
        return ArrayAttr([StringAttr(a) for a in axes]), ArrayAttr([IntAttr(n) for n in values])


def parse_labels(labels: Attribute | None) -> dict[str, int]:
    """`#hbm.labels<m=128, n=64>` -> {"m": 128, "n": 64}; nothing -> {}."""
    if labels is None:
        return {}
    if not isinstance(labels, LabelsAttr):
        raise VerifyException(f"expected labels like #hbm.labels<m=128, n=64>, got {labels}")
    return labels.labels


def format_labels(labels: Mapping[str, int]) -> LabelsAttr:
    """{"m": 128, "n": 64} -> `#hbm.labels<m=128, n=64>`."""
    return LabelsAttr(labels)


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A grid of thread blocks over tiles of global tensors.

    `grid` labels the axes spread over blocks with their tile sizes (`#hbm.labels<m=128, n=128>`);
    the grid has ceil(size / tile) blocks along each. The body's block arguments are the
    global tensors (inputs, then the last `num_outputs` outputs) and then one index per
    grid axis: the element offset at which this block's tile starts.
    """

    name = "hbm.kernel"
    sym_name = prop_def(StringAttr)
    grid = prop_def(LabelsAttr)
    num_outputs = prop_def(IntegerAttr)
    # what hbm-launch and smem-to-reg decide for the passes below, named by the pass's level
    group = opt_prop_def(IntegerAttr[I32], prop_name="hbm.group")
    blocks_per_sm = opt_prop_def(IntegerAttr[I32], prop_name="hbm.blocks_per_sm")
    persistent = opt_prop_def(UnitAttr, prop_name="hbm.persistent")
    cluster = opt_prop_def(IntegerAttr[I32], prop_name="hbm.cluster")
    order = opt_prop_def(StringAttr, prop_name="hbm.order")
    ordered_sums = opt_prop_def(UnitAttr, prop_name="hbm.ordered_sums")
    warps = opt_prop_def(LabelsAttr, prop_name="reg.warps")
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict-with-keyword $body"

    def __init__(self, name: str, grid: dict[str, int], num_outputs: int, body: Region):
        super().__init__(
            properties={"sym_name": StringAttr(name), "grid": format_labels(grid), "num_outputs": IntegerAttr(num_outputs, i32)},
            regions=[body],
        )

    @property
    def grid_tiles(self) -> dict[str, int]:
        return parse_labels(self.grid)

    @property
    def warp_grid(self) -> dict[str, int]:
        """Warps along each axis (`reg.warps`); {} before smem-to-reg."""
        return parse_labels(self.warps)

    @property
    def group_rows(self) -> int:
        """Rows of blocks launched one column after another (`hbm.group`); 0: not grouped."""
        return self.group.value.data if self.group is not None else 0

    @property
    def cluster_blocks(self) -> int:
        return self.cluster.value.data if self.cluster is not None else 1

    @property
    def split_cluster(self) -> int:
        """Blocks of a cluster that holds the parts of each output tile's split sums (they
        add them in shared memory); 1 where there is none."""
        return self.cluster_blocks if self.cluster_blocks > 1 and self.split_axes() else 1

    @property
    def multicast_blocks(self) -> int:
        """Blocks of a cluster of neighbours that share their common tiles by multicast (a
        grid without split sums); 1 where there is none."""
        return 1 if self.split_cluster > 1 else self.cluster_blocks

    @property
    def resident_blocks(self) -> int:
        """Blocks per multiprocessor a persistent grid launches (`hbm.blocks_per_sm`)."""
        return self.blocks_per_sm.value.data if self.blocks_per_sm is not None else 1

    @property
    def last_axis_fastest(self) -> bool:
        return self.order is not None and self.order.data in ORDERS_LAST

    @property
    def last_from_end(self) -> bool:
        """Whether the last grid axis, fastest, is walked from its end (`hbm.order = "last"`:
        a causal forward's query blocks, whose streams of keys grow along it), not from its
        start (`"last_from_start"`: the gradient's key blocks, whose streams of queries
        shrink): either way the longest streams first."""
        return self.order is not None and self.order.data == "last"

    @property
    def globals(self) -> list[SSAValue]:
        return [a for a in self.body.block.args if isinstance(a.type, GlobalType)]

    def split_axes(self) -> list[str]:
        """The grid axes no output has: reduced axes split over the grid, each block adding
        its part of the sums along them."""
        outs = self.globals[len(self.globals) - self.num_outputs.value.data:]
        return [a for a in self.grid_tiles if not any(a in g.type.shape for g in outs)]  # type: ignore[attr-defined]

    def accumulated(self) -> list[SSAValue]:
        """The globals some store adds into (`accumulate`, at any level below): outputs that
        each block adds its part of a split contraction to (f32 ones zeroed before the launch
        unless the parts take turns; 16-bit ones written once, the f32 sum rounded)."""
        found = []
        for op in self.walk():
            dest = getattr(op, "dest", None)
            if "accumulate" in op.properties and dest in self.globals and dest not in found:
                found.append(dest)
        return found

    def axis_sizes(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for g in self.globals:
            sizes.update(g.type.shape)  # type: ignore[attr-defined]
        return sizes

    def grid_shape(self) -> dict[str, int]:
        """Blocks along each grid axis."""
        sizes = self.axis_sizes()
        return {a: -(-sizes[a] // t) for a, t in self.grid_tiles.items()}

    def verify_(self) -> None:
        grid = self.grid_tiles
        args = self.body.block.args
        n_glob = len(self.globals)
        require(all(isinstance(a.type, GlobalType) for a in args[:n_glob]), self, "the global tensors come first among the block arguments")
        origins = args[n_glob:]
        require(len(origins) == len(grid) and all(isinstance(a.type, IndexType) for a in origins), self,
              f"has {len(grid)} grid axes, so the block takes {len(grid)} index arguments after the globals, got {len(origins)}")
        nout = self.num_outputs.value.data
        require(0 < nout <= n_glob, self, f"num_outputs must be in 1..{n_glob}, got {nout}")
        sizes = self.axis_sizes()
        for a, t in grid.items():
            require(a in sizes, self, f"grid axis '{a}' is not an axis of any global tensor")
            require(0 < t, self, f"grid axis '{a}' has tile size {t}")
        self._verify_launch_facts(grid, sizes)
        self._verify_loop_facts(sizes)
        self._verify_order()

    def _verify_order(self) -> None:
        """Every value of the body's block is made before the op that reads it (or holds
        an op that does): a lowering that inserts a read above what it reads fails here, at
        the pass that did it, not as a missing value passes later."""
        block = self.body.block
        made: set[SSAValue] = set()
        for top in block.ops:
            for op in top.walk():
                for v in op.operands:
                    if isinstance(v.owner, Operation) and v.owner.parent is block:  # a value of the body's block
                        require(v in made, self, f"{op.name} reads %{v.name_hint or '?'} ({v.type}) before {v.owner.name} makes it")
            made.update(top.results)

    def _verify_launch_facts(self, grid: dict[str, int], sizes: dict[str, int]) -> None:
        """What hbm-launch and smem-to-reg write on a kernel for the passes below (their
        types the properties declare): each in its range, and naming the kernel's own axes."""

        def count(name: str, attr: IntegerAttr | None, least: int, most: int | None = None) -> None:
            n = attr.value.data if attr is not None else least
            require(n >= least and (most is None or n <= most), self,
                    f"{name} must be {'at least ' + str(least) if most is None else f'{least} to {most}'}, got {n}")

        count("hbm.group", self.group, 0)
        require(not self.group_rows or len(grid) == 2, self, f"hbm.group orders a two-axis grid; this one has {len(grid)} axes")
        count("hbm.blocks_per_sm", self.blocks_per_sm, 1, 32)
        count("hbm.cluster", self.cluster, 1, MAX_CLUSTER)
        if self.cluster_blocks > 1:
            split = self.split_axes()
            parts = prod(self.grid_shape()[a] for a in split) if split else 0
            require(self.cluster_blocks == parts if split else self.cluster_blocks <= 2, self,
                    f"hbm.cluster {self.cluster_blocks}: " + (f"a cluster spans the {parts} parts of the sums split over "
                                                               f"the grid ({', '.join(split)})" if split else
                                                               "a cluster of a grid without split sums pairs 2 blocks"))
        if self.order is not None:
            require(self.order.data in ("first", *ORDERS_LAST), self,
                    f"hbm.order must be \"first\", \"last\" or \"last_from_start\", got {self.order}")
        for axis, n in self.warp_grid.items():
            require(axis in sizes and n >= 1, self, f"reg.warps: '{axis}={n}' must name an axis of the kernel and at least one warp")

    def _verify_loop_facts(self, sizes: dict[str, int]) -> None:
        """What ncd-to-hbm, hbm-to-smem, smem-unroll-stages and reg-wgmma-overlap write on
        the loops of the body (`napkin_ir.dialects.loop_facts`): each fact of its type, the
        streamed axis one of the kernel's, and no stream loop that reads staged buffers
        without the pipeline that says how many stages they cycle through."""
        verify_loop_facts(self, sizes)


def check_axes(op: IRDLOperation, axes: Sequence[str], want: Sequence[str], whose: str, of: str, any_order: bool = False) -> None:
    """`axes` (`whose`, e.g. "the tile's") must be `want` (`of`'s), in order, or with
    `any_order` by name in any order."""
    if any_order:
        require(sorted(axes) == sorted(want), op, f"{whose} axes {list(axes)} must be {of} {list(want)}, in some order")
    else:
        require(tuple(axes) == tuple(want), op, f"{whose} axes {list(axes)} must be {of} {list(want)}, in order")


def check_tile_of_global(op: IRDLOperation, tile: NamedAxesType, glob: GlobalType, offsets: Sequence[SSAValue], what: str = "tile",
                         any_order: bool = False, summed: bool = False) -> None:
    """A tile (or buffer) of a global tensor: the same axes in the same order (in any
    order, with `any_order`: a tile the block computed is written by its axes' names), the
    same element type (an f32 part of a sum that is `summed` into a 16-bit global too), and
    one offset per axis. A tile may be longer than the global along an axis (one partial
    tile: what lies past the edge reads as zero and is not written)."""
    check_axes(op, tile.axis_names, glob.axis_names, f"the {what}'s", "the global's", any_order)
    require(tile.element_type == glob.element_type or summed, op,
            f"the {what}'s element type {tile.element_type} differs from the global's {glob.element_type}")
    require(len(offsets) == len(glob.axis_names), op, f"takes one offset per axis of the global ({len(glob.axis_names)}), got {len(offsets)}")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read the tile that starts at the given offsets (one per axis, in elements); elements
    past the global's edge read as zero.

        %a = hbm.load %A[%m0, %k0] : !hbm.global<m=512, k=256 : bf16> -> !ncd.tensor<m=128, k=32 : bf16>
    """

    name = "hbm.load"
    source = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    result = result_def(TensorType)
    traits = traits_def()
    assembly_format = "$source `[` $offsets `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, offsets: Sequence[SSAValue], tile: TensorType):
        super().__init__(operands=[source, list(offsets)], result_types=[tile])

    def verify_(self) -> None:
        check_tile_of_global(self, self.result.type, self.source.type, self.offsets)  # type: ignore[arg-type]


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write the part of a tile that lies inside the global tensor, at the given offsets
    (one per axis of the global; the tile's axes, by name, in any order: a product computed
    transposed is written as it lies). With `accumulate`, an f32 tile is this block's part of
    a sum that blocks splitting a contraction axis add up: added to what an f32 global holds
    (zeroed before the launch, or written by the first part where the kernel's parts take
    turns, `hbm.ordered_sums`); into a 16-bit global, the parts are summed in f32, in their
    order, by the last to finish (in a scratch of the kernel's), and the whole sum rounded.

        hbm.store %c, %C[%m0, %n0] : !ncd.tensor<m=128, n=128 : bf16>, !hbm.global<m=512, n=384 : bf16>
        hbm.store %c, %C[%m0, %n0] {accumulate} : !ncd.tensor<m=128, n=128 : f32>, !hbm.global<m=512, n=384 : f32>
        hbm.store %c, %C[%m0, %n0] {accumulate} : !ncd.tensor<m=128, n=128 : f32>, !hbm.global<m=512, n=384 : bf16>
    """

    name = "hbm.store"
    value = operand_def(TensorType)
    dest = operand_def(GlobalType)
    offsets = var_operand_def(IndexType)
    accumulate = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `,` $dest `[` $offsets `]` attr-dict `:` type($value) `,` type($dest)"

    def __init__(self, value: SSAValue, dest: SSAValue, offsets: Sequence[SSAValue], accumulate: bool = False):
        super().__init__(operands=[value, dest, list(offsets)], properties={"accumulate": UnitAttr()} if accumulate else {})

    def verify_(self) -> None:
        check_tile_of_global(self, self.value.type, self.dest.type, self.offsets, any_order=True,  # type: ignore[arg-type]
                             summed=self.accumulate is not None)
        if self.accumulate is not None:
            require(self.value.type.dtype == "f32", self,  # type: ignore[attr-defined]
                    f"accumulate adds f32 parts of a sum (parts rounded to {self.value.type.dtype} would not add up)")  # type: ignore[attr-defined]


@irdl_op_definition
class FillOp(IRDLOperation):
    """A tile with every element `value` (an accumulator's start).

        %z = hbm.fill {value = 0.0 : f32} : !ncd.tensor<m=128, n=128 : f32>
    """

    name = "hbm.fill"
    value = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: float, tile: TensorType):
        super().__init__(properties={"value": FloatAttr(value, f32)}, result_types=[tile])


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """End of a kernel's body."""

    name = "hbm.return"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"


def enclosing_kernel(op: Operation) -> KernelOp | None:
    """The `hbm.kernel` that holds `op`, if any."""
    k = op.parent_op()
    while k is not None and not isinstance(k, KernelOp):
        k = k.parent_op()
    return k


HBM = Dialect("hbm", [KernelOp, LoadOp, StoreOp, FillOp, ReturnOp], [GlobalType, LabelsAttr, StreamAttr])

__all__ = ["HBM", "MAX_CLUSTER", "FillOp", "GlobalType", "KernelOp", "LabelsAttr", "LoadOp", "ReturnOp", "StoreOp", "StreamAttr", "format_labels", "parse_labels"]
