//! The datatype table and the engine's datatype operations: which
//! [`oxmpi_datatype::Datatype`] value a datatype index names, what the communication
//! layer needs to know about it (size, extent, contiguity, commit state), its name and
//! cached attributes, and the MPI calls that create, decode, free, pack and count them.
//!
//! Indices below `Predefined::COUNT` are the predefined types, at their
//! discriminants; created types get the indices after them. A slot is reference
//! counted: [`TypeTable::hold`] keeps it (and its index) alive for an operation that
//! names the type by index after the user may have freed the handle (persistent
//! requests, nonblocking collectives); the slot is reused only when the handle is freed
//! and no hold remains. Operations that keep a [`TypeInfo`] clone need no hold: the
//! `Datatype` inside is itself reference counted and immutable.

use crate::attr::{AttrKind, AttrList, AttrObject, KeyvalId};
use crate::error::{err, Error, ErrorClass, Result};
use crate::runtime;
use oxmpi_datatype::fortran::{self, TypeClass, F90};
use oxmpi_datatype::{
    BlockIter, Category, Combiner, Datatype, Distribution, Envelope, Order, Predefined,
};

/// Index of a datatype in the runtime's table.
pub type TypeId = u32;

/// Longest name `MPI_Type_set_name` keeps, in bytes (`MPI_MAX_OBJECT_NAME` - 1).
pub const MAX_NAME_BYTES: usize = 127;

/// What the communication layer needs to know about a datatype: cached layout facts
/// plus the engine's `Datatype` value for packing. Cloning is cheap (a reference
/// count), and a clone stays valid after the type's handle is freed.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    /// Data bytes in one element (`MPI_Type_size`).
    pub size: usize,
    /// Distance between consecutive elements, as `usize` (it wraps for the rare
    /// negative extents made with `MPI_Type_create_resized`; see `signed_extent`).
    pub extent: usize,
    /// The extent with its sign (`MPI_Type_get_extent`).
    pub signed_extent: isize,
    /// Lower bound (`MPI_Type_get_extent`).
    pub lb: isize,
    /// Any number of elements at `base` are exactly the bytes `base..base + count *
    /// size`, in packed order (no holes, data starting at the base address). Known only
    /// for committed types; false before commit.
    pub contiguous: bool,
    /// The predefined type this is (not for derived types, even one-element ones).
    pub predefined: Option<Predefined>,
    /// The predefined type all data elements are made of, when there is exactly one
    /// (what a predefined reduction computes on); `None` for mixed or empty types.
    pub basic: Option<Predefined>,
    pub committed: bool,
    /// Committed and not a marker (`MPI_LB`, `MPI_UB`): usable in communication, the
    /// one check the message path makes ([`check_comm`]).
    communicable: bool,
    ty: Datatype,
}

impl TypeInfo {
    fn new(ty: Datatype) -> TypeInfo {
        let committed = ty.is_committed();
        let mut t = TypeInfo {
            size: ty.size(),
            extent: ty.extent() as usize,
            signed_extent: ty.extent(),
            lb: ty.lb(),
            contiguous: false,
            predefined: ty.as_predefined(),
            basic: ty.basic_type(),
            committed,
            communicable: false,
            ty,
        };
        if committed {
            t.mark_committed();
        }
        t
    }

    fn mark_committed(&mut self) {
        self.ty.commit();
        self.committed = true;
        self.contiguous = matches!(self.ty.contiguous_block(2), Some((0, _)));
        self.communicable = self
            .predefined
            .is_none_or(|p| p.category() != Category::Marker);
    }

    /// The engine's datatype value.
    pub fn datatype(&self) -> &Datatype {
        &self.ty
    }

    /// Bytes of `count` elements in packed form, `None` on overflow.
    pub fn message_bytes(&self, count: usize) -> Option<usize> {
        count.checked_mul(self.size)
    }

    /// The zero-copy path: `Some((displacement, length))` when `count` elements are
    /// one contiguous run of memory at `base + displacement`, in packed order
    /// (contiguous derived types too, whatever their lower bound).
    #[inline]
    pub fn contiguous_block(&self, count: usize) -> Option<(isize, usize)> {
        self.ty.contiguous_block(count)
    }

    /// Packs `count` elements at `base` into `out` (exactly `count * size` bytes).
    ///
    /// # Safety
    /// `base` must be valid for reads of `count` elements of this type (absolute
    /// addresses when `base` is null, as with `MPI_BOTTOM`); `out` must not overlap them.
    pub unsafe fn pack(&self, base: *const u8, count: usize, out: &mut [u8]) {
        // SAFETY: forwarded caller contract.
        unsafe { oxmpi_datatype::pack(&self.ty, base, count, 0, out) };
    }

    /// Unpacks `data` (the start of the packed stream, possibly ending inside an
    /// element) to `base`.
    ///
    /// # Safety
    /// `base` must be valid for writes of the elements `data` covers.
    pub unsafe fn unpack(&self, base: *mut u8, data: &[u8]) {
        if self.size == 0 || data.is_empty() {
            return;
        }
        let count = data.len().div_ceil(self.size);
        // SAFETY: forwarded caller contract.
        unsafe { oxmpi_datatype::unpack(&self.ty, base, count, 0, data) };
    }

    /// Packs bytes `offset..` of the packed stream of `count` elements at `base` into
    /// `out`; returns the bytes written (fewer than `out.len()` only at the end of the
    /// message). Calls with consecutive offsets give the bytes of one whole pack.
    ///
    /// # Safety
    /// As for [`TypeInfo::pack`].
    pub unsafe fn pack_at(
        &self,
        base: *const u8,
        count: usize,
        offset: usize,
        out: &mut [u8],
    ) -> usize {
        // SAFETY: forwarded caller contract.
        unsafe { oxmpi_datatype::pack(&self.ty, base, count, offset, out) }
    }

    /// Unpacks `input` as bytes `offset..offset + input.len()` of the packed stream of
    /// `count` elements at `base`; returns the bytes consumed.
    ///
    /// # Safety
    /// `base` must be valid for writes of the `count` elements; `input` must not
    /// overlap them.
    pub unsafe fn unpack_at(
        &self,
        base: *mut u8,
        count: usize,
        offset: usize,
        input: &[u8],
    ) -> usize {
        // SAFETY: forwarded caller contract.
        unsafe { oxmpi_datatype::unpack(&self.ty, base, count, offset, input) }
    }

    /// The memory pieces `(displacement from base, length)` holding packed bytes
    /// `offset..offset + len` of `count` elements, in packed order (for I/O vectors).
    pub fn blocks(&self, count: usize, offset: usize, len: usize) -> BlockIter<'_> {
        self.ty.blocks(count, offset, len)
    }
}

struct Slot {
    info: TypeInfo,
    name: String,
    attrs: AttrList,
    /// The user's handle has not been freed.
    handle_live: bool,
    /// Operations holding the index (see [`TypeTable::hold`]).
    holds: u32,
}

impl Slot {
    fn new(ty: Datatype) -> Slot {
        let name = ty
            .as_predefined()
            .map(|p| p.name().to_string())
            .unwrap_or_default();
        Slot {
            info: TypeInfo::new(ty),
            name,
            attrs: AttrList::default(),
            handle_live: true,
            holds: 0,
        }
    }
}

/// The table of datatypes.
pub struct TypeTable {
    slots: Vec<Option<Slot>>,
    free: Vec<TypeId>,
    /// The types `MPI_Type_create_f90_*` returned, by their arguments: the same call
    /// returns the same handle, and these are never freed.
    f90: Vec<(F90, TypeId)>,
}

impl Default for TypeTable {
    fn default() -> Self {
        TypeTable {
            slots: Predefined::ALL
                .iter()
                .map(|p| Some(Slot::new(Datatype::predefined(*p))))
                .collect(),
            free: Vec::new(),
            f90: Vec::new(),
        }
    }
}

fn invalid(id: TypeId) -> Error {
    Error::new(ErrorClass::Type, format!("invalid datatype (index {id})"))
}

/// True for the index of a predefined datatype (never freed, never redefined).
#[inline]
pub(crate) fn is_predefined(id: TypeId) -> bool {
    (id as usize) < Predefined::COUNT
}

impl TypeTable {
    #[inline]
    fn slot(&self, id: TypeId) -> Result<&Slot> {
        match self.slots.get(id as usize).and_then(|s| s.as_ref()) {
            Some(s) if s.handle_live => Ok(s),
            Some(_) => Err(Error::new(
                ErrorClass::Type,
                format!("datatype (index {id}) has been freed"),
            )),
            None => Err(invalid(id)),
        }
    }

    fn slot_mut(&mut self, id: TypeId) -> Result<&mut Slot> {
        self.slot(id)?;
        Ok(self.slots[id as usize].as_mut().expect("checked"))
    }

    /// The type at `id`, which must be committed and usable for communication.
    #[inline(always)]
    pub fn for_comm(&self, id: TypeId) -> Result<&TypeInfo> {
        // Every send and receive passes here: the usable case inline, the reasons a
        // type is refused out of line.
        match self.slots.get(id as usize) {
            Some(Some(s)) if s.handle_live && s.info.communicable => Ok(&s.info),
            _ => self.for_comm_refused(id),
        }
    }

    #[cold]
    #[inline(never)]
    fn for_comm_refused(&self, id: TypeId) -> Result<&TypeInfo> {
        check_comm(self.get(id)?)
    }

    /// Like [`TypeTable::for_comm`] for an index an operation holds: also when the
    /// user has freed the handle since.
    pub fn for_comm_held(&self, id: TypeId) -> Result<&TypeInfo> {
        match self.slots.get(id as usize).and_then(|s| s.as_ref()) {
            Some(s) => check_comm(&s.info),
            None => Err(invalid(id)),
        }
    }

    /// The type at `id` (committed or not).
    pub fn get(&self, id: TypeId) -> Result<&TypeInfo> {
        self.slot(id).map(|s| &s.info)
    }

    /// The engine value of the type at `id`.
    pub fn datatype(&self, id: TypeId) -> Result<Datatype> {
        Ok(self.get(id)?.ty.clone())
    }

    /// Adds a new type; its index is at least `Predefined::COUNT`.
    pub fn insert(&mut self, ty: Datatype) -> TypeId {
        let slot = Some(Slot::new(ty));
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = slot;
                id
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as TypeId
            }
        }
    }

    /// `MPI_Type_commit` (a no-op for committed and predefined types).
    pub fn commit(&mut self, id: TypeId) -> Result<()> {
        let s = self.slot_mut(id)?;
        if !s.info.committed {
            s.info.mark_committed();
        }
        Ok(())
    }

    /// `MPI_Type_free`: invalidates the handle and returns the attributes cached on
    /// the type (their delete callbacks are the caller's to run). The index is reused
    /// once no operation holds it.
    pub fn free(&mut self, id: TypeId) -> Result<AttrList> {
        if is_predefined(id) {
            let name = self.get(id)?.predefined.map(|p| p.name()).unwrap_or("?");
            return err(
                ErrorClass::Type,
                format!("cannot free the predefined datatype {name}"),
            );
        }
        if self.f90.iter().any(|&(_, t)| t == id) {
            return err(
                ErrorClass::Type,
                "cannot free a datatype returned by MPI_Type_create_f90_integer/real/complex (it is predefined)",
            );
        }
        let s = self.slot_mut(id)?;
        s.handle_live = false;
        let attrs = std::mem::take(&mut s.attrs);
        self.reclaim(id);
        Ok(attrs)
    }

    fn reclaim(&mut self, id: TypeId) {
        if let Some(Some(s)) = self.slots.get(id as usize) {
            if !s.handle_live && s.holds == 0 {
                self.slots[id as usize] = None;
                self.free.push(id);
            }
        }
    }

    /// Keeps the slot `id` (live or freed by the user) from being reused until
    /// [`TypeTable::release`].
    pub fn hold(&mut self, id: TypeId) -> Result<()> {
        match self.slots.get_mut(id as usize).and_then(|s| s.as_mut()) {
            Some(s) => {
                s.holds += 1;
                Ok(())
            }
            None => Err(invalid(id)),
        }
    }

    /// Ends a [`TypeTable::hold`].
    pub fn release(&mut self, id: TypeId) {
        if let Some(Some(s)) = self.slots.get_mut(id as usize) {
            s.holds = s.holds.saturating_sub(1);
        }
        self.reclaim(id);
    }

    /// `MPI_Type_get_name`.
    pub fn name(&self, id: TypeId) -> Result<&str> {
        Ok(&self.slot(id)?.name)
    }

    /// `MPI_Type_set_name` (longer names are truncated to [`MAX_NAME_BYTES`] at a
    /// character boundary).
    pub fn set_name(&mut self, id: TypeId, name: &str) -> Result<()> {
        let mut end = name.len().min(MAX_NAME_BYTES);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        self.slot_mut(id)?.name = name[..end].to_string();
        Ok(())
    }

    /// The attributes cached on a type.
    pub fn attrs(&self, id: TypeId) -> Result<&AttrList> {
        Ok(&self.slot(id)?.attrs)
    }

    /// The attributes cached on a type, for changing.
    pub fn attrs_mut(&mut self, id: TypeId) -> Result<&mut AttrList> {
        Ok(&mut self.slot_mut(id)?.attrs)
    }

    /// Created types whose slots still exist (handles not freed, or held).
    pub fn live_created(&self) -> usize {
        self.slots[Predefined::COUNT..]
            .iter()
            .filter(|s| s.is_some())
            .count()
    }
}

#[inline]
fn check_comm(t: &TypeInfo) -> Result<&TypeInfo> {
    if t.communicable {
        return Ok(t);
    }
    if !t.committed {
        return err(
            ErrorClass::Type,
            "datatype is not committed (call MPI_Type_commit first)",
        );
    }
    if t.predefined
        .is_some_and(|p| p.category() == Category::Marker)
    {
        return err(
            ErrorClass::Type,
            "MPI_LB and MPI_UB cannot be used for communication",
        );
    }
    Ok(t)
}

/// An error of the datatype engine as an MPI error.
pub fn engine_error(e: oxmpi_datatype::Error) -> Error {
    use oxmpi_datatype::ErrorClass as E;
    // A negative block length is a negative count of elements: MPI_ERR_COUNT, as
    // MPICH reports it (the engine calls it an invalid argument).
    if let oxmpi_datatype::Error::InvalidArg { arg, value, .. } = &e {
        if *value < 0 && arg.contains("blocklength") {
            return Error::new(ErrorClass::Count, e.to_string());
        }
    }
    let class = match e.class() {
        E::ErrArg => ErrorClass::Arg,
        E::ErrCount => ErrorClass::Count,
        E::ErrType => ErrorClass::Type,
        E::ErrRank => ErrorClass::Rank,
        E::ErrDims => ErrorClass::Dims,
        E::ErrTruncate => ErrorClass::Truncate,
        E::ErrConversion => ErrorClass::Conversion,
        E::ErrOther => ErrorClass::Other,
    };
    Error::new(class, e.to_string())
}

// ----- constructors ---------------------------------------------------------------------

/// Builds a type from existing ones (looked up by index, committed or not) and adds it.
fn create(
    olds: &[TypeId],
    build: impl FnOnce(&[Datatype]) -> oxmpi_datatype::Result<Datatype>,
) -> Result<TypeId> {
    runtime::with(|rt| {
        let olds = olds
            .iter()
            .map(|&id| rt.types.datatype(id))
            .collect::<Result<Vec<_>>>()?;
        let t = build(&olds).map_err(engine_error)?;
        Ok(rt.types.insert(t))
    })
}

/// `MPI_Type_contiguous`.
pub fn contiguous(count: i64, old: TypeId) -> Result<TypeId> {
    create(&[old], |o| Datatype::contiguous(count, &o[0]))
}

/// `MPI_Type_vector` (stride in elements of `old`).
pub fn vector(count: i64, blocklength: i64, stride: i64, old: TypeId) -> Result<TypeId> {
    create(&[old], |o| {
        Datatype::vector(count, blocklength, stride, &o[0])
    })
}

/// `MPI_Type_create_hvector` (stride in bytes).
pub fn hvector(count: i64, blocklength: i64, stride: i64, old: TypeId) -> Result<TypeId> {
    create(&[old], |o| {
        Datatype::hvector(count, blocklength, stride, &o[0])
    })
}

/// `MPI_Type_indexed` (displacements in extents of `old`).
pub fn indexed(blocklengths: &[i64], displacements: &[i64], old: TypeId) -> Result<TypeId> {
    create(&[old], |o| {
        Datatype::indexed(blocklengths, displacements, &o[0])
    })
}

/// `MPI_Type_create_hindexed` (displacements in bytes).
pub fn hindexed(blocklengths: &[i64], displacements: &[i64], old: TypeId) -> Result<TypeId> {
    create(&[old], |o| {
        Datatype::hindexed(blocklengths, displacements, &o[0])
    })
}

/// `MPI_Type_create_indexed_block`.
pub fn indexed_block(blocklength: i64, displacements: &[i64], old: TypeId) -> Result<TypeId> {
    create(&[old], |o| {
        Datatype::indexed_block(blocklength, displacements, &o[0])
    })
}

/// `MPI_Type_create_hindexed_block`.
pub fn hindexed_block(blocklength: i64, displacements: &[i64], old: TypeId) -> Result<TypeId> {
    create(&[old], |o| {
        Datatype::hindexed_block(blocklength, displacements, &o[0])
    })
}

/// `MPI_Type_create_struct` (and MPI-1 `MPI_Type_struct`).
pub fn create_struct(
    blocklengths: &[i64],
    displacements: &[i64],
    types: &[TypeId],
) -> Result<TypeId> {
    if types.len() != blocklengths.len() {
        return err(
            ErrorClass::Arg,
            format!(
                "array_of_types has {} entries, expected {}",
                types.len(),
                blocklengths.len()
            ),
        );
    }
    create(types, |t| {
        Datatype::create_struct(blocklengths, displacements, t)
    })
}

/// `MPI_Type_create_resized`.
pub fn resized(old: TypeId, lb: i64, extent: i64) -> Result<TypeId> {
    create(&[old], |o| Datatype::resized(&o[0], lb, extent))
}

fn order(value: i32) -> Result<Order> {
    Order::from_mpich(value).ok_or_else(|| {
        Error::new(
            ErrorClass::Arg,
            format!("invalid order {value} (must be MPI_ORDER_C or MPI_ORDER_FORTRAN)"),
        )
    })
}

/// `MPI_Type_create_subarray`; `order` is the value of `MPI_ORDER_C` / `MPI_ORDER_FORTRAN`.
pub fn subarray(
    sizes: &[i64],
    subsizes: &[i64],
    starts: &[i64],
    order_value: i32,
    old: TypeId,
) -> Result<TypeId> {
    let order = order(order_value)?;
    create(&[old], |o| {
        Datatype::subarray(sizes, subsizes, starts, order, &o[0])
    })
}

/// `MPI_Type_create_darray`; `distribs` and `order` are the MPICH constant values.
#[allow(clippy::too_many_arguments)]
pub fn darray(
    size: i64,
    rank: i64,
    gsizes: &[i64],
    distribs: &[i32],
    dargs: &[i64],
    psizes: &[i64],
    order_value: i32,
    old: TypeId,
) -> Result<TypeId> {
    let order = order(order_value)?;
    let distribs = distribs
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            Distribution::from_mpich(d).ok_or_else(|| {
                Error::new(
                    ErrorClass::Arg,
                    format!("array_of_distribs[{i}] has unknown value {d}"),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    create(&[old], |o| {
        Datatype::darray(size, rank, gsizes, &distribs, dargs, psizes, order, &o[0])
    })
}

/// `MPI_Type_dup`: a new type with the same type map and commit state, and the
/// attributes of `old` copied by their keys' copy callbacks (on a callback failure
/// the new type is freed again and the error returned).
pub fn dup(old: TypeId) -> Result<TypeId> {
    let id = create(&[old], |o| Ok(o[0].dup()))?;
    let attrs = runtime::with(|rt| Ok(rt.types.attrs(old)?.clone()))?;
    if let Err(e) = copy_attrs(old, id, &attrs) {
        let _ = free(id);
        return Err(e);
    }
    Ok(id)
}

/// `MPI_Type_commit`.
pub fn commit(id: TypeId) -> Result<()> {
    runtime::with(|rt| rt.types.commit(id))
}

/// `MPI_Type_free`: runs the delete callbacks of the attributes cached on the type
/// (most recent first; the type stays if one fails), then invalidates the handle.
pub fn free(id: TypeId) -> Result<()> {
    runtime::with(|rt| {
        if is_predefined(id) {
            // Report the predefined-type error before running any callback.
            rt.types.free(id)?;
        }
        rt.types.get(id).map(|_| ())
    })?;
    delete_all_attrs(id)?;
    runtime::with(|rt| {
        let left = rt.types.free(id)?;
        for &(k, _) in left.entries() {
            rt.keyvals.drop_use(k);
        }
        Ok(())
    })
}

// ----- attributes ---------------------------------------------------------------------------

fn copy_attrs(old: TypeId, new: TypeId, attrs: &AttrList) -> Result<()> {
    for &(key, val) in attrs.entries().iter().rev() {
        let Some(h) = runtime::with(|rt| Ok(rt.keyvals.hooks(key)))? else {
            continue;
        };
        if let Some(v) = h.copy(AttrObject::Datatype(old), key, val)? {
            runtime::with(|rt| {
                if rt.types.attrs_mut(new)?.set(key, v).is_none() {
                    rt.keyvals.add_use(key);
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

fn delete_all_attrs(id: TypeId) -> Result<()> {
    loop {
        let next = runtime::with(|rt| Ok(rt.types.attrs(id)?.entries().first().copied()))?;
        let Some((key, val)) = next else {
            return Ok(());
        };
        if let Some(h) = runtime::with(|rt| Ok(rt.keyvals.hooks(key)))? {
            h.delete(AttrObject::Datatype(id), key, val)?;
        }
        runtime::with(|rt| {
            if rt.types.attrs_mut(id)?.remove(key).is_some() {
                rt.keyvals.drop_use(key);
            }
            Ok(())
        })?;
    }
}

/// `MPI_Type_get_attr`: `None` when no value is cached with the key.
pub fn attr_get(id: TypeId, key: KeyvalId) -> Result<Option<usize>> {
    runtime::with(|rt| {
        rt.keyvals.check_use(key, AttrKind::Datatype)?;
        Ok(rt.types.attrs(id)?.get(key))
    })
}

/// `MPI_Type_set_attr`: a value already cached with the key is deleted first (its
/// delete callback runs; if that fails the old value stays).
pub fn attr_set(id: TypeId, key: KeyvalId, value: usize) -> Result<()> {
    let (old, hooks) = runtime::with(|rt| {
        rt.keyvals.check_use(key, AttrKind::Datatype)?;
        Ok((rt.types.attrs(id)?.get(key), rt.keyvals.hooks(key)))
    })?;
    if let (Some(v), Some(h)) = (old, hooks) {
        h.delete(AttrObject::Datatype(id), key, v)?;
    }
    runtime::with(|rt| {
        if rt.types.attrs_mut(id)?.set(key, value).is_none() {
            rt.keyvals.add_use(key);
        }
        Ok(())
    })
}

/// `MPI_Type_delete_attr`: runs the delete callback and removes the value (it stays
/// if the callback fails). Deleting a key with no value cached does nothing.
pub fn attr_delete(id: TypeId, key: KeyvalId) -> Result<()> {
    let (old, hooks) = runtime::with(|rt| {
        rt.keyvals.check_use(key, AttrKind::Datatype)?;
        Ok((rt.types.attrs(id)?.get(key), rt.keyvals.hooks(key)))
    })?;
    let Some(v) = old else {
        return Ok(());
    };
    if let Some(h) = hooks {
        h.delete(AttrObject::Datatype(id), key, v)?;
    }
    runtime::with(|rt| {
        if rt.types.attrs_mut(id)?.remove(key).is_some() {
            rt.keyvals.drop_use(key);
        }
        Ok(())
    })
}

/// A copy of the facts about a type (committed or not).
pub fn info(id: TypeId) -> Result<TypeInfo> {
    runtime::with(|rt| rt.types.get(id).cloned())
}

/// `MPI_Type_get_name`.
pub fn name(id: TypeId) -> Result<String> {
    runtime::with(|rt| rt.types.name(id).map(str::to_string))
}

/// `MPI_Type_set_name`.
pub fn set_name(id: TypeId, name: &str) -> Result<()> {
    runtime::with(|rt| rt.types.set_name(id, name))
}

// ----- decoding ---------------------------------------------------------------------------

/// `MPI_Type_get_envelope`.
pub fn envelope(id: TypeId) -> Result<Envelope> {
    runtime::with(|rt| Ok(rt.types.get(id)?.ty.envelope()))
}

/// What `MPI_Type_get_contents` returns; the datatypes are table indices: predefined
/// ones as they are, derived ones as new entries the caller must free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    pub combiner: Combiner,
    pub integers: Vec<i64>,
    pub addresses: Vec<i64>,
    /// The `MPI_Count` arguments of a type made by a large-count (`_c`) constructor.
    pub large_counts: Vec<i64>,
    pub datatypes: Vec<TypeId>,
}

/// The capacity of the caller's arrays in `MPI_Type_get_contents(_c)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContentsMax {
    pub integers: usize,
    pub addresses: usize,
    pub large_counts: usize,
    pub datatypes: usize,
}

/// `MPI_Type_get_contents(_c)`. `max` is the capacity of the caller's arrays; the
/// call fails (creating nothing) if any is too small, or for a predefined type.
/// `call` names the C function in messages.
pub fn contents(id: TypeId, max: ContentsMax, call: &str) -> Result<Contents> {
    runtime::with(|rt| {
        let ty = rt.types.datatype(id)?;
        let Some(c) = ty.contents() else {
            return err(
                ErrorClass::Type,
                format!("{call} cannot decode a predefined datatype (combiner MPI_COMBINER_NAMED)"),
            );
        };
        for (what, have, need) in [
            ("max_integers", max.integers, c.integers.len()),
            ("max_addresses", max.addresses, c.addresses.len()),
            ("max_large_counts", max.large_counts, c.large_counts.len()),
            ("max_datatypes", max.datatypes, c.datatypes.len()),
        ] {
            if have < need {
                return err(
                    ErrorClass::Arg,
                    format!("{what} is {have} but the type has {need} (see MPI_Type_get_envelope)"),
                );
            }
        }
        let datatypes = c
            .datatypes
            .into_iter()
            .map(|t| match t.as_predefined() {
                Some(p) => p as TypeId,
                None => rt.types.insert(t),
            })
            .collect();
        Ok(Contents {
            combiner: ty.combiner(),
            integers: c.integers,
            addresses: c.addresses,
            large_counts: c.large_counts,
            datatypes,
        })
    })
}

/// `MPI_Type_create_f90_integer/real/complex`: the (cached) type for the arguments.
pub fn f90(params: F90) -> Result<TypeId> {
    runtime::with(|rt| {
        if let Some(&(_, id)) = rt.types.f90.iter().find(|(p, _)| *p == params) {
            return Ok(id);
        }
        let t = Datatype::f90(params).map_err(engine_error)?;
        let id = rt.types.insert(t);
        rt.types.f90.push((params, id));
        Ok(id)
    })
}

/// `MPI_Type_match_size`: the predefined type of `typeclass` (an `MPI_TYPECLASS_*`
/// value) with `size` bytes.
pub fn match_size(typeclass: i32, size: i64) -> Result<TypeId> {
    let class = TypeClass::from_mpich(typeclass).ok_or_else(|| {
        Error::new(
            ErrorClass::Arg,
            format!("invalid typeclass {typeclass} (MPI_TYPECLASS_REAL, MPI_TYPECLASS_INTEGER or MPI_TYPECLASS_COMPLEX)"),
        )
    })?;
    let p = fortran::match_size(class, size).map_err(engine_error)?;
    Ok(p as TypeId)
}

/// MPI-4.1's `MPI_Type_get_value_index`: the predefined pair type for a value type
/// and an index type, `None` (`MPI_DATATYPE_NULL`) when there is none.
pub fn value_index(value: TypeId, index: TypeId) -> Result<Option<TypeId>> {
    runtime::with(|rt| {
        let (v, i) = (
            rt.types.get(value)?.predefined,
            rt.types.get(index)?.predefined,
        );
        Ok(v.zip(i)
            .and_then(|(v, i)| Predefined::value_index(v, i))
            .map(|p| p as TypeId))
    })
}

/// Records that a large-count (`_c`) constructor made the type `id` (decoding then
/// reports its counts as large counts).
pub fn mark_large_counts(id: TypeId) -> Result<()> {
    runtime::with(|rt| {
        rt.types.get(id)?.ty.mark_large_counts();
        Ok(())
    })
}

// ----- counting ---------------------------------------------------------------------------

/// `MPI_Get_count`: whole elements in `bytes` received bytes, `None` (MPI_UNDEFINED)
/// when the last element is incomplete.
pub fn count_in(id: TypeId, bytes: u64) -> Result<Option<u64>> {
    runtime::with(|rt| Ok(rt.types.get(id)?.ty.count_in(bytes)))
}

/// `MPI_Get_elements`: basic elements in `bytes` received bytes; `None`
/// (MPI_UNDEFINED) when the bytes end inside a basic element.
pub fn elements_in(id: TypeId, bytes: u64) -> Result<Option<u64>> {
    runtime::with(|rt| Ok(elements_of(&rt.types.get(id)?.ty, bytes)))
}

fn elements_of(ty: &Datatype, bytes: u64) -> Option<u64> {
    let n = ty.elements_in(bytes);
    // The bytes end on a basic-element boundary exactly when one more byte (if the
    // stream had it) would not be needed to complete the count: compare with the
    // elements that `bytes` must hold for the `n` found.
    (bytes_for_elements(ty, n) == Some(bytes)).then_some(n)
}

/// The fewest packed bytes of a stream of `ty` holding `n` basic elements (the
/// inverse of `elements_in`, used by `MPI_Status_set_elements`); `None` when the type
/// has no data and `n > 0`.
pub fn bytes_for_elements(ty: &Datatype, n: u64) -> Option<u64> {
    if n == 0 {
        return Some(0);
    }
    let per = ty.element_count();
    let size = ty.size() as u64;
    if per == 0 || size == 0 {
        return None;
    }
    let whole = n / per;
    let rest = n % per;
    let base = whole.checked_mul(size)?;
    if rest == 0 {
        return Some(base);
    }
    // Smallest prefix of one element holding `rest` elements: binary search, since
    // the element count of a prefix grows with its length.
    let (mut lo, mut hi) = (0u64, size);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ty.elements_in(mid) >= rest {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    base.checked_add(lo)
}

/// `MPI_Status_set_elements`: the byte count a status must carry so that
/// `MPI_Get_elements` with `id` gives `n`.
pub fn status_bytes_for_elements(id: TypeId, n: u64) -> Result<u64> {
    runtime::with(|rt| {
        let ty = &rt.types.get(id)?.ty;
        bytes_for_elements(ty, n).ok_or_else(|| {
            Error::new(
                ErrorClass::Arg,
                format!("a datatype without data cannot hold {n} elements"),
            )
        })
    })
}

// ----- packing ----------------------------------------------------------------------------

fn check_count(what: &str, count: i64) -> Result<usize> {
    if count < 0 {
        return err(
            ErrorClass::Count,
            format!("invalid {what} {count} (must be >= 0)"),
        );
    }
    usize::try_from(count)
        .map_err(|_| Error::new(ErrorClass::Count, format!("{what} {count} is too large")))
}

fn check_user_buffer(what: &str, addr: usize, count: usize, t: &TypeInfo) -> Result<()> {
    if addr == 0 && count > 0 && t.size > 0 && t.predefined.is_some() {
        return err(
            ErrorClass::Buffer,
            format!("null {what} with count {count} of a non-empty predefined datatype"),
        );
    }
    Ok(())
}

/// `MPI_Pack`: packs `incount` elements of `id` at `inbuf` into `out` at byte
/// `position`; returns the new position.
///
/// # Safety
/// `inbuf` must hold `incount` elements of the type (absolute addresses when null).
pub unsafe fn pack(
    inbuf: *const u8,
    incount: i64,
    id: TypeId,
    out: &mut [u8],
    position: usize,
) -> Result<usize> {
    let t = runtime::with(|rt| rt.types.for_comm(id).cloned())?;
    let count = check_count("incount", incount)?;
    check_user_buffer("inbuf", inbuf as usize, count, &t)?;
    if position > out.len() {
        return err(
            ErrorClass::Arg,
            format!("position {position} is beyond outsize {}", out.len()),
        );
    }
    let need = t.message_bytes(count).ok_or_else(|| {
        Error::new(
            ErrorClass::Count,
            format!("{count} elements overflow the packed size"),
        )
    })?;
    let room = out.len() - position;
    if need > room {
        return err(
            ErrorClass::Truncate,
            format!(
                "pack buffer too small: {need} bytes needed at position {position}, {room} left of outsize {}",
                out.len()
            ),
        );
    }
    // SAFETY: the caller's buffer holds `count` elements; `out` has room for them.
    let n = unsafe { t.pack_at(inbuf, count, 0, &mut out[position..position + need]) };
    Ok(position + n)
}

/// `MPI_Unpack`: unpacks `outcount` elements of `id` from `input` at byte `position`
/// into `outbuf`; returns the new position.
///
/// # Safety
/// `outbuf` must hold `outcount` elements of the type (absolute addresses when null)
/// and not overlap `input`.
pub unsafe fn unpack(
    input: &[u8],
    position: usize,
    outbuf: *mut u8,
    outcount: i64,
    id: TypeId,
) -> Result<usize> {
    let t = runtime::with(|rt| rt.types.for_comm(id).cloned())?;
    let count = check_count("outcount", outcount)?;
    check_user_buffer("outbuf", outbuf as usize, count, &t)?;
    if position > input.len() {
        return err(
            ErrorClass::Arg,
            format!("position {position} is beyond insize {}", input.len()),
        );
    }
    let need = t.message_bytes(count).ok_or_else(|| {
        Error::new(
            ErrorClass::Count,
            format!("{count} elements overflow the packed size"),
        )
    })?;
    let left = input.len() - position;
    if need > left {
        return err(
            ErrorClass::Truncate,
            format!("only {left} packed bytes left at position {position} but {outcount} elements need {need}"),
        );
    }
    // SAFETY: the caller's buffer holds `count` elements; the input has the bytes.
    let n = unsafe { t.unpack_at(outbuf, count, 0, &input[position..position + need]) };
    Ok(position + n)
}

/// `MPI_Pack_size` in the native representation.
pub fn pack_size(count: i64, id: TypeId) -> Result<usize> {
    let count = check_count("incount", count)?;
    runtime::with(|rt| {
        rt.types
            .get(id)?
            .message_bytes(count)
            .ok_or_else(|| Error::new(ErrorClass::Count, "packed size overflows"))
    })
}

fn check_datarep(datarep: &str) -> Result<()> {
    if datarep != "external32" {
        return err(
            ErrorClass::Arg,
            format!("unsupported data representation \"{datarep}\" (only \"external32\")"),
        );
    }
    Ok(())
}

/// `MPI_Pack_external_size`.
pub fn pack_external_size(datarep: &str, count: i64, id: TypeId) -> Result<usize> {
    check_datarep(datarep)?;
    let count = check_count("incount", count)?;
    runtime::with(|rt| {
        oxmpi_datatype::pack_external_size(&rt.types.get(id)?.ty, count)
            .ok_or_else(|| Error::new(ErrorClass::Count, "external32 size overflows"))
    })
}

/// `MPI_Pack_external`: returns the new position.
///
/// # Safety
/// As for [`pack`].
pub unsafe fn pack_external(
    datarep: &str,
    inbuf: *const u8,
    incount: i64,
    id: TypeId,
    out: &mut [u8],
    position: usize,
) -> Result<usize> {
    check_datarep(datarep)?;
    let t = runtime::with(|rt| rt.types.for_comm(id).cloned())?;
    let count = check_count("incount", incount)?;
    check_user_buffer("inbuf", inbuf as usize, count, &t)?;
    if position > out.len() {
        return err(
            ErrorClass::Arg,
            format!("position {position} is beyond outsize {}", out.len()),
        );
    }
    // SAFETY: forwarded caller contract.
    let n = unsafe { oxmpi_datatype::pack_external(&t.ty, inbuf, count, &mut out[position..]) }
        .map_err(engine_error)?;
    Ok(position + n)
}

/// `MPI_Unpack_external`: returns the new position.
///
/// # Safety
/// As for [`unpack`].
pub unsafe fn unpack_external(
    datarep: &str,
    input: &[u8],
    position: usize,
    outbuf: *mut u8,
    outcount: i64,
    id: TypeId,
) -> Result<usize> {
    check_datarep(datarep)?;
    let t = runtime::with(|rt| rt.types.for_comm(id).cloned())?;
    let count = check_count("outcount", outcount)?;
    check_user_buffer("outbuf", outbuf as usize, count, &t)?;
    if position > input.len() {
        return err(
            ErrorClass::Arg,
            format!("position {position} is beyond insize {}", input.len()),
        );
    }
    // SAFETY: forwarded caller contract.
    let n = unsafe { oxmpi_datatype::unpack_external(&t.ty, outbuf, count, &input[position..]) }
        .map_err(engine_error)?;
    Ok(position + n)
}

// ----- Rust structs -------------------------------------------------------------------------

/// One field of a Rust struct for [`rust_struct`]: `count` elements of `ty` at byte
/// `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub ty: TypeId,
    pub count: usize,
}

/// The committed datatype of a Rust struct of `size` bytes with these fields: a
/// struct type resized to lower bound 0 and extent `size` (so arrays of the struct
/// step by `size_of`, whatever padding Rust chose). Used by `#[derive(Equivalence)]`.
pub fn rust_struct(size: usize, fields: &[Field]) -> Result<TypeId> {
    let big = |v: usize, what: &str| {
        i64::try_from(v)
            .map_err(|_| Error::new(ErrorClass::Arg, format!("{what} {v} is too large")))
    };
    let blocklengths = fields
        .iter()
        .map(|f| big(f.count, "field count"))
        .collect::<Result<Vec<_>>>()?;
    let displacements = fields
        .iter()
        .map(|f| big(f.offset, "field offset"))
        .collect::<Result<Vec<_>>>()?;
    let types: Vec<TypeId> = fields.iter().map(|f| f.ty).collect();
    let size = big(size, "struct size")?;
    runtime::with(|rt| {
        let olds = types
            .iter()
            .map(|&id| rt.types.datatype(id))
            .collect::<Result<Vec<_>>>()?;
        let s =
            Datatype::create_struct(&blocklengths, &displacements, &olds).map_err(engine_error)?;
        let t = Datatype::resized(&s, 0, size).map_err(engine_error)?;
        let id = rt.types.insert(t);
        rt.types.commit(id)?;
        Ok(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> TypeId {
        Predefined::Int as TypeId
    }

    #[test]
    fn predefined_entries_are_committed_and_named() {
        let t = TypeTable::default();
        let i = t.for_comm(int()).unwrap();
        assert_eq!((i.size, i.extent, i.contiguous), (4, 4, true));
        assert_eq!(t.name(int()).unwrap(), "MPI_INT");
        let di = t.get(Predefined::DoubleInt as TypeId).unwrap();
        assert_eq!((di.size, di.extent, di.contiguous), (12, 16, false));
        assert_eq!(
            t.for_comm(Predefined::Lb as TypeId).unwrap_err().class,
            ErrorClass::Type
        );
    }

    #[test]
    fn commit_free_and_reuse() {
        let mut t = TypeTable::default();
        let v = Datatype::vector(3, 1, 2, &t.datatype(int()).unwrap()).unwrap();
        let id = t.insert(v);
        assert!(id as usize >= Predefined::COUNT);
        assert_eq!(t.for_comm(id).unwrap_err().class, ErrorClass::Type);
        t.commit(id).unwrap();
        let info = t.for_comm(id).unwrap().clone();
        assert!(!info.contiguous);
        assert_eq!((info.size, info.extent), (12, 20));
        t.free(id).unwrap();
        assert_eq!(t.get(id).unwrap_err().class, ErrorClass::Type);
        assert_eq!(t.free(id).unwrap_err().class, ErrorClass::Type);
        // The clone still packs after the handle is gone.
        let src = [1i32, 0, 2, 0, 3];
        let mut out = [0u8; 12];
        // SAFETY: the vector's type map lies inside `src`.
        unsafe { info.pack(src.as_ptr().cast(), 1, &mut out) };
        assert_eq!(out[8], 3);
        assert_eq!(t.insert(Datatype::predefined(Predefined::Byte)), id);
        assert_eq!(t.free(int()).unwrap_err().class, ErrorClass::Type);
    }

    #[test]
    fn holds_keep_the_index() {
        let mut t = TypeTable::default();
        let id = t.insert(Datatype::contiguous(2, &t.datatype(int()).unwrap()).unwrap());
        t.commit(id).unwrap();
        t.hold(id).unwrap();
        t.free(id).unwrap();
        assert!(t.get(id).is_err());
        assert_eq!(t.for_comm_held(id).unwrap().size, 8);
        let other = t.insert(Datatype::predefined(Predefined::Byte));
        assert_ne!(other, id);
        t.release(id);
        assert!(t.for_comm_held(id).is_err());
        assert_eq!(t.live_created(), 1);
    }

    #[test]
    fn contiguous_flag_needs_data_at_the_base() {
        let mut t = TypeTable::default();
        let int_t = t.datatype(int()).unwrap();
        // A struct of one int at displacement 8: contiguous, but not at the base.
        let s = Datatype::create_struct(&[2], &[8], std::slice::from_ref(&int_t)).unwrap();
        let id = t.insert(s);
        t.commit(id).unwrap();
        let i = t.get(id).unwrap();
        assert!(!i.contiguous);
        assert_eq!(i.contiguous_block(1), Some((8, 8)));
        let c = t.insert(Datatype::contiguous(4, &int_t).unwrap());
        t.commit(c).unwrap();
        assert!(t.get(c).unwrap().contiguous);
    }

    #[test]
    fn names_are_truncated() {
        let mut t = TypeTable::default();
        let long = "é".repeat(100);
        t.set_name(int(), &long).unwrap();
        let n = t.name(int()).unwrap();
        assert!(n.len() <= MAX_NAME_BYTES && n.chars().all(|c| c == 'é'));
    }

    #[test]
    fn elements_and_their_inverse() {
        let int_t = Datatype::predefined(Predefined::Int);
        assert_eq!(elements_of(&int_t, 8), Some(2));
        assert_eq!(elements_of(&int_t, 6), None);
        let dbl = Datatype::predefined(Predefined::Double);
        let s = Datatype::create_struct(&[1, 2], &[0, 8], &[int_t.clone(), dbl]).unwrap();
        // size 20: int then two doubles.
        assert_eq!(elements_of(&s, 20), Some(3));
        assert_eq!(elements_of(&s, 12), Some(2));
        assert_eq!(elements_of(&s, 24), Some(4));
        assert_eq!(elements_of(&s, 10), None);
        for n in 0..10 {
            let b = bytes_for_elements(&s, n).unwrap();
            assert_eq!(s.elements_in(b), n);
        }
        let pair = Datatype::predefined(Predefined::DoubleInt);
        assert_eq!(elements_of(&pair, 12), Some(2));
        assert_eq!(elements_of(&pair, 8), Some(1));
    }
}
