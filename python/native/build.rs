//! Links the extension against the shared C library built in the same CMake run.
//!
//! `DLPACK_HELPERS_LINK_DIR` (set by CMakeLists.txt) is the folder holding
//! `libdlpack_helpers.so` (a link to the SONAME file). The extension records the SONAME as
//! `DT_NEEDED` and finds it at run time through `$ORIGIN/lib`: the wheel installs the library as
//! `dlpack_helpers/lib/` next to `dlpack_helpers/_native.abi3.so`.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DLPACK_HELPERS_LINK_DIR");
    let dir = std::env::var("DLPACK_HELPERS_LINK_DIR").unwrap_or_else(|_| {
        panic!(
            "DLPACK_HELPERS_LINK_DIR is not set: build this crate through the repository's \
             CMakeLists.txt (`pip install .` at the repository root), which builds \
             libdlpack_helpers.so first and passes its folder"
        )
    });
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=dlpack_helpers");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN/lib");
    // A build id, as the C library has: debuggers match the separate debug file by it (Zig's
    // linker, used for wheels, does not add one unless asked).
    println!("cargo:rustc-cdylib-link-arg=-Wl,--build-id");
}
