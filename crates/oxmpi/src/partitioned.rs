//! Partitioned communication (MPI 4.1 chapter 4): a persistent send whose buffer is cut
//! into partitions that the program marks ready one by one ([`PartitionedSend::ready`]),
//! and a persistent receive whose partitions can be read as soon as they have arrived
//! ([`PartitionedReceive::arrived`], [`PartitionedReceive::partition`]). The two sides
//! may cut the same data into different numbers of partitions.
//!
//! The engine keeps the buffer's address from the moment the request is made until it
//! is dropped, so the request holds the exclusive borrow of the buffer for its whole
//! life and every access goes through it: a send lends out a partition only while it is
//! not marked ready (or between runs), a receive only once it has arrived (or between
//! runs). Dropping a request waits for an active run, then frees it.

use crate::datatype::Equivalence;
use crate::error::{engine, Error, ErrorClass, Result};
use crate::point_to_point::{Destination, Source, Status, Tag};
use crate::raw::{check_status, recv_buf, send_buf, Fixup};
use oxmpi_core::device::ReqId;
use oxmpi_core::{p2p, partitioned};
use std::marker::PhantomData;

/// The partition size of `len` elements cut into `partitions`.
fn per_partition(method: &'static str, len: usize, partitions: usize) -> Result<usize> {
    if partitions == 0 || len % partitions != 0 {
        return Err(Error::new(
            method,
            ErrorClass::Arg,
            format!("a buffer of {len} elements cannot be cut into {partitions} equal partitions"),
        ));
    }
    Ok(len / partitions)
}

fn engine_partitions(method: &'static str, partitions: usize) -> Result<i32> {
    i32::try_from(partitions).map_err(|_| {
        Error::new(
            method,
            ErrorClass::Arg,
            format!("{partitions} partitions are too many"),
        )
    })
}

fn bad_index(method: &'static str, i: usize, n: usize) -> Error {
    Error::new(
        method,
        ErrorClass::Arg,
        format!("invalid partition {i} (the request has {n} partitions)"),
    )
}

/// A partitioned send (`MPI_Psend_init`) of a slice borrowed exclusively for `'a`.
#[must_use = "a partitioned request does nothing until started"]
pub struct PartitionedSend<'a, T: Equivalence> {
    ptr: *mut T,
    len: usize,
    per: usize,
    id: ReqId,
    active: bool,
    ready: Vec<bool>,
    _buf: PhantomData<&'a mut [T]>,
}

impl<'a, T: Equivalence> PartitionedSend<'a, T> {
    /// Sets up a send of `buf`, cut into `partitions` equal partitions, to `dest` with
    /// `tag`. Inactive until [`start`](Self::start)ed.
    pub fn new<D: Destination + ?Sized>(
        dest: &D,
        buf: &'a mut [T],
        partitions: usize,
        tag: Tag,
    ) -> Result<Self> {
        const M: &str = "partitioned_send";
        let per = per_partition(M, buf.len(), partitions)?;
        let parts = engine_partitions(M, partitions)?;
        let b = send_buf(M, &*buf)?;
        let (ptr, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: the buffer stays borrowed by the request until it is freed (Drop), and
        // the request only lends out partitions the engine does not read.
        let id = unsafe {
            partitioned::psend_init(
                b.addr,
                parts,
                per as i64,
                b.ty,
                dest.destination_rank(),
                tag,
                dest.comm_id(),
            )
        }
        .map_err(engine(M))?;
        Ok(PartitionedSend {
            ptr,
            len,
            per,
            id,
            active: false,
            ready: vec![false; partitions],
            _buf: PhantomData,
        })
    }

    /// Number of partitions.
    pub fn partitions(&self) -> usize {
        self.ready.len()
    }

    /// Starts a run (`MPI_Start`): every partition is not ready.
    pub fn start(&mut self) -> Result<()> {
        p2p::start(self.id).map_err(engine("start"))?;
        self.active = true;
        self.ready.iter_mut().for_each(|r| *r = false);
        Ok(())
    }

    /// Marks partition `i` ready (`MPI_Pready`): it leaves at once, and the request no
    /// longer lends it out until the run completes.
    pub fn ready(&mut self, i: usize) -> Result<()> {
        let p = i32::try_from(i).map_err(|_| bad_index("ready", i, self.partitions()))?;
        partitioned::pready(self.id, p).map_err(engine("ready"))?;
        self.ready[i] = true;
        Ok(())
    }

    /// Marks partitions `low..=high` ready (`MPI_Pready_range`).
    pub fn ready_range(&mut self, low: usize, high: usize) -> Result<()> {
        let n = self.partitions();
        let l = i32::try_from(low).map_err(|_| bad_index("ready_range", low, n))?;
        let h = i32::try_from(high).map_err(|_| bad_index("ready_range", high, n))?;
        partitioned::pready_range(self.id, l, h).map_err(engine("ready_range"))?;
        self.ready[low..=high].iter_mut().for_each(|r| *r = true);
        Ok(())
    }

    /// Partition `i` for writing: between runs, or during a run before it is marked
    /// ready; `None` otherwise (or when `i` is out of range).
    pub fn partition_mut(&mut self, i: usize) -> Option<&mut [T]> {
        if i >= self.ready.len() || (self.active && self.ready[i]) {
            return None;
        }
        // SAFETY: partition `i` lies inside the borrowed buffer, and the engine does not
        // read it until it is marked ready (which needs `&mut self`).
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i * self.per), self.per) })
    }

    /// The whole buffer between runs; `None` during one.
    pub fn buffer_mut(&mut self) -> Option<&mut [T]> {
        if self.active {
            return None;
        }
        // SAFETY: no run is active: the engine does not touch the buffer.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// Waits until the run completes (every partition must be marked ready first).
    pub fn wait(&mut self) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        let c = p2p::wait(self.id).map_err(engine("wait"));
        self.active = false;
        check_status("wait", &c?.status, 0)
    }
}

impl<T: Equivalence> Drop for PartitionedSend<'_, T> {
    fn drop(&mut self) {
        if self.active {
            // The run can only complete once every partition is ready: the rest go
            // as they are.
            for i in 0..self.ready.len() {
                if !self.ready[i] {
                    let _ = self.ready(i);
                }
            }
            let _ = p2p::wait(self.id);
            self.active = false;
        }
        let _ = p2p::request_free(self.id);
    }
}

/// A partitioned receive (`MPI_Precv_init`) into a slice borrowed exclusively for `'a`.
#[must_use = "a partitioned request does nothing until started"]
pub struct PartitionedReceive<'a, T: Equivalence> {
    ptr: *mut T,
    len: usize,
    per: usize,
    id: ReqId,
    active: bool,
    fixup: Fixup,
    _buf: PhantomData<&'a mut [T]>,
}

impl<'a, T: Equivalence> PartitionedReceive<'a, T> {
    /// Sets up a receive into `buf`, cut into `partitions` equal partitions, from
    /// `source` (a process, not any process) with `tag`.
    pub fn new<S: Source + ?Sized>(
        source: &S,
        buf: &'a mut [T],
        partitions: usize,
        tag: Tag,
    ) -> Result<Self> {
        const M: &str = "partitioned_receive";
        let per = per_partition(M, buf.len(), partitions)?;
        let parts = engine_partitions(M, partitions)?;
        let r = recv_buf(M, buf)?;
        let (ptr, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: the buffer stays borrowed by the request until it is freed (Drop), and
        // the request lends out only partitions that have arrived.
        let id = unsafe {
            partitioned::precv_init(
                r.buf.addr,
                parts,
                per as i64,
                r.buf.ty,
                source.source_rank(),
                tag,
                source.comm_id(),
            )
        }
        .map_err(engine(M))?;
        Ok(PartitionedReceive {
            ptr,
            len,
            per,
            id,
            active: false,
            fixup: r.fixup,
            _buf: PhantomData,
        })
    }

    /// Number of partitions.
    pub fn partitions(&self) -> usize {
        self.len.checked_div(self.per).unwrap_or(0)
    }

    /// Starts a run (`MPI_Start`).
    pub fn start(&mut self) -> Result<()> {
        p2p::start(self.id).map_err(engine("start"))?;
        self.active = true;
        Ok(())
    }

    /// Whether partition `i` has arrived (`MPI_Parrived`; true between runs).
    pub fn arrived(&self, i: usize) -> Result<bool> {
        let p = i32::try_from(i).map_err(|_| bad_index("arrived", i, self.partitions()))?;
        partitioned::parrived(self.id, p).map_err(engine("arrived"))
    }

    /// Partition `i` once it has arrived (or between runs); `None` before.
    pub fn partition(&self, i: usize) -> Option<&[T]> {
        if !self.arrived(i).ok()? {
            return None;
        }
        // SAFETY: the partition has arrived: the engine no longer writes it this run;
        // it lies inside the borrowed buffer. Bit patterns that are not values of T
        // are repaired first (`Fixup`, for types that need it).
        unsafe {
            let start = self.ptr.add(i * self.per);
            Fixup::new(start, self.per).apply();
            Some(std::slice::from_raw_parts(start, self.per))
        }
    }

    /// The whole buffer between runs; `None` during one.
    pub fn buffer(&self) -> Option<&[T]> {
        if self.active {
            return None;
        }
        // SAFETY: no run is active: the engine does not touch the buffer.
        Some(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// Waits until every partition has arrived; the status of the whole receive.
    pub fn wait(&mut self) -> Result<Status> {
        if !self.active {
            return Ok(Status::from_core(oxmpi_core::device::Status::EMPTY));
        }
        let c = p2p::wait(self.id).map_err(engine("wait"));
        self.active = false;
        // SAFETY: the run is complete; the buffer is alive.
        unsafe { self.fixup.apply() };
        let s = c?.status;
        check_status("wait", &s, self.fixup.capacity)?;
        Ok(Status::from_core(s))
    }
}

impl<T: Equivalence> Drop for PartitionedReceive<'_, T> {
    fn drop(&mut self) {
        let _ = self.wait();
        let _ = p2p::request_free(self.id);
    }
}
