"""The op's attention backward run each way napkin can run it, beside FA4's, in the same
interleaved rounds: which kernels it should take at a length (dQ's kernel beside dK's and
dV's, or the one kernel of all three) and on which grid (persistent blocks or a block a key
tile). Each way's outputs are checked against the two kernels' on the GPU first.

    python3 research/backward_ways.py 128:4096:causal 64:1024:softmax 128:1024:causal:4 ...   # on the GPU

A shape is `d:n:kind[:r]`: head dim, sequence length, `softmax`, `causal` or `spherical`,
and r query heads a key/value head (grouped; 1 if left out), over 16k tokens in all and
hidden 2048 (FlashAttention-3's setting). The ways, in us a call (D, dQ's zeroing and its
finish included, as FA4's pre- and postprocess are):

- `op`: the op's default;
- `persistent`, `plain`: the one kernel of dQ, dK and dV (`FUSED_DQ_*` lifted at d) with
  `persistent=true` or `false`;
- `split`: dQ's kernel beside dK's and dV's (a kernel each at head dims over 128);
- `split plain`: those kernels each a block a tile (they loop where their stream is short);
- `FA4`: flash-attn-4's backward, where it is installed (not for spherical attention).

A way the op has no kernel for at a shape (the one kernel above head dim 128) is left out
of its row, and the row says why. Session 71 chose both of the op's rules from this table
(research/benchmarks.md), made by the scratch script this one was written from (the same
ways, the same timing); session 72 ran this form on the H200 (research/benchmarks.md)."""

from __future__ import annotations

import contextlib
import statistics
import sys
from pathlib import Path
from typing import Any, Iterator, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_attention import HIDDEN, TOKENS  # noqa: E402 (FlashAttention-3's setting)
from bench_attention_backward import fa4_backward, fa4_func, with_parts  # noqa: E402

KINDS = ("softmax", "causal", "spherical")


class Shape(NamedTuple):
    d: int
    n: int
    kind: str
    group: int = 1

    @property
    def batch(self) -> int:
        return max(1, TOKENS // self.n)

    @property
    def heads(self) -> int:
        return HIDDEN // self.d

    def flops(self) -> float:
        """The backward's FLOPs as FlashAttention counts them: 2.5x the forward's 4 B H N^2 D,
        halved under a causal mask."""
        return 2.5 * 4 * self.batch * self.heads * self.n * self.n * self.d / (2 if self.kind == "causal" else 1)


def parse(text: str) -> Shape:
    """`d:n:kind[:r]` as a Shape, or a ValueError that says which part is wrong."""
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise ValueError(f"a shape is d:n:kind[:r], found {text!r}")
    try:
        d, n, *r = (int(p) for p in parts[:2] + parts[3:])
    except ValueError:
        raise ValueError(f"d, n and r of {text!r} must be whole numbers") from None
    if parts[2] not in KINDS:
        raise ValueError(f"the kind of {text!r} must be one of {', '.join(KINDS)}")
    shape = Shape(d, n, parts[2], *r)
    if shape.d <= 0 or HIDDEN % shape.d or shape.n <= 0 or shape.group <= 0 or shape.heads % shape.group:
        raise ValueError(f"{text!r}: d must divide {HIDDEN}, and r the {HIDDEN} // d heads")
    return shape


@contextlib.contextmanager
def grid(nt: Any, parts: set[str], persistent: bool) -> Iterator[None]:
    """While open, the op's gradient kernels of `parts` (`ATTENTION_GRAD_PARTS`) compile with
    `persistent` given, remembered apart from the default's (the key of the op's cache
    gains it)."""
    compiled = nt._compiled

    def chosen(key: tuple, candidates: list, what: str) -> Any:
        if key[0] == "attention_grad" and key[1] in parts:
            key, candidates = key + (("persistent", persistent),), [(t, x, {**o, "persistent": persistent}) for t, x, o in candidates]
        return compiled(key, candidates, what)

    nt._compiled = chosen
    try:
        yield
    finally:
        nt._compiled = compiled


SPLIT = {"q", "k", "v", "kv"}


def ways(nt: Any, op: Any, d: int) -> dict[str, Any]:
    """Each way of running `op` (the op's backward at head dim `d`), by name: the one kernel
    or the two as `bench_attention_backward.with_parts` sets the op's rules, on the grid `grid`
    gives."""
    def on(parts: set[str], persistent: bool) -> Any:
        def run() -> Any:
            with grid(nt, parts, persistent):
                return op()
        return run

    return {"op": op,
            "persistent": lambda: with_parts(nt, True, d, on({"qkv"}, True)),
            "plain": lambda: with_parts(nt, True, d, on({"qkv"}, False)),
            "split": lambda: with_parts(nt, False, d, op),
            "split plain": lambda: with_parts(nt, False, d, on(SPLIT, False))}


def label(s: Shape) -> str:
    return f"d{s.d} n{s.n} {s.kind}" + (f" r{s.group}" if s.group > 1 else "")


def checked(runs: dict[str, Any], where: str) -> dict[str, Any]:
    """The ways of `runs` that run here, each checked against the two kernels' outputs
    (`split`, which every shape has) within bf16's error. A way the op has no kernel for
    at this shape (the one kernel above head dim 128: the op's compile error, a
    ValueError) is left out, and said why; a way whose outputs differ ends the run."""
    ref = [x.float() for x in runs["split"]()]
    kept = {}
    for name, way in runs.items():
        try:
            got = way()
        except ValueError as e:
            print(f"{where} | {name}: left out, no kernel ({str(e).splitlines()[0][:200]})", flush=True)
            continue
        err = max(((a.float() - r).abs().max() / r.abs().max()).item() for a, r in zip(got, ref))
        if not err < 2e-2:
            raise SystemExit(f"backward_ways: {where} {name} differs from the two kernels by {err:.1e}")
        kept[name] = way
    return kept


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    try:
        shapes = [parse(a) for a in args]
    except ValueError as e:
        print(f"backward_ways: {e}", file=sys.stderr)
        return 2
    import torch

    import napkin_ir.torch as nt
    from bench_gemm import time_interleaved

    fa4 = fa4_func()
    for s in shapes:
        b, h = s.batch, s.heads
        q, g = (torch.randn(b, h, s.n, s.d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        k, v = (torch.randn(b, h // s.group, s.n, s.d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        out, stat = torch.ops.napkin.attention_lse(q, k, v, s.kind, None)

        def op(q=q, k=k, v=v, out=out, stat=stat, g=g, kind=s.kind):
            return torch.ops.napkin.attention_backward(q, k, v, out, stat, g, None, kind, None)

        runs = checked(ways(nt, op, s.d), label(s))
        if fa4 is not None and s.kind != "spherical" and (f := fa4_backward(torch, fa4, q, k, v, g, s.kind == "causal")) is not None:
            runs["FA4"] = f
        ms = [statistics.median(r) for r in time_interleaved(torch, list(runs.values()), rounds=9, settle_s=0.05)]
        cells = " | ".join(f"{name} {m * 1e3:.0f} us ({s.flops() / m / 1e9:.0f} TF)" for name, m in zip(runs, ms))
        print(f"{label(s)} | {cells}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
