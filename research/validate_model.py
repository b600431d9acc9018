#!/usr/bin/env python3
"""Validate the napkin model on the GPU: predicted against measured time over tile configurations.

    python3 research/validate_model.py [--hw h200] [--ncu | --ncu-all] [--only gemm|attention]
                                    [--gemm-shape M,N,K] [--attention-shape B,H,N,D]
                                    [--configs REGEX] [--sm80-groups G,...] [--no-autotile]
    python3 research/validate_model.py --model-only [--hw h200] [shapes as above]   (no GPU, no torch)

For each configuration of the GEMM (sm_80 and sm_90a paths) and, where its kernels exist, of
attention: lower to the `reg` level and predict with the napkin model (registers from
ptxas where it can be run), compile to PTX, check against torch on random inputs; then
time a family's configurations in turn with CUDA events, a batch of each a round, after a
second of rounds to reach the clock the GPU sustains (the median of 15 rounds: all of them
meet the same clock, where one timed after another would meet whatever clock the last left).
Prints per configuration the predicted and measured time, then per family the Spearman rank
correlation, the model's pick (the configuration it predicts fastest, near-ties broken as
`autotile` breaks them, and `autotile`'s own choice) and how far that is from the best
measured. With `--ncu`, reads the DRAM bytes (and the occupancy limits) of each
family's fastest and slowest configuration with Nsight Compute (one profiled process that
launches each once) and compares them with the model's DRAM estimate; `--ncu-all` does so
for every configuration. `--model-only` runs the model alone on the CPU (PTX and ptxas'
registers, no launch) and compares its DRAM estimate with the Nsight Compute readings
recorded on that GPU (`NCU_RECORDED` on the H200, `NCU_RECORDED_H100`) for the shapes asked
for. The tables are printed last and
written to $OUT/validate_model.txt.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))  # bench_gemm, bench_attention

from bench_gemm import time_interleaved  # CUDA events, every configuration in turn, the median of rounds

DEFAULT_GEMM_SHAPE = (4096, 4096, 4096)  # M, N, K
DEFAULT_ATTENTION_SHAPE = (4, 16, 4096, 128)  # b, h, n, d: the FlashAttention-3 setting at 4k, not causal
GEMM_SHAPE, ATTENTION_SHAPE = DEFAULT_GEMM_SHAPE, DEFAULT_ATTENTION_SHAPE  # --gemm-shape, --attention-shape
CONFIGS = ""  # --configs: a regular expression the GEMM configurations' "gemm family label" must match
SM80_GROUP = 16  # the band height of the grouped sm_80 family, "gemm sm80 g16"
SM80_GROUPS: tuple[int, ...] = ()  # --sm80-groups: the sm_80 launch orders (0: plain); () for 0 and SM80_GROUP
SM80 = [  # block, warps, stages
    ((128, 128, 32), (2, 2), 3), ((128, 128, 32), (2, 2), 4), ((128, 128, 64), (2, 2), 3), ((128, 256, 32), (2, 4), 3),
    ((128, 256, 32), (2, 4), 4), ((256, 128, 32), (4, 2), 3), ((256, 128, 64), (4, 2), 3), ((64, 64, 32), (2, 2), 4),
    ((64, 128, 32), (2, 2), 4), ((128, 64, 32), (2, 2), 4),
]
SM90 = [((128, 256, 64), 4), ((128, 256, 64), 3), ((128, 128, 64), 5), ((256, 128, 64), 4), ((64, 256, 64), 4), ((128, 128, 64), 3),
        ((64, 128, 64), 6), ((128, 64, 64), 6)]


# DRAM bytes read and written by one launch, MB, read by Nsight Compute on an NVIDIA H200,
# per problem shape (GEMM M, N, K; attention B, H, N, D), with `python3
# research/validate_model.py --hw h200 --ncu-all` (`--clock-control none`; research/model-validation.md, "DRAM
# bytes against Nsight Compute"). ncu counts dirty lines still in L2 at the end as not
# written. At the default shapes, 2026-11-23; the sm_80 rows are of its swizzled stages and
# staged output (reg-to-ptx as of 2026-11-23 afternoon; read by `--ncu-all --only gemm`).
# "gemm sm80 g16": the sm_80 GEMMs launched in bands of 16 block rows (reg-to-ptx with
# hbm.group, 2026-11-24), read after the model's estimates for them were run on the CPU, with
# `--ncu-all --only gemm --configs "sm80 g16" --gemm-shape S` (at 8192,8192,2048 and on the
# H100, `--configs "gemm sm80"`: plain and grouped in one call; at 12288,6144,2048 the fifth
# held-out set's call).
NCU_AT_DEFAULT_SHAPES = {
    ("gemm sm80", "128x128x32 w2x2 s3"): (177.9, 28.1),
    ("gemm sm80", "128x128x32 w2x2 s4"): (246.6, 29.8),
    ("gemm sm80", "128x128x64 w2x2 s3"): (242.8, 29.4),
    ("gemm sm80", "128x256x32 w2x4 s3"): (174.1, 28.0),
    ("gemm sm80", "128x256x32 w2x4 s4"): (174.1, 28.0),
    ("gemm sm80", "256x128x32 w4x2 s3"): (170.9, 28.0),
    ("gemm sm80", "256x128x64 w4x2 s3"): (170.9, 28.3),
    ("gemm sm80", "64x64x32 w2x2 s4"): (349.9, 32.3),
    ("gemm sm80", "64x128x32 w2x2 s4"): (285.7, 30.9),
    ("gemm sm80", "128x64x32 w2x2 s4"): (373.3, 31.6),
    ("gemm sm90", "128x256x64 s4"): (186.6, 28.3),
    ("gemm sm90", "128x256x64 s3"): (186.6, 28.3),
    ("gemm sm90", "128x128x64 s5"): (186.5, 28.9),
    ("gemm sm90", "256x128x64 s4"): (149.7, 28.1),
    ("gemm sm90", "64x256x64 s4"): (315.5, 31.4),
    ("gemm sm90", "128x128x64 s3"): (178.3, 29.1),
    ("gemm sm90", "64x128x64 s6"): (278.9, 31.3),
    ("gemm sm90", "128x64x64 s6"): (169.0, 30.4),
    ("attention", "b128s64w8st3"): (201.4, 58.6),
    ("attention", "b128s64w8st2"): (201.5, 58.9),
    ("attention", "b128s64w8st3-x2"): (202.4, 60.3),
    ("attention", "b128s64w8st3-qsmem"): (201.6, 58.6),
    ("attention", "b128s64w4st2-qsmem"): (201.8, 57.3),
    ("attention", "b128s32w4st3-qsmem"): (204.5, 57.4),
    ("attention", "b64s64w4st3"): (201.4, 60.0),
    ("attention", "b64s64w4st2"): (201.5, 59.0),
    ("attention", "b128s128w8st2-qsmem"): (201.5, 58.6),
    # in bands of 16 block rows (the note above)
    ("gemm sm80 g16", "128x128x32 w2x2 s3"): (139.0, 25.5),
    ("gemm sm80 g16", "128x128x32 w2x2 s4"): (141.4, 25.5),
    ("gemm sm80 g16", "128x128x64 w2x2 s3"): (141.5, 25.5),
    ("gemm sm80 g16", "128x256x32 w2x4 s3"): (146.5, 25.5),
    ("gemm sm80 g16", "128x256x32 w2x4 s4"): (145.9, 25.3),
    ("gemm sm80 g16", "256x128x32 w4x2 s3"): (170.9, 26.0),
    ("gemm sm80 g16", "256x128x64 w4x2 s3"): (170.9, 28.0),
    ("gemm sm80 g16", "64x64x32 w2x2 s4"): (167.6, 28.0),
    ("gemm sm80 g16", "64x128x32 w2x2 s4"): (170.0, 27.1),
    ("gemm sm80 g16", "128x64x32 w2x2 s4"): (112.5, 26.9),
}
NCU_RECORDED: dict[tuple[int, ...], dict[tuple[str, str], tuple[float, float]]] = {
    DEFAULT_GEMM_SHAPE: {key: v for key, v in NCU_AT_DEFAULT_SHAPES.items() if key[0].startswith("gemm")},
    DEFAULT_ATTENTION_SHAPE: {key: v for key, v in NCU_AT_DEFAULT_SHAPES.items() if key[0] == "attention"},
    # Shapes the model's constants were not chosen on, read after its predictions were written
    # down (research/model-validation.md, "Dirty lines at the end, and shapes held out"); H200, 2026-11-23,
    # `--ncu-all --gemm-shape 8192,8192,8192 --attention-shape 1,16,16384,128` and `--ncu-all
    # --only gemm --gemm-shape 16384,4096,4096`.
    (8192, 8192, 8192): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (4297.8, 129.8),
        ("gemm sm80", "128x128x32 w2x2 s4"): (5556.5, 130.5),
        ("gemm sm80", "128x128x64 w2x2 s3"): (5599.6, 130.3),
        ("gemm sm80", "128x256x32 w2x4 s3"): (2344.8, 129.8),
        ("gemm sm80", "128x256x32 w2x4 s4"): (2353.6, 132.1),
        ("gemm sm80", "256x128x32 w4x2 s3"): (2311.1, 129.8),
        ("gemm sm80", "256x128x64 w4x2 s3"): (2312.1, 129.8),
        ("gemm sm80", "64x64x32 w2x2 s4"): (17118.8, 132.5),
        ("gemm sm80", "64x128x32 w2x2 s4"): (8680.9, 131.8),
        ("gemm sm80", "128x64x32 w2x2 s4"): (10101.9, 132.1),
        ("gemm sm90", "128x256x64 s4"): (1493.1, 129.7),
        ("gemm sm90", "128x256x64 s3"): (1493.2, 129.8),
        ("gemm sm90", "128x128x64 s5"): (1678.7, 130.2),
        ("gemm sm90", "256x128x64 s4"): (1192.7, 130.4),
        ("gemm sm90", "64x256x64 s4"): (2600.8, 129.9),
        ("gemm sm90", "128x128x64 s3"): (1744.9, 129.8),
        ("gemm sm90", "64x128x64 s6"): (2742.3, 131.9),
        ("gemm sm90", "128x64x64 s6"): (1627.1, 131.9),
    },
    (1, 16, 16384, 128): {
        ("attention", "b128s64w8st3"): (205.5, 57.3),
        ("attention", "b128s64w8st2"): (205.2, 57.5),
        ("attention", "b128s64w8st3-x2"): (223.3, 61.4),
        ("attention", "b128s64w8st3-qsmem"): (205.7, 57.3),
        ("attention", "b128s64w4st2-qsmem"): (211.1, 55.6),
        ("attention", "b128s32w4st3-qsmem"): (233.4, 55.9),
        ("attention", "b64s64w4st3"): (201.7, 59.1),
        ("attention", "b64s64w4st2"): (202.4, 57.4),
        ("attention", "b128s128w8st2-qsmem"): (205.4, 57.6),
    },
    (16384, 4096, 4096): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (3543.7, 129.8),
        ("gemm sm80", "128x128x32 w2x2 s4"): (4232.3, 130.1),
        ("gemm sm80", "128x128x64 w2x2 s3"): (4210.5, 130.1),
        ("gemm sm80", "128x256x32 w2x4 s3"): (2149.6, 129.8),
        ("gemm sm80", "128x256x32 w2x4 s4"): (2157.0, 129.7),
        ("gemm sm80", "256x128x32 w4x2 s3"): (2196.8, 130.3),
        ("gemm sm80", "256x128x64 w4x2 s3"): (2312.9, 132.1),
        ("gemm sm80", "64x64x32 w2x2 s4"): (8567.3, 132.1),
        ("gemm sm80", "64x128x32 w2x2 s4"): (4340.5, 130.7),
        ("gemm sm80", "128x64x32 w2x2 s4"): (8301.3, 131.4),
        ("gemm sm90", "128x256x64 s4"): (772.9, 124.5),
        ("gemm sm90", "128x256x64 s3"): (773.9, 125.3),
        ("gemm sm90", "128x128x64 s5"): (718.3, 127.6),
        ("gemm sm90", "256x128x64 s4"): (620.3, 126.2),
        ("gemm sm90", "64x256x64 s4"): (1276.5, 129.7),
        ("gemm sm90", "128x128x64 s3"): (695.7, 127.5),
        ("gemm sm90", "64x128x64 s6"): (1131.0, 130.1),
        ("gemm sm90", "128x64x64 s6"): (671.8, 128.4),
    },
    # The second held-out set, read after the staggered schedule's predictions were written
    # down (research/model-validation.md); H200, 2026-11-23, `--ncu-all --gemm-shape 8192,8192,2048
    # --attention-shape 2,32,8192,128` and `--ncu-all --only gemm --gemm-shape 4096,16384,4096`.
    (8192, 8192, 2048): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (534.6, 127.5),
        ("gemm sm80", "128x128x32 w2x2 s4"): (585.1, 125.9),
        ("gemm sm80", "128x128x64 w2x2 s3"): (597.3, 126.0),
        ("gemm sm80", "128x256x32 w2x4 s3"): (543.0, 126.9),
        ("gemm sm80", "128x256x32 w2x4 s4"): (557.7, 128.0),
        ("gemm sm80", "256x128x32 w4x2 s3"): (573.0, 129.2),
        ("gemm sm80", "256x128x64 w4x2 s3"): (562.5, 128.5),
        ("gemm sm80", "64x64x32 w2x2 s4"): (405.0, 130.0),
        ("gemm sm80", "64x128x32 w2x2 s4"): (287.0, 127.5),
        ("gemm sm80", "128x64x32 w2x2 s4"): (604.6, 128.7),
        ("gemm sm90", "128x256x64 s4"): (305.8, 120.5),
        ("gemm sm90", "128x256x64 s3"): (309.1, 120.7),
        ("gemm sm90", "128x128x64 s5"): (301.5, 122.7),
        ("gemm sm90", "256x128x64 s4"): (171.7, 120.2),
        ("gemm sm90", "64x256x64 s4"): (543.6, 126.4),
        ("gemm sm90", "128x128x64 s3"): (301.6, 122.9),
        ("gemm sm90", "64x128x64 s6"): (506.3, 127.5),
        ("gemm sm90", "128x64x64 s6"): (302.0, 124.1),
        # in bands of 16 block rows (see the note on "gemm sm80 g16" above NCU_AT_DEFAULT_SHAPES)
        ("gemm sm80 g16", "128x128x32 w2x2 s3"): (168.5, 119.4),
        ("gemm sm80 g16", "128x128x32 w2x2 s4"): (168.1, 119.4),
        ("gemm sm80 g16", "128x128x64 w2x2 s3"): (168.3, 119.2),
        ("gemm sm80 g16", "128x256x32 w2x4 s3"): (175.2, 119.2),
        ("gemm sm80 g16", "128x256x32 w2x4 s4"): (182.3, 118.7),
        ("gemm sm80 g16", "256x128x32 w4x2 s3"): (170.1, 120.6),
        ("gemm sm80 g16", "256x128x64 w4x2 s3"): (160.5, 120.5),
        ("gemm sm80 g16", "64x64x32 w2x2 s4"): (302.0, 124.0),
        ("gemm sm80 g16", "64x128x32 w2x2 s4"): (301.9, 122.8),
        ("gemm sm80 g16", "128x64x32 w2x2 s4"): (167.8, 120.8),
    },
    (2, 32, 8192, 128): {
        ("attention", "b128s64w8st3"): (403.5, 124.3),
        ("attention", "b128s64w8st2"): (403.4, 123.9),
        ("attention", "b128s64w8st3-x2"): (408.7, 126.8),
        ("attention", "b128s64w8st3-qsmem"): (403.5, 124.2),
        ("attention", "b128s64w4st2-qsmem"): (403.8, 122.2),
        ("attention", "b128s32w4st3-qsmem"): (411.5, 122.1),
        ("attention", "b64s64w4st3"): (402.8, 125.2),
        ("attention", "b64s64w4st2"): (402.8, 124.2),
        ("attention", "b128s128w8st2-qsmem"): (403.7, 123.9),
    },
    (4096, 16384, 4096): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (910.7, 127.3),
        ("gemm sm80", "128x128x32 w2x2 s4"): (1081.6, 127.9),
        ("gemm sm80", "128x128x64 w2x2 s3"): (1065.5, 127.5),
        ("gemm sm80", "128x256x32 w2x4 s3"): (700.3, 129.7),
        ("gemm sm80", "128x256x32 w2x4 s4"): (697.3, 127.3),
        ("gemm sm80", "256x128x32 w4x2 s3"): (683.5, 129.6),
        ("gemm sm80", "256x128x64 w4x2 s3"): (681.1, 130.2),
        ("gemm sm80", "64x64x32 w2x2 s4"): (1223.4, 131.4),
        ("gemm sm80", "64x128x32 w2x2 s4"): (1055.3, 129.2),
        ("gemm sm80", "128x64x32 w2x2 s4"): (1604.7, 129.7),
        ("gemm sm90", "128x256x64 s4"): (686.6, 124.3),
        ("gemm sm90", "128x256x64 s3"): (700.8, 124.7),
        ("gemm sm90", "128x128x64 s5"): (592.9, 128.0),
        ("gemm sm90", "256x128x64 s4"): (498.1, 127.3),
        ("gemm sm90", "64x256x64 s4"): (1173.6, 129.5),
        ("gemm sm90", "128x128x64 s3"): (579.3, 127.7),
        ("gemm sm90", "64x128x64 s6"): (1108.9, 129.8),
        ("gemm sm90", "128x64x64 s6"): (570.9, 128.9),
    },
    # The third held-out set, read after the partition replay's predictions were written down
    # (research/model-validation.md, "The L2 as two partitions"); H200, 2026-11-23, `--ncu-all --gemm-shape
    # 6144,6144,3072 --attention-shape 8,16,2048,128` and `--ncu-all --only gemm --gemm-shape
    # 2048,8192,8192`.
    (6144, 6144, 3072): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (385.5, 69.2),
        ("gemm sm80", "128x128x32 w2x2 s4"): (621.7, 69.6),
        ("gemm sm80", "128x128x64 w2x2 s3"): (615.6, 69.5),
        ("gemm sm80", "128x256x32 w2x4 s3"): (386.1, 69.2),
        ("gemm sm80", "128x256x32 w2x4 s4"): (385.5, 70.7),
        ("gemm sm80", "256x128x32 w4x2 s3"): (380.7, 69.5),
        ("gemm sm80", "256x128x64 w4x2 s3"): (380.5, 69.2),
        ("gemm sm80", "64x64x32 w2x2 s4"): (804.8, 72.3),
        ("gemm sm80", "64x128x32 w2x2 s4"): (604.2, 70.6),
        ("gemm sm80", "128x64x32 w2x2 s4"): (945.6, 71.4),
        ("gemm sm90", "128x256x64 s4"): (297.8, 64.4),
        ("gemm sm90", "128x256x64 s3"): (302.5, 64.9),
        ("gemm sm90", "128x128x64 s5"): (267.3, 67.4),
        ("gemm sm90", "256x128x64 s4"): (194.6, 65.6),
        ("gemm sm90", "64x256x64 s4"): (448.6, 69.3),
        ("gemm sm90", "128x128x64 s3"): (264.8, 67.2),
        ("gemm sm90", "64x128x64 s6"): (479.9, 70.3),
        ("gemm sm90", "128x64x64 s6"): (264.3, 68.2),
        # in bands of 16 block rows (see the note on "gemm sm80 g16" above NCU_AT_DEFAULT_SHAPES)
        ("gemm sm80 g16", "128x128x32 w2x2 s3"): (164.5, 65.0),
        ("gemm sm80 g16", "128x128x32 w2x2 s4"): (162.2, 64.8),
        ("gemm sm80 g16", "128x128x64 w2x2 s3"): (163.7, 67.2),
        ("gemm sm80 g16", "128x256x32 w2x4 s3"): (215.3, 64.3),
        ("gemm sm80 g16", "128x256x32 w2x4 s4"): (215.5, 63.7),
        ("gemm sm80 g16", "256x128x32 w4x2 s3"): (257.5, 64.3),
        ("gemm sm80 g16", "256x128x64 w4x2 s3"): (253.2, 63.9),
        ("gemm sm80 g16", "64x64x32 w2x2 s4"): (264.2, 68.1),
        ("gemm sm80 g16", "64x128x32 w2x2 s4"): (264.2, 67.0),
        ("gemm sm80 g16", "128x64x32 w2x2 s4"): (151.4, 66.4),
    },
    (8, 16, 2048, 128): {
        ("attention", "b128s64w8st3"): (201.4, 57.5),
        ("attention", "b128s64w8st2"): (201.4, 57.2),
        ("attention", "b128s64w8st3-x2"): (201.5, 58.9),
        ("attention", "b128s64w8st3-qsmem"): (201.3, 57.2),
        ("attention", "b128s64w4st2-qsmem"): (201.5, 54.6),
        ("attention", "b128s32w4st3-qsmem"): (202.1, 54.0),
        ("attention", "b64s64w4st3"): (201.3, 58.2),
        ("attention", "b64s64w4st2"): (201.4, 57.2),
        ("attention", "b128s128w8st2-qsmem"): (201.4, 57.2),
    },
    (2048, 8192, 8192): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (363.3, 28.9),
        ("gemm sm80", "128x128x32 w2x2 s4"): (385.8, 29.3),
        ("gemm sm80", "128x128x64 w2x2 s3"): (381.4, 29.3),
        ("gemm sm80", "128x256x32 w2x4 s3"): (281.0, 26.0),
        ("gemm sm80", "128x256x32 w2x4 s4"): (281.1, 26.0),
        ("gemm sm80", "256x128x32 w4x2 s3"): (272.6, 26.0),
        ("gemm sm80", "256x128x64 w4x2 s3"): (272.7, 28.3),
        ("gemm sm80", "64x64x32 w2x2 s4"): (926.5, 31.3),
        ("gemm sm80", "64x128x32 w2x2 s4"): (621.0, 30.5),
        ("gemm sm80", "128x64x32 w2x2 s4"): (597.6, 30.4),
        ("gemm sm90", "128x256x64 s4"): (360.7, 26.0),
        ("gemm sm90", "128x256x64 s3"): (360.7, 26.0),
        ("gemm sm90", "128x128x64 s5"): (426.0, 30.3),
        ("gemm sm90", "256x128x64 s4"): (273.5, 26.4),
        ("gemm sm90", "64x256x64 s4"): (645.9, 30.3),
        ("gemm sm90", "128x128x64 s3"): (426.2, 30.3),
        ("gemm sm90", "64x128x64 s6"): (689.7, 31.0),
        ("gemm sm90", "128x64x64 s6"): (458.0, 30.9),
    },
    # The fourth held-out set, read after the predictions of the replay with the measured
    # partitions were written down (research/model-validation.md, "The partitions measured, and the cache's
    # edge"); H200, 2026-11-23, `--ncu-all --gemm-shape 10240,10240,2048 --attention-shape
    # 16,16,1024,128` and `--ncu-all --only gemm --gemm-shape 3072,16384,6144`.
    (10240, 10240, 2048): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (1081.5, 203.5),
        ("gemm sm80", "128x128x32 w2x2 s4"): (1594.2, 203.1),
        ("gemm sm80", "128x128x64 w2x2 s3"): (1568.4, 205.2),
        ("gemm sm80", "128x256x32 w2x4 s3"): (1075.0, 199.2),
        ("gemm sm80", "128x256x32 w2x4 s4"): (1070.6, 200.0),
        ("gemm sm80", "256x128x32 w4x2 s3"): (1089.2, 203.0),
        ("gemm sm80", "256x128x64 w4x2 s3"): (1087.6, 202.3),
        ("gemm sm80", "64x64x32 w2x2 s4"): (1942.5, 206.1),
        ("gemm sm80", "64x128x32 w2x2 s4"): (1479.6, 204.3),
        ("gemm sm80", "128x64x32 w2x2 s4"): (2384.2, 205.3),
        ("gemm sm90", "128x256x64 s4"): (470.5, 195.5),
        ("gemm sm90", "128x256x64 s3"): (474.6, 196.1),
        ("gemm sm90", "128x128x64 s5"): (461.4, 198.7),
        ("gemm sm90", "256x128x64 s4"): (257.3, 196.0),
        ("gemm sm90", "64x256x64 s4"): (879.7, 201.8),
        ("gemm sm90", "128x128x64 s3"): (461.4, 198.3),
        ("gemm sm90", "64x128x64 s6"): (879.6, 202.8),
        ("gemm sm90", "128x64x64 s6"): (461.4, 199.8),
        # in bands of 16 block rows (see the note on "gemm sm80 g16" above NCU_AT_DEFAULT_SHAPES)
        ("gemm sm80 g16", "128x128x32 w2x2 s3"): (252.2, 195.3),
        ("gemm sm80 g16", "128x128x32 w2x2 s4"): (252.2, 194.8),
        ("gemm sm80 g16", "128x128x64 w2x2 s3"): (252.2, 196.7),
        ("gemm sm80 g16", "128x256x32 w2x4 s3"): (260.7, 194.5),
        ("gemm sm80 g16", "128x256x32 w2x4 s4"): (270.1, 193.5),
        ("gemm sm80 g16", "256x128x32 w4x2 s3"): (267.5, 194.8),
        ("gemm sm80 g16", "256x128x64 w4x2 s3"): (248.1, 192.9),
        ("gemm sm80 g16", "64x64x32 w2x2 s4"): (461.4, 199.5),
        ("gemm sm80 g16", "64x128x32 w2x2 s4"): (461.4, 198.4),
        ("gemm sm80 g16", "128x64x32 w2x2 s4"): (251.8, 196.5),
    },
    (16, 16, 1024, 128): {
        ("attention", "b128s64w8st3"): (201.3, 56.4),
        ("attention", "b128s64w8st2"): (201.4, 56.5),
        ("attention", "b128s64w8st3-x2"): (201.4, 57.7),
        ("attention", "b128s64w8st3-qsmem"): (201.4, 56.4),
        ("attention", "b128s64w4st2-qsmem"): (201.4, 54.7),
        ("attention", "b128s32w4st3-qsmem"): (201.3, 54.0),
        ("attention", "b64s64w4st3"): (201.4, 57.6),
        ("attention", "b64s64w4st2"): (201.3, 56.5),
        ("attention", "b128s128w8st2-qsmem"): (201.4, 56.5),
    },
    (3072, 16384, 6144): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (1041.0, 96.1),
        ("gemm sm80", "128x128x32 w2x2 s4"): (1075.8, 96.4),
        ("gemm sm80", "128x128x64 w2x2 s3"): (1072.2, 96.2),
        ("gemm sm80", "128x256x32 w2x4 s3"): (673.2, 95.2),
        ("gemm sm80", "128x256x32 w2x4 s4"): (673.3, 95.2),
        ("gemm sm80", "256x128x32 w4x2 s3"): (654.3, 95.3),
        ("gemm sm80", "256x128x64 w4x2 s3"): (654.4, 97.3),
        ("gemm sm80", "64x64x32 w2x2 s4"): (2515.7, 98.1),
        ("gemm sm80", "64x128x32 w2x2 s4"): (1739.2, 97.0),
        ("gemm sm80", "128x64x32 w2x2 s4"): (1848.6, 97.4),
        ("gemm sm90", "128x256x64 s4"): (798.7, 95.1),
        ("gemm sm90", "128x256x64 s3"): (798.9, 95.3),
        ("gemm sm90", "128x128x64 s5"): (851.5, 95.5),
        ("gemm sm90", "256x128x64 s4"): (674.6, 95.8),
        ("gemm sm90", "64x256x64 s4"): (1421.5, 95.9),
        ("gemm sm90", "128x128x64 s3"): (886.0, 95.7),
        ("gemm sm90", "64x128x64 s6"): (1328.2, 97.5),
        ("gemm sm90", "128x64x64 s6"): (682.0, 97.2),
    },
    # the fifth held-out set: read after the predictions were committed (e351e05);
    # `--hw h200 --ncu-all --no-autotile --gemm-shape 12288,6144,2048 --attention-shape 4,32,2048,128`, 2026-11-24
    (12288, 6144, 2048): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (937.9, 147.2),
        ("gemm sm80", "128x128x32 w2x2 s4"): (1648.9, 144.6),
        ("gemm sm80", "128x128x64 w2x2 s3"): (1659.8, 146.2),
        ("gemm sm80", "128x256x32 w2x4 s3"): (922.5, 142.8),
        ("gemm sm80", "128x256x32 w2x4 s4"): (924.5, 142.6),
        ("gemm sm80", "256x128x32 w4x2 s3"): (938.1, 147.1),
        ("gemm sm80", "256x128x64 w4x2 s3"): (937.8, 146.5),
        ("gemm sm80", "64x64x32 w2x2 s4"): (3300.8, 147.5),
        ("gemm sm80", "64x128x32 w2x2 s4"): (1934.4, 145.8),
        ("gemm sm80", "128x64x32 w2x2 s4"): (2794.8, 146.6),
        ("gemm sm90", "128x256x64 s4"): (282.9, 138.1),
        ("gemm sm90", "128x256x64 s3"): (283.7, 137.9),
        ("gemm sm90", "128x128x64 s5"): (336.8, 139.8),
        ("gemm sm90", "256x128x64 s4"): (205.4, 136.4),
        ("gemm sm90", "64x256x64 s4"): (294.8, 142.3),
        ("gemm sm90", "128x128x64 s3"): (339.0, 139.7),
        ("gemm sm90", "64x128x64 s6"): (300.8, 143.4),
        ("gemm sm90", "128x64x64 s6"): (348.6, 140.8),
        # in bands of 16 block rows (see the note on "gemm sm80 g16" above NCU_AT_DEFAULT_SHAPES)
        ("gemm sm80 g16", "128x128x32 w2x2 s3"): (201.6, 136.1),
        ("gemm sm80 g16", "128x128x32 w2x2 s4"): (201.6, 135.7),
        ("gemm sm80 g16", "128x128x64 w2x2 s3"): (201.6, 135.7),
        ("gemm sm80 g16", "128x256x32 w2x4 s3"): (213.7, 135.7),
        ("gemm sm80 g16", "128x256x32 w2x4 s4"): (214.8, 135.2),
        ("gemm sm80 g16", "256x128x32 w4x2 s3"): (219.1, 137.8),
        ("gemm sm80 g16", "256x128x64 w4x2 s3"): (199.5, 137.6),
        ("gemm sm80 g16", "64x64x32 w2x2 s4"): (349.7, 140.6),
        ("gemm sm80 g16", "64x128x32 w2x2 s4"): (345.9, 139.4),
        ("gemm sm80 g16", "128x64x32 w2x2 s4"): (201.4, 137.4),
    },
    (4, 32, 2048, 128): {
        ("attention", "b128s64w8st3"): (201.5, 56.8),
        ("attention", "b128s64w8st2"): (201.4, 56.5),
        ("attention", "b128s64w8st3-x2"): (201.8, 58.6),
        ("attention", "b128s64w8st3-qsmem"): (201.4, 56.9),
        ("attention", "b128s64w4st2-qsmem"): (201.6, 54.6),
        ("attention", "b128s32w4st3-qsmem"): (202.6, 54.0),
        ("attention", "b64s64w4st3"): (201.3, 57.8),
        ("attention", "b64s64w4st2"): (201.4, 56.8),
        ("attention", "b128s128w8st2-qsmem"): (201.4, 57.0),
    },
}
# The same on the H100: its first readings (2026-11-23, a lent H100 80GB HBM3, `--hw h100
# --ncu-all`, at the default shapes), taken with the replay of 1391682, before the H100 was
# given the partitions measured on it (research/model-validation.md, "The H100").
NCU_RECORDED_H100: dict[tuple[int, ...], dict[tuple[str, str], tuple[float, float]]] = {
    (4096, 4096, 4096): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (229.8, 27.3),
        ("gemm sm80", "128x128x32 w2x2 s4"): (272.6, 28.3),
        ("gemm sm80", "128x128x64 w2x2 s3"): (271.0, 28.4),
        ("gemm sm80", "128x256x32 w2x4 s3"): (174.1, 26.0),
        ("gemm sm80", "128x256x32 w2x4 s4"): (174.1, 26.0),
        ("gemm sm80", "256x128x32 w4x2 s3"): (170.9, 26.0),
        ("gemm sm80", "256x128x64 w4x2 s3"): (170.9, 28.3),
        ("gemm sm80", "64x64x32 w2x2 s4"): (674.6, 30.1),
        ("gemm sm80", "64x128x32 w2x2 s4"): (464.3, 29.7),
        ("gemm sm80", "128x64x32 w2x2 s4"): (457.3, 29.9),
        ("gemm sm90", "128x256x64 s4"): (186.7, 26.0),
        ("gemm sm90", "128x256x64 s3"): (186.7, 26.0),
        ("gemm sm90", "128x128x64 s5"): (201.1, 27.6),
        ("gemm sm90", "256x128x64 s4"): (152.9, 26.4),
        ("gemm sm90", "64x256x64 s4"): (320.1, 29.8),
        ("gemm sm90", "128x128x64 s3"): (202.6, 28.0),
        ("gemm sm90", "64x128x64 s6"): (300.7, 30.3),
        ("gemm sm90", "128x64x64 s6"): (173.8, 29.1),
    },
    (4, 16, 4096, 128): {
        ("attention", "b128s64w8st3"): (201.7, 58.5),
        ("attention", "b128s64w8st2"): (201.6, 57.9),
        ("attention", "b128s64w8st3-x2"): (205.6, 62.3),
        ("attention", "b128s64w8st3-qsmem"): (201.6, 58.4),
        ("attention", "b128s64w4st2-qsmem"): (203.2, 56.5),
        ("attention", "b128s32w4st3-qsmem"): (206.9, 56.4),
        ("attention", "b64s64w4st3"): (201.3, 59.0),
        ("attention", "b64s64w4st2"): (201.5, 58.7),
        ("attention", "b128s128w8st2-qsmem"): (201.7, 58.4),
    },
    # held out: read after the predictions with the GH100 tables were committed (681f5b5);
    # `--hw h100 --ncu-all --only gemm --gemm-shape 8192,8192,2048`
    (8192, 8192, 2048): {
        ("gemm sm80", "128x128x32 w2x2 s3"): (574.2, 129.4),
        ("gemm sm80", "128x128x32 w2x2 s4"): (900.3, 127.2),
        ("gemm sm80", "128x128x64 w2x2 s3"): (891.7, 129.3),
        ("gemm sm80", "128x256x32 w2x4 s3"): (582.4, 129.0),
        ("gemm sm80", "128x256x32 w2x4 s4"): (579.1, 128.4),
        ("gemm sm80", "256x128x32 w4x2 s3"): (577.7, 130.0),
        ("gemm sm80", "256x128x64 w4x2 s3"): (576.6, 129.5),
        ("gemm sm80", "64x64x32 w2x2 s4"): (963.7, 130.2),
        ("gemm sm80", "64x128x32 w2x2 s4"): (739.7, 128.3),
        ("gemm sm80", "128x64x32 w2x2 s4"): (1154.8, 129.8),
        ("gemm sm90", "128x256x64 s4"): (322.8, 121.8),
        ("gemm sm90", "128x256x64 s3"): (347.6, 121.8),
        ("gemm sm90", "128x128x64 s5"): (302.2, 125.0),
        ("gemm sm90", "256x128x64 s4"): (175.4, 123.3),
        ("gemm sm90", "64x256x64 s4"): (561.9, 127.4),
        ("gemm sm90", "128x128x64 s3"): (302.3, 124.7),
        ("gemm sm90", "64x128x64 s6"): (569.9, 128.3),
        ("gemm sm90", "128x64x64 s6"): (302.0, 125.8),
        # bands of 16 block rows, 2026-11-24 (`--hw h100 --ncu-all --only gemm --configs "gemm sm80" --gemm-shape 8192,8192,2048`)
        ("gemm sm80 g16", "128x128x32 w2x2 s3"): (169.2, 122.1),
        ("gemm sm80 g16", "128x128x32 w2x2 s4"): (168.9, 121.6),
        ("gemm sm80 g16", "128x128x64 w2x2 s3"): (169.1, 121.5),
        ("gemm sm80 g16", "128x256x32 w2x4 s3"): (211.4, 121.8),
        ("gemm sm80 g16", "128x256x32 w2x4 s4"): (201.1, 121.2),
        ("gemm sm80 g16", "256x128x32 w4x2 s3"): (265.2, 125.0),
        ("gemm sm80 g16", "256x128x64 w4x2 s3"): (230.7, 123.6),
        ("gemm sm80 g16", "64x64x32 w2x2 s4"): (302.0, 125.2),
        ("gemm sm80 g16", "64x128x32 w2x2 s4"): (302.0, 124.5),
        ("gemm sm80 g16", "128x64x32 w2x2 s4"): (167.8, 123.3),
    },
}
NCU_BY_HW = {"h200": NCU_RECORDED, "h100": NCU_RECORDED_H100}


def recorded(hw_key: str, shape: tuple[int, ...]) -> dict[tuple[str, str], tuple[float, float]]:
    """Nsight Compute's (read, written) DRAM MB per (family, label) recorded on that GPU at that shape."""
    return NCU_BY_HW.get(hw_key, {}).get(shape, {})


def gemm_configs() -> list[tuple[str, str, str]]:
    """(family, label, pipeline down to PTX) of each GEMM configuration (those `--configs`
    matches). The sm_80 ones in the plain launch order (family `sm80`) and in bands of
    SM80_GROUP block rows (`sm80 g16`), or in the orders `--sm80-groups` names."""
    from napkin_ir.pipelines import sm80_gemm_pipeline, sm90_gemm_pipeline

    configs = [(f"sm80 g{g}" if g else "sm80", f"{bl[0]}x{bl[1]}x{bl[2]} w{w[0]}x{w[1]} s{s}", sm80_gemm_pipeline(bl, w, s, group=g))
               for g in SM80_GROUPS or (0, SM80_GROUP) for bl, w, s in SM80]
    configs += [("sm90", f"{bl[0]}x{bl[1]}x{bl[2]} s{s}", sm90_gemm_pipeline(bl, s, group=8)) for bl, s in SM90]
    return [c for c in configs if re.search(CONFIGS, f"gemm {c[0]} {c[1]}")]


def attention_configs() -> list[tuple[str, dict]]:
    """(label, compile_attention's keywords) of each of bench_attention's configurations."""
    from bench_attention import CONFIGS

    out = []
    for block, stream, warps, stages, q_regs, per_sm in CONFIGS:
        label = f"b{block}s{stream}w{warps}st{stages}{'' if q_regs else '-qsmem'}{f'-x{per_sm}' if per_sm > 1 else ''}"
        out.append((label, {"block": block, "stream": stream, "warps": warps, "stages": stages, "q_in_registers": q_regs,
                            "blocks_per_sm": per_sm}))
    return out


def model_fields(cost, pred) -> dict:
    """What the tables show of a prediction."""
    return {"predicted_us": pred.seconds * 1e6, "bound": pred.bound, "hbm_bytes": cost.hbm_bytes,
            "dram_bytes": sum(pred.dram.values()), "blocks_per_sm": pred.occupancy.blocks_per_sm}


def model_rows(hw, only: str | None) -> list[dict]:
    """Every configuration predicted on the CPU as the GPU run predicts it (PTX compiled,
    ptxas' registers for sm_80 and attention), without launching anything."""
    from xdsl.utils.exceptions import DiagnosticException

    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.compiler import compile_attention
    from napkin_ir.diagrams import gemm
    from napkin_ir.errors import UserError
    from napkin_ir.passmanager import compile_to_ptx, run_pipeline
    from napkin_ir.plan.recipes.attention import sm80_attention_passes

    refused = (DiagnosticException, UserError, ValueError)  # a configuration the passes refuse is reported
    rows = []
    if only != "attention":
        m, n, k = GEMM_SHAPE
        text = gemm(m, n, k, "bf16")
        for family, label, spec in gemm_configs():
            try:
                regs = ptxas_registers(compile_to_ptx(text, spec)) if family.startswith("sm80") else None
                cost, pred = predict(text, spec.rsplit(",reg-to-ptx", 1)[0], hw, regs)
            except refused as e:
                print(f"  gemm {family} {label}: does not compile ({str(e).splitlines()[0][:100]})", flush=True)
                continue
            rows.append(dict(family=f"gemm {family}", label=label, spec=spec, **model_fields(cost, pred)))
    if only != "gemm":
        b, h, n, d = ATTENTION_SHAPE
        text = attention_diagram("softmax", b, h, n, d, "bf16")
        for label, config in attention_configs():
            try:
                ptx, _ = compile_attention(text, **config)
                cost, pred = predict(text, sm80_attention_passes(run_pipeline(text), **config), hw, ptxas_registers(ptx))
            except refused as e:
                print(f"  attention {label}: does not compile ({str(e).splitlines()[0][:100]})", flush=True)
                continue
            rows.append(dict(family="attention", label=label, config=config, **model_fields(cost, pred)))
    return rows


def spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for rank, i in enumerate(order):
            r[i] = float(rank)
        return r

    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    return 1 - 6 * sum((a - b) ** 2 for a, b in zip(rx, ry)) / (n * (n * n - 1))


def predict(text: str, spec: str, hw, registers: int | None):
    from napkin_ir.model.analysis import analyse_module
    from napkin_ir.model.timing import predict as model_predict
    from napkin_ir.passmanager import run_pipeline

    (cost,) = analyse_module(run_pipeline(text, spec)).kernels
    return cost, model_predict(cost, hw, registers=registers)


def ptxas_registers(ptx: str) -> int | None:
    from napkin_ir.errors import UserError
    from napkin_ir.model.ptxas import ptxas_resources

    try:
        (res,) = ptxas_resources(ptx, "sm_90a").values()
    except (UserError, ValueError):
        return None
    return res.registers


def gemm_rows(torch, hw, args) -> list[dict]:
    from napkin_ir.diagrams import gemm
    from napkin_ir.build import compile_kernel

    m, n, k = GEMM_SHAPE
    text = gemm(m, n, k, "bf16")
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ref = torch.matmul(a, b).float()
    rows = []
    for family, label, spec in gemm_configs():
        try:
            kern = compile_kernel(text, spec)
        except Exception as e:  # a configuration the passes refuse is reported, not fatal
            print(f"  gemm {family} {label}: does not compile ({str(e).splitlines()[0][:100]})", flush=True)
            continue
        regs = ptxas_registers(kern.ptx) if family.startswith("sm80") else None
        cost, pred = predict(text, spec.rsplit(",reg-to-ptx", 1)[0], hw, regs)
        bound = kern.bind({"a": a, "b": b, "out": c})
        c.fill_(float("nan"))
        kern(bound=bound)
        err = ((c.float() - ref).norm() / ref.norm()).item()
        row = dict(family=f"gemm {family}", label=label, spec=spec, err=err, run=lambda kern=kern, bound=bound: kern(sync=False, bound=bound),
                   **model_fields(cost, pred))
        if err < 1e-2:
            rows.append(row)
        else:
            print(f"  gemm {family} {label}: wrong (relative error {err:.1e}), not timed", flush=True)
    return timed(torch, rows)


def timed(torch, rows: list[dict]) -> list[dict]:
    """`rows` with `measured_us`: their kernels timed in turn, batch by batch
    (`bench_gemm.time_interleaved`), the median of the rounds, so that all of them meet the
    clock the GPU sustains and no configuration is measured at a boost another missed."""
    for row, times in zip(rows, time_interleaved(torch, [r.pop("run") for r in rows])):
        row["measured_us"] = statistics.median(times) * 1e3
        print(f"  {row['family']} {row['label']}: predicted {row['predicted_us']:.1f} us ({row['bound']}), "
              f"measured {row['measured_us']:.1f} us, err {row['err']:.1e}", flush=True)
    return rows


def attention_rows(torch, hw) -> list[dict]:
    """Each configuration of bench_attention's list: predicted at the reg level, measured."""
    from napkin_ir.attention_diagrams import attention_diagram
    from napkin_ir.compiler import compile_attention
    from napkin_ir.plan.recipes.attention import sm80_attention_passes
    from napkin_ir.passmanager import run_pipeline
    from napkin_ir.runtime import Param, load_ptx

    b, h, n, d = ATTENTION_SHAPE
    text = attention_diagram("softmax", b, h, n, d, "bf16")
    q, k, v = (torch.randn(b, h, n, d, device="cuda").to(torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v).float()
    rows = []
    for label, config in attention_configs():
        try:
            ptx, cfg = compile_attention(text, **config)
            spec = sm80_attention_passes(run_pipeline(text), **config)
        except Exception as e:
            print(f"  attention {label}: does not compile ({str(e).splitlines()[0][:100]})", flush=True)
            continue
        cost, pred = predict(text, spec, hw, ptxas_registers(ptx))
        kern = load_ptx(ptx).kernel(cfg["name"], [Param.pointer("bf16", (b, h, n, d))] * 3 + [Param.pointer("bf16", (b, h, n, d), out=True)])

        def launch(sync: bool, kern=kern, cfg=cfg) -> None:
            kern.launch(grid=cfg["grid"], block=cfg["block"], smem=cfg["smem"], args=[q, k, v, o], sync=sync)

        o.fill_(float("nan"))
        launch(True)
        err = ((o.float() - ref).norm() / ref.norm()).item()
        row = dict(family="attention", label=label, spec=spec, config=config, err=err, run=lambda launch=launch: launch(False),
                   **model_fields(cost, pred))
        if err < 2e-2:
            rows.append(row)
        else:
            print(f"  attention {label}: wrong (relative error {err:.1e}), not timed", flush=True)
    return timed(torch, rows)


DRAM_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")
# Static launch figures (no replay pass): what the hardware lets reside per SM, to compare
# with the model's occupancy, which sets how many blocks share the L2 at once.
LAUNCH_METRICS = ("launch__registers_per_thread", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
                  "launch__occupancy_limit_warps", "launch__occupancy_limit_blocks")


def _ncu_launches(ncu: str, script: Path, metrics: tuple[str, ...]) -> tuple[list[dict[str, float]], str]:
    """Per profiled launch of a kernel named matmul or attention, in launch order, the
    metrics Nsight Compute read; and what it said."""
    out = subprocess.run([ncu, "--clock-control", "none", "--kernel-name", "regex:^(matmul|attention)$", "--metrics",
                          ",".join(metrics), "--csv", sys.executable, str(script)], capture_output=True, text=True, timeout=540,
                         check=False)
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}
    launches: dict[int, dict[str, float]] = {}
    header = None
    for cells in csv.reader(line for line in out.stdout.splitlines() if line.startswith('"')):
        if header is None:
            header = {name: i for i, name in enumerate(cells)}
            continue
        if cells[header["Metric Name"]] in metrics:
            value = float(cells[header["Metric Value"]].replace(",", ""))
            launches.setdefault(int(cells[header["ID"]]), {})[cells[header["Metric Name"]]] = (
                value * scale.get(cells[header["Metric Unit"]], 1))
    return [launches[i] for i in sorted(launches)], (out.stderr or out.stdout).strip()


def _launch_script(rows: list[dict]) -> str:
    """A program that compiles and launches each row's kernel once, in order, on random inputs."""
    lines = ["import sys, torch", f"sys.path.insert(0, {str(ROOT)!r})"]
    gemms = [r for r in rows if r["family"].startswith("gemm")]
    if gemms:
        lines += ["from napkin_ir.diagrams import gemm", "from napkin_ir.build import compile_kernel",
                  f"m, n, k = {GEMM_SHAPE}",
                  "a = torch.randn(m, k, device='cuda').to(torch.bfloat16); b = torch.randn(k, n, device='cuda').to(torch.bfloat16)",
                  "c = torch.empty(m, n, device='cuda', dtype=torch.bfloat16)",
                  f"for spec in {[r['spec'] for r in gemms]!r}:",
                  "    compile_kernel(gemm(m, n, k, 'bf16'), spec)(a=a, b=b, out=c)",
                  "    torch.cuda.synchronize()"]
    attention = [r for r in rows if r["family"] == "attention"]
    if attention:
        lines += ["from napkin_ir.attention_diagrams import attention_diagram, compile_attention",
                  "from napkin_ir.runtime import Param, load_ptx", f"b, h, n, d = {ATTENTION_SHAPE}",
                  "q, k, v = (torch.randn(b, h, n, d, device='cuda').to(torch.bfloat16) for _ in range(3)); o = torch.empty_like(q)",
                  f"for config in {[r['config'] for r in attention]!r}:",
                  "    ptx, cfg = compile_attention(attention_diagram('softmax', b, h, n, d, 'bf16'), **config)",
                  "    kern = load_ptx(ptx).kernel(cfg['name'], [Param.pointer('bf16', (b, h, n, d))] * 3 + [Param.pointer('bf16', (b, h, n, d), out=True)])",
                  "    kern.launch(grid=cfg['grid'], block=cfg['block'], smem=cfg['smem'], args=[q, k, v, o])"]
    return "\n".join(lines) + "\n"


def ncu_dram(rows: list[dict]) -> list[dict[str, float] | None]:
    """Nsight Compute's readings for one launch of each row's kernel (DRAM bytes read and
    written; the occupancy limits where ncu gives them), all from one profiled process in
    which GEMM rows launch before attention rows; None for each where ncu is missing or
    gave no DRAM counters."""
    ncu = shutil.which("ncu") or next(iter(Path("/usr/local/cuda/bin").glob("ncu")), None)
    if not ncu or not rows:
        return [None] * len(rows)
    ordered = [r for r in rows if r["family"].startswith("gemm")] + [r for r in rows if r["family"] == "attention"]
    script = ROOT / "research" / "_ncu_launches.py"
    script.write_text(_launch_script(ordered))
    try:
        got, said = _ncu_launches(str(ncu), script, DRAM_METRICS + LAUNCH_METRICS)
        if len(got) == len(ordered) and not all(m in g for g in got for m in DRAM_METRICS):
            got, said = _ncu_launches(str(ncu), script, DRAM_METRICS)  # an ncu that lacks a launch metric
    finally:
        script.unlink()
    if len(got) != len(ordered) or not all(m in g for g in got for m in DRAM_METRICS):
        print(f"  ncu profiled {len(got)} launches of {len(ordered)}, or gave no DRAM counters: {said.splitlines()[-3:]}", flush=True)
        return [None] * len(rows)
    by_row = {id(r): g for r, g in zip(ordered, got)}
    return [by_row[id(r)] for r in rows]


def ncu_blocks_per_sm(vals: dict[str, float]) -> int | None:
    limits = [vals[m] for m in LAUNCH_METRICS[1:] if m in vals]
    return int(min(limits)) if len(limits) == len(LAUNCH_METRICS) - 1 else None


def dram_comparison(rows: list[dict], measured: dict[tuple[str, str], tuple[float, float]], source: str) -> list[str]:
    """Model DRAM estimate against ncu's bytes read + written, one line per measured row."""
    lines = [f"DRAM bytes, model against Nsight Compute ({source}); ncu counts dirty lines still in L2 at the end as not written",
             (f"{'family':<14} {'configuration':<22} {'ncu read':>9} {'written':>8} {'total':>8} {'model':>8} {'error':>7} "
              f"{'no-L2 MB':>9} {'blocks/SM':>9}")]
    for r in rows:
        got = measured.get((r["family"], r["label"]))
        if got is None:
            continue
        total = (got[0] + got[1]) * 1e6
        sm = f"{r['blocks_per_sm']}" + (f" (ncu {got[2]})" if len(got) > 2 and got[2] is not None else "")
        lines.append(f"{r['family']:<14} {r['label']:<22} {got[0]:9.1f} {got[1]:8.1f} {total / 1e6:8.1f} {r['dram_bytes'] / 1e6:8.1f} "
                     f"{r['dram_bytes'] / total - 1:+7.1%} {r['hbm_bytes'] / 1e6:9.1f} {sm:>9}")
    return lines


def stages_of(label: str) -> int:
    """The pipeline stages in a configuration's label (`... s3`, `b128s64w8st3-qsmem`)."""
    m = re.search(r"(?:^| )s(\d+)$|st(\d+)", label)
    if not m:
        raise ValueError(f"no stages in {label!r}")
    return int(m.group(1) or m.group(2))


def model_pick(rows: list[dict]) -> dict:
    """Among measured configurations, the one the model picks: the fastest prediction, near-ties
    broken as autotile breaks them (`napkin_ir.plan.autotile.preference`)."""
    from napkin_ir.plan.autotile import preference

    fastest = min(r["predicted_us"] for r in rows)
    return min(rows, key=lambda r: preference(r["predicted_us"], fastest, r["hbm_bytes"], stages_of(r["label"])))


def summary(rows: list[dict], picks: dict[str, str]) -> list[str]:
    lines = []
    for family in sorted({r["family"] for r in rows}):
        rs = [r for r in rows if r["family"] == family]
        if len(rs) < 2:
            continue
        rho = spearman([r["predicted_us"] for r in rs], [r["measured_us"] for r in rs])
        best = min(rs, key=lambda r: r["measured_us"])
        pick = model_pick(rs)
        lines.append(f"{family}: {len(rs)} configurations, Spearman rho {rho:.2f}; best measured {best['label']} "
                     f"{best['measured_us']:.1f} us; the model's pick {pick['label']} measures {pick['measured_us']:.1f} us "
                     f"({pick['measured_us'] / best['measured_us'] - 1:+.1%} from the best)")
        if family in picks:
            chosen = [r for r in rs if r["label"] == picks[family]]
            if chosen:
                lines.append(f"  autotile chose {picks[family]}: {chosen[0]['measured_us']:.1f} us "
                             f"({chosen[0]['measured_us'] / best['measured_us'] - 1:+.1%} from the best)")
            else:
                lines.append(f"  autotile chose {picks[family]} (not among the measured configurations)")
    return lines


def autotile_picks(hw_key: str) -> dict[str, str]:
    from napkin_ir.diagrams import gemm
    from napkin_ir.plan.autotile import SearchSpace, autotile

    m, n, k = GEMM_SHAPE
    picks = {}
    for family, space in (("gemm sm80", SearchSpace(target="sm80")), (f"gemm sm80 g{SM80_GROUP}", SearchSpace(target="sm80", group=SM80_GROUP)),
                          ("gemm sm90", SearchSpace(target="sm90", stream_sizes=(64,), group=8))):
        c = autotile(gemm(m, n, k, "bf16"), hw_key, space=space).config
        bl = f"{c.grid['m']}x{c.grid['n']}x{c.stream['k']}"
        picks[family] = f"{bl} w{c.warps.get('m', 1)}x{c.warps.get('n', 1)} s{c.stages}" if "sm80" in family else f"{bl} s{c.stages}"
    return picks


def model_only(hw_key: str, only: str | None) -> int:
    """The model's predictions and DRAM estimates on the CPU, against the recorded ncu readings."""
    from napkin_ir.model.hardware import hardware

    hw = hardware(hw_key)
    rows = model_rows(hw, only)
    lines = [f"model on the {hw.name} (no GPU: nothing launched or timed)",
             f"{'family':<14} {'configuration':<22} {'predicted us':>12} {'bound':<14} {'blocks/SM':>9} {'model DRAM MB':>13}"]
    for r in rows:
        lines.append(f"{r['family']:<14} {r['label']:<22} {r['predicted_us']:12.1f} {r['bound']:<14} {r['blocks_per_sm']:9d} "
                     f"{r['dram_bytes'] / 1e6:13.1f}")
    readings = {**recorded(hw.key, GEMM_SHAPE), **recorded(hw.key, ATTENTION_SHAPE)}
    if any((r["family"], r["label"]) in readings for r in rows):
        lines += [""] + dram_comparison(rows, readings, f"recorded on the {hw.name}")
    else:
        lines += ["", f"no Nsight Compute readings recorded on the {hw.name} for GEMM {shape_text(GEMM_SHAPE)} "
                      f"or attention {shape_text(ATTENTION_SHAPE)}"]
    _emit(lines)
    return 0


def shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def parse_shape(text: str, n: int) -> tuple[int, ...]:
    try:
        shape = tuple(int(x) for x in text.replace("x", ",").split(","))
    except ValueError:
        shape = ()
    if len(shape) != n or min(shape) <= 0:
        raise argparse.ArgumentTypeError(f"expected {n} positive integers separated by commas, got {text!r}")
    return shape


def parse_groups(text: str) -> tuple[int, ...]:
    try:
        groups = tuple(int(x) for x in text.split(","))
    except ValueError:
        groups = ()
    if not groups or min(groups) < 0:
        raise argparse.ArgumentTypeError(f"expected band heights (0: plain) separated by commas, got {text!r}")
    return groups


def _emit(lines: list[str]) -> None:
    text = "\n".join(lines)
    print("\n" + text)
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "validate_model.txt").write_text(text + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hw", default="h200")
    ap.add_argument("--ncu", action="store_true", help="read DRAM bytes with Nsight Compute for each family's fastest and slowest configuration")
    ap.add_argument("--ncu-all", action="store_true", help="read DRAM bytes with Nsight Compute for every configuration")
    ap.add_argument("--only", choices=["gemm", "attention"], help="one family only")
    ap.add_argument("--model-only", action="store_true", help="the model alone, on the CPU, against the recorded ncu readings")
    ap.add_argument("--gemm-shape", type=lambda t: parse_shape(t, 3), default=DEFAULT_GEMM_SHAPE, help="M,N,K of the GEMM")
    ap.add_argument("--attention-shape", type=lambda t: parse_shape(t, 4), default=DEFAULT_ATTENTION_SHAPE, help="B,H,N,D of attention")
    ap.add_argument("--no-autotile", action="store_true", help="skip autotile's own picks (a CPU search; run it with --model-only)")
    ap.add_argument("--sm80-groups", type=parse_groups, default=(),
                    help="the sm_80 launch orders to run, bands of block rows (0: plain); default 0 and 16")
    ap.add_argument("--configs", default="", help="only the GEMM configurations whose 'gemm family label' this regular expression matches")
    args = ap.parse_args()
    global GEMM_SHAPE, ATTENTION_SHAPE, CONFIGS, SM80_GROUPS  # noqa: PLW0603 (the shapes every function here uses)
    GEMM_SHAPE, ATTENTION_SHAPE, CONFIGS, SM80_GROUPS = args.gemm_shape, args.attention_shape, args.configs, args.sm80_groups
    print(f"GEMM {shape_text(GEMM_SHAPE)}, attention {shape_text(ATTENTION_SHAPE)} (B, H, N, D), bf16", flush=True)
    if args.model_only:
        return model_only(args.hw, args.only)

    import torch

    from napkin_ir.model.hardware import hardware

    hw = hardware(args.hw)
    print(f"device: {torch.cuda.get_device_name()}  model: {hw.name}", flush=True)
    picks = autotile_picks(args.hw) if args.only != "attention" and not args.no_autotile else {}
    print(f"autotile: {picks}", flush=True)
    rows = gemm_rows(torch, hw, args) if args.only != "attention" else []
    rows += attention_rows(torch, hw) if args.only != "gemm" else []
    lines = [f"{'family':<14} {'configuration':<22} {'predicted us':>12} {'measured us':>12} {'bound':<14} {'model DRAM MB':>13}"]
    for r in rows:
        lines.append(f"{r['family']:<14} {r['label']:<22} {r['predicted_us']:12.1f} {r['measured_us']:12.1f} {r['bound']:<14} "
                     f"{r['dram_bytes'] / 1e6:13.1f}")
    lines += [""] + summary(rows, picks)
    if args.ncu or args.ncu_all:
        chosen = []
        for family in sorted({r["family"] for r in rows}):  # each family's fastest and slowest, or all
            rs = sorted((r for r in rows if r["family"] == family), key=lambda r: r["measured_us"])
            chosen += rs if args.ncu_all else [rs[0], rs[-1]] if len(rs) > 1 else rs
        measured = {}
        for r, got in zip(chosen, ncu_dram(chosen)):
            if got:
                read, written = got["dram__bytes_read.sum"], got["dram__bytes_write.sum"]
                measured[(r["family"], r["label"])] = (read / 1e6, written / 1e6, ncu_blocks_per_sm(got))
                print(f"  ncu {r['family']} {r['label']}: DRAM read {read / 1e6:.1f} MB, written {written / 1e6:.1f} MB; "
                      f"model {r['dram_bytes'] / 1e6:.1f} MB ({r['dram_bytes'] / (read + written) - 1:+.1%}); "
                      f"launch {({k.removeprefix('launch__'): v for k, v in got.items() if k.startswith('launch__')})}", flush=True)
        lines += [""] + dram_comparison(rows, measured, f"measured now, {torch.cuda.get_device_name()}")
    _emit(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
