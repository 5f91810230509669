//! [`TensorRef`]: a validated, borrowed view of a `DLTensor`.

use super::element::Element;
use super::error::Result;
use crate::abi::{
    DLDataType, DLDevice, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion, DLTensor,
};
use crate::rules::device::{self, HostAccess};
use crate::rules::layout::{self, Layout, TensorView};
use crate::rules::validate::{self, Declared, Requirements};
use crate::rules::{Fault, flags};

/// A borrowed view of a `DLTensor` that passed every DLPack rule (`dlpack_tensor_validate` with
/// default options): `ndim` in range, `shape` and `strides` readable arrays of `ndim` elements,
/// no negative extent, no overflow in the byte extent, a valid dtype, data non-NULL when there
/// are elements, and (for a versioned producer) known flags and DLPack 1.2's non-NULL strides.
///
/// It lives as long as the tensor it borrows (`'a`): from [`crate::Managed::view`] (the usual
/// way, no `unsafe`), [`crate::LegacyManaged::view`], or [`TensorRef::from_dltensor`] for a bare
/// `DLTensor`. It dereferences to the [`rules::layout::TensorView`](crate::rules::layout::TensorView)
/// that the `rules` functions take, so `rules::layout::layout(&view, false)` works as is.
///
/// Reading elements: [`TensorRef::as_slice`] for a C-contiguous host tensor of a Rust element
/// type. `Copy`; `Send`/`Sync` as `&DLTensor` would be if its pointers were references (the
/// view only reads the metadata it borrows; the element memory belongs to the producer).
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    view: TensorView<'a>,
    declared: Declared,
}

// SAFETY: a TensorRef holds shared borrows of metadata (shape/strides slices) and the data
// address as an integer; reading them from another thread is as sound as reading a `&[i64]`.
// Element access goes through `as_slice`, which returns a shared slice of `Element` types
// (`Sync`).
unsafe impl Send for TensorRef<'_> {}
// SAFETY: as above: only shared reads.
unsafe impl Sync for TensorRef<'_> {}

impl<'a> TensorRef<'a> {
    /// Validate a bare `DLTensor` (version unknown: the legacy rules, which read NULL strides as
    /// compact row-major) and view it.
    ///
    /// Returns the validation error (`INVALID_NDIM`, `NULL_SHAPE`, `INVALID_SHAPE`, `OVERFLOW`,
    /// `NULL_DATA`, `INVALID_DTYPE`; see `dlpack_dltensor_validate`).
    ///
    /// # Safety
    /// `tensor.shape` (and `tensor.strides` when non-NULL) point to `tensor.ndim` readable
    /// `i64`s (when `ndim` is in range), and `tensor.data` describes memory that stays valid and
    /// is not freed for `'a`: exactly what a DLPack producer promises while it owns the tensor.
    /// Prefer [`crate::Managed::view`], which needs no `unsafe`.
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self> {
        // SAFETY: caller contract.
        unsafe { Self::checked(tensor, Declared::Legacy) }
    }

    /// Validate with the rules of `declared` (the owner's version and flags) and view.
    ///
    /// # Safety
    /// As [`TensorRef::from_dltensor`].
    pub(crate) unsafe fn checked(tensor: &'a DLTensor, declared: Declared) -> Result<Self> {
        // SAFETY: caller contract (the arrays hold `ndim` elements; `checked_view` forms them
        // only after the header rules passed).
        let view = unsafe {
            crate::capi::validate::checked_view(tensor, declared, &Requirements::default())
        }?;
        Ok(TensorRef { view, declared })
    }

    /// The view the `rules` functions take (also reached through `Deref`).
    pub fn rules_view(&self) -> &TensorView<'a> {
        &self.view
    }

    /// The DLPack version the producer declared (`None` for a legacy or bare tensor).
    pub fn version(&self) -> Option<DLPackVersion> {
        match self.declared {
            Declared::Legacy => None,
            Declared::Versioned { version, .. } => Some(version),
        }
    }

    /// The producer's `DLPACK_FLAG_BITMASK_*` flags (`None` for a legacy or bare tensor).
    pub fn flags(&self) -> Option<u64> {
        match self.declared {
            Declared::Legacy => None,
            Declared::Versioned { flags, .. } => Some(flags),
        }
    }

    /// Whether the producer allows writing: `Writable` only for a versioned tensor without
    /// `READ_ONLY`; `Unknown` for a legacy one (the legacy struct cannot say: peer case 50).
    pub fn writability(&self) -> flags::Writability {
        flags::writability(self.flags())
    }

    /// The device.
    pub fn device(&self) -> DLDevice {
        self.view.device
    }

    /// The dtype.
    pub fn dtype(&self) -> DLDataType {
        self.view.dtype
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.view.shape.len()
    }

    /// The extents (`ndim` of them).
    pub fn shape(&self) -> &'a [i64] {
        self.view.shape
    }

    /// The strides in elements (`None` when the producer passed NULL: compact row-major; never
    /// `None` for a DLPack 1.2+ tensor with `ndim != 0`).
    pub fn strides(&self) -> Option<&'a [i64]> {
        self.view.strides
    }

    /// `byte_offset` in bytes.
    pub fn byte_offset(&self) -> u64 {
        self.view.byte_offset
    }

    /// `data` as an integer (an address on pointer-addressed devices, else an opaque handle).
    pub fn data_address(&self) -> usize {
        self.view.data
    }

    /// Element count, bytes, byte extent, contiguity and broadcast bits
    /// (`dlpack_tensor_layout`). Cannot fail for a validated view, but returns a `Result` as
    /// every helper does.
    pub fn layout(&self) -> Result<Layout> {
        Ok(layout::layout(&self.view, self.padded())?)
    }

    /// The dimensions by stride, innermost first (`dlpack_dltensor_dim_order`, peer case 59):
    /// dimensions of extent != 1 by `|stride|` ascending, equal `|stride|` higher index first,
    /// then the extent-1 dimensions, higher index first. Empty for a 0-d tensor.
    pub fn dim_order(&self) -> Result<Vec<usize>> {
        let mut out = vec![0i32; self.view.shape.len()];
        layout::dim_order(self.view.shape, self.view.strides, &mut out)?;
        Ok(out.into_iter().map(|d| d as usize).collect())
    }

    /// Check the caller's requirements (contiguity, host access, alignment, writability,
    /// dtype, …: [`Requirements`]) on top of the DLPack rules, as `dlpack_tensor_validate` does;
    /// returns the layout. Errors: `NOT_CONTIGUOUS`, `NOT_CPU_ACCESSIBLE`, `MISALIGNED`,
    /// `READ_ONLY`, `DTYPE_MISMATCH`, `INVALID_NDIM` (above `max_ndim`), `UNSUPPORTED_STRIDES`,
    /// `INVALID_ARGUMENT` (bad options).
    pub fn validate(&self, requirements: &Requirements) -> Result<Layout> {
        let n = validate::check_header(
            self.declared,
            self.view.shape.len() as i32,
            false,
            self.view.strides.is_none(),
            requirements,
        )?;
        debug_assert_eq!(n, self.view.shape.len());
        Ok(validate::check_view(
            &self.view,
            self.declared,
            requirements,
        )?)
    }

    /// How the host can reach the memory, from the device type alone (`dlpack_device_host_access`).
    pub fn host_access(&self) -> HostAccess {
        device::host_access(self.view.device.device_type)
    }

    /// The elements as a slice, for a tensor the host can read whose dtype is `T`'s and whose
    /// elements are C-contiguous (compact row-major; size-1 dimensions may have any stride),
    /// with the first element aligned for `T`.
    ///
    /// Errors: `NOT_CPU_ACCESSIBLE` (device memory, or a device type that does not guarantee host
    /// access: [`crate::Managed::memory_host_access`] asks the runtime for `kDLOneAPI`),
    /// `DTYPE_MISMATCH`, `NOT_CONTIGUOUS`, `MISALIGNED`.
    ///
    /// The slice aliases the producer's memory (DLPack is zero-copy): it is valid while the
    /// tensor is owned, and, as for every DLPack consumer, the producer must not write the
    /// memory meanwhile (the DLPack ownership contract).
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        let r = Requirements {
            flags: validate::REQUIRE_CPU_ACCESSIBLE
                | validate::REQUIRE_DTYPE
                | validate::REQUIRE_C_CONTIGUOUS,
            first_element_alignment: align_of::<T>() as u64,
            dtype: T::DTYPE,
            ..Requirements::default()
        };
        let l = self.validate(&r)?;
        if l.numel == 0 {
            return Ok(&[]);
        }
        let first = self.view.data + self.view.byte_offset as usize;
        // SAFETY: validated: host-accessible memory, dtype `T` (every bit pattern valid),
        // C-contiguous with `numel` elements from the aligned, non-NULL first element; the
        // producer keeps it alive for `'a` (TensorRef's invariant).
        Ok(unsafe { core::slice::from_raw_parts(first as *const T, l.numel as usize) })
    }

    /// The elements copied into a `Vec` in row-major (C) order, for any strides (transposed,
    /// sliced, broadcast, negative): the strided read [`TensorRef::as_slice`] refuses. The tensor
    /// must be host-accessible, of dtype `T` and element-aligned. Errors: `NOT_CPU_ACCESSIBLE`,
    /// `DTYPE_MISMATCH`, `MISALIGNED` (an allocation failure aborts, as for any `Vec`).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let r = Requirements {
            flags: validate::REQUIRE_CPU_ACCESSIBLE | validate::REQUIRE_DTYPE,
            first_element_alignment: align_of::<T>() as u64,
            dtype: T::DTYPE,
            ..Requirements::default()
        };
        let l = self.validate(&r)?;
        let n = l.numel as usize;
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return Ok(out);
        }
        let shape = self.view.shape;
        let compact;
        let strides: &[i64] = match self.view.strides {
            Some(s) => s,
            None => {
                compact = super::compact_strides(shape, true)?;
                &compact
            }
        };
        let first = (self.view.data + self.view.byte_offset as usize) as *const T;
        let mut index = vec![0i64; shape.len()];
        let mut offset = 0i64; // in elements, from the first element
        for _ in 0..n {
            // SAFETY: validated: host memory of dtype `T`, aligned, and every index within the
            // extents lies within the tensor's byte range, which the producer keeps alive for
            // `'a` (TensorRef's invariant); `offset` is the strided position of `index`.
            out.push(unsafe { first.offset(offset as isize).read() });
            // Next index, last dimension fastest.
            for d in (0..shape.len()).rev() {
                index[d] += 1;
                offset += strides[d];
                if index[d] < shape[d] {
                    break;
                }
                offset -= strides[d] * shape[d];
                index[d] = 0;
            }
        }
        Ok(out)
    }

    /// [`TensorRef::as_slice`] through a mutable reference, for an owner that may write: also
    /// `READ_ONLY` when the producer did not grant writing (a legacy tensor never does).
    ///
    /// # Safety
    /// No other reference to the elements exists for `'b` (in particular no other view of the
    /// same tensor reads them).
    pub(crate) unsafe fn as_mut_slice<'b, T: Element>(&self) -> Result<&'b mut [T]> {
        if self.writability() != flags::Writability::Writable {
            return Err(crate::rules::Error::fault(
                Fault::ReadOnly,
                "the tensor is not writable (READ_ONLY, or a legacy tensor whose writability is \
                 unknown)",
            )
            .into());
        }
        let s = self.as_slice::<T>()?;
        // SAFETY: writable by the producer's flags; exclusivity by the caller's contract.
        Ok(unsafe { core::slice::from_raw_parts_mut(s.as_ptr().cast_mut(), s.len()) })
    }

    fn padded(&self) -> bool {
        self.flags()
            .is_some_and(|f| f & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0)
    }

    /// Whether `READ_ONLY` is set.
    pub fn is_read_only(&self) -> bool {
        self.flags()
            .is_some_and(|f| f & DLPACK_FLAG_BITMASK_READ_ONLY != 0)
    }
}

impl<'a> core::ops::Deref for TensorRef<'a> {
    type Target = TensorView<'a>;
    fn deref(&self) -> &TensorView<'a> {
        &self.view
    }
}
