//! The committed C header must equal a fresh cbindgen generation.
//!
//! Regenerate with `DLPACK_HELPERS_BLESS=1 cargo test --test header`.

use std::path::Path;

fn version_macros() -> String {
    let major: u32 = env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap();
    let minor: u32 = env!("CARGO_PKG_VERSION_MINOR").parse().unwrap();
    let patch: u32 = env!("CARGO_PKG_VERSION_PATCH").parse().unwrap();
    format!(
        "\n/* Version of the dlpack-helpers headers (from Cargo.toml). dlpack_get_info() reports the\n \
         * version of the library actually loaded. */\n\
         #define DLPACK_HELPERS_VERSION_MAJOR {major}\n\
         #define DLPACK_HELPERS_VERSION_MINOR {minor}\n\
         #define DLPACK_HELPERS_VERSION_PATCH {patch}\n\
         #define DLPACK_HELPERS_VERSION_STRING \"{major}.{minor}.{patch}\"\n\
         /** major * 10000 + minor * 100 + patch */\n\
         #define DLPACK_HELPERS_VERSION_NUMBER ({major} * 10000 + {minor} * 100 + {patch})\n"
    )
}

fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let abi = config.after_includes.take().unwrap_or_default();
    config.after_includes = Some(format!("{}{}", version_macros(), abi));
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen failed");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn header_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h");
    let fresh = generate();
    if std::env::var_os("DLPACK_HELPERS_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/dlpack_helpers.h is stale: regenerate it with `DLPACK_HELPERS_BLESS=1 cargo test --test header`"
    );
}

#[test]
fn version_macros_match_cargo_toml() {
    let header = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h"),
    )
    .unwrap();
    let want = format!(
        "#define DLPACK_HELPERS_VERSION_STRING \"{}\"",
        env!("CARGO_PKG_VERSION")
    );
    assert!(header.contains(&want), "missing {want}");
}

/// cbindgen merges same-named constants from different modules into one `#define` silently, so
/// two modules defining `DLPACK_HELPERS_X` with different values would give C one of them. Every
/// exported constant, type and function name must be defined exactly once in `src/capi`.
#[test]
fn exported_names_are_defined_once() {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/capi"),
        &mut files,
    );
    let mut seen = std::collections::HashMap::new();
    let mut dups = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines() {
            let l = line.trim_start();
            let name = [
                "pub const ",
                "pub type ",
                "pub struct ",
                "pub unsafe extern \"C\" fn ",
                "pub extern \"C\" fn ",
            ]
            .iter()
            .find_map(|p| l.strip_prefix(p))
            .map(|rest| {
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap()
                    .to_string()
            });
            if let Some(name) =
                name.filter(|n| n.starts_with("dlpack") || n.starts_with("DLPACK_HELPERS"))
            {
                if let Some(prev) = seen.insert(name.clone(), f.clone()) {
                    dups.push(format!("{name}: {} and {}", prev.display(), f.display()));
                }
            }
        }
    }
    assert!(dups.is_empty(), "C names defined more than once: {dups:#?}");
}
