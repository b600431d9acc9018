"""Lower xDSL's `arith`, `cf` and `func` to `ptx`: the index and scalar arithmetic that
the levels above leave between their own ops, and the kernel entry itself.

`convert-arith-to-ptx` rewrites, in each function marked as a kernel, every value to a
virtual register (index and i32 to b32, i64 to b64, i1 to pred, f32 to f32 ...),
every arith op to its PTX instruction, `cf.br`/`cf.cond_br` to `ptx.bra`/`ptx.cond_bra`,
and the function to a `ptx.kernel` whose arguments are loaded from `.param` space.
`builtin.unrealized_conversion_cast` between a builtin type and the register it lowers
to disappears, which is how hand-written `ptx` ops meet arith values in one function.
Index is 32-bit on the device: address arithmetic widens explicitly (`mul.wide`).

Unsigned division and remainder by a constant are strength-reduced here: ptxas does not
do it (it expands `div.u32 x, 176` into a reciprocal in floating point and two rounds of
correction, some forty instructions, where a pipeline's stage index needs three).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, func
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from napkin_ir.dialects.ptx import ops as P
from napkin_ir.dialects.ptx.registers import RegType


class LoweringError(DiagnosticException):
    pass


def reg_type_for(t: Attribute) -> RegType:
    if isinstance(t, RegType):
        return t
    if isinstance(t, builtin.IndexType):
        return RegType("b32")
    if isinstance(t, builtin.IntegerType):
        width = t.width.data
        if width == 1:
            return RegType("pred")
        if width in (16, 32, 64):
            return RegType(f"b{width}")
    if isinstance(t, builtin.Float32Type):
        return RegType("f32")
    if isinstance(t, builtin.Float64Type):
        return RegType("f64")
    if isinstance(t, builtin.Float16Type):
        return RegType("f16")
    if isinstance(t, builtin.BFloat16Type):
        return RegType("bf16")
    raise LoweringError(f"no PTX register for type {t}")


def _ptx_type(t: Attribute, signed: bool = True) -> str:
    """The instruction type suffix for a builtin type (.s32, .u64, .f32 ...)."""
    if isinstance(t, builtin.IndexType):
        return "s32" if signed else "u32"
    if isinstance(t, builtin.IntegerType):
        w = t.width.data
        return "pred" if w == 1 else f"{'s' if signed else 'u'}{w}"
    for cls, name in ((builtin.Float32Type, "f32"), (builtin.Float64Type, "f64"), (builtin.Float16Type, "f16"), (builtin.BFloat16Type, "bf16")):
        if isinstance(t, cls):
            return name
    raise LoweringError(f"no PTX instruction type for {t}")


def _bits(t: Attribute) -> str:
    return "pred" if _ptx_type(t) == "pred" else f"b{_ptx_type(t)[1:]}" if _ptx_type(t)[0] in "su" else _ptx_type(t)


# (op class) -> (ptx op class, signed?, modifiers for floats, modifiers for ints)
_BINARY: dict[type[Operation], tuple[type[P.ArithOp], bool | None, str | None, str | None]] = {
    arith.AddiOp: (P.AddOp, True, None, None),
    arith.SubiOp: (P.SubOp, True, None, None),
    arith.MuliOp: (P.MulOp, True, None, "lo"),
    arith.DivSIOp: (P.DivOp, True, None, None),
    arith.DivUIOp: (P.DivOp, False, None, None),
    arith.RemSIOp: (P.RemOp, True, None, None),
    arith.RemUIOp: (P.RemOp, False, None, None),
    arith.MinSIOp: (P.MinOp, True, None, None),
    arith.MaxSIOp: (P.MaxOp, True, None, None),
    arith.MinUIOp: (P.MinOp, False, None, None),
    arith.MaxUIOp: (P.MaxOp, False, None, None),
    arith.AddfOp: (P.AddOp, None, "rn", None),
    arith.SubfOp: (P.SubOp, None, "rn", None),
    arith.MulfOp: (P.MulOp, None, "rn", None),
    arith.DivfOp: (P.DivOp, None, "rn", None),
    arith.MaximumfOp: (P.MaxOp, None, None, None),
    arith.MinimumfOp: (P.MinOp, None, None, None),
}
_LOGIC = {arith.AndIOp: P.AndOp, arith.OrIOp: P.OrOp, arith.XOrIOp: P.XorOp}
_SHIFTS = {arith.ShLIOp: (P.ShlOp, "b"), arith.ShRSIOp: (P.ShrOp, "s"), arith.ShRUIOp: (P.ShrOp, "u")}
_CMPI = {"eq": ("eq", True), "ne": ("ne", True), "slt": ("lt", True), "sle": ("le", True), "sgt": ("gt", True), "sge": ("ge", True),
         "ult": ("lt", False), "ule": ("le", False), "ugt": ("gt", False), "uge": ("ge", False)}
_CMPF = {"oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le", "one": "ne", "ord": "num",
         "ueq": "equ", "ugt": "gtu", "uge": "geu", "ult": "ltu", "ule": "leu", "une": "neu", "uno": "nan"}


def unsigned_magic(d: int, bits: int = 32) -> tuple[int, int, int, bool]:
    """(pre, m, post, add) such that, for every x below 2**bits, x // d is
    - x >> pre where m == 0 (d is 2**pre);
    - (((x >> pre) * m) >> bits) >> post where not `add`;
    - with h = (x * m) >> bits, (h + ((x - h) >> 1)) >> post where `add` (pre is 0).

    The plain form: with d' = d >> pre, k = bits + post and m = ceil(2**k / d'), x m / 2**k
    is x / d' + x e / (d' 2**k), e = m d' - 2**k; the floor is unchanged while x e < 2**k,
    since x / d' falls short of the next integer by at least 1 / d'. Some odd divisors (7)
    need a multiplier of bits + 1 bits: `add` keeps its low bits and adds the top one back
    as (x - h) / 2 + h, which cannot overflow (Granlund and Montgomery, 1994)."""
    if d <= 0 or d >= 1 << bits:
        raise ValueError(f"no unsigned {bits}-bit division by {d}")
    pre = (d & -d).bit_length() - 1
    odd = d >> pre
    if odd == 1:
        return pre, 0, 0, False
    top = (1 << (bits - pre)) - 1
    for post in range(bits):
        k = bits + post
        m = -(-(1 << k) // odd)
        if m >= 1 << bits:
            break
        if top * (m * odd - (1 << k)) < 1 << k:
            return pre, m, post, False
    log = (d - 1).bit_length()
    return 0, ((1 << bits) * ((1 << log) - d)) // d + 1, log - 1, True


def divide_by_constant(x: SSAValue, d: int, ty: str, remainder: bool) -> tuple[list[Operation], SSAValue] | None:
    """The instructions for x // d (or x % d) of unsigned `ty` by shifts, masks and a high
    multiply (only shifts and masks at 64 bits); None where there is no such form (the
    caller divides)."""
    bits = int(ty[1:])
    if d <= 0 or d >= 1 << bits or (bits != 32 and d & (d - 1)):
        return None
    pre, m, post, add = unsigned_magic(d, bits)
    rt = x.type
    ops: list[Operation] = []

    def emit(o: Operation) -> SSAValue:
        ops.append(o)
        return o.results[0]

    def const(v: int, t: str = ty) -> SSAValue:
        return emit(P.ConstOp(t, v, rt if t == ty else RegType("b32")))

    def shr(v: SSAValue, n: int) -> SSAValue:
        return emit(P.ShrOp(ty, v, const(n, "u32"))) if n else v

    if m == 0 and remainder:
        return ops, emit(P.AndOp(f"b{bits}", x, const(d - 1)))
    q = shr(x, pre)
    if m:
        h = emit(P.MulOp(ty, q, const(m), mods="hi"))
        q = shr(emit(P.AddOp(ty, h, shr(emit(P.SubOp(ty, x, h)), 1))) if add else h, post)
    if not remainder:
        return ops, q
    return ops, emit(P.SubOp(ty, x, emit(P.MulOp(ty, q, const(d), mods="lo"))))


class ArithLowering:
    def __init__(self):
        self.values: dict[SSAValue, SSAValue] = {}

    def get(self, v: SSAValue) -> SSAValue:
        return self.values.get(v, v)

    def lower_op(self, op: Operation) -> list[Operation]:
        g = self.get
        if isinstance(op, arith.ConstantOp):
            t = op.result.type
            v = op.value
            if isinstance(t, builtin.IntegerType) and t.width.data == 1:
                a, b = P.ConstOp("u32", 0, RegType("b32")), P.ConstOp("u32", int(v.value.data), RegType("b32"))  # type: ignore[union-attr]
                return [a, b, self._bind(op.result, P.SetpOp("ne", "u32", b.dsts[0], a.dsts[0]))]
            return [self._bind(op.result, P.ConstOp(_ptx_type(t, signed=False) if not isinstance(t, builtin.IndexType) else "s32",
                                                    v.value.data, reg_type_for(t)))]  # type: ignore[union-attr]
        if isinstance(op, arith.DivUIOp | arith.RemUIOp) and isinstance(c := op.operands[1].owner, arith.ConstantOp):
            reduced = divide_by_constant(g(op.operands[0]), c.value.value.data,  # type: ignore[union-attr]
                                         _ptx_type(op.results[0].type, signed=False), isinstance(op, arith.RemUIOp))
            if reduced is not None:
                ops, out = reduced
                self.values[op.results[0]] = out
                return ops
        if type(op) in _BINARY:
            cls, signed, fmods, imods = _BINARY[type(op)]
            t = op.results[0].type
            ty = _ptx_type(t, signed=bool(signed))
            mods = fmods if ty[0] == "f" else imods
            return [self._bind(op.results[0], cls(ty, g(op.operands[0]), g(op.operands[1]), result=reg_type_for(t), mods=mods))]
        if type(op) in _LOGIC:
            t = op.results[0].type
            return [self._bind(op.results[0], _LOGIC[type(op)](_bits(t), g(op.operands[0]), g(op.operands[1]), result=reg_type_for(t)))]
        if type(op) in _SHIFTS:
            cls, kind = _SHIFTS[type(op)]
            t = op.results[0].type
            ty = _bits(t) if kind == "b" else _ptx_type(t, signed=kind == "s")
            amount, pre = g(op.operands[1]), []
            if reg_type_for(t).cls.data != "b32":  # PTX shift amounts are always 32-bit
                pre = [P.CvtOp("u32", _ptx_type(t, signed=False), [amount], RegType("b32"))]
                amount = pre[0].dsts[0]
            return pre + [self._bind(op.results[0], cls(ty, g(op.operands[0]), amount, result=reg_type_for(t)))]
        if isinstance(op, arith.NegfOp):
            return [self._bind(op.result, P.NegOp(_ptx_type(op.result.type), g(op.operand)))]
        if isinstance(op, arith.CmpiOp):
            cmp, signed = _CMPI[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
            return [self._bind(op.result, P.SetpOp(cmp, _ptx_type(op.lhs.type, signed), g(op.lhs), g(op.rhs)))]
        if isinstance(op, arith.CmpfOp):
            name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            if name not in _CMPF:
                raise LoweringError(f"arith.cmpf {name} has no PTX comparison")
            return [self._bind(op.result, P.SetpOp(_CMPF[name], _ptx_type(op.lhs.type), g(op.lhs), g(op.rhs)))]
        if isinstance(op, arith.SelectOp):
            t = op.result.type
            ty = "pred" if _ptx_type(t) == "pred" else _bits(t) if _ptx_type(t)[0] in "su" else _ptx_type(t)
            if ty == "pred":
                raise LoweringError("arith.select of i1 values: use arith.andi/ori")
            return [self._bind(op.result, P.SelpOp(ty, g(op.lhs), g(op.rhs), g(op.cond)))]
        if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp):
            src_t, dst_t = op.operands[0].type, op.results[0].type
            signed = not isinstance(op, arith.ExtUIOp)
            s, d = _ptx_type(src_t, signed), _ptx_type(dst_t, signed)
            if s[1:] == d[1:]:
                return [self._bind(op.results[0], P.MovOp(_bits(dst_t), [g(op.operands[0])], [reg_type_for(dst_t)]))]
            return [self._bind(op.results[0], P.CvtOp(d, s, [g(op.operands[0])], reg_type_for(dst_t)))]
        if isinstance(op, arith.SIToFPOp | arith.UIToFPOp | arith.FPToSIOp | arith.FPToUIOp | arith.ExtFOp | arith.TruncFOp):
            signed = not isinstance(op, arith.UIToFPOp | arith.FPToUIOp)
            src_t, dst_t = op.operands[0].type, op.results[0].type
            s, d = _ptx_type(src_t, signed), _ptx_type(dst_t, signed)
            rnd = "rzi" if isinstance(op, arith.FPToSIOp | arith.FPToUIOp) else None if isinstance(op, arith.ExtFOp) else "rn"
            return [self._bind(op.results[0], P.CvtOp(d, s, [g(op.operands[0])], reg_type_for(dst_t), mods=rnd))]
        if isinstance(op, builtin.UnrealizedConversionCastOp):
            for r, o in zip(op.results, op.operands):
                self.values[r] = g(o)
            return []
        if isinstance(op, cf.BranchOp):
            return [P.BraOp(op.successor, *[g(a) for a in op.arguments])]
        if isinstance(op, cf.ConditionalBranchOp):
            return [P.CondBraOp(g(op.cond), op.then_block, [g(a) for a in op.then_arguments], op.else_block, [g(a) for a in op.else_arguments])]
        if isinstance(op, func.ReturnOp):
            if op.arguments:
                raise LoweringError("a kernel returns nothing: write results through memory")
            return [P.RetOp()]
        if isinstance(op, P.PtxOp | P.KernelOp):
            for n, o in enumerate(op.operands):
                if o in self.values:
                    op.operands[n] = self.values[o]
            return [op]
        raise LoweringError(f"{op.name} has no lowering to ptx")

    def _bind(self, old: SSAValue, new: Operation) -> Operation:
        self.values[old] = new.results[0]
        return new


PARAM_TYPE = {"b32": "u32", "b64": "u64", "f32": "f32", "f64": "f64"}


def lower_function(f: func.FuncOp) -> P.KernelOp:
    """Lower one function (its body already in cf form) to a ptx.kernel."""
    lw = ArithLowering()
    old_blocks = list(f.body.blocks)
    # arguments listed in `ptx.tensormap_args` are TMA tensor maps passed by value; the
    # function sees their generic address (an i64)
    tmaps_attr = f.attributes.get("ptx.tensormap_args")
    tmaps = {x.value.data for x in tmaps_attr.data} if isinstance(tmaps_attr, builtin.ArrayAttr) else set()
    params = []
    for n, a in enumerate(old_blocks[0].args):
        rt = reg_type_for(a.type)
        if n in tmaps:
            if rt.cls.data != "b64":
                raise LoweringError(f"@{f.sym_name.data}: tensor map argument #{n} must be an i64 (its address), got {a.type}")
            params.append((f"{f.sym_name.data}_param_{n}", "tensormap"))
            continue
        if rt.cls.data not in PARAM_TYPE:
            raise LoweringError(f"@{f.sym_name.data}: argument #{n} of type {a.type} cannot be a kernel parameter")
        params.append((f"{f.sym_name.data}_param_{n}", PARAM_TYPE[rt.cls.data]))
    new_blocks = [Block(arg_types=[reg_type_for(a.type) for a in b.args]) for b in old_blocks[1:]]
    entry = Block()
    block_map = dict(zip(old_blocks[1:], new_blocks))
    for n, a in enumerate(old_blocks[0].args):
        if params[n][1] == "tensormap":
            addr = P.AddrOfOp(params[n][0], RegType("b64"))
            ld = P.CvtaOp("param", addr.dsts[0], to=False)
            entry.add_op(addr)
        else:
            ld = P.LdParamOp(params[n][0], PARAM_TYPE[reg_type_for(a.type).cls.data], reg_type_for(a.type))
        entry.add_op(ld)
        lw.values[a] = ld.dsts[0]
    for ob, nb in zip(old_blocks[1:], new_blocks):
        for a, na in zip(ob.args, nb.args):
            lw.values[a] = na
    for ob, nb in zip(old_blocks, [entry, *new_blocks]):
        for op in list(ob.ops):
            op.detach()
            for new in lw.lower_op(op):
                for k, s in enumerate(new.successors):
                    if s in block_map:
                        new.successors[k] = block_map[s]
                nb.add_op(new)
    kernel = P.KernelOp(f.sym_name.data, params, Region([entry, *new_blocks]))
    # launch bounds and shared declarations written on the function carry over
    for key in ("maxntid", "reqntid", "shared", "dynamic_shared", "minnctapersm"):
        v = f.attributes.get(f"ptx.{key}")
        if v is not None:
            kernel.properties[key] = v
    kernel.verify()
    return kernel


@dataclass(frozen=True)
class ConvertArithToPtxPass(ModulePass):
    """Lower functions marked `ptx.kernel` (or all, with `all_functions=true`), with their
    arith, cf and scf ops, to `ptx.kernel`s."""

    name = "convert-arith-to-ptx"
    all_functions: bool = False

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

        ConvertScfToCf().apply(ctx, op)
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            if not f.body.blocks or not (self.all_functions or "ptx.kernel" in f.attributes):
                continue
            kernel = lower_function(f)
            Rewriter.replace_op(f, kernel)


