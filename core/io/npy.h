#pragma once
// NumPy's .npy format (version 1.0): the magic "\x93NUMPY", a version, a little-endian header length, and a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces to a
// multiple of 64 bytes, then the data in C order. Dtypes NumPy lacks are widened: bf16 and the float8 types to
// float32, i4/u4 to int8/uint8 (npyDescr says what a dtype becomes).
#include <string>

#include "ir/tensor.h"

namespace tessera {

// The descr a tensor of `t` is written with ("<f4", "|u1", ...).
std::string npyDescr(DType t);
// The whole file's bytes.
std::string npyBytes(const Tensor& t);
// Writes atomically; throws Error naming the path.
void writeNpy(const Tensor& t, const std::string& path);
// Reads what writeNpy wrote (any little-endian C-order array of the descrs above); throws Error naming the
// file and what is wrong.
Tensor readNpy(const std::string& path);

}  // namespace tessera
