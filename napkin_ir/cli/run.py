"""`napkin-run`: execute a module on the CPU through the interpreters, or compiled on the
GPU, and report its outputs.

    napkin-run examples/attention.mlir --random-inputs --seed 0 --check
    napkin-run examples/matmul.mlir --gpu napkin-sm90 --random-inputs --check
    napkin-run grads.mlir --function attention_grad --inputs in.npz --outputs out.npz

prints each output's axes, element type and a checksum; `--check` compares with the
diagram evaluated in float64 by numpy (`napkin_ir.reference_eval`, written apart from the
interpreters), whatever the function is called; `--reference NAME` picks one of the named
references of `napkin_ir.reference` instead (a kernel below the ncd level, with no diagram
left to evaluate, gets the one its name gives, and says so).
`--gpu PIPELINE` compiles the diagram with that pipeline (`napkin-sm80`, `napkin-sm90`,
with options) and runs the kernel through the runtime on the same inputs, its output
poisoned with NaN first. Where no GPU or driver is present, a compiled sm_80 kernel runs
in the warp-level PTX emulator (`napkin_ir/interpreters/ptx.py`) instead, and the output
says so; anything else (sm_90a's TMA and wgmma, a kernel too large to emulate) did not
run, the output says that plainly, and `--check` then fails: it checks compiled code,
never the interpreter against itself.
`--inputs FILE.npz` reads the arguments from a numpy archive, each under its argument's
name (`q`, as the IR spells `%q`) or its position (`arg0`, `arg1`, ...); `--outputs
FILE.npz` saves the results as `result0`, `result1`, ... (float32, holding the values of
each result's element type), so that a run, a gradient's above all, can be checked from
outside.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import OpResult
from xdsl.parser import Parser

from napkin_ir import reference, registry
from napkin_ir.cli.diagnostics import fail, guarded, refuse_overwriting_inputs
from napkin_ir.errors import UserError, check_size
from napkin_ir.files import atomic_output
from napkin_ir.interpreters.run import Entry, find_entry, find_function
from napkin_ir.interpreters.tensors import STORAGE_DTYPES, round_to
from napkin_ir.passes.widen_results import result_scales
from napkin_ir.runtime.arrays import normalize_dtype

TOOL = "napkin-run"
# multiply-adds the PTX emulator is given (about 4 s for examples/matmul.mlir's 50 million)
EMULATE_MACS = 1 << 28


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        fail(TOOL, f"{message} (see napkin-run --help)", code=2)


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is a non-negative integer, got {value}")
    return value


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = _Parser(prog=TOOL, description="run a napkin module on the CPU")
    p.add_argument("input_file", nargs="?", default="-", help="module to run (stdin when '-' or missing)")
    p.add_argument("--function", help="the function to run (default: the only one with a body)")
    p.add_argument("--random-inputs", action="store_true", help="feed standard-normal inputs, rounded to each argument's type")
    p.add_argument("--seed", type=_seed, default=0, help="seed for --random-inputs (default 0)")
    p.add_argument("--inputs", metavar="FILE.npz", help="read the arguments from FILE.npz, by argument name or as arg0, arg1, ...")
    p.add_argument("--outputs", metavar="FILE.npz", help="save the results to FILE.npz as result0, result1, ...")
    p.add_argument("--check", action="store_true",
                   help="compare with the diagram evaluated in float64 (or with --reference NAME)")
    p.add_argument("--reference", metavar="NAME", choices=list(reference.REFERENCES),
                   help=f"the named float64 reference --check compares with ({', '.join(reference.REFERENCES)})")
    p.add_argument("--gpu", metavar="PIPELINE", help="compile with PIPELINE (e.g. napkin-sm90) and run on the GPU")
    return p.parse_args(argv)


def _check_host_memory(entry: Entry) -> None:
    """Refuse, before any array is made, inputs and outputs that cannot fit in memory: each
    element is held in float32 and, for the reference, float64."""
    elements = sum(math.prod(t.dims) for t in (*entry.inputs, *entry.outputs))
    shapes = ", ".join(f"<{', '.join(f'{a}={s}' for a, s in t.shape.items())}>" for t in (*entry.inputs, *entry.outputs))
    check_size(f"running @{entry.name} on the CPU ({shapes})", elements, 12)


def _diagram(module: ModuleOp, entry: Entry) -> func.FuncOp | None:
    """The function `entry` runs, where it is still a diagram (not a kernel)."""
    from napkin_ir.dialects import hbm

    return None if any(isinstance(op, hbm.KernelOp) for op in module.walk()) else find_function(module, entry.name)


def _result_scales(module: ModuleOp, entry: Entry) -> list[float | None]:
    """Each result's constant factor that `ncd-widen-results` left to the caller (`ncd.scale`)."""
    f = _diagram(module, entry)
    return result_scales(f) if f is not None else [None] * len(entry.outputs)


def _run(args: argparse.Namespace) -> int:
    if not args.random_inputs and not args.inputs:
        raise UserError("no inputs: pass --random-inputs (with --seed N) to run on random data, or --inputs FILE.npz")
    if args.random_inputs and args.inputs:
        raise UserError("--random-inputs and --inputs both give the inputs; pass one")
    refuse_overwriting_inputs([("--outputs", args.outputs)], [args.input_file, args.inputs])
    if args.input_file == "-":
        text, name = sys.stdin.buffer.read().decode(), "<stdin>"
    else:
        with open(args.input_file, "rb") as fh:
            text, name = fh.read().decode(), args.input_file
    module = Parser(registry.make_context(), text, name).parse_module()
    module.verify()
    entry = find_entry(module, args.function)
    _check_host_memory(entry)
    inputs = _read_inputs(args.inputs, entry) if args.inputs else entry.random_inputs(args.seed)
    outputs, ran = _run_compiled(args.gpu, text, name, entry, inputs, _work(module, entry)) if args.gpu else \
        (None, "the diagram's interpretation on the CPU")
    if outputs is None:
        outputs = entry.run(inputs)
    scales = _result_scales(module, entry)
    for n, (y, t) in enumerate(zip(outputs, entry.outputs)):
        axes = ", ".join(f"{a}={s}" for a, s in t.shape.items())
        left = f"  (ncd.scale: the result is this times {scales[n]:.9g}, left to the caller)" if scales[n] is not None else ""
        print(f"@{entry.name} output #{n}: <{axes}> {t.dtype}  sum={float(np.sum(y, dtype=np.float64)):.6e}  abs_sum={float(np.sum(np.abs(y), dtype=np.float64)):.6e}{left}")
    if args.outputs:
        with atomic_output(args.outputs, "wb") as out:
            np.savez(out, **{f"result{n}": np.asarray(y, np.float32) for n, y in enumerate(outputs)})
    if not args.check:
        return 0
    if ran is None:
        print(f"check: FAILED: the compiled code did not run, so --gpu {args.gpu} --check has nothing compiled to check "
              "(the outputs above are the diagram's interpretation on the CPU)")
        return 1
    refs, what = _references(args, module, entry, inputs)
    if len(refs) != len(outputs):
        raise UserError(f"the reference gives {len(refs)} outputs, @{entry.name} has {len(outputs)}")
    print(f"checking {ran} against {what}")
    ok = True
    for n, (out, ref, t) in enumerate(zip(outputs, refs, entry.outputs)):
        if ref.shape != out.shape:
            raise UserError(f"the reference for @{entry.name} gives shape {ref.shape}, the function {out.shape}: axes in another order?")
        err = reference.relative_error(out, ref)
        dtype = _working_dtype(module, entry, n)
        tol = reference.TOLERANCE[dtype]
        ok &= err <= tol
        which = f" output #{n}" if len(outputs) > 1 else ""
        held = f"{t.dtype} computed through {dtype}" if dtype != t.dtype else dtype
        print(f"check{which} against float64 reference: relative error {err:.3e} (bound {tol:.0e} for {held}): "
              f"{'ok' if err <= tol else 'FAILED'}")
    return 0 if ok else 1


def _read_inputs(path: str, entry: Entry) -> list[np.ndarray]:
    """The arguments of `entry` from the archive at `path`, each under its name or argN,
    checked against its shape and rounded to its element type."""
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as e:
        raise UserError(f"--inputs {path}: cannot read it: {e.strerror or e}") from e
    except ValueError as e:
        raise UserError(f"--inputs {path}: not a numpy .npz archive (np.savez writes one, arrays by argument name)") from e
    if not hasattr(archive, "files"):
        raise UserError(f"--inputs {path}: holds one array, not an .npz archive of arrays by argument name (np.savez)")
    with archive:
        names = list(entry.input_names) + [None] * (len(entry.inputs) - len(entry.input_names))
        keys = [f"arg{n}" if name is None else name for n, name in enumerate(names)]
        wanted = ", ".join(k if k == f"arg{n}" else f"{k} (or arg{n})" for n, k in enumerate(keys))
        unknown = [k for k in archive.files if k not in keys and k not in (f"arg{n}" for n in range(len(keys)))]
        if unknown:
            raise UserError(f"--inputs {path}: {', '.join(unknown)} names no argument of @{entry.name}, which takes {wanted}")
        inputs = []
        for n, (key, t) in enumerate(zip(keys, entry.inputs)):
            both = [k for k in dict.fromkeys((key, f"arg{n}")) if k in archive.files]
            if not both:
                raise UserError(f"--inputs {path}: no array for argument #{n} of @{entry.name} ({key}); the file has "
                                f"{', '.join(archive.files) or 'none'}, @{entry.name} takes {wanted}")
            if len(both) > 1:
                raise UserError(f"--inputs {path}: argument #{n} of @{entry.name} is given twice, as {both[0]} and {both[1]}")
            x = archive[both[0]]
            if tuple(x.shape) != t.dims:
                axes = ", ".join(f"{a}={s}" for a, s in t.shape.items())
                raise UserError(f"--inputs {path}: {both[0]} has shape {tuple(x.shape)}, but argument #{n} of @{entry.name} "
                                f"is <{axes}>, shape {t.dims}")
            if x.dtype == np.dtype("V2") and t.dtype == "bf16":  # how np.savez keeps ml_dtypes' bfloat16
                x = x.view(STORAGE_DTYPES["bf16"])
            if x.dtype.kind in "cOSUVMm" and x.dtype.name != "bfloat16":
                raise UserError(f"--inputs {path}: {both[0]} holds {x.dtype} values; arguments take real numbers")
            inputs.append(round_to(t.dtype, x))
    return inputs


def _working_dtype(module: ModuleOp, entry: Entry, n: int) -> str:
    """The element type that bounds output `n`'s error: the loosest of the types the values
    computed on its way are rounded to (an f32 sum of products of a bf16-rounded dS is as
    good as bf16; the inputs are exact as given), where a diagram is left, else its own."""
    loosest = entry.outputs[n].dtype
    f = _diagram(module, entry)
    ret = f.body.block.last_op if f is not None else None
    types, seen, todo = [], set(), [ret.operands[n]] if isinstance(ret, func.ReturnOp) else []
    while todo:
        v = todo.pop()
        if v not in seen and isinstance(v, OpResult):
            seen.add(v)
            types.append(getattr(v.type, "dtype", None))
            todo.extend(v.op.operands)
    for dtype in types:
        if dtype in reference.TOLERANCE and reference.TOLERANCE[dtype] > reference.TOLERANCE[loosest]:
            loosest = dtype
    return loosest


def _references(args: argparse.Namespace, module, entry: Entry, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], str]:
    """The float64 outputs --check compares with, and what they are."""
    from napkin_ir import reference_eval
    from napkin_ir.dialects import hbm

    named = args.reference
    is_kernel = any(isinstance(op, hbm.KernelOp) for op in module.walk())
    if named is None and not is_kernel:
        return reference_eval.evaluate(find_function(module, entry.name), inputs), "the diagram evaluated in float64"
    why = ""
    if named is None:
        named, why = entry.name, ", chosen by the kernel's name: below the ncd level no diagram is left to evaluate"
        if named not in reference.REFERENCES:
            raise UserError(f"@{entry.name} is a kernel, with no diagram left to evaluate in float64, and no named reference "
                            f"has its name; pick one with --reference ({', '.join(reference.REFERENCES)}), or check the "
                            "diagram before lowering")
    if len(entry.outputs) != 1:
        raise UserError(f"--reference {named} gives one output, @{entry.name} has {len(entry.outputs)}")
    try:
        return [reference.REFERENCES[named](*inputs)], f"the float64 reference {named!r}{why}"
    except (ValueError, TypeError) as e:
        expected = [t.dims for t in entry.inputs]
        raise UserError(f"the reference {named!r} does not accept arguments of shapes {expected}: {e}") from e


def _work(module, entry: Entry) -> int:
    """About how many multiply-adds the kernel does: its diagram's contractions, or, for a
    kernel with no diagram left, its tensors' elements a hundred times over."""
    from napkin_ir import reference_eval
    from napkin_ir.dialects import hbm

    if any(isinstance(op, hbm.KernelOp) for op in module.walk()):
        return 100 * sum(math.prod(t.dims) for t in (*entry.inputs, *entry.outputs))
    return max(reference_eval.macs(find_function(module, entry.name)), sum(math.prod(t.dims) for t in entry.outputs))


def _run_compiled(pipeline: str, text: str, name: str, entry: Entry, inputs: list[np.ndarray],
                  work: int) -> tuple[list[np.ndarray] | None, str | None]:
    """Compile with `pipeline` and run the kernel: on the GPU, or where there is none in the
    PTX emulator; (outputs, what ran them), or (None, None), after saying why, where the
    compiled code did not run."""
    from napkin_ir.build import compile_module
    from napkin_ir.runtime import DeviceArray, DriverUnavailableError, get_context
    from napkin_ir.runtime.driver import CudaError

    ptx_module, kernel = compile_module(text, pipeline, name=name)
    arch = _ptx_target(kernel.ptx)
    print(f"compiled @{entry.name} with {pipeline}: {len(kernel.ptx.splitlines())} lines of {arch} PTX, "
          f"grid {kernel.grid}, {kernel.block[0]} threads, {kernel.smem} bytes of shared memory")
    try:
        ctx = get_context()
    except (DriverUnavailableError, CudaError) as e:
        return _emulate(ptx_module, arch, f"no GPU here ({str(e).splitlines()[0]})", entry, inputs, work)
    capability = ctx.compute_capability()
    if capability < ((9, 0) if arch == "sm_90a" else (8, 0)):
        return _emulate(ptx_module, arch, f"the GPU here is sm_{''.join(map(str, capability))}, too old for {arch}", entry, inputs,
                        work)
    dtypes = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}
    arrays = [DeviceArray.from_numpy(x.astype(normalize_dtype(dtypes[t.dtype]))) for x, t in zip(inputs, entry.inputs)]
    outs = [DeviceArray.from_numpy(np.full(t.dims, np.nan, normalize_dtype(dtypes[t.dtype]))) for t in entry.outputs]
    kernel(**dict(zip(kernel.arg_names(), arrays + outs)))
    where = f"the compiled kernel on the GPU ({ctx.attribute('MULTIPROCESSOR_COUNT')}-multiprocessor sm_{''.join(map(str, capability))})"
    print(f"ran {where}")
    return [o.to_numpy().astype(np.float32) for o in outs], where


def _ptx_target(ptx: str) -> str:
    for line in ptx.splitlines():
        if line.strip().startswith(".target"):
            return line.split()[1].rstrip(",;")
    return "unknown-target"


def _emulate(ptx_module, arch: str, why: str, entry: Entry, inputs: list[np.ndarray],
             work: int) -> tuple[list[np.ndarray] | None, str | None]:
    """The compiled kernel run in the PTX emulator, where it can run there."""
    from napkin_ir.interpreters.ptx import HALF, run_kernel

    if arch != "sm_80":
        print(f"{why}; the PTX emulator runs sm_80 kernels, not {arch}: the compiled code did not run "
              "(the outputs below are the diagram's interpretation on the CPU)")
        return None, None
    if work > EMULATE_MACS:
        print(f"{why}; the kernel's {work:,} multiply-adds are more than the PTX emulator is given ({EMULATE_MACS:,}): "
              "the compiled code did not run (the outputs below are the diagram's interpretation on the CPU)")
        return None, None
    numpy_types = {**HALF, "f32": np.float32}
    arrays = [x.astype(numpy_types[t.dtype]) for x, t in zip(inputs, entry.inputs)]
    outs = [np.full(t.dims, np.nan, numpy_types[t.dtype]) for t in entry.outputs]
    run_kernel(ptx_module, [*arrays, *outs], lazy=True, reverse=True)
    print(f"{why}; ran the compiled {arch} PTX in the warp-level emulator (napkin_ir/interpreters/ptx.py)")
    return [o.astype(np.float32) for o in outs], f"the compiled {arch} PTX in the emulator"


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse_args(argv)
    raise SystemExit(guarded(TOOL, lambda: _run(args)))


if __name__ == "__main__":
    main()
