//! Build script of the C library (the `clib/` member): gives the shared library its SONAME.
//!
//! Plain cargo links a cdylib without a SONAME, so a program linked against it would record the
//! bare file name (or a build path) and any later ABI break would go unnoticed at load time. We
//! follow cargo-c's rule, from the version in Cargo.toml:
//!
//! - `0.<minor>.<patch>` → `libdlpack_helpers.so.0.<minor>` (before 1.0 every minor may break
//!   the ABI);
//! - `<major>.<minor>.<patch>` with major ≥ 1 → `libdlpack_helpers.so.<major>`.
//!
//! `CMakeLists.txt` applies the same rule to the installed file names and to the CMake version
//! file's compatibility (`SameMinorVersion` for 0.x, `SameMajorVersion` from 1.0 on); the
//! packaging test (`scripts/test.d/60-packaging.sh`) checks that they agree.
//!
//! The argument reaches only the cdylib (`cargo:rustc-cdylib-link-arg`), never the rlib, the
//! staticlib, tests or examples.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../Cargo.toml");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("CARGO_PKG_VERSION_MAJOR");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("CARGO_PKG_VERSION_MINOR");
    // This member inherits `workspace.package.version`; CMakeLists.txt, scripts/build and the
    // Rust crate read the root package's own `version = "…"` line. They must be one version.
    let own = std::env::var("CARGO_PKG_VERSION").expect("CARGO_PKG_VERSION");
    let root = std::fs::read_to_string("../Cargo.toml").expect("../Cargo.toml");
    let root_version = root
        .lines()
        .find_map(|l| {
            let v = l
                .strip_prefix("version")?
                .trim_start()
                .strip_prefix('=')?
                .trim();
            Some(v.trim_matches('"').to_string())
        })
        .expect("a version line in ../Cargo.toml");
    assert_eq!(
        own, root_version,
        "workspace.package.version ({own}) differs from the root package's version \
         ({root_version}) in Cargo.toml: set both to the same value"
    );
    let sover = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    // ELF targets whose linker takes `-soname`; macOS (install_name) and Windows (DLL names) are
    // not supported yet.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux"
            | "android"
            | "freebsd"
            | "netbsd"
            | "openbsd"
            | "dragonfly"
            | "illumos"
            | "solaris"
    );
    if elf {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libdlpack_helpers.so.{sover}");
    }
}
