//! Names of dtypes and devices, both ways, formatted without allocation.
//!
//! dtype names (lanes 1): `int8` … `int64` (`int1`, `int2`, `int4`, `int128` too), `uint<N>`,
//! `float16`, `float32`, `float64`, `float128`, `bfloat16`, `complex32`, `complex64`,
//! `complex128` (bits = size of the whole complex number), `bool`, `handle<N>`, and the
//! DLPack 1.1 names `float8_e3m4`, `float8_e4m3`, `float8_e4m3b11fnuz`, `float8_e4m3fn`,
//! `float8_e4m3fnuz`, `float8_e5m2`, `float8_e5m2fnuz`, `float8_e8m0fnu`, `float6_e2m3fn`,
//! `float6_e3m2fn`, `float4_e2m1fn`. A vector type appends `x<lanes>`: `float32x4`; lanes 1
//! is written without a suffix, so parsing refuses `x1` (names parse exactly as written).
//! Only dtypes that pass `dtype::element` have names.
//!
//! Device names: `cpu`, `cuda`, `cuda_host`, `opencl`, `vulkan`, `metal`, `vpi`, `rocm`,
//! `rocm_host`, `ext_dev`, `cuda_managed`, `oneapi`, `webgpu`, `hexagon`, `maia`, `trn`
//! (DLPack 1.3 device types 1–4, 7–18). Formatting always writes `name:id` (`cuda:1`,
//! `cpu:0`); parsing accepts `name` (id 0) or `name:id` with a decimal id in 0..=INT32_MAX.

use crate::abi::{DLDataType, DLDevice, DLDeviceType};
use crate::rules::dtype;
use crate::rules::error::{Error, Fault};
use core::fmt::Write;

/// The longest name either formatter writes, with its NUL: `float8_e4m3b11fnuzx65535` is 24
/// bytes, `cuda_managed:2147483647` 23.
pub const NAME_MAX: usize = 32;

const FIXED: &[(u8, &str)] = &[
    (4, "bfloat16"),
    (6, "bool"),
    (7, "float8_e3m4"),
    (8, "float8_e4m3"),
    (9, "float8_e4m3b11fnuz"),
    (10, "float8_e4m3fn"),
    (11, "float8_e4m3fnuz"),
    (12, "float8_e5m2"),
    (13, "float8_e5m2fnuz"),
    (14, "float8_e8m0fnu"),
    (15, "float6_e2m3fn"),
    (16, "float6_e3m2fn"),
    (17, "float4_e2m1fn"),
];
const FAMILIES: &[(u8, &str)] = &[
    (0, "int"),
    (1, "uint"),
    (2, "float"),
    (3, "handle"),
    (5, "complex"),
];

const DEVICES: &[(i32, &str)] = &[
    (1, "cpu"),
    (2, "cuda"),
    (3, "cuda_host"),
    (4, "opencl"),
    (7, "vulkan"),
    (8, "metal"),
    (9, "vpi"),
    (10, "rocm"),
    (11, "rocm_host"),
    (12, "ext_dev"),
    (13, "cuda_managed"),
    (14, "oneapi"),
    (15, "webgpu"),
    (16, "hexagon"),
    (17, "maia"),
    (18, "trn"),
];

/// `table` indexed by its keys (`0..N`), for the formatters: a load instead of a search.
const fn by_key<const N: usize>(table: &[(i64, &'static str)]) -> [Option<&'static str>; N] {
    let mut out = [None; N];
    let mut k = 0;
    while k < table.len() {
        out[table[k].0 as usize] = Some(table[k].1);
        k += 1;
    }
    out
}
const fn widen<const M: usize>(table: &[(u8, &'static str)]) -> [(i64, &'static str); M] {
    let mut out = [(0, ""); M];
    let mut k = 0;
    while k < M {
        out[k] = (table[k].0 as i64, table[k].1);
        k += 1;
    }
    out
}
const fn widen_i32<const M: usize>(table: &[(i32, &'static str)]) -> [(i64, &'static str); M] {
    let mut out = [(0, ""); M];
    let mut k = 0;
    while k < M {
        out[k] = (table[k].0 as i64, table[k].1);
        k += 1;
    }
    out
}
/// Scalar names by dtype code (0-17): the fixed names, then the families.
const DTYPE_BY_CODE: [Option<&str>; 18] = by_key(&widen::<13>(FIXED));
const FAMILY_BY_CODE: [Option<&str>; 18] = by_key(&widen::<5>(FAMILIES));
/// Device names by device type (0-18).
const DEVICE_BY_TYPE: [Option<&str>; 19] = by_key(&widen_i32::<16>(DEVICES));

/// A formatted name in a fixed buffer (no allocation): `as_str`, `Display` (`{}` prints the
/// name), `AsRef<str>`, and `==` against a `str`.
#[derive(Clone, Copy)]
pub struct Name {
    buf: [u8; NAME_MAX],
    len: usize,
}

impl Name {
    const fn new() -> Self {
        Name {
            buf: [0; NAME_MAX],
            len: 0,
        }
    }
    /// The name as text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
    /// The name's bytes (ASCII, no NUL).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Name {
    /// Append `s` (names are at most `NAME_MAX - 1` bytes: callers stay within it).
    #[inline]
    fn push_str(&mut self, s: &str) {
        let end = self.len + s.len();
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
    }
    /// Append `v` in decimal without `core::fmt` (its machinery was 2-3x the cost of the whole
    /// name in a C formatter).
    #[inline(always)]
    fn push_decimal(&mut self, mut v: u32) {
        // Digits written in place from the last one (no temporary to copy).
        let mut width = 1;
        let mut t = v;
        while t >= 10 {
            t /= 10;
            width += 1;
        }
        let mut k = self.len + width;
        self.len = k;
        loop {
            k -= 1;
            self.buf[k] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
    }
}

impl Write for Name {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        if end >= NAME_MAX {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl core::fmt::Display for Name {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.pad(self.as_str())
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl core::fmt::Debug for Name {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of a dtype (`InvalidDtype` for a dtype that does not validate).
#[inline]
pub fn dtype_name(dt: DLDataType) -> Result<Name, Error> {
    dtype::element(dt, false)?;
    let mut n = Name::new();
    // The longest: an 18-byte name and `x65535`, within NAME_MAX.
    // A validated code is in 0..=17.
    if let Some(s) = DTYPE_BY_CODE[dt.code as usize] {
        n.push_str(s);
    } else {
        n.push_str(FAMILY_BY_CODE[dt.code as usize].expect("validated code"));
        n.push_decimal(dt.bits.into());
    }
    if dt.lanes > 1 {
        n.push_str("x");
        n.push_decimal(dt.lanes.into());
    }
    Ok(n)
}

/// `float32`, `bfloat16`, `int8x4`, …: the name [`dtype_name`] gives (the name
/// `dlpack_dtype_format` writes); a dtype that does not validate prints as
/// `dtype(code 99, bits 8, lanes 1)`.
impl core::fmt::Display for DLDataType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match dtype_name(*self) {
            Ok(n) => f.write_str(n.as_str()),
            Err(_) => write!(
                f,
                "dtype(code {}, bits {}, lanes {})",
                self.code, self.bits, self.lanes
            ),
        }
    }
}

/// `cpu:0`, `cuda:1`, …: the name [`device_name`] gives (as `dlpack_device_format`); a device
/// without a name prints as `device(type 99, id 0)`.
impl core::fmt::Display for DLDevice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match device_name(*self) {
            Ok(n) => f.write_str(n.as_str()),
            Err(_) => write!(
                f,
                "device(type {}, id {})",
                self.device_type.0, self.device_id
            ),
        }
    }
}

fn unknown(kind: &str, s: &str) -> Error {
    let shown: String = s.chars().take(40).collect();
    Error::fault(
        Fault::UnknownName,
        format!("{shown:?} is not a {kind} name this library knows"),
    )
}

/// The refusal of a device name whose id part is not an ordinal: when the name part is known,
/// the message names the id as the problem (issue 34: "cuda:-1" was "not a device name").
#[cold]
fn bad_device_id(name: &str, id: &str, s: &str) -> Error {
    if !DEVICES.iter().any(|(_, n)| *n == name) {
        return unknown("device", s);
    }
    let shown: String = id.chars().take(24).collect();
    Error::fault(
        Fault::UnknownName,
        format!(
            "the device id {shown:?} in {:?} is not a device ordinal: a decimal integer in \
             0..=2147483647 without a sign or leading zeros (an index-less device is \"{name}\", \
             id 0; peer case 54)",
            s.chars().take(40).collect::<String>()
        ),
    )
}

fn parse_decimal(s: &str) -> Option<u32> {
    if s.is_empty()
        || s.len() > 10
        || !s.bytes().all(|b| b.is_ascii_digit())
        || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

fn parse_scalar(s: &str) -> Option<(u8, u8)> {
    if let Some((code, _)) = FIXED.iter().find(|(_, n)| *n == s) {
        let bits = match code {
            4 => 16,
            15 | 16 => 6,
            17 => 4,
            _ => 8,
        };
        return Some((*code, bits));
    }
    // Longest family prefix first ("uint" before "int" does not matter: no overlap at start).
    FAMILIES.iter().find_map(|(code, fam)| {
        let bits = parse_decimal(s.strip_prefix(fam)?)?;
        u8::try_from(bits).ok().map(|b| (*code, b))
    })
}

/// Parse a dtype name (see the module list). `UnknownName` when it does not parse or names a
/// dtype that does not validate (`float8`, `bfloat32`, `bool1`).
pub fn parse_dtype(s: &str) -> Result<DLDataType, Error> {
    let (base, lanes) = match s.rfind('x') {
        Some(i) if parse_decimal(&s[i + 1..]).is_some() && parse_scalar(&s[..i]).is_some() => {
            (&s[..i], parse_decimal(&s[i + 1..]).unwrap())
        }
        _ => (s, 1),
    };
    let (code, bits) = parse_scalar(base).ok_or_else(|| unknown("dtype", s))?;
    let lanes = u16::try_from(lanes).map_err(|_| unknown("dtype", s))?;
    if lanes == 1 && base.len() != s.len() {
        // `float32x1`: the formatter writes one lane as `float32`; only exact names parse.
        return Err(unknown("dtype", s));
    }
    let dt = DLDataType { code, bits, lanes };
    dtype::element(dt, false).map_err(|_| unknown("dtype", s))?;
    Ok(dt)
}

/// The name of a device type (`None` for a value DLPack 1.3 does not assign).
pub fn device_type_name(t: DLDeviceType) -> Option<&'static str> {
    usize::try_from(t.0)
        .ok()
        .and_then(|i| DEVICE_BY_TYPE.get(i).copied().flatten())
}

/// `name:id`, for example `cuda:1`. `UnknownName` for an unassigned device type; `InvalidArgument`
/// for a negative id.
#[inline]
pub fn device_name(d: DLDevice) -> Result<Name, Error> {
    // The one device-id rule (issue 22): a negative id is `InvalidDevice` here as everywhere.
    crate::rules::device::check_id(d, "device")?;
    let Some(name) = device_type_name(d.device_type) else {
        return Err(device_name_error(d));
    };
    let mut n = Name::new();
    // The longest: `cuda_managed:2147483647`, within NAME_MAX.
    n.push_str(name);
    n.push_str(":");
    n.push_decimal(d.device_id as u32);
    Ok(n)
}

/// The error of [`device_name`], out of line (built only for a refused device).
#[cold]
#[inline(never)]
fn device_name_error(d: DLDevice) -> Error {
    Error::fault(
        Fault::UnknownName,
        format!(
            "device.device_type {} has no name in DLPack 1.3",
            d.device_type.0
        ),
    )
}

/// Parse `name` or `name:id`.
pub fn parse_device(s: &str) -> Result<DLDevice, Error> {
    // A byte search (':' is ASCII, so both halves stay on char boundaries): `split_once`'s
    // char searcher cost about 80 instructions per call.
    let colon = s.bytes().position(|b| b == b':');
    let (name, id) = match colon.map(|k| (&s[..k], &s[k + 1..])) {
        Some((n, id)) => (
            n,
            parse_decimal(id)
                .filter(|&v| v <= i32::MAX as u32)
                .ok_or_else(|| bad_device_id(n, id, s))?,
        ),
        None => (s, 0),
    };
    let (t, _) = DEVICES
        .iter()
        .find(|(_, n)| *n == name)
        .ok_or_else(|| unknown("device", s))?;
    Ok(DLDevice {
        device_type: DLDeviceType(*t),
        device_id: id as i32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn dt(code: u8, bits: u8, lanes: u16) -> DLDataType {
        DLDataType { code, bits, lanes }
    }

    #[test]
    fn a_bad_device_id_is_named_as_the_problem() {
        for s in ["cuda:-1", "cuda:01", "cpu:2147483648", "cuda:x"] {
            let m = parse_device(s).unwrap_err().to_string();
            assert!(m.contains("is not a device ordinal"), "{s}: {m}");
        }
        let m = parse_device("tpu:-1").unwrap_err().to_string();
        assert!(m.contains("is not a device name"), "{m}");
    }

    #[test]
    fn dtype_names_round_trip_for_every_valid_dtype() {
        for code in 0..=255u8 {
            for bits in 0..=255u8 {
                for lanes in [1u16, 2, 4, 65535] {
                    let d = dt(code, bits, lanes);
                    match dtype_name(d) {
                        Ok(n) => assert_eq!(parse_dtype(n.as_str()).unwrap(), d, "{n:?}"),
                        Err(_) => assert!(dtype::element(d, false).is_err()),
                    }
                }
            }
        }
    }

    #[test]
    fn known_dtype_names() {
        assert_eq!(dtype_name(dt(2, 32, 1)).unwrap().as_str(), "float32");
        assert_eq!(dtype_name(dt(5, 64, 1)).unwrap().as_str(), "complex64");
        assert_eq!(dtype_name(dt(10, 8, 1)).unwrap().as_str(), "float8_e4m3fn");
        assert_eq!(dtype_name(dt(2, 32, 4)).unwrap().as_str(), "float32x4");
        assert_eq!(
            dtype_name(dt(9, 8, 65535)).unwrap().as_str(),
            "float8_e4m3b11fnuzx65535"
        );
        assert_eq!(parse_dtype("bool").unwrap(), dt(6, 8, 1));
        assert_eq!(parse_dtype("uint8").unwrap(), dt(1, 8, 1));
        for bad in [
            "",
            "float",
            "float8",
            "bfloat32",
            "int08",
            "int7",
            "float32x",
            "float32x0",
            "floatx4",
            "boolx",
        ] {
            assert!(parse_dtype(bad).is_err(), "{bad}");
        }
    }

    /// Peer case 45: bfloat16 is in the mapping, both ways, and only with 16 bits.
    #[test]
    fn case_45_bfloat16_name() {
        assert_eq!(dtype_name(dt(4, 16, 1)).unwrap().as_str(), "bfloat16");
        assert_eq!(parse_dtype("bfloat16").unwrap(), dt(4, 16, 1));
        assert_eq!(parse_dtype("bfloat16x2").unwrap(), dt(4, 16, 2));
        assert!(dtype_name(dt(4, 32, 1)).is_err());
    }

    /// Opaque-handle devices are written with their id like every other (header docs say so).
    #[test]
    fn every_device_name_has_an_id() {
        for (t, want) in [(4, "opencl:0"), (7, "vulkan:0"), (8, "metal:3")] {
            let d = DLDevice {
                device_type: DLDeviceType(t),
                device_id: if t == 8 { 3 } else { 0 },
            };
            assert_eq!(device_name(d).unwrap().as_str(), want);
        }
    }

    /// One lane is written `float32`, never `float32x1`: parsing is exact, so `x1` is refused.
    #[test]
    fn one_lane_suffix_is_not_a_name() {
        for bad in ["float32x1", "bfloat16x1", "boolx1", "int8x1", "float32x01"] {
            let e = parse_dtype(bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Tensor {
                        fault: Fault::UnknownName,
                        ..
                    }
                ),
                "{bad}: {e}"
            );
        }
        assert_eq!(parse_dtype("float32x2").unwrap(), dt(2, 32, 2));
        assert_eq!(parse_dtype("float32").unwrap(), dt(2, 32, 1));
    }

    /// Peer case 43: bool has a name of its own, distinct from uint8.
    #[test]
    fn case_43_bool_name() {
        assert_eq!(dtype_name(dt(6, 8, 1)).unwrap().as_str(), "bool");
        assert_eq!(dtype_name(dt(1, 8, 1)).unwrap().as_str(), "uint8");
        assert!(dtype_name(dt(6, 1, 1)).is_err());
    }

    /// Peer case 10: pinned host memory has its own name, distinct from cpu.
    #[test]
    fn case_10_pinned_host_is_cuda_host() {
        let d = parse_device("cuda_host").unwrap();
        assert_eq!((d.device_type, d.device_id), (DLDeviceType::kDLCUDAHost, 0));
        assert!(crate::rules::device::is_cpu_accessible(d));
        assert_eq!(device_name(d).unwrap().as_str(), "cuda_host:0");
    }

    #[test]
    fn device_names_round_trip() {
        for t in -5..40 {
            for id in [0, 1, 7, i32::MAX] {
                let d = DLDevice {
                    device_type: DLDeviceType(t),
                    device_id: id,
                };
                match device_name(d) {
                    Ok(n) => assert_eq!(parse_device(n.as_str()).unwrap(), d),
                    Err(_) => assert!(device_type_name(d.device_type).is_none()),
                }
            }
        }
        assert_eq!(
            parse_device("cuda:1").unwrap(),
            DLDevice {
                device_type: DLDeviceType::kDLCUDA,
                device_id: 1
            }
        );
        for bad in [
            "",
            "gpu",
            "cuda:",
            "cuda:-1",
            "cuda:01",
            "cuda:2147483648",
            "cuda:1:2",
            "CPU",
        ] {
            assert!(parse_device(bad).is_err(), "{bad}");
        }
    }
}
