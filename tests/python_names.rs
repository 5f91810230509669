//! Peer case 8: the capsule-name macros in the header are the specification's strings, byte for
//! byte, and equal the constants the library uses.

use dlpack_helpers::rules::python as names;
use std::path::Path;

fn macro_value(header: &str, name: &str) -> String {
    let prefix = format!("#define {name} ");
    let line = header
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{name} missing"));
    line[prefix.len()..].trim().trim_matches('"').to_owned()
}

#[test]
fn case_8_capsule_name_macros_match_the_spec() {
    let header = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_helpers.h"),
    )
    .unwrap();
    for (name, spec, ours) in [
        (
            "DLPACK_HELPERS_CAPSULE_LEGACY",
            "dltensor",
            names::CAPSULE_LEGACY,
        ),
        (
            "DLPACK_HELPERS_CAPSULE_LEGACY_USED",
            "used_dltensor",
            names::CAPSULE_LEGACY_USED,
        ),
        (
            "DLPACK_HELPERS_CAPSULE_VERSIONED",
            "dltensor_versioned",
            names::CAPSULE_VERSIONED,
        ),
        (
            "DLPACK_HELPERS_CAPSULE_VERSIONED_USED",
            "used_dltensor_versioned",
            names::CAPSULE_VERSIONED_USED,
        ),
        (
            "DLPACK_HELPERS_CAPSULE_EXCHANGE_API",
            "dlpack_exchange_api",
            names::CAPSULE_EXCHANGE_API,
        ),
    ] {
        assert_eq!(macro_value(&header, name), spec, "{name}");
        assert_eq!(ours.to_bytes(), spec.as_bytes(), "{name}");
    }
}
