#!/usr/bin/env node
// Times one ONNX model on onnxruntime's CPU execution provider, fed from an ONNX test data set folder
// (input_N.pb, the files `tessera-cli run --output` writes), and compares its outputs with output_N.pb there.
//
//   node ort_time.js MODEL.onnx DATA_DIR [--threads N] [--reps N] [--warmup N]
//
// Prints one JSON object: {"ort_version", "threads", "median_ms", "min_ms", "reps", "outputs": [{"name",
// "max_abs_err", "max_rel_err", "compared"}]}. max_rel_err is the largest |ort - expected| over the largest
// |expected| of that output (a scale-aware error that zeros in the output cannot blow up).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readTensorProto } = require('./tensor_proto');

function parseArgs(argv) {
  const args = { threads: 1, reps: 20, warmup: 3, positional: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--threads' || a === '--reps' || a === '--warmup') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < (a === '--warmup' ? 0 : 1)) throw new Error(`${a} needs a positive integer`);
      args[a.slice(2)] = v;
    } else {
      args.positional.push(a);
    }
  }
  if (args.positional.length !== 2) throw new Error('usage: ort_time.js MODEL.onnx DATA_DIR [--threads N] [--reps N] [--warmup N]');
  return args;
}

// The feeds: input_N.pb for N = 0, 1, ... in the order of the session's inputs; a file's own name wins when it
// names one of the session's inputs.
function loadFeeds(session, dir) {
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const file = path.join(dir, `input_${i}.pb`);
    if (!fs.existsSync(file)) throw new Error(`${file}: missing (model input ${i} '${name}')`);
    const t = readTensorProto(file);
    const key = session.inputNames.includes(t.name) ? t.name : name;
    feeds[key] = new ort.Tensor(t.type, t.data, t.dims);
  });
  return feeds;
}

function compare(actual, expected) {
  let maxAbs = 0, maxRef = 0;
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n; ++i) {
    const a = Number(actual[i]), e = Number(expected[i]);
    maxAbs = Math.max(maxAbs, Math.abs(a - e));
    maxRef = Math.max(maxRef, Math.abs(e));
  }
  if (actual.length !== expected.length) maxAbs = Infinity;
  return { max_abs_err: maxAbs, max_rel_err: maxRef > 0 ? maxAbs / maxRef : maxAbs };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const [model, dir] = args.positional;
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  const feeds = loadFeeds(session, dir);
  let results;
  for (let i = 0; i < args.warmup; ++i) results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.reps; ++i) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const outputs = session.outputNames.map((name, i) => {
    const file = path.join(dir, `output_${i}.pb`);
    if (!fs.existsSync(file)) return { name, compared: false };
    return { name, compared: true, ...compare(results[name].data, readTensorProto(file).data) };
  });
  const report = {
    ort_version: ort.env.versions.node, threads: args.threads, reps: args.reps,
    median_ms: median(times), min_ms: Math.min(...times), outputs,
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_time.js: ${e.message}\n`);
  process.exit(2);
});
