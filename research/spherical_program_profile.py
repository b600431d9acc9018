"""Where spherical attention's program of products spends its time: each kernel of the
forward and backward programs (`napkin_ir.torch.attention_program`) timed alone with CUDA
events (median of 20 after warm-up), beside the whole op, at the benchmark shapes. Where
the op takes no program (the forward's or the backward's products too close to the tiled
kernel's: `program_pays`), the line says so.

    python3 research/spherical_program_profile.py [--shapes 4,16,2,4096,128 ...]

Shapes are b,h,hk,n,d (n keys = n queries). Prints one table a shape."""

from __future__ import annotations

import argparse
import statistics

import torch

import napkin_ir.torch as nt


def timed(fn, reps: int = 20) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def profile(b: int, h: int, hk: int, n: int, d: int) -> None:
    cap = torch.cuda.get_device_capability()
    q, g = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(b, hk, n, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    rows = (b, hk, h // hk * n, d)
    for gradient in (False, True):
        found = nt.attention_program("spherical", None, b, h, hk, n, n, d, "bf16", cap, gradient=gradient)
        if found is None:  # the tiled kernel is the faster here (`program_pays`)
            print(f"\nb{b} h{h}/{hk} n{n} d{d} {'backward' if gradient else 'forward'}: no program, the op runs its tiled kernel")
            continue
        program, kernels = found
        launch = nt._ProgramLaunch(found, 0, ((b, h, n, d),) if not gradient else (q.shape, k.shape, v.shape))
        given = {"q": q.view(rows), "k": k, "v": v, **({"d_o": g.view(rows)} if gradient else {})}
        stream = torch.cuda.current_stream().cuda_stream
        whole = timed(lambda: launch.run(given, stream))
        memory = dict(given)
        print(f"\nb{b} h{h}/{hk} n{n} d{d} {'backward' if gradient else 'forward'}: the program {whole:.0f} us")
        total = 0.0
        for part, kern, lch in zip(program.parts, kernels, launch.launches):
            val = program.values[part.output]
            out = torch.empty(val.dims, dtype=nt._TORCH_DTYPES[val.dtype], device="cuda")
            tensors = (*(memory[m] for _, m in part.inputs), out)
            ptrs = nt._pointers(lch, tensors)
            t = timed(lambda lch=lch, ptrs=ptrs: lch.on(stream).launch(ptrs, stream))
            memory[part.output] = out
            total += t
            moved = sum(memory[m].numel() * memory[m].element_size() for _, m in part.inputs) + out.numel() * out.element_size()
            print(f"  {part.name:<14} {t:8.1f} us  {moved / t / 1e6:6.2f} TB/s  {str(part.product or ''):<28} grid {kern.contract.grid}")
        print(f"  {'sum':<14} {total:8.1f} us")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", nargs="*", default=["4,16,2,4096,128", "1,16,2,16384,128", "4,32,32,4096,64"])
    args = ap.parse_args()
    print(torch.cuda.get_device_name())
    for s in args.shapes:
        profile(*map(int, s.split(",")))


if __name__ == "__main__":
    main()
