//! The source tree's parts import only downward: `safe` (the safe Rust API, on top of the exports)
//! → `capi` (the exports) → `host` (what the library finds in the process at run time) → `rules`
//! (pure rules) → `abi` (DLPack's structs).
//!
//! Reads every `.rs` file under `src/` as text and fails on any `crate::<part>` path (in a `use`
//! line or inline) that names a part above the file's own, and on any `extern "C"` export
//! (`#[unsafe(no_mangle)]` / `#[no_mangle]`) outside `capi`. Run by the lint part of
//! `scripts/test` (`cargo test --test layers`); ARCHITECTURE.md draws the same picture.

use std::path::{Path, PathBuf};

/// The parts, lowest first: a file may name its own part and the parts before it.
const PARTS: [&str; 5] = ["abi", "rules", "host", "capi", "safe"];

fn rank(part: &str) -> Option<usize> {
    PARTS.iter().position(|p| *p == part)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The part a file belongs to: `src/<part>.rs` or `src/<part>/…`; `lib.rs` declares the parts.
fn part_of(src: &Path, file: &Path) -> Option<&'static str> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    PARTS.iter().find(|p| **p == name).copied()
}

/// The code of a line, without a trailing `//` comment (doc comments included).
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Every part named by a `crate::<part>` path on the line, also inside `use crate::{a, b}`.
fn named_parts(line: &str) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let head = item.trim().split("::").next().unwrap_or("");
                found.extend(PARTS.iter().find(|p| **p == head));
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            found.extend(PARTS.iter().find(|p| **p == &after[..end]));
        }
        rest = after;
    }
    found
}

fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for file in &files {
        let Some(own) = part_of(src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        // A multi-line `use crate::{…}` is joined so that each of its names is seen.
        let mut joined = String::new();
        for (n, raw) in text.lines().enumerate() {
            let line = code(raw);
            joined.push_str(line);
            let open = joined.matches('{').count() > joined.matches('}').count();
            if open && joined.trim_start().starts_with("use ") {
                continue;
            }
            for named in named_parts(&joined) {
                if rank(named) > rank(own) {
                    bad.push(format!(
                        "{}:{}: `{own}` imports `{named}`, a higher part ({})",
                        file.display(),
                        n + 1,
                        joined.trim()
                    ));
                }
            }
            if own != "capi" && (line.contains("no_mangle")) {
                bad.push(format!(
                    "{}:{}: an export outside src/capi/",
                    file.display(),
                    n + 1
                ));
            }
            joined.clear();
        }
    }
    bad
}

#[test]
fn lower_parts_never_import_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn every_part_exists_and_lib_declares_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for part in PARTS {
        assert!(
            src.join(format!("{part}.rs")).is_file() || src.join(part).is_dir(),
            "src/{part} is missing"
        );
        assert!(
            lib.contains(&format!("mod {part};")),
            "lib.rs does not declare {part}"
        );
    }
}

/// The check itself can fail: an upward import in a scratch tree is reported, with its line.
#[test]
fn an_upward_import_is_reported() {
    let dir = std::env::temp_dir().join(format!("dlpack-helpers-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::create_dir_all(dir.join("host")).unwrap();
    std::fs::write(dir.join("abi.rs"), "use crate::rules::Error;\n").unwrap();
    std::fs::write(
        dir.join("rules/a.rs"),
        "// crate::capi in a comment is fine\nuse crate::{\n    abi::X,\n    host::Y,\n};\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("host/b.rs"),
        "fn f() { crate::capi::g(); crate::rules::h(); }\n",
    )
    .unwrap();
    let bad = violations(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(
        bad[0].contains("abi.rs:1: `abi` imports `rules`"),
        "{bad:#?}"
    );
    assert!(
        bad[1].contains("host/b.rs:1: `host` imports `capi`"),
        "{bad:#?}"
    );
    assert!(
        bad[2].contains("rules/a.rs:5: `rules` imports `host`"),
        "{bad:#?}"
    );
}
