//! Capsule names and the consumer rules of the Python embedding: name classification (byte for
//! byte) and the `TypeError` retry rule. The exporter's `dl_device`/`copy` decision is
//! `dlpack_export_request_resolve`, fuzzed by the `stream` target. The real capsule state machine
//! with CPython is exercised by tests-reliability/test_capsule_fuzz.py.

use crate::Input;
use dlpack_helpers::rules::Error;
use dlpack_helpers::rules::python::*;

const NAMES: [&[u8]; 6] = [
    b"dltensor",
    b"dltensor_versioned",
    b"used_dltensor",
    b"used_dltensor_versioned",
    b"dltensor_used",
    b"dlpack_exchange_api",
];

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    // A name: one of the interesting ones, mutated, or raw bytes.
    let sel = input.u8();
    let mut name: Vec<u8> = NAMES[(sel % 6) as usize].to_vec();
    match sel / 6 % 4 {
        0 => {}
        1 => {
            let i = input.u8() as usize % (name.len() + 1);
            name.insert(i, input.u8());
        }
        2 => {
            if !name.is_empty() {
                let i = input.u8() as usize % name.len();
                name.remove(i);
            }
        }
        _ => name = data.iter().copied().take(32).collect(),
    }
    let state = classify(&name);
    let want = match name.as_slice() {
        b"dltensor" => CapsuleState::Legacy,
        b"dltensor_versioned" => CapsuleState::Versioned,
        b"used_dltensor" => CapsuleState::LegacyUsed,
        b"used_dltensor_versioned" => CapsuleState::VersionedUsed,
        _ => CapsuleState::Other,
    };
    assert_eq!(
        state,
        want,
        "classify({:?})",
        String::from_utf8_lossy(&name)
    );

    // The TypeError retry: only max_version is ever dropped, and never when dl_device or copy
    // was requested (peer case 21).
    let (stream, dl_device, copy) = (input.bool(), input.bool(), input.bool());
    let first = first_attempt(stream, dl_device, copy);
    assert!(
        first.max_version,
        "the first attempt always passes max_version (peer case 18)"
    );
    match retry_after_type_error(first, "TypeError: x") {
        Ok(k) => {
            assert!(
                !dl_device && !copy,
                "retried although dl_device/copy was requested"
            );
            assert_eq!(
                k,
                Keywords {
                    max_version: false,
                    ..first
                }
            );
            assert!(
                retry_after_type_error(k, "again").is_err(),
                "a second retry"
            );
        }
        Err(e) => assert!(matches!(e, Error::ProducerTypeError(_)) && (dl_device || copy)),
    }
}
