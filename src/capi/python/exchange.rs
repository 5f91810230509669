//! The C exchange API (DLPack 1.2/1.3): found on an object's type, cached per type, walked to
//! a major this library reads, checked, and used for a fast import.

use crate::abi::{DLManagedTensorVersioned, DLPackExchangeAPI, DLPackExchangeAPIHeader};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::host::cpython::{self, Api, ExcClass, Owned, PyObject};
use crate::host::probe::{self, Probe};
use crate::rules::Error;
use crate::rules::python as rules;
use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;

/// type address → the lookup's result (the address of the major-1 table, its low bits holding
/// the type's `rules::TableGuard`: `tag`; or why there is none). The cache holds a strong
/// reference to each type, so an address is never reused while cached.
///
/// Lock rule (issue 12): the lock is never held while foreign code runs. The attribute lookup
/// runs arbitrary Python (a metaclass property, a descriptor, a garbage-collection callback),
/// which may re-enter this library or release the GIL; so `find_table` looks up without the
/// lock and takes it only to read the map or to insert, and releases type references only
/// after unlocking.
static CACHE: Mutex<Option<HashMap<usize, Result<usize, Error>>>> = Mutex::new(None);

/// The import path's view of `CACHE`, read without a lock: the first `FAST_SLOTS` types
/// cached, each as (type address, tagged table address as in `CACHE`, or 0 for "no usable
/// table"), placed by [`fast_home`].
/// Every slot is written once, under `CACHE`'s lock (value first, then the key with `Release`),
/// and never changed or cleared (cached types stay alive), so a reader that sees a key with
/// `Acquire` sees its value. Types beyond the slots still use `CACHE`.
const FAST_SLOTS: usize = 16;
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: (AtomicUsize, AtomicUsize) = (AtomicUsize::new(0), AtomicUsize::new(0));
static FAST: [(AtomicUsize, AtomicUsize); FAST_SLOTS] = [EMPTY_SLOT; FAST_SLOTS];

/// The slot where the probe for `key` starts: the slots form an open-addressing table (linear
/// probing from here, wrapping), so a process with several producer types (NumPy, PyTorch,
/// PaddlePaddle, this package's `Tensor`: each cached type takes a slot, tables or not) finds
/// each in about one probe, where a scan from slot 0 cost four instructions per type cached
/// before it (issue 34, callgrind). Fibonacci hashing of the address (type objects are 16-byte
/// aligned, so the low bits alone would crowd a few slots).
#[inline(always)]
fn fast_home(key: usize) -> usize {
    const _: () = assert!(FAST_SLOTS.is_power_of_two());
    ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FAST_SLOTS.trailing_zeros()))
        as usize
}

/// `Some(table address or 0)` when `key` is in a fast slot.
#[inline]
fn fast_get(key: usize) -> Option<usize> {
    let home = fast_home(key);
    for i in 0..FAST_SLOTS {
        let (k, v) = &FAST[(home + i) % FAST_SLOTS];
        match k.load(Ordering::Acquire) {
            0 => return None,
            x if x == key => return Some(v.load(Ordering::Relaxed)),
            _ => {}
        }
    }
    None
}

/// Publish a cached answer in the first free fast slot of `key`'s probe sequence (the caller
/// holds `CACHE`'s lock, so writers never race; slots are never cleared, so a reader's probe
/// that meets an empty slot knows the key is not in the table).
fn fast_put(key: usize, r: &Result<usize, Error>) {
    let home = fast_home(key);
    for i in 0..FAST_SLOTS {
        let (k, v) = &FAST[(home + i) % FAST_SLOTS];
        if k.load(Ordering::Relaxed) == 0 {
            v.store(*r.as_ref().unwrap_or(&0), Ordering::Relaxed);
            k.store(key, Ordering::Release);
            return;
        }
    }
}

fn cache_get(key: usize) -> Option<Result<usize, Error>> {
    let cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache.as_ref().and_then(|m| m.get(&key).cloned())
}

const MAX_CHAIN: usize = 64;

/// How the DLPack 1.2 attribute is named in messages.
const V12: &str = "type(obj).__c_dlpack_exchange_api__";

/// Where a lookup found its table.
#[derive(Clone, Copy)]
enum Head {
    /// DLPack 1.3: the pointer of a capsule named `"dlpack_exchange_api"`, which the producer
    /// made for this purpose (trusted as every capsule's pointer is).
    Capsule(*const DLPackExchangeAPIHeader),
    /// DLPack 1.2: a bare integer that passed `rules::check_table_address`; nothing read yet.
    /// `select` checks that every byte it reads there (and along `prev_api`) is readable.
    Address(usize),
}

fn locate(api: &'static Api, ty: *mut PyObject) -> Result<Head, Error> {
    // DLPack 1.3: a capsule named "dlpack_exchange_api".
    // SAFETY: GIL held.
    if let Some(attr) = Owned::new(api, unsafe {
        (api.PyObject_GetAttrString)(ty, c"__dlpack_c_exchange_api__".as_ptr())
    }) {
        // SAFETY: GIL held.
        if !unsafe { api.is_capsule(attr.as_ptr()) } {
            return Err(Error::ExchangeApiInvalid(
                "type(obj).__dlpack_c_exchange_api__ is not a PyCapsule (DLPack 1.3)".into(),
            ));
        }
        // SAFETY: GIL held; a wrong name fails with ValueError.
        let p = unsafe {
            (api.PyCapsule_GetPointer)(attr.as_ptr(), rules::CAPSULE_EXCHANGE_API.as_ptr())
        };
        if p.is_null() {
            // SAFETY: GIL held.
            let (_, msg) = unsafe { api.take_error() }?;
            return Err(Error::ExchangeApiInvalid(format!(
                "type(obj).__dlpack_c_exchange_api__ is not a capsule named \"dlpack_exchange_api\" ({msg})"
            )));
        }
        return Ok(Head::Capsule(p.cast()));
    }
    // SAFETY: GIL held.
    let (class, msg) = unsafe { api.take_error() }?;
    if class != ExcClass::Attribute {
        return Err(cpython::producer_error(class, msg));
    }
    // DLPack 1.2: an int holding the address.
    // SAFETY: GIL held.
    if let Some(attr) = Owned::new(api, unsafe {
        (api.PyObject_GetAttrString)(ty, c"__c_dlpack_exchange_api__".as_ptr())
    }) {
        // `True` is an int to Python (1), but never an address.
        // SAFETY: GIL held, `attr` live.
        if unsafe { api.is_bool(attr.as_ptr()) } {
            return Err(Error::ExchangeApiInvalid(format!(
                "{V12} is a bool, not an address: DLPack 1.2 wants an int holding the address \
                 of a DLPackExchangeAPI table"
            )));
        }
        // An address is a non-negative integer that fits in a pointer: a negative value (for
        // example -1) is refused, never reinterpreted as a huge address.
        // SAFETY: GIL held; OverflowError for negative or > 2**64-1, TypeError for non-ints.
        let v = unsafe { (api.PyLong_AsUnsignedLongLong)(attr.as_ptr()) };
        // SAFETY: GIL held.
        if v == u64::MAX && !unsafe { (api.PyErr_Occurred)() }.is_null() {
            // SAFETY: GIL held.
            let (_, msg) = unsafe { api.take_error() }?;
            return Err(Error::ExchangeApiInvalid(format!(
                "{V12} is not an address, a non-negative integer below 2**64 (DLPack 1.2): {msg}"
            )));
        }
        // NULL, the first page, misaligned, outside user address space: refused before any
        // read. Readability is checked by `select`, which reads the table.
        let p = rules::check_table_address(V12, v, align_of::<DLPackExchangeAPIHeader>())?;
        return Ok(Head::Address(p));
    }
    // SAFETY: GIL held.
    let (class, msg) = unsafe { api.take_error() }?;
    if class != ExcClass::Attribute {
        return Err(cpython::producer_error(class, msg));
    }
    Err(Error::NoExchangeApi(
        "the object's type has neither __dlpack_c_exchange_api__ (DLPack 1.3) nor \
         __c_dlpack_exchange_api__ (DLPack 1.2)"
            .into(),
    ))
}

/// Refuse the table of a type whose MRO defines `__dlpack__` before the class that publishes the
/// table (issue 25, `rules::table_may_replace_dlpack`): a subclass's own `__dlpack__` is called,
/// never skipped. Reads the type's real `__mro__` and each class's real `__dict__` and
/// `__module__` ([`type_own`]: `type`'s own descriptors, so a metaclass cannot answer for them).
/// A failure to read them refuses the table (`NoExchangeApi`: `__dlpack__` answers): without them the override and the publisher
/// (and so the guard) are unknown, and an unguarded PyTorch table exported a tensor that
/// requires grad writable where `__dlpack__` raises.
///
/// Also decides what imports check per object (`rules::table_guard`, from the `__module__` of
/// the class that publishes the table or, failing that, of the first class after it that is
/// PyTorch's or PaddlePaddle's when that class publishes the same table (`table`): a subclass
/// re-publishing PyTorch's table is still guarded, and "below" is then measured from PyTorch's
/// class; a subclass publishing a table of its own keeps it, unguarded): for PyTorch's
/// table, a subclass that defines
/// `__torch_function__` below that class is refused too (`Tensor.__dlpack__` dispatches through
/// it; the table would skip it), and, for either guarded table, a subclass that defines below
/// that class an attribute the producer's `__dlpack__` reads (`rules::dlpack_reads`).
fn check_publisher(
    api: &'static Api,
    ty: *mut PyObject,
    table: *const DLPackExchangeAPI,
) -> Result<rules::TableGuard, Error> {
    use rules::TableGuard;
    let Some(mro) = type_own(api, ty, c"__mro__") else {
        // SAFETY: GIL held; an ordinary exception is cleared, a non-Exception stays set.
        unsafe { api.catch(false, |_| true) }?;
        return Err(mro_unreadable("__mro__"));
    };
    // SAFETY: GIL held.
    let n = unsafe { (api.PySequence_Size)(mro.as_ptr()) };
    if n < 0 {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Err(mro_unreadable("__mro__"));
    }
    let (mut dlpack_owner, mut torch_function_owner) = (None, None);
    // The first class that defines an attribute `__dlpack__` reads, per guard (Torch, Paddle).
    let mut reads_owner: [Option<usize>; 2] = [None, None];
    let guards = [TableGuard::Torch, TableGuard::Paddle];
    let (mut publisher, mut guarded) = (None, None);
    for i in 0..n {
        // SAFETY: GIL held, `i` in range.
        let Some(cls) = Owned::new(api, unsafe { (api.PySequence_GetItem)(mro.as_ptr(), i) })
        else {
            // SAFETY: GIL held.
            unsafe { api.catch(false, |_| true) }?;
            return Err(mro_unreadable("__mro__"));
        };
        let Some(dict) = type_own(api, cls.as_ptr(), c"__dict__") else {
            // SAFETY: GIL held.
            unsafe { api.catch(false, |_| true) }?;
            return Err(mro_unreadable("the __dict__ of a class in its __mro__"));
        };
        // SAFETY: GIL held; PyMapping_HasKeyString never raises.
        let has = |k: &core::ffi::CStr| unsafe {
            (api.PyMapping_HasKeyString)(dict.as_ptr(), k.as_ptr()) == 1
        };
        if dlpack_owner.is_none() && has(c"__dlpack__") {
            dlpack_owner = Some(i as usize);
        }
        if torch_function_owner.is_none()
            && has(c"__torch_function__")
            && !torch_function_disabled(api, &dict)?
        {
            torch_function_owner = Some(i as usize);
        }
        for (owner, g) in reads_owner.iter_mut().zip(guards) {
            if owner.is_none() && rules::dlpack_reads(g).iter().any(|&k| has(k)) {
                *owner = Some(i as usize);
            }
        }
        if publisher.is_none()
            && (has(c"__dlpack_c_exchange_api__") || has(c"__c_dlpack_exchange_api__"))
        {
            publisher = Some(i as usize);
        }
        // The guard is the first guarded producer's class at or after the publisher: a
        // subclass that re-publishes PyTorch's table in its own `__dict__` (module
        // `__main__`, say) still hands out PyTorch's table, which skips `Tensor.__dlpack__`'s
        // refusals (it was used unguarded: a conjugate tensor came out with its unconjugated
        // memory). That class is then where "below" is measured from.
        // A class after the publisher counts only when it publishes the same table (a class
        // that publishes its own table keeps it, unguarded, as before).
        // A guarded producer's class that publishes no table of its own (PyTorch's C base
        // `TensorBase`, a mixin whose `__module__` says `torch`) says nothing about this table:
        // the search goes on (it stopped there, and a subclass re-publishing PyTorch's table
        // behind such a mixin was used unguarded: new-user run).
        if let Some(p) = publisher {
            let g = rules::table_guard(class_module(api, &cls)?.as_deref());
            let publishes = has(c"__dlpack_c_exchange_api__") || has(c"__c_dlpack_exchange_api__");
            if g != TableGuard::None && (i as usize == p || publishes) {
                if i as usize == p || same_table(api, &cls, table)? {
                    guarded = Some((i as usize, g));
                }
                break; // what classes after it define cannot come before it
            }
        }
    }
    let (table_owner, guard) = match (publisher, guarded) {
        (Some(_), Some((q, g))) => (Some(q), g),
        (Some(p), None) => (Some(p), TableGuard::None),
        (None, _) => (None, TableGuard::None),
    };
    if !rules::table_may_replace_dlpack(dlpack_owner, table_owner) {
        return Err(Error::NoExchangeApi(
            "the object's type overrides __dlpack__ below the class that publishes the exchange \
             API table: the table (written for the base class) is not used, so the override is \
             called"
                .into(),
        ));
    }
    if let Some(k) = guards.iter().position(|&g| g == guard) {
        if !rules::table_may_replace_dlpack(reads_owner[k], table_owner) {
            return Err(Error::NoExchangeApi(
                "the object's type defines, below the class that publishes the exchange API \
                 table, an attribute that the producer's __dlpack__ reads to decide its answer \
                 (PyTorch: requires_grad, is_conj, layout, device; PaddlePaddle: is_sparse, \
                 stop_gradient, place, get_tensor; both: __getattribute__): the table would \
                 not see it, so __dlpack__ is called"
                    .into(),
            ));
        }
    }
    // Where the names resolve, not only where they are defined: a class after the publisher
    // in the MRO (a mixin, or a metaclass's `mro()`) wins the lookup of a name the producer's
    // classes do not define (`__getattribute__`: new-user run), so the type must resolve each
    // name to exactly what the publishing (or guarding) class resolves it to.
    if let (Some(q), Some(lookup)) = (table_owner, api._PyType_Lookup) {
        // SAFETY: GIL held, `q` in range.
        let Some(owner) = Owned::new(api, unsafe {
            (api.PySequence_GetItem)(mro.as_ptr(), q as isize)
        }) else {
            // SAFETY: GIL held.
            unsafe { api.catch(false, |_| true) }?;
            return Err(mro_unreadable("__mro__"));
        };
        for k in rules::overridable_names(guard) {
            // SAFETY: GIL held; a new reference, released on drop.
            let Some(key) =
                Owned::new(api, unsafe { (api.PyUnicode_InternFromString)(k.as_ptr()) })
            else {
                // SAFETY: GIL held.
                unsafe { api.catch(false, |_| true) }?;
                return Err(mro_unreadable("a name of its classes"));
            };
            // SAFETY: GIL held; borrowed answers, only compared.
            let (a, b) = unsafe {
                (
                    lookup(ty, key.as_ptr()),
                    lookup(owner.as_ptr(), key.as_ptr()),
                )
            };
            if a != b && !(k == c"__torch_function__" && is_disabled_impl(api, a)?) {
                return Err(Error::NoExchangeApi(format!(
                    "the object's type resolves {} to another object than the class that                      publishes the exchange API table does (an override, or a class later in                      its MRO that wins the lookup): the table would not see it, so __dlpack__                      is called",
                    k.to_string_lossy()
                )));
            }
        }
    }
    if guard == TableGuard::Torch
        && !rules::table_may_replace_dlpack(torch_function_owner, table_owner)
    {
        return Err(Error::NoExchangeApi(
            "the object's type defines __torch_function__ below the PyTorch class that publishes \
             the exchange API table: Tensor.__dlpack__ dispatches through it and the table would \
             skip it, so __dlpack__ is called"
                .into(),
        ));
    }
    Ok(guard)
}

/// Whether the class `cls` publishes the major-1 table `table` (found, walked and checked as
/// for a type); `Err` only for an exception that stays set.
fn same_table(
    api: &'static Api,
    cls: &Owned,
    table: *const DLPackExchangeAPI,
) -> Result<bool, Error> {
    match locate(api, cls.as_ptr()).and_then(select) {
        Ok(t) => Ok(core::ptr::eq(t, table)),
        Err(e @ Error::PythonErrorSet(_)) => Err(e),
        Err(_) => Ok(false),
    }
}

/// The answer for a type whose MRO cannot be read (`what` could not be read).
fn mro_unreadable(what: &str) -> Error {
    Error::NoExchangeApi(format!(
        "the object's type has an exchange API table, but {what} cannot be read (a metaclass \
         property raised): which class publishes the table, and whether a subclass overrides \
         __dlpack__, is unknown, so the table is not used and __dlpack__ is called"
    ))
}

/// Whether `cls.__torch_function__` is PyTorch's `torch._C._disabled_torch_function_impl`
/// (`torch.nn.Parameter` sets it): it turns the dispatch off, so `Tensor.__dlpack__` dispatches
/// nothing and the table may stand in. Read once per type from the class's real dictionary
/// `dict` (what the class itself holds, not what a metaclass answers), and compared by identity
/// with `torch._C._disabled_torch_function_impl` (as PyTorch compares it).
fn torch_function_disabled(api: &'static Api, dict: &Owned) -> Result<bool, Error> {
    let Some(get) = api.PyMapping_GetItemString else {
        return Ok(false);
    };
    // SAFETY: GIL held; a mapping proxy of a class's dictionary.
    let Some(f) = Owned::new(api, unsafe {
        get(dict.as_ptr(), c"__torch_function__".as_ptr())
    }) else {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Ok(false);
    };
    // SAFETY: GIL held.
    let Some(q) = Owned::new(api, unsafe {
        (api.PyObject_GetAttrString)(f.as_ptr(), c"__qualname__".as_ptr())
    }) else {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Ok(false);
    };
    // SAFETY: GIL held; `str_of` clears its own failure.
    let name = unsafe { api.str_of(q.as_ptr()) };
    if !rules::torch_function_is_disabled(name.as_deref(), module_of(api, &f)?.as_deref()) {
        return Ok(false);
    }
    is_disabled_impl(api, f.as_ptr())
}

/// Whether `f` (borrowed, may be NULL) is PyTorch's own `torch._C._disabled_torch_function_impl`:
/// the very object, not a function that only bears its name and module (new-user run: a
/// user's function named so dispatched, and the table stood in); PyTorch compares by identity.
/// `torch._C` is already imported (a PyTorch tensor exists); not imported here.
fn is_disabled_impl(api: &'static Api, f: *mut PyObject) -> Result<bool, Error> {
    if f.is_null() {
        return Ok(false);
    }
    let Some(get_module) = api.PyImport_GetModule else {
        return Ok(false);
    };
    // SAFETY: GIL held; new references released on drop; a failure is cleared.
    unsafe {
        let Some(mname) = Owned::new(api, (api.PyUnicode_InternFromString)(c"torch._C".as_ptr()))
        else {
            api.catch(false, |_| true)?;
            return Ok(false);
        };
        let Some(m) = Owned::new(api, get_module(mname.as_ptr())) else {
            api.catch(false, |_| true)?;
            return Ok(false);
        };
        let Some(real) = Owned::new(
            api,
            (api.PyObject_GetAttrString)(m.as_ptr(), c"_disabled_torch_function_impl".as_ptr()),
        ) else {
            api.catch(false, |_| true)?;
            return Ok(false);
        };
        Ok(real.as_ptr() == f)
    }
}

/// `cls.__module__` as a string, or None when it is not readable (an ordinary exception is
/// cleared; one not deriving from `Exception` stays set: `Err`).
fn module_of(api: &'static Api, cls: &Owned) -> Result<Option<String>, Error> {
    // SAFETY: GIL held.
    let Some(m) = Owned::new(api, unsafe {
        (api.PyObject_GetAttrString)(cls.as_ptr(), c"__module__".as_ptr())
    }) else {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Ok(None);
    };
    // SAFETY: GIL held; `str_of` clears its own failure.
    Ok(unsafe { api.str_of(m.as_ptr()) })
}

/// `cls.<name>` for `__mro__`, `__dict__` or `__module__` as `type` itself answers it: `type`'s
/// own getset descriptor (found with `_PyType_Lookup(&PyType_Type, name)`) called on `cls`, so
/// the class's real MRO (the one attribute lookup walks), a read-only proxy of its real
/// dictionary, its real module. A metaclass's `__getattribute__`, property or `__mro__`
/// attribute cannot answer instead (issue 26, new-user run: a metaclass that filtered what
/// `cls.__dict__` showed hid a subclass's `__dlpack__`, `requires_grad` or `__torch_function__`
/// override, and the table stood in where `__dlpack__` refuses). Without the symbols (a host
/// that only stubs part of the C API) the generic read. `None` with the exception still set
/// when the read raised.
fn type_own(api: &'static Api, cls: *mut PyObject, name: &core::ffi::CStr) -> Option<Owned> {
    if let (Some(tt), Some(lookup), Some(get_slot)) =
        (api.PyType_Type, api._PyType_Lookup, api.PyType_GetSlot)
    {
        // SAFETY: GIL held; `name` interned and released here; `_PyType_Lookup` borrows and
        // never raises; the descriptor's type and `tp_descr_get` are read, then called with
        // `cls` (a live class) and its metaclass.
        unsafe {
            let key = Owned::new(api, (api.PyUnicode_InternFromString)(name.as_ptr()))?;
            let d = lookup(tt, key.as_ptr());
            if !d.is_null() {
                let dt = Owned::new(api, (api.PyObject_Type)(d))?;
                let get = get_slot(dt.as_ptr(), PY_TP_DESCR_GET);
                if !get.is_null() {
                    let get = core::mem::transmute::<*mut c_void, DescrGet>(get);
                    let meta = Owned::new(api, (api.PyObject_Type)(cls))?;
                    return Owned::new(api, get(d, cls, meta.as_ptr()));
                }
            }
            if !(api.PyErr_Occurred)().is_null() {
                return None;
            }
        }
    }
    // SAFETY: GIL held.
    Owned::new(api, unsafe {
        (api.PyObject_GetAttrString)(cls, name.as_ptr())
    })
}

/// A class's real `__module__` (see [`type_own`]) as a string, or None when it is not readable
/// (an ordinary exception is cleared; one not deriving from `Exception` stays set: `Err`).
fn class_module(api: &'static Api, cls: &Owned) -> Result<Option<String>, Error> {
    let Some(m) = type_own(api, cls.as_ptr(), c"__module__") else {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Ok(None);
    };
    // SAFETY: GIL held; `str_of` clears its own failure.
    Ok(unsafe { api.str_of(m.as_ptr()) })
}

/// The low bits of a cached table address (tables are pointer-aligned) hold the type's guard
/// and, where the alignment leaves a third bit (8-byte pointers), whether instances of the type
/// can have a `__dict__` ([`INSTANCE_DICT`]).
const GUARD_MASK: usize = 3;
/// Set when instances of the type can have a `__dict__` (`type.__dictoffset__` is not 0, read
/// once per type), so [`instance_overrides`] looks at it; 0 where tables are only 4-aligned (the
/// look is then made for every type).
const INSTANCE_DICT: usize = if core::mem::align_of::<DLPackExchangeAPI>() >= 8 {
    4
} else {
    0
};

fn tag(p: usize, guard: rules::TableGuard, instance_dict: bool) -> usize {
    p | match guard {
        rules::TableGuard::None => 0,
        rules::TableGuard::Torch => 1,
        rules::TableGuard::Paddle => 2,
    } | if instance_dict { INSTANCE_DICT } else { 0 }
}

/// A cached table as the import path uses it.
#[derive(Clone, Copy)]
pub(crate) struct Found {
    /// The address of the object's type the table was found for (see `import::via_table`).
    pub ty: usize,
    pub table: *const DLPackExchangeAPI,
    pub guard: rules::TableGuard,
    /// Whether an instance of the type may have a `__dict__` (always true without the bit).
    pub instance_dict: bool,
}

fn untag(p: usize) -> Found {
    let guard = match p & GUARD_MASK {
        1 => rules::TableGuard::Torch,
        2 => rules::TableGuard::Paddle,
        _ => rules::TableGuard::None,
    };
    Found {
        ty: 0,
        table: (p & !(GUARD_MASK | INSTANCE_DICT)) as *const DLPackExchangeAPI,
        guard,
        instance_dict: INSTANCE_DICT == 0 || p & INSTANCE_DICT != 0,
    }
}

/// Whether instances of the class `ty` can have a `__dict__`: its real `__dictoffset__` (read
/// through `type`'s own descriptor, [`type_own`]) is not 0 (negative for a managed dictionary).
/// `true` when it cannot be read (an ordinary exception is cleared), so the look is made.
fn instances_have_dict(api: &'static Api, ty: *mut PyObject) -> Result<bool, Error> {
    let Some(off) = type_own(api, ty, c"__dictoffset__") else {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Ok(true);
    };
    // SAFETY: GIL held; a `PyLong` (or an error, cleared below).
    let v = unsafe { (api.PyLong_AsLongLong)(off.as_ptr()) };
    // SAFETY: GIL held.
    if v == -1 && !unsafe { (api.PyErr_Occurred)() }.is_null() {
        // SAFETY: GIL held.
        unsafe { api.catch(false, |_| true) }?;
        return Ok(true);
    }
    Ok(v != 0)
}

/// Per guarded attribute (0: PyTorch's `requires_grad`, 1: PaddlePaddle's `stop_gradient`): the
/// address of the `getset_descriptor` the attribute lookup first resolved it to (a strong
/// reference, kept for the process as cached types are), or 0.
static GETTERS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

const PY_TP_GETATTRO: core::ffi::c_int = 58;
const PY_TP_DESCR_GET: core::ffi::c_int = 54;

type DescrGet = unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut PyObject) -> *mut PyObject;

/// What [`guard_attr`]'s direct read needs, set once when a descriptor is first cached.
struct DirectRead {
    get_slot: unsafe extern "C" fn(*mut PyObject, core::ffi::c_int) -> *mut c_void,
    generic: usize,
    lookup: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    descr_get: DescrGet,
}

static DIRECT_READ: std::sync::OnceLock<DirectRead> = std::sync::OnceLock::new();

/// `PyGetSetDef.get`.
type GetSetGet = unsafe extern "C" fn(*mut PyObject, *mut c_void) -> *mut PyObject;

/// The C getter of the getset descriptor cached in [`GETTERS`]`[k]`, read from the descriptor
/// once (issue 34, callgrind: `getset_get`'s own frame and its instance check through
/// `PyObject_TypeCheck` were about 45 of the table import's instructions): what
/// `getset_get(descr, obj, type)` calls, `descr->d_getset->get(obj, descr->d_getset->closure)`,
/// after the same instance check (`obj` an instance of `descr->d_type`, which the caller
/// makes). Addresses as integers (the statics are shared between threads); the descriptor,
/// its `d_type` and its `PyGetSetDef` live for the process (the descriptor is kept).
struct GetSetDirect {
    /// The descriptor it was read from: the one cached in [`GETTERS`]`[k]` (published only by
    /// the thread whose descriptor won that slot, and checked again on use).
    descr: usize,
    get: GetSetGet,
    closure: usize,
    owner: usize,
    is_subtype: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> core::ffi::c_int,
}

static GETSET_DIRECT: [std::sync::OnceLock<GetSetDirect>; 2] =
    [std::sync::OnceLock::new(), std::sync::OnceLock::new()];

/// `obj.<name>`, the guard's attribute `k` (0: `requires_grad`, 1: `stop_gradient`), as
/// `PyObject_GetAttr` answers it, and without its generic lookup where that gives the same
/// answer (issue 26, callgrind). Checked on every call, so a class changed after its first
/// import, or a metaclass that answers differently for `__dict__` or the name, changes nothing:
/// when the type reads attributes generically (`tp_getattro` is `PyObject_GenericGetAttr`: no
/// `__getattribute__` or `__getattr__`) and `_PyType_Lookup(type(obj), name)` (the lookup
/// `PyObject_GenericGetAttr` itself makes, on the type's real MRO) finds the
/// `getset_descriptor` cached for `k`, the answer is that descriptor's getter called on `obj`:
/// a getset is a data descriptor, so the instance `__dict__` never comes first. The getter is
/// called as `getset_get` calls it ([`GetSetDirect`]), after its instance check (a descriptor
/// copied into an unrelated class is answered by `getset_get` itself: its `TypeError`).
/// Anything else, and the first read (which caches the descriptor when it is exactly a
/// `getset_descriptor`, C code): `PyObject_GetAttr`. A new reference, or NULL with an
/// exception set.
///
/// # Safety
/// GIL held; `obj` a live object.
#[inline(always)]
unsafe fn guard_attr(
    api: &'static Api,
    k: usize,
    obj: *mut PyObject,
    name: *mut PyObject,
) -> *mut PyObject {
    let cached = GETTERS[k].load(Ordering::Acquire);
    if cached == 0 {
        // SAFETY: caller contract.
        return unsafe { first_guard_read(api, k, obj, name) };
    }
    if let Some(f) = DIRECT_READ.get() {
        // SAFETY: GIL held; `obj` is live, so is its type (borrowed: `obj` keeps it alive for
        // the rest of this call). `PyType_GetSlot` answers NULL with SystemError for a static
        // type before CPython 3.10 (cleared); `_PyType_Lookup` borrows and never raises.
        unsafe {
            let ty = api.type_of(obj);
            let slot = (f.get_slot)(ty, PY_TP_GETATTRO);
            let d = if slot as usize == f.generic {
                (f.lookup)(ty, name)
            } else {
                core::ptr::null_mut()
            };
            if d as usize == cached {
                // `d` is the cached getset descriptor (kept alive), found by the type's own
                // lookup; its getter is C code.
                if let Some(g) = GETSET_DIRECT[k].get() {
                    let owner = g.owner as *mut PyObject;
                    if g.descr == cached && (ty == owner || (g.is_subtype)(ty, owner) != 0) {
                        return (g.get)(obj, g.closure as *mut c_void);
                    }
                }
                return (f.descr_get)(d, obj, core::ptr::null_mut());
            }
            if slot.is_null() && !(api.PyErr_Occurred)().is_null() {
                (api.PyErr_Clear)();
            }
        }
    }
    // SAFETY: GIL held.
    unsafe { (api.PyObject_GetAttr)(obj, name) }
}

/// [`guard_attr`]'s first read of attribute `k`: caches the descriptor the lookup finds when it
/// is exactly a `getset_descriptor` and the type reads attributes generically, then reads the
/// generic way.
///
/// # Safety
/// GIL held; `obj` a live object.
#[cold]
#[inline(never)]
unsafe fn first_guard_read(
    api: &'static Api,
    k: usize,
    obj: *mut PyObject,
    name: *mut PyObject,
) -> *mut PyObject {
    if let (Some(gs_type), Some(get_slot), Some(generic), Some(lookup)) = (
        api.PyGetSetDescr_Type,
        api.PyType_GetSlot,
        api.PyObject_GenericGetAttr,
        api._PyType_Lookup,
    ) {
        // SAFETY: GIL held; new references released here; `PyType_GetSlot` may raise (a static
        // type before 3.10), cleared.
        unsafe {
            let descr_get = get_slot(gs_type, PY_TP_DESCR_GET);
            let ty = (api.PyObject_Type)(obj);
            // A new reference to the descriptor: with the GIL off another thread may change the
            // class and free a borrowed one (issue 36); `_PyType_LookupRef` where exported
            // (3.13 on), else the borrowed answer made strong at once (the GIL orders it).
            let held = if get_slot(ty, PY_TP_GETATTRO) == generic as *mut c_void {
                match api._PyType_LookupRef {
                    Some(lookup_ref) => Owned::new(api, lookup_ref(ty, name)),
                    None => Owned::new(api, {
                        let d = lookup(ty, name);
                        if !d.is_null() {
                            (api.Py_IncRef)(d);
                        }
                        d
                    }),
                }
            } else {
                None
            };
            let d = held.as_ref().map_or(core::ptr::null_mut(), Owned::as_ptr);
            (api.Py_DecRef)(ty);
            if !(api.PyErr_Occurred)().is_null() {
                (api.PyErr_Clear)();
            }
            if !d.is_null() && !descr_get.is_null() {
                let dt = (api.PyObject_Type)(d);
                let exact = dt == gs_type;
                (api.Py_DecRef)(dt);
                if exact {
                    let _ = DIRECT_READ.get_or_init(|| DirectRead {
                        get_slot,
                        generic: generic as usize,
                        lookup,
                        descr_get: core::mem::transmute::<*mut c_void, DescrGet>(descr_get),
                    });
                    let direct = getset_direct(api, d, name);
                    if GETTERS[k]
                        .compare_exchange(0, d as usize, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                    {
                        // Kept for the process: the cached address is never another object's,
                        // and the getter read from it stays valid (its `d_type` and
                        // `PyGetSetDef` live as long as it does).
                        (api.Py_IncRef)(d);
                        // Only the descriptor that won the slot publishes its getter: two
                        // first reads at once (free-threaded CPython) that found different
                        // descriptors never pair one's getter with the other's cache entry
                        // (review of issue 34).
                        if let Some(g) = direct {
                            let _ = GETSET_DIRECT[k].set(g);
                        }
                    }
                }
            }
        }
    }
    // SAFETY: GIL held.
    unsafe { (api.PyObject_GetAttr)(obj, name) }
}

/// The getter `getset_get` would call for the `getset_descriptor` `d` found for `name`
/// ([`GetSetDirect`]), or None where its fields cannot be trusted. CPython lays a getset
/// descriptor out as the object header, `d_type`, `d_name`, `d_qualname`, then `d_getset` (a
/// `PyGetSetDef *`: `name`, `get`, `set`, `doc`, `closure`), the same in every 3.x and in the
/// free-threaded build after its longer header; read only where the header's size is
/// established ([`Api::header_size`]) and checked before use: `d_name` must be the very `name`
/// object the lookup found it under (both interned), `d_type` a type object (its type `type` or
/// a subclass of it), `d_getset->name` the same text as `name`, and `get` non-NULL.
///
/// # Safety
/// GIL held; `d` an exact `getset_descriptor` the caller holds a reference to.
unsafe fn getset_direct(
    api: &'static Api,
    d: *mut PyObject,
    name: *mut PyObject,
) -> Option<GetSetDirect> {
    let head = api.header_size()?;
    let is_subtype = api.PyType_IsSubtype?;
    let type_type = api.PyType_Type?;
    // SAFETY: `d` is a live getset descriptor (caller): at least the header and four
    // pointer-sized fields; `d_getset` points at a `PyGetSetDef` that lives as long as the type.
    unsafe {
        let field = |i: usize| {
            (d as *const u8)
                .add(head + 8 * i)
                .cast::<*mut c_void>()
                .read()
        };
        let (d_type, d_name, def) = (field(0), field(1), field(3).cast::<*const c_void>());
        if d_name != name || d_type.is_null() || def.is_null() {
            return None;
        }
        let meta = api.type_of(d_type);
        if meta.is_null() || (meta != type_type && is_subtype(meta, type_type) == 0) {
            return None;
        }
        let mut len = 0isize;
        let text = (api.PyUnicode_AsUTF8AndSize)(name, &mut len);
        if text.is_null() {
            (api.PyErr_Clear)();
            return None;
        }
        let def_name = def.read().cast::<core::ffi::c_char>();
        let get = def.add(1).read();
        let closure = def.add(4).read();
        if def_name.is_null()
            || get.is_null()
            || core::ffi::CStr::from_ptr(def_name).to_bytes()
                != core::slice::from_raw_parts(text.cast::<u8>(), len as usize)
        {
            return None;
        }
        Some(GetSetDirect {
            descr: d as usize,
            get: core::mem::transmute::<*const c_void, GetSetGet>(get),
            closure: closure as usize,
            owner: d_type as usize,
            is_subtype,
        })
    }
}

/// Whether a tensor that a guarded table (`rules::TableGuard`) is about to export has a
/// property for which the producer's `__dlpack__` answers differently: PyTorch's
/// `requires_grad`, PaddlePaddle's `stop_gradient` False (each refused by `__dlpack__` with
/// `BufferError`; the table exports such a tensor writable). Called BEFORE the export
/// (`import::via_table`): the read may run Python code (PyTorch's getter dispatches to a
/// `TorchFunctionMode` or a type's `__torch_function__`; a property), and code that resizes
/// the tensor after the export would free the memory the export points at (issue 26, new-user
/// run: a read after free with PyTorch 2.15). One attribute read for every dtype (a getset
/// descriptor called directly where the attribute lookup would call it: [`guard_attr`]).
/// PyTorch's conjugate bit, which only complex tensors carry, is `rules::table_export_kept`'s
/// (a complex export is released and `__dlpack__` asked). `true` also when an answer is not
/// exactly the `bool` that lets the table stand in, or cannot be read cheaply (no cached
/// names: a subinterpreter; the read raised, its ordinary exception cleared): `__dlpack__`
/// then answers. `Err` only for an exception not deriving from `Exception`, which stays set.
///
/// Not checked: PyTorch's negative bit (`torch._neg_view(t)`, `t.conj().imag`), which PyTorch
/// 2.15's `__dlpack__` does not refuse: both export the memory as it lies (un-negated), so the
/// table's answer is `__dlpack__`'s. Sparse and other non-strided layouts make the tables fail,
/// which the import answers by calling `__dlpack__` (`import::via_table`).
#[inline(always)]
pub(crate) fn table_refuses(
    api: &'static Api,
    obj: *mut PyObject,
    guard: rules::TableGuard,
) -> Result<bool, Error> {
    let checks = rules::table_checks(guard);
    if checks == rules::TableChecks::default() {
        return Ok(false);
    }
    // SAFETY: GIL held (caller).
    let Some(names) = (unsafe { api.names() }) else {
        return Ok(true);
    };
    // Whether the answer is exactly `want` (`True` or `False`); an answer that is neither, or a
    // read that raised (its ordinary exception cleared), is "no": `__dlpack__` then decides.
    let exactly = |r: *mut PyObject, want: *mut PyObject| -> Result<bool, Error> {
        if r.is_null() {
            return guard_read_raised(api);
        }
        // SAFETY: GIL held; the read's new reference, released once.
        unsafe { (api.Py_DecRef)(r) };
        Ok(r == want)
    };
    // SAFETY: GIL held; getset descriptors of the producer's tensor type.
    let attr = |k, name| unsafe { guard_attr(api, k, obj, name) };
    if checks.requires_grad && !exactly(attr(0, names.requires_grad), names.py_false)? {
        return Ok(true);
    }
    if checks.stop_gradient && !exactly(attr(1, names.stop_gradient), names.py_true)? {
        return Ok(true);
    }
    Ok(false)
}

/// [`table_refuses`]' answer to a guard read that raised: its ordinary exception is cleared and
/// the answer is "no" (`__dlpack__` then decides); one that must stay set is `Err`. Out of line:
/// the import's hot path carries none of it.
#[cold]
#[inline(never)]
fn guard_read_raised(api: &'static Api) -> Result<bool, Error> {
    // SAFETY: GIL held (caller); the read raised.
    unsafe { api.catch(false, |_| true) }?;
    Ok(false)
}

/// Whether `obj`'s own `__dict__` holds `__dlpack__`, or for a guarded table one of the names
/// the producer's `__dlpack__` reads (`rules::dlpack_reads`: PyTorch's `is_conj`, PaddlePaddle's
/// `is_sparse`, `get_tensor`: methods, which an instance attribute shadows) or, for PyTorch's,
/// `__torch_function__` (which PyTorch dispatches `__dlpack__` through), or whether that
/// cannot be told (a lookup raised). Looked up in the dictionary itself, as the attribute
/// lookup does (a dict subclass's `__getitem__` is not called). An instance `__dlpack__` is the one every consumer calls (`obj.__dlpack__`
/// finds it before the type's function, a non-data descriptor), and an instance `is_conj` is
/// what PyTorch's `__dlpack__` calls before it exports: the type's exchange table must not
/// stand in for either (issue 26, new-user run: `x.__dlpack__ = refuse` on a PyTorch tensor was
/// imported through the table). Names of data descriptors (`requires_grad`, `device`) cannot
/// be shadowed by the instance; one found there still answers `true` (`__dlpack__` is then
/// simply called). Costs a dictionary slot read for an object without a dictionary (our
/// `Tensor`, NumPy arrays, a PyTorch tensor never given an attribute) and a lookup per name
/// otherwise; `_PyObject_GetDictPtr` makes a dictionary only from attributes the instance
/// already holds (CPython 3.11/3.12 inline values). `true` when the symbols or the cached names
/// are missing, or a lookup raised (its ordinary exception cleared; `Err` for one not deriving
/// from `Exception`, which stays set).
///
/// # Safety
/// GIL held; `obj` a live object.
#[inline(always)]
pub(crate) unsafe fn instance_overrides(
    api: &'static Api,
    obj: *mut PyObject,
    found: &Found,
) -> Result<bool, Error> {
    if !found.instance_dict {
        return Ok(false);
    }
    let (Some(dict_ptr), Some(get_item)) = (api._PyObject_GetDictPtr, api.PyDict_GetItemWithError)
    else {
        return Ok(true);
    };
    // Free-threaded CPython (issue 36): another thread may replace `obj.__dict__` (and free the
    // old one) between the slot's read and the new reference; CPython's own setter does it
    // under the object's critical section, so the read and the reference are made under it too.
    // Without the critical-section API there, `__dlpack__` answers.
    let section = if api.free_threaded() {
        match (api.PyCriticalSection_Begin, api.PyCriticalSection_End) {
            (Some(b), Some(e)) => Some((b, e)),
            _ => return Ok(true),
        }
    } else {
        None
    };
    let mut cs = [0usize; 2];
    if let Some((begin, _)) = section {
        // SAFETY: attached thread; `cs` outlives the section (ended below on every path).
        unsafe { begin(&mut cs, obj) };
    }
    // SAFETY: GIL held (or the object's critical section); the instance dictionary's slot of
    // `obj`. NULL for a type that can have one means CPython could not make it from the
    // instance's attributes (it clears that `MemoryError` itself): what the instance holds is
    // unknown.
    let dict = unsafe {
        let p = dict_ptr(obj);
        if p.is_null() {
            Err(())
        } else {
            let d = *p;
            if !d.is_null() {
                (api.Py_IncRef)(d);
            }
            Ok(d)
        }
    };
    if let Some((_, end)) = section {
        // SAFETY: the section begun above.
        unsafe { end(&mut cs) };
    }
    let Ok(dict) = dict else {
        return Ok(true);
    };
    if dict.is_null() {
        return Ok(false);
    }
    // A strong reference for the lookups: a key's `__eq__` may run Python code that replaces
    // the instance's `__dict__` and frees this one (a read after free: new-user run).
    // SAFETY: the new reference taken above; released on drop.
    let Some(dict) = Owned::new(api, dict) else {
        return Ok(true);
    };
    // SAFETY: as above.
    unsafe { instance_dict_overrides(api, dict.as_ptr(), get_item, found.guard) }
}

/// [`instance_overrides`] for an instance that has a dictionary `dict` (borrowed).
///
/// # Safety
/// GIL held; `dict` a live dictionary.
#[cold]
#[inline(never)]
unsafe fn instance_dict_overrides(
    api: &'static Api,
    dict: *mut PyObject,
    get_item: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    guard: rules::TableGuard,
) -> Result<bool, Error> {
    // Looked up in the dictionary itself, as the attribute lookup does (a dict subclass's
    // `__getitem__` is not called: new-user run), every name the same way; a lookup that
    // raised (a key's `__eq__`) is what the attribute lookup raises too: `__dlpack__` answers.
    for k in rules::overridable_names(guard) {
        // SAFETY: GIL held; a new reference, released below.
        let Some(key) = Owned::new(api, unsafe { (api.PyUnicode_InternFromString)(k.as_ptr()) })
        else {
            // SAFETY: GIL held.
            unsafe { api.catch(false, |_| true) }?;
            return Ok(true);
        };
        // SAFETY: GIL held; a borrowed answer, only compared with NULL.
        if !unsafe { get_item(dict, key.as_ptr()) }.is_null() {
            return Ok(true);
        }
        // SAFETY: GIL held.
        if !unsafe { (api.PyErr_Occurred)() }.is_null() {
            // SAFETY: GIL held; a key's `__eq__` raised.
            unsafe { api.catch(false, |_| true) }?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// The name of link `link` of a DLPack 1.2 table's chain, for messages.
fn v12_link(link: usize) -> String {
    if link == 0 {
        V12.to_owned()
    } else {
        format!("{V12}'s prev_api chain (link {link})")
    }
}

/// Copy `out.len()` bytes of the table `what` at `addr` (a DLPack 1.2 integer or a `prev_api`
/// reached from one), or refuse it if they are not readable memory: `part` names the bytes.
fn read_checked(what: &str, addr: usize, part: &str, out: &mut [u8]) -> Result<(), Error> {
    match probe::copy_from(addr, out) {
        Probe::Readable => Ok(()),
        Probe::Unreadable => Err(Error::ExchangeApiInvalid(format!(
            "{what} is {addr:#x}, but the {} bytes of {part} there are not readable memory: not \
             the address of a DLPackExchangeAPI table (DLPack 1.2 integer form; checked without \
             dereferencing it)",
            out.len()
        ))),
        Probe::Unchecked(errno) => Err(Error::ExchangeApiUnchecked(format!(
            "{what} is {addr:#x}: could not check that {part} there is readable memory (a \
             pipe failed, errno {errno}); not used, and checked again on the next lookup"
        ))),
    }
}

/// The header of a DLPack 1.2 table at `addr`: its bytes are checked readable and copied, and
/// the copy is what is read.
fn header_checked(what: &str, addr: usize) -> Result<DLPackExchangeAPIHeader, Error> {
    let mut buf = [0u8; size_of::<DLPackExchangeAPIHeader>()];
    read_checked(what, addr, "the table header (version, prev_api)", &mut buf)?;
    // SAFETY: `buf` holds exactly the header's bytes; every bit pattern is a valid header (two
    // `u32` and a raw pointer), and `read_unaligned` needs no alignment of `buf`.
    Ok(unsafe { core::ptr::read_unaligned(buf.as_ptr().cast::<DLPackExchangeAPIHeader>()) })
}

/// Walk `prev_api` to a table of major 1 (DLPack 1.3 § DLPackExchangeAPI). The function
/// pointers are checked by the user of the table: `check_all` for `dlpack_exchange_api_find`,
/// only the import function for an import.
///
/// From a DLPack 1.2 integer (`Head::Address`), nothing is dereferenced unchecked: each header
/// along the chain is an address that passes `rules::check_table_address` and whose bytes are
/// readable (read from the checked copy), and the major-1 table found must be readable for
/// the whole `DLPackExchangeAPI` (the bytes its users read). That runs once per type (the
/// answer is cached).
fn select(head: Head) -> Result<*const DLPackExchangeAPI, Error> {
    let (mut h, raw) = match head {
        Head::Capsule(p) => (p, false),
        Head::Address(p) => (p as *const DLPackExchangeAPIHeader, true),
    };
    let mut newest = None;
    for link in 0..MAX_CHAIN {
        if h.is_null() {
            let v = newest.unwrap_or_default();
            return Err(Error::UnsupportedVersion {
                what: "the exchange API table (and its prev_api chain)",
                found: v,
                supported: 1,
            });
        }
        let (v, prev) = if raw {
            let what = v12_link(link);
            let addr = if link == 0 {
                h as usize // checked by `locate`
            } else {
                rules::check_table_address(
                    &what,
                    h as usize as u64,
                    align_of::<DLPackExchangeAPIHeader>(),
                )?
            };
            let hdr = header_checked(&what, addr)?;
            if hdr.version.major == 1 {
                let mut whole = [0u8; size_of::<DLPackExchangeAPI>()];
                read_checked(
                    &what,
                    addr,
                    "the DLPackExchangeAPI (its header says major 1)",
                    &mut whole,
                )?;
            }
            (hdr.version, hdr.prev_api)
        } else {
            // SAFETY: a non-NULL header of a capsule's table points to a static table; version
            // and prev_api are readable in every major (the header is the frozen prefix).
            unsafe { ((*h).version, (*h).prev_api) }
        };
        newest.get_or_insert(v);
        if v.major == 1 {
            return Ok(h.cast::<DLPackExchangeAPI>());
        }
        h = prev;
    }
    Err(Error::ExchangeApiInvalid(format!(
        "the exchange API's prev_api chain is longer than {MAX_CHAIN} (a cycle?)"
    )))
}

/// Every function pointer DLPack 1.3 says may not be NULL (`dltensor_from_py_object_no_sync`
/// may be NULL: "not supported").
fn check_all(t: *const DLPackExchangeAPI) -> Result<*const DLPackExchangeAPI, Error> {
    // SAFETY: `select` found a major-1 table: the DLPack 1.2/1.3 layout.
    let tr = unsafe { &*t };
    let missing = [
        (
            "managed_tensor_allocator",
            tr.managed_tensor_allocator.is_none(),
        ),
        (
            "managed_tensor_from_py_object_no_sync",
            tr.managed_tensor_from_py_object_no_sync.is_none(),
        ),
        (
            "managed_tensor_to_py_object_no_sync",
            tr.managed_tensor_to_py_object_no_sync.is_none(),
        ),
        ("current_work_stream", tr.current_work_stream.is_none()),
    ];
    if let Some((name, _)) = missing.iter().find(|(_, m)| *m) {
        let v = tr.header.version;
        return Err(Error::ExchangeApiInvalid(format!(
            "the exchange API table (DLPack {}.{}) has a NULL {name}, which DLPack 1.3 says \
             may not be NULL",
            v.major, v.minor
        )));
    }
    Ok(t)
}

/// Whether a lookup's answer is a fact about the type (cached for the process) rather than a
/// transient failure (a Python exception raised by the lookup: not cached, asked again).
fn definitive(r: &Result<usize, Error>) -> bool {
    !matches!(
        r,
        Err(Error::ProducerError(_)
            | Error::ProducerBufferError(_)
            | Error::ProducerTypeError(_)
            | Error::PythonErrorSet(_)
            | Error::ExchangeApiUnchecked(_))
    )
}

/// Find the major-1 table of `type(obj)`, cached per type. No lock is held while Python runs
/// (see `CACHE`): look up, then lock only to insert; the first answer inserted wins.
fn find_table(api: &'static Api, obj: *mut PyObject) -> Result<usize, Error> {
    // SAFETY: GIL held; never fails.
    let Some(ty) = Owned::new(api, unsafe { (api.PyObject_Type)(obj) }) else {
        return Err(cpython::producer_error(
            ExcClass::Other,
            "type(obj) failed".into(),
        ));
    };
    let key = ty.as_ptr() as usize;
    if let Some(r) = cache_get(key) {
        return r;
    }
    // Foreign code: no lock held.
    let r = locate(api, ty.as_ptr()).and_then(select).and_then(|p| {
        if p as usize % core::mem::align_of::<DLPackExchangeAPI>() != 0 {
            return Err(Error::ExchangeApiInvalid(format!(
                "the exchange API table at {p:p} is not aligned to a pointer"
            )));
        }
        let guard = check_publisher(api, ty.as_ptr(), p)?;
        Ok(tag(
            p as usize,
            guard,
            instances_have_dict(api, ty.as_ptr())?,
        ))
    });
    if !definitive(&r) {
        return r;
    }
    let (answer, inserted) = {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let map = cache.get_or_insert_with(HashMap::new);
        match map.get(&key) {
            Some(first) => (first.clone(), false),
            None => {
                map.insert(key, r.clone());
                fast_put(key, &r);
                (r, true)
            }
        }
    };
    if inserted {
        // Keep the type alive while cached (its address is the key).
        let _ = ty.into_raw();
    } // else `ty` is released here, after the lock (a release may run Python code).
    answer
}

/// Find, check and cache the exchange API of `type(obj)` (every required pointer checked).
pub(crate) fn find(
    api: &'static Api,
    obj: *mut PyObject,
) -> Result<*const DLPackExchangeAPI, Error> {
    find_table(api, obj).and_then(|p| check_all(untag(p).table))
}

/// The exchange API of `type(obj)` when it can serve an import (its
/// `managed_tensor_from_py_object_no_sync` is non-NULL), or None when the type has no usable one
/// (the import then falls back to `__dlpack__`); `Err` only for a Python exception that must
/// stay set (`PythonErrorSet`). Decision (issue 12): an import needs only
/// `managed_tensor_from_py_object_no_sync`, the one function it calls (and, for a recording
/// import of device memory, `current_work_stream`, checked there); a table whose other
/// pointers are NULL (apache-tvm-ffi publishes a DLPack 1.3 table with a NULL
/// `managed_tensor_allocator`) still serves imports. `dlpack_exchange_api_find`, which hands
/// the whole table to a caller, keeps checking every required pointer.
///
/// Hot path: a type already cached in a fast slot costs one `type(obj)` and a few atomic
/// loads (no lock, no hash, no allocation).
#[inline(always)]
pub(crate) fn find_import(api: &'static Api, obj: *mut PyObject) -> Result<Option<Found>, Error> {
    // SAFETY: GIL held; borrowed (`obj` keeps its type alive for the rest of this call).
    let ty = unsafe { api.type_of(obj) };
    let hit = fast_get(ty as usize);
    let mut found = match hit {
        Some(0) => return Ok(None),
        Some(t) => untag(t),
        None => match find_table(api, obj) {
            Ok(t) => untag(t),
            Err(e @ Error::PythonErrorSet(_)) => return Err(e),
            Err(_) => return Ok(None),
        },
    };
    found.ty = ty as usize;
    // SAFETY: a major-1 table (`select`).
    Ok(unsafe { (*found.table).managed_tensor_from_py_object_no_sync }.map(|_| found))
}

/// Import through the `managed_tensor_from_py_object_no_sync` of a table from [`find_import`].
#[inline(always)]
pub(crate) fn import_no_sync(
    api: &'static Api,
    t: *const DLPackExchangeAPI,
    obj: *mut PyObject,
    keep: bool,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    // SAFETY: a major-1 table whose import function `find_import` checked non-NULL.
    let Some(f) = (unsafe { (*t).managed_tensor_from_py_object_no_sync }) else {
        return Err(Error::ExchangeApiInvalid(
            "managed_tensor_from_py_object_no_sync is NULL".into(),
        ));
    };
    let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
    // SAFETY: the producer's export for an object of the type the table was found on; GIL held.
    let rc = unsafe { f(obj, &mut out) };
    if rc != 0 {
        // SAFETY: GIL held; the producer set a Python exception (DLPack 1.3).
        return Err(unsafe { api.failure(keep) });
    }
    if out.is_null() {
        return Err(Error::BadProducerResult(
            "managed_tensor_from_py_object_no_sync returned 0 but no tensor".into(),
        ));
    }
    super::capsule::accept_versioned(out)
}

/// Find the C exchange API of `type(obj)`: `__dlpack_c_exchange_api__` (a capsule named
/// `"dlpack_exchange_api"`, DLPack 1.3) or else `__c_dlpack_exchange_api__` (an integer
/// address, DLPack 1.2).
///
/// The table is checked before it is returned: its `header.version.major` must be 1, else the
/// `prev_api` chain is walked to a major-1 table; the function pointers DLPack 1.3 says may not
/// be NULL are checked (`dltensor_from_py_object_no_sync` may be NULL: "not supported"). (An
/// import with `DLPACK_HELPERS_IMPORT_EXCHANGE_API` needs only
/// `managed_tensor_from_py_object_no_sync`: a table with, say, a NULL
/// `managed_tensor_allocator` still serves imports, while this function refuses it.)
///
/// The DLPack 1.2 integer is a raw pointer: before anything is read there, it must be an `int`
/// that is not a `bool`, in 0..2**64, not in the first page (below 4096), aligned to a pointer
/// (the table's alignment), and inside user address space (x86-64: below 2**56, which covers
/// 4- and 5-level paging; aarch64: below 2**52 not counting the top-byte pointer tag; other
/// targets: no bound). Then the table header (and the header of each `prev_api` reached from
/// it, each held to the same address rules) must be readable memory, and the major-1 table
/// found must be readable for the whole `DLPackExchangeAPI`: checked without dereferencing
/// (the kernel copies the bytes through a pipe and answers `EFAULT` for unreadable memory), so
/// a wrong address is `_EXCHANGE_API_INVALID`, never a crash. These checks run once per type,
/// on the first lookup. No check can prove that readable memory is a real table: an integer
/// that points at mapped memory of another kind is still read as a table, so the integer form
/// remains a pointer the producer vouches for (prefer the DLPack 1.3 capsule). The DLPack 1.3
/// capsule's pointer is trusted as capsules are.
///
/// A type that defines `__dlpack__` in a class that comes before the table's class in its MRO
/// (a subclass overriding `__dlpack__`, say of `torch.Tensor`) is answered
/// `_NO_EXCHANGE_API`: the table was written for the base class and would skip the override
/// (issue 25), so imports call `__dlpack__` instead. Only the classes' own `__dict__`s are read;
/// a type whose `__mro__`, or a `__dict__` in it, cannot be read (a metaclass property raised)
/// is answered `_NO_EXCHANGE_API` too.
/// For PyTorch's table (the class that publishes it is in the package `torch`), so is a type
/// that defines `__torch_function__` below that class (`Tensor.__dlpack__` dispatches through
/// it), unless it is PyTorch's `_disabled_torch_function_impl` (`torch.nn.Parameter`); and,
/// for PyTorch's or PaddlePaddle's table, a type that defines below that class an attribute the
/// producer's `__dlpack__` reads to decide its answer (PyTorch: `requires_grad`, `is_conj`,
/// `layout`, `device`; PaddlePaddle: `is_sparse`, `stop_gradient`, `place`, `get_tensor`; for
/// both, `__getattribute__`): a
/// subclass of an integer tensor whose `requires_grad` raises was exported by the table.
///
/// Caveat for callers of PyTorch's or PaddlePaddle's table itself: its
/// `managed_tensor_from_py_object_no_sync` exports any tensor's memory as it lies, skipping the
/// refusals of the producer's `__dlpack__` (a tensor that requires grad comes out writable, a
/// PyTorch tensor with the conjugate bit with its unconjugated memory: wrong values).
/// `dlpack_object_import` with `DLPACK_HELPERS_IMPORT_EXCHANGE_API` checks those and calls
/// `__dlpack__` instead (see that flag); a caller that uses the table returned here checks
/// them itself (PyTorch: `tensor.requires_grad`, `tensor.is_conj()`; PaddlePaddle:
/// `tensor.stop_gradient`).
///
/// The answer about the type (a table, or why there is none) is cached per type for the life
/// of the process (the spec makes the attribute a static property of the type; the cache keeps
/// a reference to the type); an exception raised by the lookup is not cached, nor a
/// readability check that could not run (no file descriptor for its pipe). No lock of this
/// library is held while the lookup runs Python code, so the lookup may re-enter this library
/// or release the GIL.
///
/// - `obj`: any Python object (`PyObject *`), borrowed.
/// - `out_api`: receives the process-lifetime table.
///
/// Returns OK; `_NO_EXCHANGE_API`; `_EXCHANGE_API_INVALID` (NULL table, wrong capsule, NULL
/// required pointer, `prev_api` cycle, a 1.2 integer or `prev_api` that fails the checks
/// above); `_UNSUPPORTED_VERSION` (no major-1
/// table in the chain); `_PRODUCER_ERROR`, `_PRODUCER_BUFFER_ERROR` or `_PRODUCER_TYPE_ERROR`
/// (the attribute lookup raised an exception; by its class: `BufferError`, `TypeError`, any
/// other; the exception is cleared); `_PYTHON_ERROR_SET` (it raised an exception not deriving from `Exception`, left
/// set); `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`. The caller holds the GIL.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `obj` or `out_api` is NULL
/// @retval DLPACK_HELPERS_STATUS_NO_EXCHANGE_API when the type has neither exchange-API attribute
/// @retval DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID when the table is NULL, in a wrong capsule,
///   has a NULL required pointer or a `prev_api` cycle, or the DLPack 1.2 integer (or a
///   `prev_api` reached from it) cannot be a readable table's address
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when no table in the `prev_api` chain has
///   major 1
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when the attribute lookup raised an exception
///   other than `BufferError` or `TypeError` (the exception is cleared)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR when it raised a `BufferError` (cleared)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR when it raised a `TypeError` (cleared)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception that does not derive from
///   `Exception` was raised: it is left set
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_exchange_api_find(
    obj: *mut c_void,
    out_api: *mut *const DLPackExchangeAPI,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_api, "out_api")?;
        if obj.is_null() {
            return Err(Error::NullPointer("obj"));
        }
        let api = cpython::require("dlpack_exchange_api_find")?;
        let t = find(api, obj)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// Flag of `dlpack_exchange_api_current_work_stream`: read a NULL answer for a CUDA or ROCm
/// device as that device's default stream (CUDA: the legacy default stream, kind
/// `DLPACK_HELPERS_STREAM_LEGACY_DEFAULT`; ROCm: the NULL stream, `_DEFAULT`) instead of
/// refusing it. For a caller that knows its producer names its default stream NULL (PyTorch's
/// table does on the default stream). Other device types' NULL is refused either way.
pub const DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT: u32 = 0x1;

/// The stream a table's `current_work_stream` names for `device`, decoded (peer case 53): the
/// consumer-side rule shared by `dlpack_exchange_api_current_work_stream` and the recording
/// import. `keep`: leave an ordinary Python exception set (`PythonErrorSet`) instead of
/// clearing it into a `PRODUCER_*` error.
///
/// # Safety
/// `t` is a major-1 table; the GIL is held when Python is in the process.
pub(crate) unsafe fn work_stream(
    t: *const DLPackExchangeAPI,
    device: crate::abi::DLDevice,
    null_is_default: bool,
    keep: bool,
) -> Result<crate::rules::stream::Stream, Error> {
    use crate::rules::stream::{self as st, Family, Kind, Stream};
    // SAFETY: a major-1 table (caller contract).
    let Some(f) = (unsafe { (*t).current_work_stream }) else {
        return Err(Error::ExchangeApiInvalid(
            "the exchange API table has a NULL current_work_stream, which DLPack 1.3 says may \
             not be NULL"
                .into(),
        ));
    };
    let mut out: *mut c_void = core::ptr::null_mut();
    // SAFETY: the producer's function with its documented arguments and a live out-pointer.
    let rc = unsafe { f(device.device_type, device.device_id, &mut out) };
    if rc != 0 {
        return Err(match cpython::get() {
            // SAFETY: GIL held (caller contract); the producer set an exception (DLPack 1.3).
            Some(api) => unsafe { api.failure(keep) },
            None => Error::ProducerError(format!(
                "current_work_stream returned {rc} for device ({}, {})",
                device.device_type.0, device.device_id
            )),
        });
    }
    let h = out as usize;
    let fam = st::family(device.device_type);
    Ok(match (fam, h) {
        (Family::Cpu, _) => Stream::new(Kind::None, 0),
        (Family::Cuda, 0) | (Family::Rocm, 0) | (Family::Other, 0) => {
            if null_is_default && fam == Family::Cuda {
                Stream::new(Kind::LegacyDefault, st::CUDA_STREAM_LEGACY)
            } else if null_is_default && fam == Family::Rocm {
                Stream::new(Kind::Default, 0)
            } else {
                return Err(Error::NullWorkStream(format!(
                    "the exchange API table's current_work_stream answered NULL for device ({}, \
                     {}); NULL names a stream only for kDLCPU, so the stream the data is ordered \
                     on is unknown (peer case 53; a producer that cannot name it must return -1 \
                     with an exception)",
                    device.device_type.0, device.device_id
                )));
            }
        }
        (Family::Cuda, st::CUDA_STREAM_LEGACY) => Stream::new(Kind::LegacyDefault, h),
        (Family::Cuda, st::CUDA_STREAM_PER_THREAD) => Stream::new(Kind::PerThreadDefault, h),
        (_, h) => Stream::new(Kind::Handle, h),
    })
}

/// Ask an exchange API table for the producer's current work stream on a device, the stream a
/// consumer launches on after a no-sync import from that table (DLPack 1.3 `current_work_stream`,
/// need N0), and refuse an answer that names nothing (peer case 53: tvm-ffi PR #690 and #466,
/// where a table answered success and NULL for devices whose stream it could not name, so
/// consumers launched on the default stream while the producer worked on another).
///
/// - `api`: a major-1 table (from `dlpack_exchange_api_find`, or a producer's table in C).
/// - `device`: the device of the data (`dl_tensor.device` of the imported tensor).
/// - `flags`: `DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT` and/or
///   `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`; other bits are `_INVALID_ARGUMENT`.
/// - `out_stream`: receives the stream, decoded: `kDLCPU` → kind `DLPACK_HELPERS_STREAM_NONE`
///   (whatever the table answered: no streams); CUDA 0x1 → `_LEGACY_DEFAULT`, 0x2 →
///   `_PER_THREAD_DEFAULT`; any other non-NULL answer → `_HANDLE`. Written only on OK.
///
/// Rules: NULL off `kDLCPU` is `DLPACK_HELPERS_STATUS_NULL_WORK_STREAM` (never "the default
/// stream"), unless `DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT` maps it to CUDA's legacy default
/// stream or ROCm's NULL stream. A table answering -1 has set a Python exception: in the default
/// mode an ordinary one is cleared and becomes `_PRODUCER_ERROR` / `_PRODUCER_BUFFER_ERROR` /
/// `_PRODUCER_TYPE_ERROR` with its message; with `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR` (or
/// for an exception that does not derive from `Exception`) it is left set and the status is
/// `_PYTHON_ERROR_SET`. Without Python in the process, -1 is `_PRODUCER_ERROR`. The caller holds
/// the GIL when Python is in the process (DLPack 1.3: every table function is called with it).
/// Thread-safety: as the producer's function.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `api` or `out_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `flags` has unknown bits
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the table's major version is not 1
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (the table is
///   not called)
/// @retval DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID when the table's `current_work_stream` is
///   NULL
/// @retval DLPACK_HELPERS_STATUS_NULL_WORK_STREAM when it answered NULL for a device other than
///   `kDLCPU` (and the NULL is not read as the default stream)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when it returned -1 (its exception, cleared, is in
///   the message; also without Python)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR when it returned -1 with a `BufferError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR when it returned -1 with a `TypeError`
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when it returned -1 and the exception is left set
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_exchange_api_current_work_stream(
    api: *const DLPackExchangeAPI,
    device: crate::abi::DLDevice,
    flags: u32,
    out_stream: *mut crate::capi::stream::dlpack_helpers_stream,
) -> dlpack_helpers_status {
    use super::import::DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR;
    boundary::status(|| {
        let out = out_ptr(out_stream, "out_stream")?;
        if api.is_null() {
            return Err(Error::NullPointer("api"));
        }
        let known =
            DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT | DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR;
        if flags & !known != 0 {
            return Err(Error::invalid(format!(
                "flags has unknown bits 0x{:x} (known: DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT, \
                 DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR)",
                flags & !known
            )));
        }
        // SAFETY: a non-NULL table (caller contract); the header is readable in every major.
        let v = unsafe { (*api).header.version };
        if v.major != 1 {
            return Err(Error::UnsupportedVersion {
                what: "api->header.version",
                found: v,
                supported: 1,
            });
        }
        // A negative id is no device: refused before the table is called (peer case 54).
        crate::rules::device::check_id(device, "device")?;
        // SAFETY: a major-1 table; GIL per the caller contract.
        let s = unsafe {
            work_stream(
                api,
                device,
                flags & DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT != 0,
                flags & DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR != 0,
            )
        }?;
        // SAFETY: non-NULL caller storage.
        unsafe {
            out.write(crate::capi::stream::dlpack_helpers_stream {
                kind: s.kind.as_raw(),
                handle: s.handle as *mut c_void,
            })
        };
        Ok(())
    })
}
