"""What a persistent block pays for storing its output from Q's room, by subtraction:
napkin-sm90's default causal forward at d=256 over 4k keys (persistent blocks of 80 keys a
tile, the output by TMA from Q's room, Q released to the producer only once that store has
read it) beside copies of it, timed side by side.

    python3 research/q_room_release.py make DIR   # here (no GPU): the PTX copies
    python3 research/q_room_release.py time DIR   # on the GPU (carry DIR)

Copies: `early`, Q released right after its last read, before the output is written into
its room (the producer's copy of the next tile's Q then races the output: wrong values,
a bound on what the wait for the store costs the next tile); `keys64`, the default before
the room was taken (64 keys a tile, the output's two panel stages beside them); `direct`,
80 keys with the output stored from registers.
"""

from __future__ import annotations

import re
from pathlib import Path

import kernel_copies  # research/

SHAPES = {"c256": ("causal", 4, 8, 4096, 256)}


def early_release(smem_text: str) -> str:
    """`smem_text` (the kernel at the smem level) with Q's release moved from after the
    output's store and its wait to just before the consumers meet to write the output."""
    release = re.search(r"\n *smem.tma_store_wait \{pending = 0 : i32\}(\n *smem.arrive %\d+\[%\d+\] : !smem.mbarrier<stages=1, arrivals=1>)",
                        smem_text)
    if release is None:
        raise ValueError("no release of Q after the output's store")
    text = smem_text[: release.start()] + smem_text[release.end():]
    write = text.index("\n    smem.tma_store_wait {pending = 0 : i32}\n    smem.write")
    return text[:write] + release.group(1) + text[write:]


def make(out: Path) -> None:
    import napkin_ir
    from napkin_ir.attention_diagrams import attention_diagram

    for tag, (kind, b, h, n, d) in SHAPES.items():
        text = attention_diagram(kind, b, h, n, d, "bf16")
        base = napkin_ir.compile(text, target="sm90", cache=False)
        copies = {"base": base.ptx, "early": kernel_copies.compiled_changed(text, "smem", lambda m: early_release(str(m))).ptx,
                  "keys64": napkin_ir.compile(text, target="sm90", cache=False, block="128,64"),
                  "direct": napkin_ir.compile(text, target="sm90", cache=False, store="direct")}
        kernel_copies.save(out, tag, base, copies)


def main() -> None:
    kernel_copies.main(__doc__, make, SHAPES, kernel_copies.forward_launches, per_batch=5)


if __name__ == "__main__":
    main()
