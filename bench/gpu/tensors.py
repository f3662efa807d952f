"""ONNX TensorProto files and initializers as torch tensors (bf16 included, which numpy lacks)."""
import os

import numpy as np
import onnx
import torch

# ONNX data_type → (torch dtype, numpy dtype of the raw bytes)
_RAW = {
    onnx.TensorProto.FLOAT: (torch.float32, np.float32),
    onnx.TensorProto.DOUBLE: (torch.float64, np.float64),
    onnx.TensorProto.FLOAT16: (torch.float16, np.float16),
    onnx.TensorProto.BFLOAT16: (torch.bfloat16, np.int16),
    onnx.TensorProto.INT64: (torch.int64, np.int64),
    onnx.TensorProto.INT32: (torch.int32, np.int32),
    onnx.TensorProto.BOOL: (torch.bool, np.bool_),
}


def from_proto(t):
    """A TensorProto as a CPU torch tensor."""
    dims = list(t.dims)
    if t.data_type in _RAW and t.raw_data:
        dtype, raw = _RAW[t.data_type]
        arr = np.frombuffer(t.raw_data, dtype=raw).copy().reshape(dims)
        out = torch.from_numpy(arr)
        return out.view(torch.bfloat16) if dtype == torch.bfloat16 else out
    if t.data_type == onnx.TensorProto.BFLOAT16:  # bf16 bits stored in int32_data
        bits = np.array(t.int32_data, dtype=np.int32).astype(np.int16).reshape(dims)
        return torch.from_numpy(bits).view(torch.bfloat16)
    return torch.from_numpy(onnx.numpy_helper.to_array(t).copy())


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, from_proto(t)


def read_data_set(folder, prefix):
    """input_N.pb or output_N.pb files of a folder, in N order, as [(name, tensor)]."""
    out, i = [], 0
    while os.path.exists(os.path.join(folder, f"{prefix}_{i}.pb")):
        out.append(read_pb(os.path.join(folder, f"{prefix}_{i}.pb")))
        i += 1
    return out


def read_initializers(onnx_path):
    """The model's initializers by name (weights that the .tsr holds as consts)."""
    model = onnx.load(onnx_path)
    return {t.name: from_proto(t) for t in model.graph.initializer}


def read_input_types(onnx_path):
    """[(shape, torch dtype)] of the graph inputs that are not initializers."""
    model = onnx.load(onnx_path)
    inits = {t.name for t in model.graph.initializer}
    out = []
    for v in model.graph.input:
        if v.name in inits:
            continue
        tt = v.type.tensor_type
        out.append(([d.dim_value for d in tt.shape.dim], _RAW[tt.elem_type][0]))
    return out
