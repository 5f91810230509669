//! The Rust ABI mirrors (`src/abi.rs`) against the C definitions in `include/dlpack_helpers.h`,
//! as compiled by the system C compiler. (`scripts/test.d/25-abi-oracle.sh` compares the same
//! C definitions with the official DLPack header.)

use dlpack_helpers::abi::*;
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::Path;
use std::process::Command;

fn c_dump() -> BTreeMap<String, i64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = root.join("target").join("abi-test");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join("abi_dump_ours");
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(0)
        .target(&target_triple())
        .host(&target_triple())
        .get_compiler();
    let status = Command::new(compiler.path())
        .arg("-std=c11")
        .arg(format!("-I{}", root.join("include").display()))
        .arg("-DABI_HEADER=\"dlpack_helpers.h\"")
        .arg(root.join("tests-c/abi_dump.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling tests-c/abi_dump.c failed");
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn target_triple() -> String {
    // Integration tests run on the host; cc needs a triple to pick the compiler.
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" => format!("{arch}-unknown-linux-gnu"),
        "macos" => format!("{arch}-apple-darwin"),
        os => format!("{arch}-unknown-{os}"),
    }
}

macro_rules! expect {
    ($m:ident, $key:expr, $val:expr) => {{
        let key: &str = $key;
        let got = *$m.get(key).unwrap_or_else(|| panic!("C dump lacks {key}"));
        assert_eq!(got, $val as i64, "{key}: C says {got}, Rust says {}", $val);
        $m.remove(key);
    }};
}

macro_rules! layout {
    ($m:ident, $cname:literal, $t:ty, [$($f:ident),*]) => {{
        expect!($m, concat!("sizeof(", $cname, ")"), size_of::<$t>());
        expect!($m, concat!("alignof(", $cname, ")"), align_of::<$t>());
        $( expect!($m, concat!("offsetof(", $cname, ".", stringify!($f), ")"), offset_of!($t, $f)); )*
    }};
}

#[test]
fn rust_mirrors_match_the_c_header() {
    let mut m = c_dump();
    layout!(m, "DLPackVersion", DLPackVersion, [major, minor]);
    expect!(m, "sizeof(DLDeviceType)", size_of::<DLDeviceType>());
    expect!(m, "alignof(DLDeviceType)", align_of::<DLDeviceType>());
    layout!(m, "DLDevice", DLDevice, [device_type, device_id]);
    layout!(m, "DLDataType", DLDataType, [code, bits, lanes]);
    layout!(
        m,
        "DLTensor",
        DLTensor,
        [data, device, ndim, dtype, shape, strides, byte_offset]
    );
    layout!(
        m,
        "DLManagedTensor",
        DLManagedTensor,
        [dl_tensor, manager_ctx, deleter]
    );
    layout!(
        m,
        "struct DLManagedTensorVersioned",
        DLManagedTensorVersioned,
        [version, manager_ctx, deleter, flags, dl_tensor]
    );
    layout!(
        m,
        "DLPackExchangeAPIHeader",
        DLPackExchangeAPIHeader,
        [version, prev_api]
    );
    layout!(
        m,
        "DLPackExchangeAPI",
        DLPackExchangeAPI,
        [
            header,
            managed_tensor_allocator,
            managed_tensor_from_py_object_no_sync,
            managed_tensor_to_py_object_no_sync,
            dltensor_from_py_object_no_sync,
            current_work_stream
        ]
    );
    expect!(m, "DLPACK_MAJOR_VERSION", DLPACK_MAJOR_VERSION);
    expect!(m, "DLPACK_MINOR_VERSION", DLPACK_MINOR_VERSION);
    expect!(
        m,
        "DLPACK_FLAG_BITMASK_READ_ONLY",
        DLPACK_FLAG_BITMASK_READ_ONLY
    );
    expect!(
        m,
        "DLPACK_FLAG_BITMASK_IS_COPIED",
        DLPACK_FLAG_BITMASK_IS_COPIED
    );
    expect!(
        m,
        "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
        DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
    );
    type D = DLDeviceType;
    for (name, v) in [
        ("kDLCPU", D::kDLCPU),
        ("kDLCUDA", D::kDLCUDA),
        ("kDLCUDAHost", D::kDLCUDAHost),
        ("kDLOpenCL", D::kDLOpenCL),
        ("kDLVulkan", D::kDLVulkan),
        ("kDLMetal", D::kDLMetal),
        ("kDLVPI", D::kDLVPI),
        ("kDLROCM", D::kDLROCM),
        ("kDLROCMHost", D::kDLROCMHost),
        ("kDLExtDev", D::kDLExtDev),
        ("kDLCUDAManaged", D::kDLCUDAManaged),
        ("kDLOneAPI", D::kDLOneAPI),
        ("kDLWebGPU", D::kDLWebGPU),
        ("kDLHexagon", D::kDLHexagon),
        ("kDLMAIA", D::kDLMAIA),
        ("kDLTrn", D::kDLTrn),
    ] {
        expect!(m, name, v.0);
    }
    type C = DLDataTypeCode;
    for (name, v) in [
        ("kDLInt", C::kDLInt),
        ("kDLUInt", C::kDLUInt),
        ("kDLFloat", C::kDLFloat),
        ("kDLOpaqueHandle", C::kDLOpaqueHandle),
        ("kDLBfloat", C::kDLBfloat),
        ("kDLComplex", C::kDLComplex),
        ("kDLBool", C::kDLBool),
        ("kDLFloat8_e3m4", C::kDLFloat8_e3m4),
        ("kDLFloat8_e4m3", C::kDLFloat8_e4m3),
        ("kDLFloat8_e4m3b11fnuz", C::kDLFloat8_e4m3b11fnuz),
        ("kDLFloat8_e4m3fn", C::kDLFloat8_e4m3fn),
        ("kDLFloat8_e4m3fnuz", C::kDLFloat8_e4m3fnuz),
        ("kDLFloat8_e5m2", C::kDLFloat8_e5m2),
        ("kDLFloat8_e5m2fnuz", C::kDLFloat8_e5m2fnuz),
        ("kDLFloat8_e8m0fnu", C::kDLFloat8_e8m0fnu),
        ("kDLFloat6_e2m3fn", C::kDLFloat6_e2m3fn),
        ("kDLFloat6_e3m2fn", C::kDLFloat6_e3m2fn),
        ("kDLFloat4_e2m1fn", C::kDLFloat4_e2m1fn),
    ] {
        expect!(m, name, v.0);
    }
    assert!(
        m.is_empty(),
        "C dump has entries the test does not check: {m:?}"
    );
}
