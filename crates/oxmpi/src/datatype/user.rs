//! Datatypes made at run time ([`UserDatatype`]: contiguous, vector, indexed,
//! structured, resized, as `MPI_Type_*` make them) and the [`View`] / [`MutView`] that
//! send from or receive into a buffer through one (strided columns, scattered blocks).
//!
//! A view is checked when it is made: every byte the datatype touches for the view's
//! count lies inside the buffer, so the engine can never read or write outside it. A
//! [`MutView`] repairs the whole buffer after a receive (for element types that need
//! it); a [`View`] reads only buffers without padding bytes.

use super::{Buffer, BufferMut, DatatypeRef, Equivalence};
use crate::error::{engine, Error, ErrorClass, Result};
use crate::point_to_point::Count;
use oxmpi_core::coll::op::data_range;
use oxmpi_core::types::{self, TypeId, TypeInfo};

/// A byte displacement (`MPI_Aint`).
pub type Address = isize;

/// Anything that names a datatype: the [`DatatypeRef`] of an [`Equivalence`] type
/// (`f64::equivalent_datatype()`) or a [`UserDatatype`].
pub trait AsDatatype {
    /// The datatype.
    fn as_datatype(&self) -> DatatypeRef;
}

impl AsDatatype for DatatypeRef {
    fn as_datatype(&self) -> DatatypeRef {
        *self
    }
}

/// A committed datatype made at run time; freed when dropped (`MPI_Type_free`; types
/// built from it stay valid).
#[derive(Debug)]
pub struct UserDatatype {
    id: TypeId,
    info: TypeInfo,
}

impl AsDatatype for UserDatatype {
    fn as_datatype(&self) -> DatatypeRef {
        // SAFETY: the type is committed, `info.size` is its size, and it lives as long as
        // `self`; users of the reference borrow `self` (views) or only build new types.
        unsafe { DatatypeRef::from_raw(self.id, self.info.size) }
    }
}

/// Runs `f` on the engine type of one value of `d` (a contiguous type made for the call
/// when `d` is an array of its engine type), freeing that helper afterwards.
fn with_unit<R>(
    method: &'static str,
    d: DatatypeRef,
    f: impl FnOnce(TypeId) -> oxmpi_core::Result<R>,
) -> Result<R> {
    if d.multiplicity() == 1 {
        return f(d.type_id()).map_err(engine(method));
    }
    let n = i64::try_from(d.multiplicity())
        .map_err(|_| Error::new(method, ErrorClass::Type, "the old type is too large"))?;
    let unit = types::contiguous(n, d.type_id()).map_err(engine(method))?;
    let r = f(unit);
    let _ = types::free(unit);
    r.map_err(engine(method))
}

fn ints(v: &[Count]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

fn addrs(v: &[Address]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

impl UserDatatype {
    /// Commits a freshly made engine type and takes ownership of it.
    fn commit(method: &'static str, id: TypeId) -> Result<UserDatatype> {
        let r = types::commit(id).and_then(|()| types::info(id));
        match r {
            Ok(info) => Ok(UserDatatype { id, info }),
            Err(e) => {
                let _ = types::free(id);
                Err(Error::from_core(method, e))
            }
        }
    }

    /// `count` values of `old` back to back (`MPI_Type_contiguous`).
    pub fn contiguous<D: AsDatatype + ?Sized>(count: Count, old: &D) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::contiguous";
        let id = with_unit(M, old.as_datatype(), |o| types::contiguous(count as i64, o))?;
        UserDatatype::commit(M, id)
    }

    /// `count` blocks of `blocklength` values of `old`, block starts `stride` values
    /// apart (`MPI_Type_vector`).
    pub fn vector<D: AsDatatype + ?Sized>(
        count: Count,
        blocklength: Count,
        stride: Count,
        old: &D,
    ) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::vector";
        let id = with_unit(M, old.as_datatype(), |o| {
            types::vector(count as i64, blocklength as i64, stride as i64, o)
        })?;
        UserDatatype::commit(M, id)
    }

    /// Like [`vector`](UserDatatype::vector) with the stride in bytes
    /// (`MPI_Type_create_hvector`).
    pub fn heterogeneous_vector<D: AsDatatype + ?Sized>(
        count: Count,
        blocklength: Count,
        stride: Address,
        old: &D,
    ) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::heterogeneous_vector";
        let id = with_unit(M, old.as_datatype(), |o| {
            types::hvector(count as i64, blocklength as i64, stride as i64, o)
        })?;
        UserDatatype::commit(M, id)
    }

    /// Blocks of `blocklengths[i]` values of `old` starting at value `displacements[i]`
    /// (`MPI_Type_indexed`).
    pub fn indexed<D: AsDatatype + ?Sized>(
        blocklengths: &[Count],
        displacements: &[Count],
        old: &D,
    ) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::indexed";
        let id = with_unit(M, old.as_datatype(), |o| {
            types::indexed(&ints(blocklengths), &ints(displacements), o)
        })?;
        UserDatatype::commit(M, id)
    }

    /// Like [`indexed`](UserDatatype::indexed) with displacements in bytes
    /// (`MPI_Type_create_hindexed`).
    pub fn heterogeneous_indexed<D: AsDatatype + ?Sized>(
        blocklengths: &[Count],
        displacements: &[Address],
        old: &D,
    ) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::heterogeneous_indexed";
        let id = with_unit(M, old.as_datatype(), |o| {
            types::hindexed(&ints(blocklengths), &addrs(displacements), o)
        })?;
        UserDatatype::commit(M, id)
    }

    /// Blocks of `blocklengths[i]` values of `types[i]` at byte `displacements[i]`
    /// (`MPI_Type_create_struct`).
    pub fn structured(
        blocklengths: &[Count],
        displacements: &[Address],
        types: &[&dyn AsDatatype],
    ) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::structured";
        if blocklengths.len() != displacements.len() || types.len() != blocklengths.len() {
            return Err(Error::new(
                M,
                ErrorClass::Arg,
                format_args!(
                    "{} block lengths, {} displacements and {} types (they must be as many)",
                    blocklengths.len(),
                    displacements.len(),
                    types.len()
                ),
            ));
        }
        // Arrays become blocks of their engine type, `multiplicity` times as long.
        let mut lens = Vec::with_capacity(types.len());
        for (i, (&b, t)) in blocklengths.iter().zip(types).enumerate() {
            let m = t.as_datatype().multiplicity() as i64;
            lens.push((b as i64).checked_mul(m).ok_or_else(|| {
                Error::new(
                    M,
                    ErrorClass::Count,
                    format_args!("blocklengths[{i}] = {b} overflows"),
                )
            })?);
        }
        let ids: Vec<TypeId> = types.iter().map(|t| t.as_datatype().type_id()).collect();
        let id = types::create_struct(&lens, &addrs(displacements), &ids).map_err(engine(M))?;
        UserDatatype::commit(M, id)
    }

    /// This type with lower bound `lb` and extent `extent` in bytes
    /// (`MPI_Type_create_resized`): values of it are `extent` bytes apart.
    pub fn resized(&self, lb: Address, extent: Address) -> Result<UserDatatype> {
        const M: &str = "UserDatatype::resized";
        let id = types::resized(self.id, lb as i64, extent as i64).map_err(engine(M))?;
        UserDatatype::commit(M, id)
    }

    /// Data bytes in one value (`MPI_Type_size`).
    pub fn size(&self) -> usize {
        self.info.size
    }

    /// Bytes from one value to the next (`MPI_Type_get_extent`).
    pub fn extent(&self) -> Address {
        self.info.signed_extent
    }

    /// The lower bound (`MPI_Type_get_extent`).
    pub fn lower_bound(&self) -> Address {
        self.info.lb
    }

    /// The engine's index of the type.
    pub fn type_id(&self) -> TypeId {
        self.id
    }

    /// Checks that `count` values of this type at the start of a buffer of `bytes`
    /// bytes stay inside it.
    fn check_fits(&self, method: &'static str, count: Count, bytes: usize) -> Result<()> {
        if count < 0 {
            return Err(Error::new(
                method,
                ErrorClass::Count,
                format_args!("count {count} is negative"),
            ));
        }
        let (lo, hi) = data_range(&self.info, count as usize);
        if lo < 0 || hi < 0 || hi as usize > bytes {
            return Err(Error::new(
                method,
                ErrorClass::Buffer,
                format_args!(
                    "{count} values of the datatype touch bytes {lo}..{hi}, outside the buffer of {bytes} bytes"
                ),
            ));
        }
        Ok(())
    }
}

impl Drop for UserDatatype {
    fn drop(&mut self) {
        // Fails only after finalization, when the table is gone anyway.
        let _ = types::free(self.id);
    }
}

fn byte_len<T>(n: usize) -> usize {
    n.saturating_mul(std::mem::size_of::<T>())
}

/// A buffer seen through a datatype, to send from: `count` values of `datatype`
/// starting at the buffer's first byte.
#[derive(Debug)]
pub struct View<'d, 'b, B: ?Sized> {
    datatype: &'d UserDatatype,
    count: Count,
    buffer: &'b B,
}

impl<'d, 'b, B: Buffer + ?Sized> View<'d, 'b, B> {
    /// `count` values of `datatype` laid over `buffer`. Fails with class
    /// `MPI_ERR_BUFFER` when they reach outside the buffer, and with class
    /// `MPI_ERR_TYPE` when the element type has padding bytes (which hold no data and
    /// must not be read).
    pub fn with_count_and_datatype(
        buffer: &'b B,
        count: Count,
        datatype: &'d UserDatatype,
    ) -> Result<View<'d, 'b, B>> {
        const M: &str = "View::with_count_and_datatype";
        let d = B::Element::equivalent_datatype();
        if d.value_size() != std::mem::size_of::<B::Element>() {
            return Err(Error::new(
                M,
                ErrorClass::Type,
                format_args!(
                    "{} has padding bytes; send it through its own datatype instead of a view",
                    std::any::type_name::<B::Element>()
                ),
            ));
        }
        datatype.check_fits(M, count, byte_len::<B::Element>(buffer.count()))?;
        Ok(View {
            datatype,
            count,
            buffer,
        })
    }
}

/// A buffer seen through a datatype, to receive into: `count` values of `datatype`
/// starting at the buffer's first byte.
#[derive(Debug)]
pub struct MutView<'d, 'b, B: ?Sized> {
    datatype: &'d UserDatatype,
    count: Count,
    buffer: &'b mut B,
}

impl<'d, 'b, B: BufferMut + ?Sized> MutView<'d, 'b, B> {
    /// `count` values of `datatype` laid over `buffer`. Fails with class
    /// `MPI_ERR_BUFFER` when they reach outside the buffer.
    pub fn with_count_and_datatype(
        buffer: &'b mut B,
        count: Count,
        datatype: &'d UserDatatype,
    ) -> Result<MutView<'d, 'b, B>> {
        const M: &str = "MutView::with_count_and_datatype";
        datatype.check_fits(M, count, byte_len::<B::Element>(buffer.count()))?;
        Ok(MutView {
            datatype,
            count,
            buffer,
        })
    }
}

// SAFETY: pointer and count are the whole underlying buffer's; the view's datatype
// touches, for its count, only bytes inside it (checked on creation, and the datatype
// is borrowed so it cannot change), and none of its padding (element types with
// padding are refused).
unsafe impl<B: Buffer + ?Sized> Buffer for View<'_, '_, B> {
    type Element = B::Element;
    fn pointer(&self) -> *const B::Element {
        self.buffer.pointer()
    }
    fn count(&self) -> usize {
        self.buffer.count()
    }
    fn datatype_view(&self) -> Option<(DatatypeRef, Count)> {
        Some((self.datatype.as_datatype(), self.count))
    }
}

// SAFETY: pointer and count are the whole underlying buffer's (which is repaired after
// a receive); the view's datatype touches only bytes inside it (checked on creation).
unsafe impl<B: BufferMut + ?Sized> BufferMut for MutView<'_, '_, B> {
    type Element = B::Element;
    fn pointer_mut(&mut self) -> *mut B::Element {
        self.buffer.pointer_mut()
    }
    fn count(&self) -> usize {
        self.buffer.count()
    }
    fn datatype_view(&self) -> Option<(DatatypeRef, Count)> {
        Some((self.datatype.as_datatype(), self.count))
    }
}
