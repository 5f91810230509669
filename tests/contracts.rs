//! The structured doc contracts in the header: each export's `@retval DLPACK_HELPERS_STATUS_X
//! when …` and `@param[dir] name May be NULL.` lines (the bad-input matrix in
//! `tests-reliability/` is generated from them). Every documented status exists, every fallible
//! export documents its statuses this way, every tagged parameter exists, and every status code
//! has a name and a Python exception.

use dlpack_helpers::capi::error::{dlpack_status_python_exception, dlpack_status_string};
use std::ffi::CStr;
use std::path::Path;

struct Export {
    name: String,
    ret: String,
    params: Vec<String>,
    doc: Vec<String>,
}

fn header() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h"))
        .unwrap()
}

/// `#define DLPACK_HELPERS_STATUS_<NAME> <code>`, in header order.
fn status_codes(h: &str) -> Vec<(String, i32)> {
    h.lines()
        .filter_map(|l| l.strip_prefix("#define DLPACK_HELPERS_STATUS_"))
        .map(|rest| {
            let mut it = rest.split_whitespace();
            let name = it.next().unwrap().to_owned();
            (name, it.next().unwrap().parse().unwrap())
        })
        .collect()
}

/// Every function declaration with the doc comment right above it.
fn exports(h: &str) -> Vec<Export> {
    let lines: Vec<&str> = h.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let decl = !l.starts_with([' ', '\t', '*', '/', '#', '}'])
            && !l.starts_with("typedef")
            && l.find('(').is_some_and(|open| {
                l[..open]
                    .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .is_some_and(|w| w.starts_with("dlpack_"))
            });
        if decl {
            // The declaration may span lines until ';'.
            let mut text = l.to_owned();
            let mut j = i;
            while !text.contains(';') {
                j += 1;
                text.push(' ');
                text.push_str(lines[j].trim());
            }
            let open = text.find('(').unwrap();
            let before = &text[..open];
            let name_start = before
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |p| p + 1);
            let name = before[name_start..].to_owned();
            let ret = before[..name_start].trim().to_owned();
            let inner = &text[open + 1..text.rfind(')').unwrap()];
            let params = if inner.trim() == "void" {
                Vec::new()
            } else {
                inner
                    .split(',')
                    .map(|p| {
                        // A function pointer `void (*release)(void *ctx)` is named inside `(*…)`.
                        let p = match p.split_once("(*") {
                            Some((_, rest)) => rest.split(')').next().unwrap_or(""),
                            None => p.trim(),
                        };
                        p.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .find(|w| !w.is_empty())
                            .unwrap_or("")
                            .to_owned()
                    })
                    .collect()
            };
            // The doc comment ends on the line above.
            let mut doc = Vec::new();
            let mut k = i;
            if k > 0 && lines[k - 1].trim() == "*/" {
                k -= 1;
                while k > 0 && !lines[k - 1].starts_with("/**") {
                    k -= 1;
                    doc.push(
                        lines[k]
                            .trim_start()
                            .trim_start_matches('*')
                            .trim()
                            .to_owned(),
                    );
                }
                doc.reverse();
            }
            out.push(Export {
                name,
                ret,
                params,
                doc,
            });
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn retvals(doc: &[String]) -> Vec<String> {
    doc.iter()
        .filter_map(|l| l.strip_prefix("@retval DLPACK_HELPERS_STATUS_"))
        .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn every_documented_status_exists_and_is_documented_once() {
    let h = header();
    let codes = status_codes(&h);
    let all = exports(&h);
    assert!(all.len() > 40, "found only {} exports", all.len());
    let mut problems = Vec::new();
    for e in &all {
        let r = retvals(&e.doc);
        for s in &r {
            if !codes.iter().any(|(n, _)| n == s) {
                problems.push(format!(
                    "{}: @retval names {s}, which is not a status",
                    e.name
                ));
            }
            if r.iter().filter(|x| *x == s).count() > 1 {
                problems.push(format!("{}: @retval {s} appears twice", e.name));
            }
        }
        if e.ret != "dlpack_helpers_status" && !r.is_empty() {
            problems.push(format!(
                "{}: returns {}, yet documents @retval",
                e.name, e.ret
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_fallible_export_documents_its_statuses_with_retval() {
    let h = header();
    let mut missing = Vec::new();
    for e in exports(&h) {
        if e.ret != "dlpack_helpers_status" {
            continue;
        }
        let r = retvals(&e.doc);
        if !r.iter().any(|s| s == "OK") {
            missing.push(format!("{}: no @retval DLPACK_HELPERS_STATUS_OK", e.name));
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

#[test]
fn every_tagged_parameter_exists() {
    let h = header();
    let mut problems = Vec::new();
    let mut tagged = 0;
    for e in exports(&h) {
        for l in &e.doc {
            let Some(rest) = l.strip_prefix("@param[") else {
                continue;
            };
            tagged += 1;
            let (dir, rest) = rest.split_once("] ").unwrap_or(("", rest));
            if !["in", "out", "in,out"].contains(&dir) {
                problems.push(format!(
                    "{}: @param[{dir}] is not in, out or in,out",
                    e.name
                ));
            }
            let name = rest.split_whitespace().next().unwrap_or("");
            if !e.params.iter().any(|p| p == name) {
                problems.push(format!(
                    "{}: @param names {name}, not a parameter ({:?})",
                    e.name, e.params
                ));
            }
            if !rest.ends_with("May be NULL.") {
                problems.push(format!(
                    "{}: `{l}` (the only tag form is `@param[dir] name May be NULL.`)",
                    e.name
                ));
            }
        }
    }
    assert!(tagged > 15, "found only {tagged} @param tags");
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Every status code has a name (`dlpack_status_string` gives its macro's suffix) and a Python
/// exception that Python has (`dlpack_status_python_exception`); OK has none.
#[test]
fn every_status_has_a_name_and_a_python_exception() {
    const PYTHON_EXCEPTIONS: &[&str] = &[
        "BufferError",
        "MemoryError",
        "TypeError",
        "ValueError",
        "RuntimeError",
        "AttributeError",
    ];
    let h = header();
    let codes = status_codes(&h);
    assert!(codes.len() > 30, "found only {} status codes", codes.len());
    for (name, code) in codes {
        // SAFETY: both return static NUL-terminated strings for any code.
        let (got_name, exc) = unsafe {
            (
                CStr::from_ptr(dlpack_status_string(code)).to_str().unwrap(),
                CStr::from_ptr(dlpack_status_python_exception(code))
                    .to_str()
                    .unwrap(),
            )
        };
        assert_eq!(got_name, name, "dlpack_status_string({code})");
        if code == 0 {
            assert_eq!(exc, "", "OK maps to no exception");
        } else {
            assert!(
                PYTHON_EXCEPTIONS.contains(&exc),
                "status {name} ({code}) maps to {exc:?}, not a Python exception this library raises"
            );
        }
    }
}
