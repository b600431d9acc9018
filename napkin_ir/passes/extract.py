"""`ncd-extract`: one result of one function, as a diagram of its own.

    ncd-extract{function="matmul_grad" result=1}

keeps `@matmul_grad` alone in the module, returning only its result 1 (counted from 0),
with the ops that result does not need and the arguments it does not read removed, and
names it `@matmul_grad_<i>`, where `<i>` is the argument the result is the cotangent
of when `@matmul_grad` was made by `ncd-grad` (`@matmul_grad_b` for the cotangent of `%b`:
a gradient takes the forward's arguments first and returns their cotangents in order),
else the result's number. Each gradient of a diagram then compiles as a kernel of its own
family (a GEMM's dA and dB are GEMMs): the named pipelines compile one function a module.

    ncd-extract{function="attention_grad" value="delta"}
    ncd-extract{function="attention_grad" result=1 cut="delta"}

    ncd-extract{function="attention_grad" results="1,2" cut="delta"}

`results` keeps several results (comma-separated, in that order) as one function, named
by each one's suffix (`@attention_grad_k_v`): a kernel that computes them together (the
attention gradient's dK and dV share the scores and probabilities they recompute).
`value` returns the value of that name (`%delta`) instead of a result, as
`@attention_grad_delta`, or the values of several (`value="delta,lse_log2"`,
comma-separated, as `@attention_grad_delta_lse_log2`); `cut` (names, comma-separated) makes
each named value an argument of the extracted function, after its own, in place of the ops
that compute it. Together they split a diagram between kernels: the attention gradient's
row statistic D = rowsum(dO * O), a reduction with no product, is computed once by a kernel
of its own, and the kernels of dQ, dK and dV read it (and, after `ncd-fold-log2e`, the
log-sum-exp in base 2 that the same kernel writes beside it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class NcdExtractPass(ModulePass):
    name = "ncd-extract"
    function: str = ""
    result: int = 0
    results: str = ""
    value: str = ""
    cut: str = ""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        funcs = [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
        if not self.function:
            raise PassFailedException(f"ncd-extract: name the function (function=\"...\"); the module has "
                                      f"{', '.join('@' + f.sym_name.data for f in funcs) or 'none'}")
        chosen = [f for f in funcs if f.sym_name.data == self.function]
        if not chosen:
            raise PassFailedException(f"ncd-extract: no function @{self.function}; the module has "
                                      f"{', '.join('@' + f.sym_name.data for f in funcs) or 'none'}")
        (f,) = chosen
        ret = f.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        picked = self._picked()
        for r in picked:
            if not 0 <= r < len(ret.arguments):
                raise PassFailedException(f"ncd-extract: @{self.function} has {len(ret.arguments)} results; result={r} is not one")
        named = {v.name_hint: v for o in f.body.block.ops for v in o.results if v.name_hint}
        values = self._names(self.value)
        for name in values + self._names(self.cut):
            if name not in named:
                raise PassFailedException(f"ncd-extract: @{self.function} has no value %{name}; its named values are "
                                          f"{', '.join('%' + n for n in named) or 'none'}")
        if values:
            if self.result or self.results:
                raise PassFailedException("ncd-extract: give result= (or results=) or value=, not both")
            if len(set(values)) != len(values):
                raise PassFailedException(f'ncd-extract: value="{self.value}" should name each value once')
            kept, suffix = [named[name] for name in values], "_".join(values)
        else:
            kept, suffix = [ret.arguments[r] for r in picked], "_".join(self._suffix(f, r) for r in picked)
        for name in self._names(self.cut):
            if named[name] in kept:
                raise PassFailedException(f"ncd-extract: %{name} is what is extracted; it cannot also be cut")
            arg = f.body.block.insert_arg(named[name].type, len(f.body.block.args))
            arg.name_hint = name
            named[name].replace_all_uses_with(arg)
        for other in [x for x in op.body.block.ops if x is not f]:
            op.body.block.erase_op(other)
        ret.operands = kept
        self._erase_dead(f)
        unused = [a for a in f.body.block.args if not a.uses]
        for a in reversed(unused):
            f.body.block.erase_arg(a)
        f.function_type = func.FunctionType.from_lists([a.type for a in f.body.block.args], [v.type for v in kept])
        f.sym_name = builtin.StringAttr(f"{self.function}_{suffix}")

    def _picked(self) -> list[int]:
        if not self.results:
            return [self.result]
        if self.result:
            raise PassFailedException("ncd-extract: give result= or results=, not both")
        try:
            picked = [int(x) for x in self.results.split(",") if x.strip()]
        except ValueError:
            raise PassFailedException(f'ncd-extract: results="{self.results}" should be result numbers separated by commas') from None
        if not picked or len(set(picked)) != len(picked):
            raise PassFailedException(f'ncd-extract: results="{self.results}" should name each result once')
        return picked

    @staticmethod
    def _names(names: str) -> list[str]:
        return [n.strip().lstrip("%") for n in names.split(",") if n.strip()]

    def _suffix(self, f: func.FuncOp, result: int) -> str:
        """The name of the argument whose cotangent the result is, for a gradient `ncd-grad`
        made (`@f_grad` takes `@f`'s arguments first and returns one cotangent of each, in
        order), else the result's number."""
        args = f.body.block.args
        if f.sym_name.data.endswith("_grad") and result < len(args) and args[result].name_hint:
            return args[result].name_hint
        return str(result)

    @staticmethod
    def _erase_dead(f: func.FuncOp) -> None:
        changed = True
        while changed:
            changed = False
            for o in reversed(list(f.body.block.ops)):
                if o is not f.body.block.last_op and not any(r.uses for r in o.results):
                    f.body.block.erase_op(o)
                    changed = True
