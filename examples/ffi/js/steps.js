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
process.exit(prod.released === 1 ? 0 : 1);
