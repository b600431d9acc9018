"""`napkin-run`: execute a module on the CPU through the interpreters, or compiled on the
GPU, and report its outputs.

    napkin-run examples/attention.mlir --random-inputs --seed 0 --check
    napkin-run examples/matmul.mlir --gpu napkin-sm90 --random-inputs --check
    napkin-run grads.mlir --function attention_grad --inputs in.npz --outputs out.npz

prints each output's axes, element type and a checksum; `--check` compares with an
independent float64 numpy reference (the examples have one, found by function name), or,
for a `--gpu` run of a diagram without one, with the diagram's own interpretation on the
CPU.
`--gpu PIPELINE` compiles the diagram with that pipeline (`napkin-sm80`, `napkin-sm90`,
with options) and runs the kernel through the runtime on the same inputs, its output
poisoned with NaN first; where no GPU or driver is present it says so and runs on the
CPU instead.
`--inputs FILE.npz` reads the arguments from a numpy archive, each under its argument's
name (`q`, as the IR spells `%q`) or its position (`arg0`, `arg1`, ...); `--outputs
FILE.npz` saves the results as `result0`, `result1`, ... (float32, holding the values of
each result's element type), so that a run, a gradient's above all, can be checked from
outside.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.parser import Parser

from napkin_ir import reference, registry
from napkin_ir.cli.diagnostics import guarded, refuse_overwriting_inputs
from napkin_ir.errors import UserError
from napkin_ir.files import atomic_output
from napkin_ir.interpreters.run import Entry, find_entry
from napkin_ir.interpreters.tensors import STORAGE_DTYPES, round_to
from napkin_ir.runtime.arrays import normalize_dtype


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="napkin-run", description="run a napkin module on the CPU")
    p.add_argument("input_file", nargs="?", default="-", help="module to run (stdin when '-' or missing)")
    p.add_argument("--function", help="the function to run (default: the only one with a body)")
    p.add_argument("--random-inputs", action="store_true", help="feed standard-normal inputs, rounded to each argument's type")
    p.add_argument("--seed", type=int, default=0, help="seed for --random-inputs (default 0)")
    p.add_argument("--inputs", metavar="FILE.npz", help="read the arguments from FILE.npz, by argument name or as arg0, arg1, ...")
    p.add_argument("--outputs", metavar="FILE.npz", help="save the results to FILE.npz as result0, result1, ...")
    p.add_argument("--check", action="store_true", help="compare with the independent float64 reference for the function")
    p.add_argument("--gpu", metavar="PIPELINE", help="compile with PIPELINE (e.g. napkin-sm90) and run on the GPU")
    return p.parse_args(argv)


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
    inputs = _read_inputs(args.inputs, entry) if args.inputs else entry.random_inputs(args.seed)
    outputs = _run_gpu(args.gpu, text, entry, inputs) if args.gpu else None
    if outputs is None:
        outputs = entry.run(inputs)
    for n, (y, t) in enumerate(zip(outputs, entry.outputs)):
        axes = ", ".join(f"{a}={s}" for a, s in t.shape.items())
        print(f"@{entry.name} output #{n}: <{axes}> {t.dtype}  sum={float(np.sum(y, dtype=np.float64)):.6e}  abs_sum={float(np.sum(np.abs(y), dtype=np.float64)):.6e}")
    if args.outputs:
        with atomic_output(args.outputs, "wb") as out:
            np.savez(out, **{f"result{n}": np.asarray(y, np.float32) for n, y in enumerate(outputs)})
    if not args.check:
        return 0
    ref_fn = reference.REFERENCES.get(entry.name)
    if ref_fn is None:
        if not args.gpu:
            raise UserError(f"no reference for @{entry.name} (--check knows {', '.join('@' + k for k in reference.REFERENCES)}); "
                            "without one, --check compares a --gpu run with the diagram's own interpretation on the CPU")
        refs, what = entry.run(inputs), "the diagram's own interpretation on the CPU"
    else:
        if len(entry.outputs) != 1:
            raise UserError(f"--check expects one output, @{entry.name} has {len(entry.outputs)}")
        expected = [t.dims for t in entry.inputs]
        try:
            refs, what = [ref_fn(*inputs)], "float64 reference"
        except (ValueError, TypeError) as e:
            raise UserError(f"the reference for @{entry.name} does not accept arguments of shapes {expected}: {e}") from e
    ok = True
    for n, (out, ref, t) in enumerate(zip(outputs, refs, entry.outputs)):
        if ref.shape != out.shape:
            raise UserError(f"the reference for @{entry.name} gives shape {ref.shape}, the function {out.shape}: axes in another order?")
        err = reference.relative_error(out, ref)
        tol = reference.TOLERANCE[t.dtype]
        ok &= err <= tol
        which = f" output #{n}" if len(outputs) > 1 else ""
        print(f"check{which} against {what}: relative error {err:.3e} (bound {tol:.0e} for {t.dtype}): {'ok' if err <= tol else 'FAILED'}")
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


def _run_gpu(pipeline: str, text: str, entry, inputs: list[np.ndarray]) -> list[np.ndarray] | None:
    """Compile with `pipeline` and run on the GPU; None (after saying why) without one."""
    from napkin_ir.runtime import DeviceArray, DriverUnavailableError, get_context
    from napkin_ir.build import compile_kernel
    from napkin_ir.runtime.driver import CudaError

    kernel = compile_kernel(text, pipeline)
    print(f"compiled @{entry.name} with {pipeline}: {len(kernel.ptx.splitlines())} lines of PTX, "
          f"grid {kernel.grid}, {kernel.block[0]} threads, {kernel.smem} bytes of shared memory")
    try:
        ctx = get_context()
    except (DriverUnavailableError, CudaError) as e:
        print(f"no GPU here ({str(e).splitlines()[0]}); running on the CPU instead")
        return None
    if ctx.compute_capability() < ((9, 0) if "sm90" in pipeline else (8, 0)):
        print(f"the GPU here is sm_{''.join(map(str, ctx.compute_capability()))}, too old for {pipeline}; running on the CPU instead")
        return None
    dtypes = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}
    arrays = [DeviceArray.from_numpy(x.astype(normalize_dtype(dtypes[t.dtype]))) for x, t in zip(inputs, entry.inputs)]
    outs = [DeviceArray.from_numpy(np.full(t.dims, np.nan, normalize_dtype(dtypes[t.dtype]))) for t in entry.outputs]
    kernel(**dict(zip(kernel.arg_names(), arrays + outs)))
    print(f"ran on {ctx.attribute('MULTIPROCESSOR_COUNT')}-multiprocessor sm_{''.join(map(str, ctx.compute_capability()))}")
    return [o.to_numpy().astype(np.float32) for o in outs]


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse_args(argv)
    raise SystemExit(guarded("napkin-run", lambda: _run(args)))


if __name__ == "__main__":
    main()
