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

/// The line of `cbindgen/dlpack_abi.h` after which its text goes into the header.
const ABI_BLOCK_START: &str = "/* BEGIN DLPACK ABI BLOCK */\n";

/// The DLPack ABI block: the part of `cbindgen/dlpack_abi.h` after [`ABI_BLOCK_START`] (the part
/// before it makes the fragment compile alone).
fn abi_block() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("cbindgen/dlpack_abi.h");
    let text = std::fs::read_to_string(&path).expect("cbindgen/dlpack_abi.h");
    let start = text
        .find(ABI_BLOCK_START)
        .unwrap_or_else(|| panic!("{} lacks the line {ABI_BLOCK_START:?}", path.display()));
    text[start + ABI_BLOCK_START.len()..].to_owned()
}

fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    assert!(
        config.after_includes.is_none(),
        "cbindgen.toml sets after_includes: the DLPack ABI block belongs in cbindgen/dlpack_abi.h"
    );
    config.after_includes = Some(format!("{}{}", version_macros(), abi_block()));
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

/// The ABI fragment is real C: it compiles alone, warning-free, as C11 and as C++11.
#[test]
fn abi_fragment_compiles_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fragment = root.join("cbindgen/dlpack_abi.h");
    for (compiler, lang, std) in [("CC", "c", "-std=c11"), ("CXX", "c++", "-std=c++11")] {
        let default = if compiler == "CC" { "cc" } else { "c++" };
        let exe = std::env::var(compiler).unwrap_or_else(|_| default.to_owned());
        let out = std::process::Command::new(&exe)
            .args(["-x", lang, std, "-Wall", "-Wextra", "-Wpedantic", "-Werror"])
            .arg("-fsyntax-only")
            .arg(&fragment)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the compiler '{exe}': {e}"));
        assert!(
            out.status.success(),
            "cbindgen/dlpack_abi.h does not compile alone as {lang}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
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

/// Everything the generated part of the header declares is ours: `DLPACK_HELPERS_*` macros,
/// `dlpack_helpers_*` types, `dlpack_*` functions. A `pub` item of another name in `src/capi`
/// (a Python or CUDA constant, say) would otherwise leak into every user's namespace and can
/// collide with the real definition (`METH_O` from Python.h did).
#[test]
fn generated_names_are_ours() {
    let header = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h"),
    )
    .unwrap();
    let marker = "end of the DLPack ABI";
    let generated = &header[header.find(marker).expect("ABI end marker")..];
    let mut foreign = Vec::new();
    for line in generated.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("#define ") {
            let name = rest.split_whitespace().next().unwrap_or("");
            if !name.starts_with("DLPACK_HELPERS_") {
                foreign.push(format!("macro {name}"));
            }
        } else if l.starts_with("typedef ") && l.ends_with(';') {
            let name = l
                .trim_end_matches(';')
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if !name.starts_with("dlpack_helpers_") {
                foreign.push(format!("typedef {name}"));
            }
        } else if l.starts_with("} ") && l.ends_with(';') {
            let name = l.trim_start_matches("} ").trim_end_matches(';');
            if !name.starts_with("dlpack_helpers_") {
                foreign.push(format!("struct {name}"));
            }
        }
    }
    // Declarations only: drop comments before looking for `name(`.
    let mut code = String::new();
    let mut rest = generated;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    code.push_str(rest);
    let mut functions = 0;
    for cap in code.split(';') {
        if let Some(open) = cap.find('(') {
            let before = &cap[..open];
            if before.contains("typedef") || before.contains('#') || before.contains('=') {
                continue;
            }
            let name = before
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if !name.is_empty() && before.trim_end().ends_with(name) {
                if name.starts_with("dlpack_") {
                    functions += 1;
                } else {
                    foreign.push(format!("function {name}"));
                }
            }
        }
    }
    assert!(
        functions > 40,
        "the scan found only {functions} functions: it is broken"
    );
    assert!(
        foreign.is_empty(),
        "the generated header declares names that are not ours: {foreign:?}"
    );
}

/// The contents list at the top of the header names only functions the header declares, and the
/// status codes are declared in numeric order.
#[test]
fn contents_list_and_status_order() {
    let header = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h"),
    )
    .unwrap();
    let start = header
        .find(" * Contents")
        .expect("the header has a contents list");
    let end = start + header[start..].find("*/").unwrap();
    let mut named = 0;
    for word in header[start..end].split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.starts_with("dlpack_") && !word.starts_with("dlpack_helpers_") {
            named += 1;
            let call = format!("{word}(");
            assert!(
                header.lines().any(|l| {
                    let t = l.trim_start();
                    !t.starts_with('*') && !t.starts_with("/*") && t.contains(&call)
                }),
                "the contents list names {word}, which the header does not declare"
            );
        }
    }
    assert!(named > 20, "the contents list names only {named} functions");
    let codes: Vec<i64> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define DLPACK_HELPERS_STATUS_"))
        .map(|rest| rest.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(codes.len() > 30, "found only {} status codes", codes.len());
    assert!(
        codes.windows(2).all(|w| w[0] < w[1]),
        "status codes are not declared in numeric order: {codes:?}"
    );
}
