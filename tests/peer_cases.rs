//! `docs/peer-cases.md` resolves every "peer case N" the repository cites: each cited number (in
//! the sources, the header, the docs and the tests, and in test names `case_<N>_…`) has an entry,
//! and every test an entry names exists in the file it names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Text files under the repository's own directories (not target/, .venv/, .git/).
fn text_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "__pycache__" {
                    walk(&p, out);
                }
            } else if [
                ".rs", ".py", ".c", ".h", ".cpp", ".hpp", ".md", ".sh", ".toml",
            ]
            .iter()
            .any(|x| name.ends_with(x))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for d in [
        "src",
        "include",
        "cbindgen",
        "tests",
        "tests-c",
        "tests-cpp",
        "tests-py",
        "tests-reliability",
        "python",
        "docs",
        "benches",
        "examples",
        "fuzz/src",
        "scripts",
    ] {
        walk(&root().join(d), &mut out);
    }
    for f in [
        "README.md",
        "ARCHITECTURE.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
    ] {
        let p = root().join(f);
        if p.exists() {
            out.push(p);
        }
    }
    out
}

/// The numbers after each "peer case" / "peer cases" (any case): "peer cases 10 and 12",
/// "peer case 38, 39", "peer case 1/2".
fn cited_numbers(text: &str, out: &mut BTreeSet<u32>) {
    let lower = text.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("peer case") {
        rest = &rest[i + "peer case".len()..];
        let mut s = rest.strip_prefix('s').unwrap_or(rest);
        loop {
            s = s.trim_start_matches([' ', '\n', '*', '/']);
            let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
            if digits.is_empty() {
                break;
            }
            out.insert(digits.parse().unwrap());
            s = &s[digits.len()..];
            let next = s.trim_start_matches([' ', '\n', '*']);
            if let Some(n) = next
                .strip_prefix(", and ")
                .or_else(|| next.strip_prefix(", "))
                .or_else(|| next.strip_prefix("and "))
                .or_else(|| next.strip_prefix('/'))
            {
                s = n;
            } else {
                break;
            }
        }
    }
}

/// The case number a test name starts with: `case_29_…`, `test_case_1_…`.
fn test_name_number(word: &str) -> Option<u32> {
    let w = word.strip_prefix("test_").unwrap_or(word);
    let digits: String = w
        .strip_prefix("case_")?
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn catalogue() -> String {
    std::fs::read_to_string(root().join("docs/peer-cases.md")).expect("docs/peer-cases.md")
}

fn entries(doc: &str) -> BTreeSet<u32> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("## Case "))
        .map(|rest| {
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse().expect("a number after '## Case '")
        })
        .collect()
}

#[test]
fn every_cited_peer_case_has_an_entry() {
    let doc = catalogue();
    let have = entries(&doc);
    let mut missing = Vec::new();
    for f in text_files() {
        if f.ends_with("docs/peer-cases.md") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let mut cited = BTreeSet::new();
        cited_numbers(&text, &mut cited);
        let is_test = [
            "tests",
            "tests-c",
            "tests-cpp",
            "tests-py",
            "tests-reliability",
            "src",
        ]
        .iter()
        .any(|d| f.starts_with(root().join(d)));
        if is_test {
            for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if let Some(n) = test_name_number(word) {
                    cited.insert(n);
                }
            }
        }
        for n in cited.difference(&have) {
            missing.push(format!(
                "case {n} (cited in {})",
                f.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(
        have.len() > 30,
        "docs/peer-cases.md has only {} entries",
        have.len()
    );
    assert!(
        missing.is_empty(),
        "peer cases cited without an entry in docs/peer-cases.md: {missing:#?}"
    );
}

#[test]
fn every_test_the_catalogue_names_exists() {
    let doc = catalogue();
    let mut named = 0;
    let mut missing = Vec::new();
    for line in doc.lines() {
        let Some(list) = line.strip_prefix("- Tests: ") else {
            continue;
        };
        // `path`: `name`, `name`; `path`: `name`
        for group in list.split("; ") {
            let Some((path, names)) = group.split_once(": ") else {
                continue;
            };
            let path = path.trim_matches('`');
            let text = std::fs::read_to_string(root().join(path)).unwrap_or_default();
            let words: BTreeSet<&str> = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .collect();
            for name in names.split(", ").map(|n| n.trim_matches('`')) {
                named += 1;
                if !words.contains(name) {
                    missing.push(format!("{name} in {path}"));
                }
            }
        }
    }
    assert!(named > 50, "the catalogue names only {named} tests");
    assert!(
        missing.is_empty(),
        "docs/peer-cases.md names tests that do not exist: {missing:#?}"
    );
}

#[test]
fn the_parser_reads_every_citation_form() {
    let mut got = BTreeSet::new();
    cited_numbers(
        "Peer case 8; peer cases 10 and 12; (peer case 38, 39); peer cases 1, 2, and 3; \
         peer case 40/42; peer\n * case",
        &mut got,
    );
    assert_eq!(got, BTreeSet::from([1, 2, 3, 8, 10, 12, 38, 39, 40, 42]));
    assert_eq!(test_name_number("test_case_47_copy"), Some(47));
    assert_eq!(test_name_number("case_5_6_misbehaving"), Some(5));
    assert_eq!(test_name_number("cases"), None);
}
