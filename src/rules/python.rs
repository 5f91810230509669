//! The Python embedding's rules, as safe logic: capsule names and their state machine, and the
//! `__dlpack__` keyword plan with its `TypeError` retry. An exporter's `dl_device`/`copy`/
//! `stream` decision is [`crate::rules::stream::resolve`] (one place for that rule).
//!
//! The C side (`capi/python/`) resolves the Python C API at run time and calls into here.

use crate::rules::Error;
use core::ffi::CStr;

// The capsule names are statics, not consts: the capsules this library makes carry these
// very addresses, and its capsule code recognises them by address before comparing bytes. A
// `const` reference may be a separate copy of the bytes in each codegen unit (issue 26: a
// change elsewhere moved the export into another unit, its capsules' names stopped matching by
// address and each capsule's death paid two `strcmp` calls).

/// Capsule name of an unconsumed legacy `DLManagedTensor` (DLPack Python specification).
pub static CAPSULE_LEGACY: &CStr = c"dltensor";
/// Capsule name of a consumed legacy tensor: its destructor must do nothing.
pub static CAPSULE_LEGACY_USED: &CStr = c"used_dltensor";
/// Capsule name of an unconsumed `DLManagedTensorVersioned`.
pub static CAPSULE_VERSIONED: &CStr = c"dltensor_versioned";
/// Capsule name of a consumed versioned tensor.
pub static CAPSULE_VERSIONED_USED: &CStr = c"used_dltensor_versioned";
/// Capsule name of the static `DLPackExchangeAPI` table (DLPack 1.3 type attribute).
pub const CAPSULE_EXCHANGE_API: &CStr = c"dlpack_exchange_api";

/// What a capsule name says about the capsule (DLPack Python specification; spec §6 item 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapsuleState {
    /// `"dltensor"`: the producer still owns a legacy tensor.
    Legacy,
    /// `"dltensor_versioned"`: the producer still owns a versioned tensor.
    Versioned,
    /// `"used_dltensor"`: a consumer owns it; the capsule destructor does nothing.
    LegacyUsed,
    /// `"used_dltensor_versioned"`.
    VersionedUsed,
    /// Any other name (for example IREE's non-standard `"dltensor_used"`, peer case 8).
    Other,
}

/// Classify a capsule name, byte for byte (no prefix or case folding).
pub fn classify(name: &[u8]) -> CapsuleState {
    if name == CAPSULE_LEGACY.to_bytes() {
        CapsuleState::Legacy
    } else if name == CAPSULE_VERSIONED.to_bytes() {
        CapsuleState::Versioned
    } else if name == CAPSULE_LEGACY_USED.to_bytes() {
        CapsuleState::LegacyUsed
    } else if name == CAPSULE_VERSIONED_USED.to_bytes() {
        CapsuleState::VersionedUsed
    } else {
        CapsuleState::Other
    }
}

/// The device id a `__dlpack_device__` answer of `(device_type, None)` stands for (issue 25):
/// `Some(0)` for `kDLCPU` only (Paddle 3.3 answers `(kDLCPU, None)`; a CPU has one device, so
/// `None` can mean nothing else), `None` (no answer: the result stays `BAD_PRODUCER_RESULT`) for
/// every other device type, where guessing device 0 could send a consumer to the wrong GPU.
pub fn none_device_id(device_type: crate::abi::DLDeviceType) -> Option<i32> {
    (device_type == crate::abi::DLDeviceType::kDLCPU).then_some(0)
}

/// Whether a type's C exchange API may stand in for its `__dlpack__` (issue 25): the positions,
/// in the type's MRO, of the first class whose own `__dict__` defines `__dlpack__` and of the
/// first that defines the exchange-API attribute. A class that defines `__dlpack__` *before* the
/// table's class (a subclass overriding it, say of `torch.Tensor`) has its own export, which the
/// table (written for the base class) would skip: then the table is not used. When either is
/// unknown (no class defines it in its `__dict__`: a metaclass property, say) the table is used,
/// as the DLPack 1.3 specification lets a consumer do.
pub fn table_may_replace_dlpack(dlpack_owner: Option<usize>, table_owner: Option<usize>) -> bool {
    match (dlpack_owner, table_owner) {
        (Some(d), Some(t)) => d >= t,
        _ => true,
    }
}

/// What an import must check before a type's C exchange table may stand in for its
/// `__dlpack__` (issue 25: the table may replace `__dlpack__` only where its answer is the one
/// `__dlpack__` would give). Decided once per type, from the class that publishes the table.
/// For a guarded table a failure of the table is never the answer either: the import calls
/// `__dlpack__`, whose answer (PyTorch's and PaddlePaddle's `BufferError` for a sparse tensor,
/// where their tables raise `RuntimeError`) is the user's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableGuard {
    /// Nothing: the table answers as `__dlpack__` does (the DLPack 1.3 contract).
    None,
    /// PyTorch's table (`managed_tensor_from_py_object_no_sync`) exports any tensor's memory as it
    /// lies and skips what `Tensor.__dlpack__` (torch/_tensor.py) does first: it refuses a tensor
    /// that requires grad or has the conjugate bit (`BufferError`), refuses layouts other than
    /// `torch.strided`, and dispatches through a subclass's `__torch_function__`. So per import:
    /// `requires_grad` not `False` (read before the export, [`table_checks`]) → `__dlpack__` is
    /// called instead; a complex export (the conjugate bit, [`table_export_kept`]) → released,
    /// `__dlpack__`; a failure of the table (a sparse, mkldnn,
    /// meta or quantized tensor) → `__dlpack__`; and a subclass that defines
    /// `__torch_function__` below the table's class never uses the table.
    Torch,
    /// PaddlePaddle's table skips what `Tensor.__dlpack__`
    /// (paddle/base/dygraph/tensor_patch_methods.py) refuses: a tensor with `stop_gradient`
    /// False (it requires gradients: `BufferError`; the table exports it writable) and a sparse
    /// tensor (the table fails). So per import: `stop_gradient` not True (read before the
    /// export) → `__dlpack__`; a failure of the table → `__dlpack__`.
    Paddle,
}

/// What an import reads of a tensor BEFORE a guarded table exports it (issue 25; issue 26's
/// new-user run). Every read that may run Python code comes before the export, never after
/// it: PyTorch's getters dispatch to a `TorchFunctionMode` (and a type's `__torch_function__`),
/// and code run there that resizes the tensor frees the memory an export already points at (a
/// read after free, seen with PyTorch 2.15); so the read is made for every dtype, and what
/// depends on the export's dtype is decided by [`table_export_kept`] without any read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TableChecks {
    /// Read `tensor.requires_grad` (PyTorch's `__dlpack__` refuses anything but `False`).
    pub requires_grad: bool,
    /// Read `tensor.stop_gradient` (PaddlePaddle's `__dlpack__` refuses anything but `True`).
    pub stop_gradient: bool,
}

/// The reads before a guarded table's export (see [`TableChecks`]).
pub fn table_checks(guard: TableGuard) -> TableChecks {
    match guard {
        TableGuard::None => TableChecks::default(),
        TableGuard::Torch => TableChecks {
            requires_grad: true,
            stop_gradient: false,
        },
        TableGuard::Paddle => TableChecks {
            requires_grad: false,
            stop_gradient: true,
        },
    }
}

/// Whether a guarded table's export of dtype code `code` may be kept, or must be released and
/// `__dlpack__` called. PyTorch's `__dlpack__` refuses a tensor with the conjugate bit, which
/// only complex tensors carry (`conj()` of a real tensor returns it unchanged; PyTorch asserts
/// `isComplexType` when the bit is set); `is_conj()` is a call that may run Python code (a
/// `TorchFunctionMode`), which must not run after the export, so a complex tensor (or a code
/// this rule does not know) is imported through `__dlpack__`, which calls it before it
/// exports. Every other export is kept.
pub fn table_export_kept(guard: TableGuard, code: crate::abi::DLDataTypeCode) -> bool {
    use crate::abi::DLDataTypeCode as C;
    match guard {
        TableGuard::Torch => matches!(
            code,
            C::kDLInt | C::kDLUInt | C::kDLBool | C::kDLFloat | C::kDLBfloat
        ),
        TableGuard::None | TableGuard::Paddle => true,
    }
}

/// Whether a class's `__torch_function__`, by its `__qualname__` and `__module__`, is PyTorch's
/// `torch._C._disabled_torch_function_impl` (which turns the dispatch off: `torch.nn.Parameter`
/// sets it), so it is no override the table would skip (`TableGuard::Torch`).
pub fn torch_function_is_disabled(qualname: Option<&str>, module: Option<&str>) -> bool {
    qualname == Some("_disabled_torch_function_impl") && in_package(module, "torch")
}

/// Whether `module` is the package `package` or one of its modules.
fn in_package(module: Option<&str>, package: &str) -> bool {
    module.is_some_and(|m| {
        m.strip_prefix(package)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

/// The guard for a table published by a class whose `__module__` is `publisher_module` (None:
/// unreadable). Rule: a producer's classes live in its package (`torch.Tensor` is defined in
/// `torch._tensor`, its C base `torch._C.TensorBase` in `torch._C`; `paddle.Tensor` reports
/// `paddle`), so a module named `torch` or `torch.<anything>` is PyTorch's, `paddle` or
/// `paddle.<anything>` PaddlePaddle's. The caller asks this of the class that publishes the
/// table (the first class of the MRO whose own `__dict__` holds the table attribute) and of
/// each class after it, and takes the first guarded answer: a user's subclass of
/// `torch.Tensor` (module `__main__`, say) is recognised by its base, also when it re-publishes
/// PyTorch's table in its own `__dict__` (the caller checks that the base publishes the same
/// table), and a foreign class named `Tensor` is not. A producer joins this list from evidence only: its
/// `__dlpack__` (its source) compared with its table on real tensors (tests-frameworks/).
pub fn table_guard(publisher_module: Option<&str>) -> TableGuard {
    if in_package(publisher_module, "torch") {
        TableGuard::Torch
    } else if in_package(publisher_module, "paddle") {
        TableGuard::Paddle
    } else {
        TableGuard::None
    }
}

/// The attributes of the tensor that the producer's `Tensor.__dlpack__` reads to decide its
/// answer, by guard: PyTorch 2.15 (torch/_tensor.py) reads `requires_grad`, `is_conj()`,
/// `layout` and `device` before it exports; PaddlePaddle 3.3
/// (paddle/base/dygraph/tensor_patch_methods.py) reads `is_sparse()`, `stop_gradient`, `place`
/// and `get_tensor()`; a class's `__getattribute__` decides what every one of those reads
/// answers. The table reads the C++ tensor and none of them, so a class below the
/// table's publisher in a type's MRO that defines one of them in its own `__dict__` (a
/// subclass whose `requires_grad` property raises, say) changes `__dlpack__`'s answer where the
/// table would not see it: such a type never uses the table (checked once per type, like a
/// `__dlpack__` override, from the class's real dictionary and MRO, which a metaclass cannot
/// answer for).
pub fn dlpack_reads(guard: TableGuard) -> &'static [&'static CStr] {
    match guard {
        TableGuard::None => &[],
        TableGuard::Torch => &[
            c"requires_grad",
            c"is_conj",
            c"layout",
            c"device",
            c"__getattribute__",
        ],
        TableGuard::Paddle => &[
            c"is_sparse",
            c"stop_gradient",
            c"place",
            c"get_tensor",
            c"__getattribute__",
        ],
    }
}

/// The names a type's exchange table must not be overridden in to stand in for `__dlpack__`,
/// by guard: `__dlpack__` itself (every table), what the producer's `__dlpack__` reads
/// ([`dlpack_reads`]) and, for PyTorch, `__torch_function__` (which `Tensor.__dlpack__`
/// dispatches through). The per-type check compares where the type and the publishing class
/// resolve each; the per-object check looks for each in the instance's `__dict__`.
pub fn overridable_names(guard: TableGuard) -> impl Iterator<Item = &'static CStr> {
    let torch_function: &'static [&'static CStr] = if guard == TableGuard::Torch {
        &[c"__torch_function__"]
    } else {
        &[]
    };
    [c"__dlpack__"]
        .into_iter()
        .chain(dlpack_reads(guard).iter().copied())
        .chain(torch_function.iter().copied())
}

/// Which keywords a consumer passes to `__dlpack__` in one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keywords {
    pub max_version: bool,
    pub stream: bool,
    pub dl_device: bool,
    pub copy: bool,
}

/// The first attempt passes `max_version` always (peer case 18: a consumer that never asks gets
/// the legacy struct, which cannot say read-only) and every keyword the request sets.
pub fn first_attempt(stream: bool, dl_device: bool, copy: bool) -> Keywords {
    Keywords {
        max_version: true,
        stream,
        dl_device,
        copy,
    }
}

/// After a `TypeError` from `attempt`: the keyword-less retry of the array API, or an error.
///
/// A `TypeError` is the array API's "keyword not understood" signal (an older producer). The
/// retry drops `max_version` (and keeps `stream`, which predates it), but only when neither
/// `dl_device` nor `copy` was requested: dropping them would silently change the request (peer
/// case 21, as NumPy does). Other exceptions (`NotImplementedError`, `BufferError`) are never
/// retried: they are not the keyword signal.
pub fn retry_after_type_error(attempt: Keywords, message: &str) -> Result<Keywords, Error> {
    if !attempt.max_version {
        return Err(Error::ProducerTypeError(message.to_owned()));
    }
    if attempt.dl_device || attempt.copy {
        return Err(Error::ProducerTypeError(format!(
            "{message} (the producer's __dlpack__ raised TypeError for max_version/dl_device/copy; \
             not retried without them because dl_device or copy was requested and dropping them \
             would change the request)"
        )));
    }
    Ok(Keywords {
        max_version: false,
        ..attempt
    })
}

/// Addresses below this are never a table: the first page is kept unmapped to catch NULL-based
/// pointers (Linux `vm.mmap_min_addr` is 4096 or more), and small integers (`1`, `8`, `True`)
/// are what a confused producer passes.
pub const FIRST_TABLE_ADDRESS: u64 = 4096;

/// The end (exclusive) of user address space that a DLPack 1.2 integer table address is
/// checked against, or `None` where no bound is known (the readability check alone decides).
///
/// - x86-64: 2**56. User addresses on Linux are below 2**47 (4-level paging) or below
///   2**56 - 4096 (5-level paging, LA57), so 2**56 refuses nothing a user-space table can have
///   and refuses every non-canonical and kernel-half address (2**63 and up, `2**64 - 1`).
///   Between 2**47 and 2**56 only the readability check refuses an address (it is unmapped
///   on a machine with 4-level paging).
/// - aarch64: 2**52, for the address without its top byte. Linux user addresses are below 2**48
///   or, with 52-bit virtual addresses, below 2**52; the top byte is a pointer tag
///   (top-byte-ignore, used by MTE and HWASan) and is not counted by any rule here.
/// - Other 64-bit targets (riscv64, ppc64, s390x, sparc64, ...): no bound. 32-bit targets: the
///   integer must fit in a pointer.
pub const USER_ADDRESS_END: Option<u64> = if cfg!(target_arch = "x86_64") {
    Some(1 << 56)
} else if cfg!(target_arch = "aarch64") {
    Some(1 << 52)
} else {
    None
};

/// The bits of an address the rules look at: on aarch64 the hardware ignores the top byte (a
/// tag), so the rules do too.
const fn untagged(addr: u64) -> u64 {
    if cfg!(target_arch = "aarch64") {
        addr & ((1 << 56) - 1)
    } else {
        addr
    }
}

/// Whether `addr` can be the address of an exchange API table (DLPack 1.2
/// `__c_dlpack_exchange_api__`, or a `prev_api` reached from it) before any memory is read: not
/// 0 (a NULL table), not in the first page ([`FIRST_TABLE_ADDRESS`]), aligned to `align` (the
/// table's alignment, a pointer's), inside user address space ([`USER_ADDRESS_END`]) and a
/// pointer of this target. `what` names the value in the message (for example
/// `"type(obj).__c_dlpack_exchange_api__"`). Whether the bytes there are readable is the
/// caller's next check (`host::probe`); no check proves that readable bytes are a real table.
pub fn check_table_address(what: &str, addr: u64, align: usize) -> Result<usize, Error> {
    let refuse = |rule: String| {
        Err(Error::ExchangeApiInvalid(format!(
            "{what} is {addr:#x}, {rule}: not the address of a DLPackExchangeAPI table \
             (DLPack 1.2 integer form)"
        )))
    };
    let bits = untagged(addr);
    if addr == 0 {
        return refuse("a NULL exchange API table".into());
    }
    if bits < FIRST_TABLE_ADDRESS {
        return refuse(format!(
            "in the first page (below {FIRST_TABLE_ADDRESS}, never mapped)"
        ));
    }
    if align > 1 && addr % align as u64 != 0 {
        return refuse(format!(
            "not aligned to {align} bytes (a table's alignment, a pointer's)"
        ));
    }
    if let Some(end) = USER_ADDRESS_END {
        if bits >= end {
            return refuse(format!(
                "at or above 2**{}, outside user address space on this target",
                end.trailing_zeros()
            ));
        }
    }
    match usize::try_from(addr) {
        Ok(p) => Ok(p),
        Err(_) => refuse("above this process's address space".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25: a subclass that overrides `__dlpack__` keeps it; the class of the table (or a
    /// base below it) defining `__dlpack__` lets the table stand in.
    #[test]
    fn table_stands_in_only_for_its_own_classes_dlpack() {
        assert!(table_may_replace_dlpack(Some(0), Some(0))); // torch.Tensor itself
        assert!(table_may_replace_dlpack(Some(1), Some(1))); // a plain subclass
        assert!(table_may_replace_dlpack(Some(2), Some(1))); // __dlpack__ from a base
        assert!(!table_may_replace_dlpack(Some(0), Some(1))); // an override
        assert!(table_may_replace_dlpack(None, Some(0)));
        assert!(table_may_replace_dlpack(Some(0), None));
    }

    /// Issue 25: a producer's table is recognised by its publishing class's package, nothing
    /// else.
    #[test]
    fn guarded_tables_by_package() {
        assert_eq!(table_guard(Some("torch._tensor")), TableGuard::Torch); // torch.Tensor
        assert_eq!(table_guard(Some("torch._C")), TableGuard::Torch); // torch._C.TensorBase
        assert_eq!(table_guard(Some("torch")), TableGuard::Torch);
        assert_eq!(table_guard(Some("paddle")), TableGuard::Paddle); // paddle.Tensor
        assert_eq!(table_guard(Some("paddle.base")), TableGuard::Paddle);
        assert_eq!(
            table_guard(Some("torchvision.tv_tensors")),
            TableGuard::None
        );
        assert_eq!(table_guard(Some("paddlenlp")), TableGuard::None);
        assert_eq!(table_guard(Some("tvm_ffi.core")), TableGuard::None);
        assert_eq!(table_guard(Some("__main__")), TableGuard::None);
        assert_eq!(table_guard(None), TableGuard::None);
    }

    /// Issue 25: what each producer's `__dlpack__` reads on the tensor (a subclass defining one
    /// keeps the table out); an unguarded table reads nothing.
    #[test]
    fn dlpack_reads_by_guard() {
        let names = |g| -> Vec<&str> {
            dlpack_reads(g)
                .iter()
                .map(|n| n.to_str().unwrap())
                .collect()
        };
        assert_eq!(
            names(TableGuard::Torch),
            [
                "requires_grad",
                "is_conj",
                "layout",
                "device",
                "__getattribute__"
            ]
        );
        assert_eq!(
            names(TableGuard::Paddle),
            [
                "is_sparse",
                "stop_gradient",
                "place",
                "get_tensor",
                "__getattribute__"
            ]
        );
        assert!(names(TableGuard::None).is_empty());
    }

    /// Issue 25 and 26: PyTorch's `requires_grad` and PaddlePaddle's `stop_gradient` are read
    /// before the export for every dtype; only PyTorch's complex exports (or a code this rule
    /// does not know: the conjugate bit) are released for `__dlpack__`; an unguarded table
    /// reads and releases nothing.
    #[test]
    fn table_checks_by_guard_and_dtype() {
        use crate::abi::DLDataTypeCode as C;
        assert_eq!(
            table_checks(TableGuard::Torch),
            TableChecks {
                requires_grad: true,
                stop_gradient: false
            }
        );
        assert_eq!(
            table_checks(TableGuard::Paddle),
            TableChecks {
                requires_grad: false,
                stop_gradient: true
            }
        );
        assert_eq!(table_checks(TableGuard::None), TableChecks::default());
        for c in [C::kDLInt, C::kDLUInt, C::kDLBool, C::kDLFloat, C::kDLBfloat] {
            assert!(table_export_kept(TableGuard::Torch, c));
        }
        assert!(!table_export_kept(TableGuard::Torch, C::kDLComplex));
        assert!(!table_export_kept(TableGuard::Torch, C(200)));
        for c in [C::kDLInt, C::kDLFloat, C::kDLComplex, C(200)] {
            assert!(table_export_kept(TableGuard::Paddle, c));
            assert!(table_export_kept(TableGuard::None, c));
        }
    }

    #[test]
    fn overridable_names_by_guard() {
        let names = |g| {
            overridable_names(g)
                .map(|c| c.to_str().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(TableGuard::None), ["__dlpack__"]);
        let torch = names(TableGuard::Torch);
        assert_eq!(torch.first(), Some(&"__dlpack__"));
        assert_eq!(torch.last(), Some(&"__torch_function__"));
        assert!(torch.contains(&"is_conj") && torch.contains(&"__getattribute__"));
        let paddle = names(TableGuard::Paddle);
        assert!(paddle.contains(&"is_sparse") && !paddle.contains(&"__torch_function__"));
    }

    #[test]
    fn disabled_torch_function_is_no_override() {
        let d = Some("_disabled_torch_function_impl");
        assert!(torch_function_is_disabled(d, Some("torch._C")));
        assert!(!torch_function_is_disabled(d, Some("mylib")));
        assert!(!torch_function_is_disabled(
            Some("Tensor.__torch_function__"),
            Some("torch._C")
        ));
        assert!(!torch_function_is_disabled(None, None));
    }

    /// Issue 25: `(kDLCPU, None)` is CPU device 0; `None` with any other device type is no
    /// answer (never a guessed device 0).
    #[test]
    fn none_device_id_only_for_cpu() {
        use crate::abi::DLDeviceType;
        assert_eq!(none_device_id(DLDeviceType::kDLCPU), Some(0));
        for t in [2, 3, 4, 7, 8, 10, 13, 14, 0, -1, 1000] {
            assert_eq!(none_device_id(DLDeviceType(t)), None, "{t}");
        }
    }

    fn refused(addr: u64) -> String {
        match check_table_address("x", addr, 8) {
            Err(Error::ExchangeApiInvalid(m)) => m,
            other => panic!("{addr:#x} accepted: {other:?}"),
        }
    }

    /// DLPack 1.2 integer form: an integer that cannot be a table's address is refused before
    /// anything is read, with a message naming the value and the rule.
    #[test]
    fn exchange_table_address_rules() {
        assert!(refused(0).contains("NULL"));
        for a in [1, 8, 4095] {
            assert!(refused(a).contains("first page"), "{a}");
        }
        for a in [4097, 0x1000_0004, 0x7fff_0000_0001] {
            assert!(refused(a).contains("not aligned to 8"), "{a:#x}");
        }
        assert!(refused(4096 + 3).starts_with("x is 0x1003, "));
        for ok in [4096u64, 0xdead_0000, 0x7fff_ffff_f000, (1 << 47) + 8] {
            assert_eq!(check_table_address("x", ok, 8).unwrap() as u64, ok);
        }
        assert_eq!(check_table_address("x", 4097, 1).unwrap(), 4097);
        if cfg!(target_arch = "x86_64") {
            for a in [
                1u64 << 56,
                (1 << 56) + 8,
                1 << 63,
                0x7fff_ffff_ffff_fff8,
                u64::MAX - 7,
            ] {
                assert!(refused(a).contains("outside user address space"), "{a:#x}");
                assert!(refused(a).contains("2**56"), "{a:#x}");
            }
            assert!(refused(u64::MAX).contains("not aligned"));
            assert!(check_table_address("x", (1 << 56) - 4096, 8).is_ok());
        }
        if cfg!(target_arch = "aarch64") {
            // A tagged pointer (top byte) is a user address; the bits below the tag are checked.
            assert!(check_table_address("x", (0x0b << 56) | 0x1000, 8).is_ok());
            assert!(refused((1 << 56) + 8).contains("first page"));
            assert!(refused(0x00ff_ffff_ffff_fff8).contains("outside user address space"));
            assert!(check_table_address("x", (1 << 52) - 4096, 8).is_ok());
        }
    }

    /// Peer case 8: the names are the specification's strings, byte for byte.
    #[test]
    fn case_8_capsule_names_are_exact() {
        assert_eq!(CAPSULE_LEGACY.to_bytes(), b"dltensor");
        assert_eq!(CAPSULE_LEGACY_USED.to_bytes(), b"used_dltensor");
        assert_eq!(CAPSULE_VERSIONED.to_bytes(), b"dltensor_versioned");
        assert_eq!(
            CAPSULE_VERSIONED_USED.to_bytes(),
            b"used_dltensor_versioned"
        );
        assert_eq!(CAPSULE_EXCHANGE_API.to_bytes(), b"dlpack_exchange_api");
        assert_eq!(classify(b"dltensor_used"), CapsuleState::Other);
        assert_eq!(classify(b"DLTensor"), CapsuleState::Other);
        assert_eq!(classify(b"dltensor"), CapsuleState::Legacy);
        assert_eq!(
            classify(b"used_dltensor_versioned"),
            CapsuleState::VersionedUsed
        );
    }

    /// Peer case 21: retry only on TypeError, and only when nothing but max_version is dropped.
    #[test]
    fn case_21_retry_plan() {
        let first = first_attempt(false, false, false);
        assert!(first.max_version);
        let retry = retry_after_type_error(first, "TypeError: x").unwrap();
        assert!(!retry.max_version);
        assert!(matches!(
            retry_after_type_error(retry, "again"),
            Err(Error::ProducerTypeError(_))
        ));
        let with_copy = first_attempt(false, false, true);
        assert!(matches!(
            retry_after_type_error(with_copy, "t"),
            Err(Error::ProducerTypeError(_))
        ));
        let with_dev = first_attempt(false, true, false);
        assert!(matches!(
            retry_after_type_error(with_dev, "t"),
            Err(Error::ProducerTypeError(_))
        ));
        let with_stream = first_attempt(true, false, false);
        assert!(retry_after_type_error(with_stream, "t").unwrap().stream);
    }
}
