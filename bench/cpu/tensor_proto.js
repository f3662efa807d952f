// Reads one ONNX TensorProto file (input_N.pb / output_N.pb of an ONNX test data set) into
// {name, type, dims, data} with `type` one of onnxruntime-node's tensor type names and `data` a typed array.
// Only the fields such files use: dims (1), data_type (2), float_data (4), int32_data (5), int64_data (7),
// name (8), raw_data (9), double_data (10); others are skipped.
'use strict';
const fs = require('fs');

// ONNX data_type → [onnxruntime-node type, typed array, bytes per element]
const TYPES = {
  1: ['float32', Float32Array, 4],
  2: ['uint8', Uint8Array, 1],
  3: ['int8', Int8Array, 1],
  5: ['int16', Int16Array, 2],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  9: ['bool', Uint8Array, 1],
  10: ['float16', Uint16Array, 2],
  11: ['float64', Float64Array, 8],
};

class Reader {
  constructor(buf, file) { this.buf = buf; this.pos = 0; this.file = file; }
  done() { return this.pos >= this.buf.length; }
  varint() {
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error(`${this.file}: truncated varint`);
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 63n) throw new Error(`${this.file}: varint too long`);
    }
  }
  bytes(n) {
    if (this.pos + n > this.buf.length) throw new Error(`${this.file}: field runs past the end`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function signed64(v) { return BigInt.asIntN(64, v); }

// Values of a repeated scalar field, packed (wire type 2) or one at a time.
function readRepeated(r, wire, kind, out) {
  const one = (rr) => {
    if (kind === 'float') return rr.bytes(4).readFloatLE(0);
    if (kind === 'double') return rr.bytes(8).readDoubleLE(0);
    return signed64(rr.varint());
  };
  if (wire !== 2) {
    out.push(one(r));
    return;
  }
  const len = Number(r.varint());
  const sub = new Reader(r.bytes(len), r.file);
  while (!sub.done()) out.push(one(sub));
}

function skip(r, wire) {
  if (wire === 0) r.varint();
  else if (wire === 1) r.bytes(8);
  else if (wire === 2) r.bytes(Number(r.varint()));
  else if (wire === 5) r.bytes(4);
  else throw new Error(`${r.file}: unsupported wire type ${wire}`);
}

function readTensorProto(file) {
  const r = new Reader(fs.readFileSync(file), file);
  const dims = [], floats = [], ints = [], doubles = [];
  let dataType = 0, name = '', raw = null;
  while (!r.done()) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    if (field === 1) readRepeated(r, wire, 'int', dims);
    else if (field === 2) dataType = Number(r.varint());
    else if (field === 4) readRepeated(r, wire, 'float', floats);
    else if (field === 5 || field === 7) readRepeated(r, wire, 'int', ints);
    else if (field === 8) name = r.bytes(Number(r.varint())).toString('utf8');
    else if (field === 9) raw = r.bytes(Number(r.varint()));
    else if (field === 10) readRepeated(r, wire, 'double', doubles);
    else skip(r, wire);
  }
  const t = TYPES[dataType];
  if (!t) throw new Error(`${file}: tensor '${name}' has ONNX data type ${dataType}, which this reader does not handle`);
  const [type, Arr, size] = t;
  const shape = dims.map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  let data;
  if (raw) {
    if (raw.length !== count * size) throw new Error(`${file}: raw_data has ${raw.length} bytes, ${count * size} expected`);
    data = new Arr(Uint8Array.prototype.slice.call(raw).buffer);  // a copy of its own: aligned, and not Node's shared pool
  } else {
    const src = dataType === 1 ? floats : dataType === 11 ? doubles : ints;
    if (src.length !== count) throw new Error(`${file}: ${src.length} values for ${count} elements`);
    data = Arr === BigInt64Array ? BigInt64Array.from(src, (v) => BigInt(v)) : Arr.from(src, Number);
  }
  return { name, type, dims: shape, data };
}

module.exports = { readTensorProto };
