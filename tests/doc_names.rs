//! Every `dlpack_*` name a doc comment of the header mentions must exist in the header.
//!
//! C readers follow names in the docs ("see `dlpack_object_import`"); a name that was renamed or
//! never existed (`dlpack_py_import`) sends them nowhere. This test reads the committed header,
//! collects every identifier the code declares (functions, types, fields), and fails for any
//! `dlpack_…` word in a comment that is not among them. A trailing `*` (`dlpack_capsule_*`) is a
//! family: some declared function must start with it. Words in double quotes are strings
//! (capsule names such as `"dlpack_exchange_api"`), not identifiers; `dlpack_helpers` alone is
//! the project's name.

use std::collections::BTreeSet;
use std::path::Path;

/// Split C source into (code, comments), dropping string literals from neither.
fn split(src: &str) -> (String, Vec<String>) {
    let (mut code, mut comments) = (String::new(), Vec::new());
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            let end = r.find("*/").expect("unterminated comment");
            comments.push(r[..end].to_owned());
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix("//") {
            let end = r.find('\n').unwrap_or(r.len());
            comments.push(r[..end].to_owned());
            rest = &r[end..];
        } else {
            let c = rest.chars().next().unwrap();
            code.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    (code, comments)
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `dlpack_…` words (lowercase, so `DLPACK_HELPERS_*` macros are not taken) that start at a word
/// boundary not inside a path (`dlpack/dlpack.h`) or a string (`"dlpack_exchange_api"`). A
/// trailing `*` is kept.
fn words(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = text[i..].find("dlpack_") {
        let start = i + off;
        let prev = if start == 0 {
            ' '
        } else {
            b[start - 1] as char
        };
        let mut end = start;
        while end < b.len() && is_word(b[end] as char) {
            end += 1;
        }
        let word = &text[start..end];
        let lower = word.chars().all(|c| !c.is_ascii_uppercase());
        if !is_word(prev) && !matches!(prev, '"' | '/' | '.') && lower {
            let star = end < b.len() && b[end] == b'*';
            out.push(format!("{word}{}", if star { "*" } else { "" }));
        }
        i = end.max(start + 1);
    }
    out
}

/// Identifiers the header declares, and the unknown names its comments mention.
fn unknown_names(header: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (code, comments) = split(header);
    let declared: BTreeSet<String> = words(&code)
        .into_iter()
        .filter(|w| !w.ends_with('*'))
        .collect();
    let mut unknown = BTreeSet::new();
    for c in &comments {
        for w in words(c) {
            if w == "dlpack_helpers" {
                continue; // the project, Python package and C++ namespace name
            }
            let ok = match w.strip_suffix('*') {
                Some(prefix) => declared.iter().any(|d| d.starts_with(prefix)),
                None => declared.contains(&w),
            };
            if !ok {
                unknown.insert(w);
            }
        }
    }
    (declared, unknown)
}

#[test]
fn header_doc_comments_name_only_declared_functions() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h");
    let header = std::fs::read_to_string(&path).unwrap();
    let (declared, unknown) = unknown_names(&header);
    assert!(
        declared.contains("dlpack_object_import") && declared.contains("dlpack_tensor_delete"),
        "the scan found no declarations; is the header empty?"
    );
    assert!(
        unknown.is_empty(),
        "doc comments in include/dlpack_helpers.h name functions the header does not declare: \
         {unknown:?}; fix the Rust doc comments, then `DLPACK_HELPERS_BLESS=1 cargo test --test header`"
    );
}

/// The scan itself: it must catch the names the new-user test found (`dlpack_py_import`,
/// `dlpack_py*`) and let through declared names, families, strings, paths and macros.
#[test]
fn the_scan_catches_undeclared_names() {
    let header = "/* see `dlpack_py_import`; every `dlpack_py*` entry; `dlpack_object_import`; \
                  `dlpack_object_*`; capsule \"dlpack_exchange_api\"; dlpack/dlpack.h; the dlpack_helpers \
                  package; `dlpack_helpers_status`; `dlpack_helpers_nothing`; \
                  DLPACK_HELPERS_STATUS_OK; __dlpack__; __dlpack_device__; libdlpack_helpers.so */\n\
                  typedef int dlpack_helpers_status;\n\
                  int dlpack_object_import(void *obj);\n\
                  // and `dlpack_gone`\n";
    let (_, unknown) = unknown_names(header);
    let want: BTreeSet<String> = [
        "dlpack_py_import",
        "dlpack_py*",
        "dlpack_gone",
        "dlpack_helpers_nothing",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(unknown, want);
}
