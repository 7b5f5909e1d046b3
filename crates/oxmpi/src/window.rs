//! One-sided communication: [`Window`]s of typed memory that other processes read and
//! write with put, get, accumulate, fetch-and-op and compare-and-swap.
//!
//! Operations happen inside epochs, which are scopes: [`Window::fence_epoch`] (active
//! target, collective), [`Window::lock_epoch`] (passive target, one rank) and
//! [`Window::lock_all_epoch`] (passive target, every rank). An epoch hands its closure
//! an [`Epoch`] whose operations borrow their buffers for the lifetime `'b`, which
//! outlasts the scope: an origin buffer cannot be changed, nor a result buffer read,
//! until the epoch has closed and the operations are complete. The scope closes the
//! epoch (unlock or fence) also when the closure fails or panics.
//!
//! The borrow checker refuses a result read before the epoch closes:
//!
//! ```compile_fail
//! # fn f(win: &mut oxmpi::window::Window<i32>) -> oxmpi::Result<()> {
//! let mut got = [0i32; 4];
//! win.lock_all_epoch(|e| {
//!     e.get(&mut got, 0, 0)?;
//!     println!("{}", got[0]); // still borrowed by the get
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//!
//! and an origin buffer that does not outlive the epoch:
//!
//! ```compile_fail
//! # fn f(win: &mut oxmpi::window::Window<i32>) -> oxmpi::Result<()> {
//! win.lock_all_epoch(|e| {
//!     let local = [1i32; 4];
//!     e.put(&local, 0, 0) // `local` is dropped while the put may still read it
//! })?;
//! # Ok(()) }
//! ```
//!
//! This process's own part of the window is reached with [`Window::with_local`], which
//! holds an exclusive lock on it meanwhile, so no passive-target access of another
//! process touches it at the same time; fence epochs are collective and closed when
//! their scope ends, so none is open then either.
//!
//! ```no_run
//! use oxmpi::traits::*;
//! use oxmpi::window::{LockType, Window};
//! use oxmpi::collective::SystemOperation;
//!
//! # fn main() -> oxmpi::Result<()> {
//! let universe = oxmpi::initialize()?;
//! let world = universe.world();
//! let mut win = Window::<i64>::allocate(&world, 1)?;
//! win.with_local(|v| v[0] = 0)?;
//! world.barrier()?;
//! let (one, mut old) = (1i64, 0i64);
//! win.lock_epoch(0, LockType::Shared, |e| {
//!     e.fetch_and_op(&one, &mut old, 0, 0, &SystemOperation::sum())
//! })?;
//! println!("ticket {old}");
//! # Ok(()) }
//! ```

use crate::collective::SystemOperation;
use crate::datatype::Equivalence;
use crate::error::{engine, Error, ErrorClass, Result};
use crate::topology::AsCommId;
use oxmpi_core::rma::{self, Flavor, LockKind, Origin, TargetSpec, WinId};
use std::marker::PhantomData;

/// The kind of a passive-target lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockType {
    /// Any number of processes may hold it (`MPI_LOCK_SHARED`).
    Shared,
    /// Only this process holds it (`MPI_LOCK_EXCLUSIVE`).
    Exclusive,
}

/// A window of `T` values: this process's part (of `len` values) and the other
/// members' parts, which operations address by rank and displacement (in `T`s).
pub struct Window<T: Equivalence> {
    id: WinId,
    base: *mut T,
    len: usize,
    flavor: Flavor,
    /// Memory given to `create` (kept until the window is freed).
    owned: Option<Box<[T]>>,
    /// Regions attached to a dynamic window.
    attached: Vec<Box<[T]>>,
    freed: bool,
}

fn count_of<T: Equivalence>(n: usize) -> (usize, oxmpi_core::types::TypeId) {
    let d = T::equivalent_datatype();
    (n * d.multiplicity(), d.type_id())
}

impl<T: Equivalence> Window<T> {
    fn make(
        comm: &impl AsCommId,
        flavor: Flavor,
        len: usize,
        base: usize,
    ) -> Result<(WinId, usize)> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::new("Window", ErrorClass::Size, "window size overflows"))?;
        let c = rma::Create {
            flavor,
            size: bytes as i64,
            disp_unit: std::mem::size_of::<T>().max(1) as i64,
            base,
            info: None,
        };
        let (id, base) = rma::create(comm.comm_id(), c).map_err(engine("Window::new"))?;
        // Errors are returned to the caller, not fatal.
        rma::set_errhandler(id, oxmpi_core::comm::Errhandler::Return)
            .map_err(engine("Window::new"))?;
        Ok((id, base))
    }

    /// `MPI_Win_allocate`: `len` values of memory the library allocates (zeroed on the
    /// message transport; unspecified, but valid for `T`s of plain data, otherwise).
    /// Collective over `comm`.
    pub fn allocate(comm: &impl AsCommId, len: usize) -> Result<Window<T>> {
        let (id, base) = Self::make(comm, Flavor::Allocate, len, 0)?;
        Ok(Window {
            id,
            base: base as *mut T,
            len,
            flavor: Flavor::Allocate,
            owned: None,
            attached: Vec::new(),
            freed: false,
        })
    }

    /// `MPI_Win_allocate_shared`: like [`Window::allocate`], in memory every member on
    /// the node maps ([`Window::with_shared`] reads another member's part directly).
    pub fn allocate_shared(comm: &impl AsCommId, len: usize) -> Result<Window<T>> {
        let (id, base) = Self::make(comm, Flavor::Shared, len, 0)?;
        Ok(Window {
            id,
            base: base as *mut T,
            len,
            flavor: Flavor::Shared,
            owned: None,
            attached: Vec::new(),
            freed: false,
        })
    }

    /// `MPI_Win_create` over `memory`, which the window keeps until it is freed
    /// ([`Window::free`] gives it back).
    pub fn create(comm: &impl AsCommId, memory: Vec<T>) -> Result<Window<T>> {
        let mut b = memory.into_boxed_slice();
        let len = b.len();
        let (id, _) = Self::make(comm, Flavor::Create, len, b.as_mut_ptr() as usize)?;
        Ok(Window {
            id,
            base: b.as_mut_ptr(),
            len,
            flavor: Flavor::Create,
            owned: Some(b),
            attached: Vec::new(),
            freed: false,
        })
    }

    /// `MPI_Win_create_dynamic`: a window with no memory until [`Window::attach`]; its
    /// displacements are the addresses that `attach` returns (in bytes, so operations on
    /// it take byte displacements: see [`Window::attach`]).
    pub fn create_dynamic(comm: &impl AsCommId) -> Result<Window<T>> {
        let c = rma::Create {
            flavor: Flavor::Dynamic,
            size: 0,
            disp_unit: 1,
            base: 0,
            info: None,
        };
        let (id, _) = rma::create(comm.comm_id(), c).map_err(engine("Window::create_dynamic"))?;
        rma::set_errhandler(id, oxmpi_core::comm::Errhandler::Return)
            .map_err(engine("Window::create_dynamic"))?;
        Ok(Window {
            id,
            base: std::ptr::null_mut(),
            len: 0,
            flavor: Flavor::Dynamic,
            owned: None,
            attached: Vec::new(),
            freed: false,
        })
    }

    /// `MPI_Win_attach` of `memory` to a dynamic window; returns its address, the byte
    /// displacement by which others reach it (a dynamic window's displacement unit is
    /// one byte, so element `i` is at `address + i * size_of::<T>()`).
    pub fn attach(&mut self, memory: Vec<T>) -> Result<usize> {
        let mut b = memory.into_boxed_slice();
        let at = b.as_mut_ptr() as usize;
        rma::attach(self.id, at, std::mem::size_of_val(&*b)).map_err(engine("Window::attach"))?;
        self.attached.push(b);
        Ok(at)
    }

    /// `MPI_Win_detach` of the memory attached at `address`, handed back.
    pub fn detach(&mut self, address: usize) -> Result<Vec<T>> {
        let i = self
            .attached
            .iter()
            .position(|b| b.as_ptr() as usize == address)
            .ok_or_else(|| {
                Error::new(
                    "Window::detach",
                    ErrorClass::RmaAttach,
                    format!("no memory of this window is attached at {address:#x}"),
                )
            })?;
        rma::detach(self.id, address).map_err(engine("Window::detach"))?;
        Ok(self.attached.swap_remove(i).into_vec())
    }

    /// The number of values in this process's part.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when this process's part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The engine's index of the window.
    pub fn win_id(&self) -> WinId {
        self.id
    }

    fn my_rank(&self) -> Result<i32> {
        rma::rank(self.id).map_err(engine("Window"))
    }

    /// Runs `f` on this process's part, holding an exclusive lock on it meanwhile (and
    /// synchronising it with `MPI_Win_sync`), so that no other process's passive-target
    /// operation touches it at the same time.
    pub fn with_local<R>(&mut self, f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        let me = self.my_rank()?;
        rma::lock(self.id, LockKind::Exclusive, me, 0).map_err(engine("Window::with_local"))?;
        let _ = rma::sync(self.id);
        let part: &mut [T] = if self.len == 0 {
            &mut []
        } else {
            // SAFETY: `base` holds this process's `len` values for the window's life,
            // the exclusive lock keeps other processes' operations away, and `&mut
            // self` keeps this process's epochs away.
            unsafe { std::slice::from_raw_parts_mut(self.base, self.len) }
        };
        let r = f(part);
        let _ = rma::sync(self.id);
        rma::unlock(self.id, me).map_err(engine("Window::with_local"))?;
        Ok(r)
    }

    /// Reads member `rank`'s part of a window made by [`Window::allocate_shared`]
    /// directly, holding a shared lock on it meanwhile.
    pub fn with_shared<R>(&mut self, rank: i32, f: impl FnOnce(&[T]) -> R) -> Result<R> {
        if self.flavor != Flavor::Shared {
            return Err(Error::new(
                "Window::with_shared",
                ErrorClass::RmaFlavor,
                "the window was not made by Window::allocate_shared",
            ));
        }
        let (size, _, base) =
            rma::shared_query(self.id, rank).map_err(engine("Window::with_shared"))?;
        rma::lock(self.id, LockKind::Shared, rank, 0).map_err(engine("Window::with_shared"))?;
        let _ = rma::sync(self.id);
        let n = size / std::mem::size_of::<T>().max(1);
        let part: &[T] = if n == 0 {
            &[]
        } else {
            // SAFETY: the segment holds member `rank`'s `size` bytes for the window's
            // life, written only by whole values; the shared lock keeps writers with
            // exclusive locks (and `with_local`) away.
            unsafe { std::slice::from_raw_parts(base as *const T, n) }
        };
        let r = f(part);
        rma::unlock(self.id, rank).map_err(engine("Window::with_shared"))?;
        Ok(r)
    }

    /// An active-target epoch: `MPI_Win_fence` before and after `f` (collective: every
    /// member calls it). The operations of `f` are complete when it returns.
    pub fn fence_epoch<'b, R>(
        &mut self,
        f: impl FnOnce(&Epoch<'_, 'b, T>) -> Result<R>,
    ) -> Result<R> {
        rma::fence(self.id, rma::MODE_NOPRECEDE).map_err(engine("Window::fence_epoch"))?;
        let e = Epoch {
            win: self,
            close: Close::Fence,
            _b: PhantomData,
        };
        let r = f(&e);
        let c = e.finish();
        let r = r?;
        c?;
        Ok(r)
    }

    /// A passive-target epoch at `rank`: `MPI_Win_lock` before `f`, `MPI_Win_unlock`
    /// after it.
    pub fn lock_epoch<'b, R>(
        &mut self,
        rank: i32,
        kind: LockType,
        f: impl FnOnce(&Epoch<'_, 'b, T>) -> Result<R>,
    ) -> Result<R> {
        let k = match kind {
            LockType::Shared => LockKind::Shared,
            LockType::Exclusive => LockKind::Exclusive,
        };
        rma::lock(self.id, k, rank, 0).map_err(engine("Window::lock_epoch"))?;
        let e = Epoch {
            win: self,
            close: Close::Unlock(rank),
            _b: PhantomData,
        };
        let r = f(&e);
        let c = e.finish();
        let r = r?;
        c?;
        Ok(r)
    }

    /// A passive-target epoch at every member: `MPI_Win_lock_all` before `f`,
    /// `MPI_Win_unlock_all` after it.
    pub fn lock_all_epoch<'b, R>(
        &mut self,
        f: impl FnOnce(&Epoch<'_, 'b, T>) -> Result<R>,
    ) -> Result<R> {
        rma::lock_all(self.id, 0).map_err(engine("Window::lock_all_epoch"))?;
        let e = Epoch {
            win: self,
            close: Close::UnlockAll,
            _b: PhantomData,
        };
        let r = f(&e);
        let c = e.finish();
        let r = r?;
        c?;
        Ok(r)
    }

    /// `MPI_Win_free` (collective); gives back the memory given to `create`.
    pub fn free(mut self) -> Result<Option<Vec<T>>> {
        self.freed = true;
        rma::free(self.id).map_err(engine("Window::free"))?;
        Ok(self.owned.take().map(|b| b.into_vec()))
    }
}

impl<T: Equivalence> Drop for Window<T> {
    fn drop(&mut self) {
        if !self.freed {
            // Collective, like the explicit `free`; a failure cannot be reported here.
            let _ = rma::free(self.id);
        }
    }
}

enum Close {
    Fence,
    Unlock(i32),
    UnlockAll,
}

/// An open epoch of a window: the operations allowed in it. Buffers are borrowed for
/// `'b`, which lasts beyond the epoch's scope.
pub struct Epoch<'w, 'b, T: Equivalence> {
    win: &'w mut Window<T>,
    close: Close,
    /// Invariant in `'b`: an epoch cannot be narrowed to accept shorter-lived buffers.
    _b: PhantomData<fn(&'b ()) -> &'b ()>,
}

impl<T: Equivalence> Epoch<'_, '_, T> {
    fn finish(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        this.close_now()
    }

    fn close_now(&self) -> Result<()> {
        let id = self.win.id;
        match self.close {
            Close::Fence => rma::fence(id, rma::MODE_NOSUCCEED),
            Close::Unlock(r) => rma::unlock(id, r),
            Close::UnlockAll => rma::unlock_all(id),
        }
        .map_err(engine("Window epoch"))
    }
}

impl<T: Equivalence> Drop for Epoch<'_, '_, T> {
    fn drop(&mut self) {
        // Only reached when the closure panicked: the operations must still complete
        // before their buffers are released.
        let _ = self.close_now();
    }
}

fn target<T: Equivalence>(rank: i32, disp: usize, n: usize) -> TargetSpec {
    let (count, ty) = count_of::<T>(n);
    TargetSpec {
        rank,
        disp: disp as i64,
        count,
        ty,
    }
}

fn origin<T: Equivalence>(p: *const T, n: usize) -> Origin {
    let (count, ty) = count_of::<T>(n);
    Origin {
        addr: p as usize,
        count,
        ty,
    }
}

impl<'b, T: Equivalence> Epoch<'_, 'b, T> {
    /// `MPI_Put` of `src` to `rank` at displacement `disp` (in `T`s; bytes on a
    /// dynamic window).
    pub fn put(&self, src: &'b [T], rank: i32, disp: usize) -> Result<()> {
        rma::put(
            self.win.id,
            origin(src.as_ptr(), src.len()),
            target::<T>(rank, disp, src.len()),
        )
        .map_err(engine("Epoch::put"))
    }

    /// `MPI_Get` from `rank` at `disp` into `dst` (filled when the epoch closes).
    pub fn get(&self, dst: &'b mut [T], rank: i32, disp: usize) -> Result<()> {
        let n = dst.len();
        rma::get(
            self.win.id,
            origin(dst.as_mut_ptr(), n),
            target::<T>(rank, disp, n),
        )
        .map_err(engine("Epoch::get"))
    }

    /// `MPI_Accumulate` of `src` into `rank`'s values at `disp` with `op`.
    pub fn accumulate(
        &self,
        src: &'b [T],
        rank: i32,
        disp: usize,
        op: &SystemOperation,
    ) -> Result<()> {
        let o = <SystemOperation as crate::collective::Operation<T>>::op_id(op);
        rma::accumulate(
            self.win.id,
            origin(src.as_ptr(), src.len()),
            target::<T>(rank, disp, src.len()),
            o,
        )
        .map_err(engine("Epoch::accumulate"))
    }

    /// `MPI_Get_accumulate`: `result` gets `rank`'s values before `op` combines `src`
    /// into them.
    pub fn get_accumulate(
        &self,
        src: &'b [T],
        result: &'b mut [T],
        rank: i32,
        disp: usize,
        op: &SystemOperation,
    ) -> Result<()> {
        if src.len() != result.len() {
            return Err(Error::new(
                "Epoch::get_accumulate",
                ErrorClass::Count,
                format!("src has {} values and result {}", src.len(), result.len()),
            ));
        }
        let o = <SystemOperation as crate::collective::Operation<T>>::op_id(op);
        let n = src.len();
        rma::get_accumulate(
            self.win.id,
            origin(src.as_ptr(), n),
            origin(result.as_mut_ptr(), n),
            target::<T>(rank, disp, n),
            o,
        )
        .map_err(engine("Epoch::get_accumulate"))
    }

    /// `MPI_Fetch_and_op` of one value.
    pub fn fetch_and_op(
        &self,
        value: &'b T,
        result: &'b mut T,
        rank: i32,
        disp: usize,
        op: &SystemOperation,
    ) -> Result<()> {
        self.get_accumulate(
            std::slice::from_ref(value),
            std::slice::from_mut(result),
            rank,
            disp,
            op,
        )
    }

    /// `MPI_Compare_and_swap`: `rank`'s value at `disp` becomes `new` if it equals
    /// `compare`; `result` gets the value before. `T` must be one predefined type.
    pub fn compare_and_swap(
        &self,
        new: &'b T,
        compare: &'b T,
        result: &'b mut T,
        rank: i32,
        disp: usize,
    ) -> Result<()> {
        let d = T::equivalent_datatype();
        if d.multiplicity() != 1 {
            return Err(Error::new(
                "Epoch::compare_and_swap",
                ErrorClass::Type,
                "compare-and-swap works on one value of a predefined type",
            ));
        }
        let c = rma::Cas {
            origin: new as *const T as usize,
            compare: compare as *const T as usize,
            result: result as *mut T as usize,
            ty: d.type_id(),
            rank,
            disp: disp as i64,
        };
        rma::compare_and_swap(self.win.id, c).map_err(engine("Epoch::compare_and_swap"))
    }

    /// `MPI_Win_flush` of the operations to `rank` (passive-target epochs).
    pub fn flush(&self, rank: i32) -> Result<()> {
        rma::flush(self.win.id, Some(rank)).map_err(engine("Epoch::flush"))
    }
}
