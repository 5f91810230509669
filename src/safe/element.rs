//! [`Element`]: Rust element types and their DLPack dtypes.

use crate::abi::DLDataType;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values a DLPack tensor can hold and a slice can read: its [`DLDataType`]
/// and the guarantee that every bit pattern of `size_of::<T>()` bytes is a valid value.
///
/// Implemented for `f32`, `f64`, `i8`, `i16`, `i32`, `i64`, `u8`, `u16`, `u32` and `u64`
/// (sealed: the bit-pattern guarantee is what makes [`crate::TensorRef::as_slice`] safe, so
/// no other crate can add a type). `bool` is not one: a producer's byte 2 would be an invalid
/// `bool` (use `u8` and compare with 0); its dtype is [`DLDataType::BOOL`].
///
/// # Safety
/// Every bit pattern of the type's size is a valid value, the type has no padding, and
/// `DTYPE` describes exactly its layout (`bits == 8 * size_of::<T>()`, `lanes == 1`).
pub unsafe trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The dtype of a tensor of this element type.
    const DTYPE: DLDataType;
}

macro_rules! element {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: a primitive number: no padding, every bit pattern valid, and `DLDataType::$dt`
        // has its code, bits (8 * size) and one lane.
        unsafe impl Element for $t {
            const DTYPE: DLDataType = DLDataType::$dt;
        }
    )*};
}

element!(
    f32 => F32, f64 => F64,
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
);

#[cfg(test)]
mod tests {
    use super::*;

    fn matches<T: Element>() {
        assert_eq!(usize::from(T::DTYPE.bits), 8 * size_of::<T>());
        assert_eq!(T::DTYPE.lanes, 1);
    }

    #[test]
    fn dtype_bits_match_the_rust_size() {
        matches::<f32>();
        matches::<f64>();
        matches::<i8>();
        matches::<i16>();
        matches::<i32>();
        matches::<i64>();
        matches::<u8>();
        matches::<u16>();
        matches::<u32>();
        matches::<u64>();
    }
}
