"""Launch a napkin-ir kernel from its .ptx and .json files alone, through the CUDA driver API
(cuda-python), without napkin-ir installed. docs/launch.md explains each step.

    napkin-opt examples/matmul.mlir -p napkin-sm90 -t ptx -o matmul.ptx --launch-json matmul.json
    python examples/launch_from_files.py matmul.ptx matmul.json
"""

import ctypes
import json
import sys

import numpy as np
from cuda.bindings import driver as cu

DTYPES = {"bf16": np.uint16, "f16": np.float16, "f32": np.float32}  # numpy has no bf16: its bits as uint16


def ok(result):
    """The values of a driver call, or an error naming its CUresult."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA error {cu.cuGetErrorName(err)[1].decode()}")
    return values[0] if len(values) == 1 else values


def launch(ptx_path, json_path, pointers, stream=0, device=0):
    """Launch the kernel on `pointers` (the contract's argument names -> device addresses of
    C-contiguous arrays of the contract's dtype and shape), asynchronously on `stream`."""
    c = json.load(open(json_path))
    module = ok(cu.cuModuleLoadData(open(ptx_path, "rb").read() + b"\0"))
    kernel = ok(cu.cuModuleGetFunction(module, c["kernel"].encode()))
    ok(cu.cuFuncSetAttribute(kernel, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             c["dynamic_smem_bytes"]))  # more than 48 KiB must be asked for
    values, types = [], []
    for p in c["params"]:
        if p["role"] == "accumulate":  # the blocks add into it: it starts at zero
            ok(cu.cuMemsetD32Async(pointers[p["arg"]], 0, int(np.prod(p["shape"])), cu.CUstream(stream)))
        if p["kind"] == "pointer":
            values.append(pointers[p["arg"]]), types.append(ctypes.c_void_p)
            continue
        t, shape, item = p["tma"], p["shape"], np.dtype(DTYPES[p["dtype"]]).itemsize  # a tensor map, by value
        strides = [item * int(np.prod(shape[k + 1:])) for k in range(len(shape) - 1)]
        values.append(ok(cu.cuTensorMapEncodeTiled(
            getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + t["data_type"]), len(shape), pointers[p["arg"]],
            [cu.cuuint64_t(d) for d in shape[::-1]], [cu.cuuint64_t(s) for s in strides[::-1]],  # innermost first
            [cu.cuuint32_t(b) for b in t["box"][::-1]], [cu.cuuint32_t(1)] * len(shape),
            getattr(cu.CUtensorMapInterleave, "CU_TENSOR_MAP_INTERLEAVE_" + t["interleave"]),
            getattr(cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + t["swizzle"].upper()),
            getattr(cu.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_" + t["l2_promotion"]),
            getattr(cu.CUtensorMapFloatOOBfill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_" + t["oob_fill"])))), types.append(None)
    grid = c["grid"]
    if c["persistent_blocks_per_sm"]:  # a persistent grid: as many blocks as the device holds at once
        sms = ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device))
        blocks = min(grid[0], c["persistent_blocks_per_sm"] * sms)
        grid = [blocks - blocks % (c["cluster"][0] if c["cluster"] else 1), 1, 1]  # whole clusters
    config = cu.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = c["block"]
    config.sharedMemBytes, config.hStream = c["dynamic_smem_bytes"], cu.CUstream(stream)
    if c["cluster"]:
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = c["cluster"]
        config.attrs, config.numAttrs = [attr], 1
    ok(cu.cuLaunchKernelEx(config, kernel, (tuple(values), tuple(types)), 0))
    return module  # unload it (cuModuleUnload) once the stream is done with the kernel


def main(ptx_path, json_path):
    """Random inputs, a launch, and a checksum of each output."""
    ok(cu.cuInit(0))
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))))
    rng, host, pointers = np.random.default_rng(0), {}, {}
    for p in json.load(open(json_path))["params"]:
        x = rng.standard_normal(p["shape"], dtype=np.float32)
        host[p["arg"]] = (x.view(np.uint32) >> 16).astype(np.uint16) if p["dtype"] == "bf16" else x.astype(DTYPES[p["dtype"]])
        pointers[p["arg"]] = int(ok(cu.cuMemAlloc(host[p["arg"]].nbytes)))
        ok(cu.cuMemcpyHtoD(pointers[p["arg"]], host[p["arg"]].ctypes.data, host[p["arg"]].nbytes))
    launch(ptx_path, json_path, pointers)
    ok(cu.cuCtxSynchronize())
    for p in json.load(open(json_path))["params"]:
        if p["role"] in ("out", "accumulate"):
            out = host[p["arg"]]
            ok(cu.cuMemcpyDtoH(out.ctypes.data, pointers[p["arg"]], out.nbytes))
            values = (out.astype(np.uint32) << 16).view(np.float32) if p["dtype"] == "bf16" else out.astype(np.float32)
            values = values * p.get("scale", 1.0)  # a factor the kernel left to its caller
            print(f"{p['arg']}: {p['dtype']}{p['shape']} sum of |x| = {np.abs(values).sum(dtype=np.float64):.6e}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
