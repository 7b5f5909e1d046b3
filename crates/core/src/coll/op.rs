//! Reduction operations: the table behind `MPI_Op` (the 14 predefined operations, then
//! user operations made by `MPI_Op_create`), the check that an operation may reduce a
//! datatype, and [`Reducer`], which applies one to packed collective buffers.
//!
//! A user operation is a callback the binding provides ([`UserFn`]); the engine calls it
//! only while it does not hold the runtime lock, because user code may call MPI.

use crate::error::{err, Error, ErrorClass, Result};
use crate::types::{TypeId, TypeInfo};
use oxmpi_coll::ops::{
    check_collective_op, reduce_packed, reduce_packed_into, FlatKernel, Fold3, OpError,
    PredefinedOp,
};
use oxmpi_datatype::Predefined;
use std::sync::{Arc, OnceLock};

/// Index of an operation: `0..=13` are the predefined operations in
/// [`PredefinedOp::ALL`] order, created operations start at [`FIRST_CREATED_OP`].
pub type OpId = u32;

/// The first index `MPI_Op_create` hands out.
pub const FIRST_CREATED_OP: OpId = PredefinedOp::ALL.len() as OpId;

/// A user reduction, as `MPI_User_function` sees it: `inout[k] = input[k] op inout[k]`
/// for `count` elements of the datatype `ty`, where both pointers are the base
/// addresses of the elements laid out as in user memory (element `k` at
/// `k * extent`, its data between `true_lb` and `true_ub` of that). Called without the
/// runtime lock held; the two vectors never overlap.
pub type UserFn = Arc<dyn Fn(*const u8, *mut u8, usize, TypeId) + Send + Sync>;

/// A user operation as `MPI_Op_create` made it.
#[derive(Clone)]
pub struct UserOp {
    pub func: UserFn,
    pub commutative: bool,
}

/// What an operation index stands for.
#[derive(Clone)]
pub enum Op {
    Predefined(PredefinedOp),
    User(UserOp),
}

impl Op {
    /// What `MPI_Op_commutative` reports.
    pub fn commutative(&self) -> bool {
        match self {
            Op::Predefined(p) => p.is_commutative(),
            Op::User(u) => u.commutative,
        }
    }
}

/// The created operations (predefined ones need no storage).
#[derive(Default)]
pub struct OpTable {
    slots: Vec<Option<UserOp>>,
    free: Vec<usize>,
}

/// True for the index of a predefined operation (never freed, never redefined).
#[inline]
pub(crate) fn is_predefined(id: OpId) -> bool {
    (id as usize) < PredefinedOp::ALL.len()
}

impl OpTable {
    /// Stores a new user operation and returns its index.
    pub fn insert(&mut self, op: UserOp) -> OpId {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(op);
                i
            }
            None => {
                self.slots.push(Some(op));
                self.slots.len() - 1
            }
        };
        FIRST_CREATED_OP + i as OpId
    }

    /// The operation at `id`.
    pub fn get(&self, id: OpId) -> Result<Op> {
        if let Some(p) = PredefinedOp::ALL.get(id as usize) {
            return Ok(Op::Predefined(*p));
        }
        let i = (id - FIRST_CREATED_OP) as usize;
        match self.slots.get(i) {
            Some(Some(u)) => Ok(Op::User(u.clone())),
            _ => err(
                ErrorClass::Op,
                format!("invalid operation (index {id}: freed or never created)"),
            ),
        }
    }

    /// `MPI_Op_free`: predefined operations cannot be freed.
    pub fn remove(&mut self, id: OpId) -> Result<()> {
        if let Some(p) = PredefinedOp::ALL.get(id as usize) {
            return err(
                ErrorClass::Op,
                format!("the predefined operation {} cannot be freed", p.name()),
            );
        }
        let i = (id - FIRST_CREATED_OP) as usize;
        match self.slots.get_mut(i) {
            Some(s @ Some(_)) => {
                *s = None;
                self.free.push(i);
                Ok(())
            }
            _ => err(
                ErrorClass::Op,
                format!("invalid operation (index {id}: freed or never created)"),
            ),
        }
    }
}

fn op_error(e: OpError) -> Error {
    let class = match e {
        OpError::BufferTooShort { .. } => ErrorClass::Intern,
        _ => ErrorClass::Op,
    };
    Error::new(class, e.to_string())
}

/// How a collective combines two packed vectors of its datatype.
#[derive(Clone)]
pub enum Reducer {
    /// Not a reduction.
    None,
    /// A predefined operation on a datatype made of one predefined type `basic`
    /// (`flat`: its kernel, resolved once, unless `basic` is a pair type).
    Predefined {
        op: PredefinedOp,
        basic: Predefined,
        flat: Option<FlatKernel>,
    },
    /// A user operation. `layout` is the datatype when it is not contiguous: the
    /// packed elements are then expanded to the user layout around each call.
    User {
        func: UserFn,
        ty: TypeId,
        size: usize,
        layout: Option<Box<TypeInfo>>,
    },
}

impl Reducer {
    /// The reducer for `op` on the datatype `ty` (`info`), or the error a reduction
    /// call reports: `MPI_ERR_OP` when the operation is not defined for the type.
    /// Predefined operations accept predefined types and, beyond the standard's
    /// minimum, derived types whose elements are all one predefined type.
    pub fn new(op: &Op, ty: TypeId, info: &TypeInfo) -> Result<Reducer> {
        match op {
            Op::Predefined(p) => {
                let basic = match (info.predefined, info.basic) {
                    (Some(pt), _) => pt,
                    (None, Some(b)) => b,
                    (None, None) if info.size == 0 => {
                        // No data at all: nothing will ever be combined.
                        return Ok(Reducer::None);
                    }
                    (None, None) => {
                        return err(
                            ErrorClass::Op,
                            format!(
                                "{} needs a datatype made of one predefined type; this derived datatype mixes several",
                                p.name()
                            ),
                        )
                    }
                };
                let flat = checked(*p, basic)?;
                Ok(Reducer::Predefined {
                    op: *p,
                    basic,
                    flat,
                })
            }
            Op::User(u) => Ok(Reducer::User {
                func: u.func.clone(),
                ty,
                size: info.size,
                layout: (!info.contiguous).then(|| Box::new(info.clone())),
            }),
        }
    }

    /// True when applying it runs user code (so not under the runtime lock).
    pub fn is_user(&self) -> bool {
        matches!(self, Reducer::User { .. })
    }

    /// The one-pass `out = a op b` compiled for a predefined operation on a plain
    /// numeric type (what a planned call may resolve once), if it has one.
    pub fn fold3(&self) -> Option<Fold3> {
        match self {
            Reducer::Predefined { flat: Some(k), .. } => k.fold3(),
            _ => None,
        }
    }

    /// `out = a op b` on packed whole elements (one pass for plain numeric types).
    pub fn apply_into(&self, a: &[u8], b: &[u8], out: &mut [u8]) -> Result<()> {
        match self {
            Reducer::Predefined { flat: Some(k), .. } => {
                k.apply_into(a, b, out);
                Ok(())
            }
            Reducer::Predefined { op, basic, .. } => {
                let count = a.len() / basic.size().max(1);
                reduce_packed_into(*op, *basic, a, b, out, count).map_err(op_error)
            }
            _ => {
                out.copy_from_slice(b);
                self.apply(a, out)
            }
        }
    }

    /// `dst = src op dst` on packed whole elements.
    pub fn apply(&self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        match self {
            Reducer::None => {
                if src.is_empty() {
                    Ok(())
                } else {
                    err(
                        ErrorClass::Intern,
                        "reduction step in a collective without an operation",
                    )
                }
            }
            Reducer::Predefined { flat: Some(k), .. } => {
                k.apply(src, dst);
                Ok(())
            }
            Reducer::Predefined { op, basic, .. } => {
                let count = src.len() / basic.size().max(1);
                reduce_packed(*op, *basic, src, dst, count).map_err(op_error)
            }
            Reducer::User {
                func,
                ty,
                size,
                layout,
            } => {
                let count = src.len() / (*size).max(1);
                match layout {
                    None => func(src.as_ptr(), dst.as_mut_ptr(), count, *ty),
                    Some(t) => {
                        // Expand both vectors to the user layout, call, pack the result.
                        let (lo, hi) = data_range(t, count);
                        let len = (hi - lo) as usize;
                        let mut a = vec![0u8; len];
                        let mut b = vec![0u8; len];
                        let base_a = a.as_mut_ptr().wrapping_offset(-lo);
                        let base_b = b.as_mut_ptr().wrapping_offset(-lo);
                        // SAFETY: the data bytes of `count` elements at `base_*` lie in
                        // `lo..hi` of the base, i.e. inside `a` / `b`; `src`/`dst` hold
                        // count * size packed bytes.
                        unsafe {
                            t.unpack(base_a, src);
                            t.unpack(base_b, dst);
                        }
                        func(base_a, base_b, count, *ty);
                        // SAFETY: as above; `dst` has room for count * size bytes.
                        unsafe { t.pack(base_b, count, dst) };
                    }
                }
                Ok(())
            }
        }
    }
}

/// (operation, type) pairs already found valid, with their kernel: validity of
/// predefined pairs never changes, so each is checked (and its kernel resolved) once per
/// process.
static VALID: [OnceLock<Option<FlatKernel>>; PredefinedOp::ALL.len() * Predefined::COUNT] =
    [const { OnceLock::new() }; PredefinedOp::ALL.len() * Predefined::COUNT];

/// Checks that collectives may apply `op` to `ty`; its flat kernel, if it has one.
fn checked(op: PredefinedOp, ty: Predefined) -> Result<Option<FlatKernel>> {
    let i = op as usize * Predefined::COUNT + ty as usize;
    if let Some(k) = VALID.get(i).and_then(|v| v.get()) {
        return Ok(*k);
    }
    check_collective_op(op, ty).map_err(op_error)?;
    let k = FlatKernel::new(op, ty);
    if let Some(v) = VALID.get(i) {
        let _ = v.set(k);
    }
    Ok(k)
}

/// Where the data bytes of `count` elements of `t` lie relative to the buffer's base
/// address: `(lowest, one past the highest)`; `(0, 0)` without data.
pub fn data_range(t: &TypeInfo, count: usize) -> (isize, isize) {
    if count == 0 || t.size == 0 {
        return (0, 0);
    }
    if t.contiguous {
        return (0, (count * t.size) as isize);
    }
    let d = t.datatype();
    let (tlb, tub) = (d.true_lb(), d.true_ub());
    let last = (count as isize - 1).saturating_mul(t.signed_extent);
    (
        tlb.min(last.saturating_add(tlb)),
        tub.max(last.saturating_add(tub)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_reuses_indices_and_rejects_bad_ones() {
        let mut t = OpTable::default();
        let f: UserFn = Arc::new(|_, _, _, _| {});
        let a = t.insert(UserOp {
            func: f.clone(),
            commutative: false,
        });
        assert_eq!(a, FIRST_CREATED_OP);
        assert!(!t.get(a).unwrap().commutative());
        assert!(t.get(2).unwrap().commutative());
        assert_eq!(t.remove(2).unwrap_err().class, ErrorClass::Op);
        t.remove(a).unwrap();
        assert_eq!(t.get(a).err().unwrap().class, ErrorClass::Op);
        assert_eq!(t.remove(a).unwrap_err().class, ErrorClass::Op);
        let b = t.insert(UserOp {
            func: f,
            commutative: true,
        });
        assert_eq!(b, a);
        assert!(t.get(FIRST_CREATED_OP + 7).is_err());
    }
}
