//! The datatype table: what a datatype index means for moving bytes (size, extent,
//! contiguity) and how to gather non-contiguous elements into a packed stream.
//!
//! Indices below `Predefined::COUNT` are the predefined types; the derived-type
//! constructors of the datatype engine add entries after them.

use crate::error::{err, ErrorClass, Result};
use oxmpi_datatype::{Category, Predefined};

/// Index of a datatype in the runtime's table.
pub type TypeId = u32;

/// What the communication layer needs to know about a datatype.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    /// Data bytes in one element.
    pub size: usize,
    /// Distance between consecutive elements.
    pub extent: usize,
    /// One element is `size` bytes with no holes, so `count` elements are one block.
    pub contiguous: bool,
    pub predefined: Option<Predefined>,
    pub committed: bool,
    /// (offset, length) of each contiguous piece of one element, for packing.
    pub pieces: Vec<(usize, usize)>,
}

impl TypeInfo {
    fn predefined(p: Predefined) -> TypeInfo {
        let pieces = p
            .offsets()
            .into_iter()
            .zip(p.primitives())
            .map(|(o, prim)| (o, prim.size()))
            .collect();
        TypeInfo {
            size: p.size(),
            extent: p.extent(),
            contiguous: p.is_contiguous(),
            predefined: Some(p),
            committed: true,
            pieces,
        }
    }

    /// Packs `count` elements at `base` into `out` (exactly `count * size` bytes).
    ///
    /// # Safety
    /// `base` must be valid for reads of `count` elements of this type.
    pub unsafe fn pack(&self, base: *const u8, count: usize, out: &mut [u8]) {
        let mut at = 0;
        for e in 0..count {
            for &(off, len) in &self.pieces {
                // SAFETY: per the contract the element's pieces are readable; `out` has
                // room for count * size bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        base.add(e * self.extent + off),
                        out.as_mut_ptr().add(at),
                        len,
                    )
                };
                at += len;
            }
        }
    }

    /// Unpacks `data` (whole elements, possibly fewer than the buffer holds) to `base`.
    ///
    /// # Safety
    /// `base` must be valid for writes of the elements `data` covers.
    pub unsafe fn unpack(&self, base: *mut u8, data: &[u8]) {
        let mut at = 0;
        let mut e = 0;
        while at < data.len() {
            for &(off, len) in &self.pieces {
                let n = len.min(data.len() - at);
                // SAFETY: per the contract; n bytes remain in `data`.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr().add(at),
                        base.add(e * self.extent + off),
                        n,
                    )
                };
                at += n;
                if at >= data.len() {
                    return;
                }
            }
            e += 1;
        }
    }
}

/// The table of datatypes.
pub struct TypeTable {
    slots: Vec<Option<TypeInfo>>,
}

impl Default for TypeTable {
    fn default() -> Self {
        TypeTable {
            slots: Predefined::ALL
                .iter()
                .map(|p| Some(TypeInfo::predefined(*p)))
                .collect(),
        }
    }
}

impl TypeTable {
    /// The type at `id`, which must be committed and usable for communication.
    pub fn for_comm(&self, id: TypeId) -> Result<&TypeInfo> {
        let t = self.get(id)?;
        if !t.committed {
            return err(ErrorClass::Type, "datatype is not committed");
        }
        if t.predefined.is_some_and(|p| p.category() == Category::Marker) {
            return err(
                ErrorClass::Type,
                "MPI_LB and MPI_UB cannot be used for communication",
            );
        }
        Ok(t)
    }

    pub fn get(&self, id: TypeId) -> Result<&TypeInfo> {
        match self.slots.get(id as usize).and_then(|s| s.as_ref()) {
            Some(t) => Ok(t),
            None => err(ErrorClass::Type, format!("invalid datatype (index {id})")),
        }
    }
}
