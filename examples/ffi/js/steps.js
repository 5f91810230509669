// The steps of examples/ffi/c/steps.c from Node.js through koffi. The structs, constants and
// prototypes come from dlpack_helpers_abi.js, generated from the specification's manifest
// (python3 examples/ffi/bindgen.py js spec/abi.toml > dlpack_helpers_abi.js): none by hand.
// Run: LD_LIBRARY_PATH=<sdk>/lib node steps.js   (koffi loads the SONAME)
'use strict';
const koffi = require('koffi');
const abi = require('./dlpack_helpers_abi.js');
const { fn } = abi.load(process.env.DLPACK_HELPERS_SONAME_PATH);
const C = abi.constants, S = abi.structs;

function must(st, what) {
  if (st !== C.DLPACK_HELPERS_STATUS_OK) {
    console.log(`${what} failed: ${fn.dlpack_last_error_message()}`);
    process.exit(1);
  }
}

// (a) what the library is
const info = { struct_size: koffi.sizeof(S.dlpack_helpers_info) };
must(fn.dlpack_get_info(info), 'dlpack_get_info');
console.log(`(a) library ${info.version}, DLPack ABI major ${info.dlpack_abi_major}, ` +
  `DLPack ${info.dlpack_version.major}.${info.dlpack_version.minor}, caps 0x${info.capabilities.toString(16)}, ` +
  `legacy ${info.accepts_legacy}, spec ${info.spec_version}, profiles 0x${info.profiles.toString(16)}, ` +
  `filled ${info.struct_size} bytes`);

// (b) a producer: the tensor keeps the buffer and the callback, so both are native: the buffer
// from koffi.alloc (never a typed array), the callback registered (a plain JS function passed
// as an argument is freed when the call returns and the release would never run).
const prod = { count: 6, released: 0 };
prod.buf = koffi.alloc('float', prod.count);
koffi.encode(prod.buf, 'float', [0, 1, 2, 3, 4, 5], prod.count);
prod.release = koffi.register(() => {
  console.log(`    release callback: buffer of ${prod.count} floats`);
  prod.released++;
}, koffi.pointer(abi.callbacks.release));
const cpu = { device_type: C.kDLCPU, device_id: 0 };
const f32 = { code: C.kDLFloat, bits: 32, lanes: 1 };
const out = [null];
must(fn.dlpack_tensor_create(prod.buf, cpu, 2, [2, 3], null, f32, 0, 0, prod.release, null, out),
  'dlpack_tensor_create');
const t = out[0];
console.log('(b) created a 2x3 float32 tensor');

// (c) a consumer: version, validation, element [1][2] through the strides, queries, names
const compat = [-1];
must(fn.dlpack_tensor_check_version_or_delete(t, compat), 'check_version');
const opt = { struct_size: koffi.sizeof(S.dlpack_helpers_validate_options),
  flags: C.DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | C.DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
  dtype: f32 };
const layout = {};
must(fn.dlpack_tensor_validate(t, opt, layout), 'validate');
const dl = koffi.decode(t, S.DLManagedTensorVersioned).dl_tensor;
const strides = Array.from(koffi.decode(dl.strides, 'int64_t', dl.ndim), Number); // a BigInt64Array
const el = koffi.decode(dl.data, Number(dl.byte_offset) + 4 * (1 * strides[0] + 2 * strides[1]), 'float');
const access = [-1];
must(fn.dlpack_tensor_host_access(t, null, access), 'host_access');
const dev = {};
must(fn.dlpack_get_device(t, dev), 'get_device');
const name = (f, v) => { const b = Buffer.alloc(C.DLPACK_HELPERS_NAME_MAX); must(f(v, b, b.length, null), 'format'); return koffi.decode(b, 'char', -1); };
console.log(`(c) version compat ${compat[0]}, valid (numel ${layout.numel}, ${layout.nbytes} bytes), ` +
  `t[1][2] = ${el}, host access ${access[0]}, cpu accessible ${fn.dlpack_is_cpu_accessible(dev)}, ` +
  `device ${name(fn.dlpack_device_format, dev)} (type ${dev.device_type} id ${dev.device_id}), ` +
  `dtype ${name(fn.dlpack_dtype_format, dl.dtype)}`);

// (e) a refused validation: the status, its name and the message
opt.dtype = { code: C.kDLInt, bits: 64, lanes: 1 };
const st = fn.dlpack_tensor_validate(t, opt, null);
console.log(`(e) validate as int64: status ${st} ${fn.dlpack_status_string(st)}: ${fn.dlpack_last_error_message()}`);

// (d) one delete; then the callback and the buffer may go
fn.dlpack_tensor_delete(t);
console.log(`(d) deleted; release callback ran ${prod.released} time(s)`);
koffi.unregister(prod.release);
koffi.free(prod.buf);
if (prod.released !== 1) process.exit(1);

// (f) a producer with no callback: the library allocates the buffer and its own deleter frees
// it; the program fills it through the strides and hands the tensor on.
const err = { struct_size: koffi.sizeof(S.dlpack_helpers_error) };
must(fn.dlpack_tensor_alloc_with_error(cpu, 2, [2, 3], null, f32, 0, out, err), 'alloc');
const a = out[0];
const ad = koffi.decode(a, S.DLManagedTensorVersioned).dl_tensor;
const as = Array.from(koffi.decode(ad.strides, 'int64_t', ad.ndim), Number);
const at = (i, j) => Number(ad.byte_offset) + 4 * (i * as[0] + j * as[1]);
for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) koffi.encode(ad.data, at(i, j), 'float', 10 * (3 * i + j));
opt.dtype = f32;
must(fn.dlpack_tensor_validate_with_error(a, opt, layout, err), 'validate');
console.log(`(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel ${layout.numel}, ` +
  `${layout.nbytes} bytes), t[1][2] = ${koffi.decode(ad.data, at(1, 2), 'float')}, data aligned to ` +
  `${C.DLPACK_HELPERS_ALLOC_ALIGNMENT}: ${koffi.address(ad.data) % BigInt(C.DLPACK_HELPERS_ALLOC_ALIGNMENT) === 0n}`);
const gpu = { device_type: C.kDLCUDA, device_id: 0 };
const st2 = fn.dlpack_tensor_alloc_with_error(gpu, 2, [2, 3], null, f32, 0, [null], err);
console.log(`(f) alloc on cuda:0: status ${st2} ${fn.dlpack_status_string(st2)} (error object: status ${err.status}): ${err.message}`);

// (g) the error path from 8 concurrent chains of koffi async calls, which run on libuv's worker
// threads: the two-call path reads dlpack_last_error_message() afterwards on the main thread,
// another OS thread than the failing call's; the error object carries the message with it.
const THREADS = 8, CALLS = 20000;
const refuse = (k) => ({ struct_size: opt.struct_size, flags: C.DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
  dtype: { code: C.kDLInt, bits: 64, lanes: k + 1 } });
const expected = [];
for (let k = 0; k < THREADS; k++) {
  const e = { struct_size: err.struct_size };
  if (fn.dlpack_tensor_validate_with_error(a, refuse(k), null, e) === C.DLPACK_HELPERS_STATUS_OK) process.exit(1);
  expected.push(e.message);
}
const call = (f, args) => new Promise((ok, bad) => f.async(...args, (e, r) => (e ? bad(e) : ok(r))));
async function chain(k, twoCall) {
  const o = refuse(k);
  let wrong = 0;
  for (let i = 0; i < CALLS; i++) {
    let msg;
    if (twoCall) {
      if (await call(fn.dlpack_tensor_validate, [a, o, null]) === C.DLPACK_HELPERS_STATUS_OK) process.exit(1);
      msg = fn.dlpack_last_error_message();
    } else {
      const e = { struct_size: err.struct_size };
      if (await call(fn.dlpack_tensor_validate_with_error, [a, o, null, e]) === C.DLPACK_HELPERS_STATUS_OK) process.exit(1);
      msg = e.message;
    }
    if (msg !== expected[k]) wrong++;
  }
  return wrong;
}
const stress = async (twoCall) => (await Promise.all([...Array(THREADS).keys()].map((k) => chain(k, twoCall))))
  .reduce((x, y) => x + y, 0);
(async () => {
  const wrong = await stress(false);
  console.log(`(g) error object: ${THREADS} threads, ${THREADS * CALLS} failing calls, ${wrong} wrong messages`);
  console.log(`[figure] two-call thread-local path: ${await stress(true)} wrong messages of ${THREADS * CALLS}`);
  fn.dlpack_tensor_delete(a);
  console.log('(h) deleted the allocated tensor');
  process.exit(wrong === 0 ? 0 : 1);
})();
