//! Performance variables, their sessions and handles.
//!
//! The values come from state the engine keeps anyway or bumps as plain integers
//! under the lock it already holds ([`super::counters`], the collective state's
//! algorithm counts), or are computed when read (queue lengths): nothing on the
//! communication paths knows whether a tool is watching.
//!
//! A handle of a counter or timer keeps the value its session sees: zero when
//! allocated, growing only while started, set by a write or reset (those variables are
//! not read-only; each session has its own values). Levels and states are continuous
//! and read-only. After `MPI_Finalize` a handle reads the last value it saw.

use super::{decode, encode, with_tools, Bind, EnumDef, TErr, TResult, Tools, VarType};
use super::{Verbosity, ALL_HANDLES, TAG_PVAR, TAG_SESSION};
use crate::comm::CommId;
use crate::runtime::Runtime;
use oxmpi_coll::schedule::Algorithm;
use std::sync::OnceLock;

/// `MPI_T_PVAR_CLASS_*` (the values are MPICH's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Class {
    State = 240,
    Level = 241,
    Size = 242,
    Percentage = 243,
    HighWatermark = 244,
    LowWatermark = 245,
    Counter = 246,
    Aggregate = 247,
    Timer = 248,
    Generic = 249,
}

/// Where a variable's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    SentMsgs,
    SentBytes,
    RecvMsgs,
    RecvBytes,
    UnexpectedLen,
    PostedLen,
    TimeBlocked,
    CollCalls,
    CollLast,
}

/// One performance variable.
#[derive(Clone, Debug)]
pub struct PvarDef {
    pub name: &'static str,
    pub desc: String,
    pub verbosity: Verbosity,
    pub class: Class,
    pub ty: VarType,
    pub enum_index: Option<usize>,
    pub bind: Bind,
    pub readonly: bool,
    pub continuous: bool,
    pub atomic: bool,
    /// The name of its category.
    pub category: &'static str,
    source: Source,
}

/// The name of the enumeration of collective algorithms.
pub const ALGORITHM_ENUM: &str = "oxmpi_coll_algorithm";

/// Item 0 `none`, then item `i + 1` for `Algorithm::ALL[i]` as `Collective:name`.
pub(crate) fn algorithm_enum() -> EnumDef {
    let mut items = vec![(0, "none".to_string())];
    for (i, a) in Algorithm::ALL.iter().enumerate() {
        items.push((i as i32 + 1, format!("{:?}:{}", a.collective(), a.name())));
    }
    EnumDef {
        name: ALGORITHM_ENUM.into(),
        items,
    }
}

/// The name of item `v` of the enumeration of collective algorithms (`none`,
/// `Allreduce:ring` ...).
pub fn algorithm_item(v: i32) -> Option<&'static str> {
    super::enums()[super::algorithm_enum_index()]
        .items
        .iter()
        .find(|(x, _)| *x == v)
        .map(|(_, n)| n.as_str())
}

/// Number of collective algorithms (elements of `coll_algorithm_calls`).
pub const ALGORITHMS: usize = Algorithm::ALL.len();

/// Every performance variable.
pub fn table() -> &'static [PvarDef] {
    static TABLE: OnceLock<Vec<PvarDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let traffic = |name, source, what: &str| PvarDef {
            name,
            desc: format!(
                "{what}, one element per rank of the communicator the handle is bound to (MPI_COMM_WORLD: by world rank); point-to-point calls only (MPI_Send family and starts of persistent sends; receives count on completion), not the traffic of collectives"
            ),
            verbosity: Verbosity::UserBasic,
            class: Class::Counter,
            ty: VarType::UnsignedLongLong,
            enum_index: None,
            bind: Bind::Comm,
            readonly: false,
            continuous: false,
            atomic: true,
            category: "p2p",
            source,
        };
        let level = |name, source, desc: &str| PvarDef {
            name,
            desc: desc.to_string(),
            verbosity: Verbosity::TunerDetail,
            class: Class::Level,
            ty: VarType::UnsignedLongLong,
            enum_index: None,
            bind: Bind::NoObject,
            readonly: true,
            continuous: true,
            atomic: false,
            category: "p2p",
            source,
        };
        vec![
            traffic("p2p_messages_sent", Source::SentMsgs, "Messages sent to each peer"),
            traffic("p2p_bytes_sent", Source::SentBytes, "Bytes sent to each peer"),
            traffic(
                "p2p_messages_received",
                Source::RecvMsgs,
                "Messages received from each peer",
            ),
            traffic(
                "p2p_bytes_received",
                Source::RecvBytes,
                "Bytes received from each peer (the length of the message as received)",
            ),
            level(
                "p2p_unexpected_queue_length",
                Source::UnexpectedLen,
                "Messages that arrived before a matching receive was posted and wait for one now (all communicators, collective traffic included)",
            ),
            level(
                "p2p_posted_queue_length",
                Source::PostedLen,
                "Receives posted and not yet matched now (all communicators, collective traffic included)",
            ),
            PvarDef {
                name: "wait_blocked_time",
                desc: "Seconds MPI calls spent waiting with the CPU given up (yielding, then sleeping) once their spin phase (OXMPI_SPIN polls; none on an oversubscribed node) was over: completion calls, blocking send, receive and probe, and collective rounds that wait through the progress engine".into(),
                verbosity: Verbosity::UserBasic,
                class: Class::Timer,
                ty: VarType::Double,
                enum_index: None,
                bind: Bind::NoObject,
                readonly: false,
                continuous: false,
                atomic: true,
                category: "wait",
                source: Source::TimeBlocked,
            },
            PvarDef {
                name: "coll_algorithm_calls",
                desc: format!(
                    "Collective calls run by each point-to-point algorithm of the decision table (intracommunicators; the shared-memory path counts nothing): element i counts the algorithm of item i+1 of the enumeration {ALGORITHM_ENUM} ({ALGORITHMS} elements)"
                ),
                verbosity: Verbosity::TunerBasic,
                class: Class::Counter,
                ty: VarType::UnsignedLongLong,
                enum_index: None,
                bind: Bind::NoObject,
                readonly: false,
                continuous: false,
                atomic: true,
                category: "coll",
                source: Source::CollCalls,
            },
            PvarDef {
                name: "coll_last_algorithm",
                desc: format!(
                    "The algorithm the decision table chose for the last collective call that ran a point-to-point schedule (an item of the enumeration {ALGORITHM_ENUM}; none before the first)"
                ),
                verbosity: Verbosity::TunerBasic,
                class: Class::State,
                ty: VarType::Int,
                enum_index: Some(super::algorithm_enum_index()),
                bind: Bind::NoObject,
                readonly: true,
                continuous: true,
                atomic: false,
                category: "coll",
                source: Source::CollLast,
            },
        ]
    })
}

/// A performance-experiment session.
pub(crate) struct Session;

/// A performance-variable handle.
pub(crate) struct Handle {
    session: usize,
    var: usize,
    /// World ranks of the bound communicator's (remote) group, by rank.
    ranks: Vec<u32>,
    started: bool,
    /// Value gathered while started before the last start (or written).
    accum: Vec<u64>,
    /// The source's value at the last start (or write, or reset).
    base: Vec<u64>,
    /// The source's value when last looked at.
    seen: Vec<u64>,
}

/// A performance variable's value in its C type.
#[derive(Clone, Debug, PartialEq)]
pub enum PvarValue {
    U64(Vec<u64>),
    Double(Vec<f64>),
    Int(Vec<i32>),
}

fn def(i: i32) -> TResult<&'static PvarDef> {
    usize::try_from(i)
        .ok()
        .and_then(|i| table().get(i))
        .ok_or(TErr::InvalidIndex)
}

/// `MPI_T_pvar_get_num`.
pub fn num() -> TResult<usize> {
    super::check_initialized()?;
    Ok(table().len())
}

/// `MPI_T_pvar_get_info`.
pub fn info(i: i32) -> TResult<&'static PvarDef> {
    super::check_initialized()?;
    def(i)
}

/// `MPI_T_pvar_get_index`: the variable of that name and class.
pub fn index(name: &str, class: i32) -> TResult<usize> {
    super::check_initialized()?;
    table()
        .iter()
        .position(|p| p.name == name && p.class as i32 == class)
        .ok_or(TErr::InvalidName)
}

/// The source's value now (element per element).
fn sample(rt: &Runtime, source: Source, ranks: &[u32]) -> Vec<u64> {
    let by_rank = |f: &dyn Fn(u32) -> u64| ranks.iter().map(|&w| f(w)).collect();
    let sent = |w: u32| rt.stats.sent.get(w as usize).copied().unwrap_or_default();
    let recv = |w: u32| {
        rt.stats
            .received
            .get(w as usize)
            .copied()
            .unwrap_or_default()
    };
    match source {
        Source::SentMsgs => by_rank(&|w| sent(w).msgs),
        Source::SentBytes => by_rank(&|w| sent(w).bytes),
        Source::RecvMsgs => by_rank(&|w| recv(w).msgs),
        Source::RecvBytes => by_rank(&|w| recv(w).bytes),
        Source::UnexpectedLen => vec![rt.device.unexpected_len() as u64],
        Source::PostedLen => vec![rt.device.posted_len() as u64],
        Source::TimeBlocked => vec![rt.stats.blocked_ns],
        Source::CollCalls => rt.coll.algo_calls.to_vec(),
        Source::CollLast => vec![rt.coll.last_algo as u64],
    }
}

impl Handle {
    fn def(&self) -> &'static PvarDef {
        &table()[self.var]
    }

    /// Looks at the source (when MPI runs) and returns its value.
    fn refresh(&mut self, rt: Option<&Runtime>) -> Vec<u64> {
        if let Some(rt) = rt {
            self.seen = sample(rt, self.def().source, &self.ranks);
        }
        self.seen.clone()
    }

    fn value(&mut self, rt: Option<&Runtime>) -> Vec<u64> {
        let cur = self.refresh(rt);
        if self.def().continuous {
            return cur;
        }
        let mut v = self.accum.clone();
        if self.started {
            for ((v, c), b) in v.iter_mut().zip(&cur).zip(&self.base) {
                *v = v.wrapping_add(c.wrapping_sub(*b));
            }
        }
        v
    }

    fn start(&mut self, rt: Option<&Runtime>) {
        if !self.started {
            self.base = self.refresh(rt);
            self.started = true;
        }
    }

    fn stop(&mut self, rt: Option<&Runtime>) {
        if self.started {
            self.accum = self.value(rt);
            self.started = false;
        }
    }

    fn set(&mut self, rt: Option<&Runtime>, v: Vec<u64>) {
        self.base = self.refresh(rt);
        self.accum = v;
    }
}

fn to_c(d: &PvarDef, v: Vec<u64>) -> PvarValue {
    match d.ty {
        VarType::Double => PvarValue::Double(v.into_iter().map(|ns| ns as f64 * 1e-9).collect()),
        VarType::Int => PvarValue::Int(v.into_iter().map(|x| x as i32).collect()),
        _ => PvarValue::U64(v),
    }
}

fn from_c(d: &PvarDef, v: &PvarValue, count: usize) -> TResult<Vec<u64>> {
    let out: Vec<u64> = match (d.ty, v) {
        (VarType::Double, PvarValue::Double(x)) => x
            .iter()
            .map(|&s| {
                if s.is_finite() && s >= 0.0 {
                    Ok((s * 1e9).round() as u64)
                } else {
                    Err(TErr::Invalid)
                }
            })
            .collect::<TResult<_>>()?,
        (VarType::UnsignedLongLong, PvarValue::U64(x)) => x.clone(),
        (VarType::Int, PvarValue::Int(x)) => x.iter().map(|&i| i as u64).collect(),
        _ => return Err(TErr::Invalid),
    };
    if out.len() != count {
        return Err(TErr::Invalid);
    }
    Ok(out)
}

fn session_slot(t: &Tools, s: u64) -> TResult<usize> {
    decode(TAG_SESSION, s)
        .filter(|&i| t.sessions.get(i).is_some())
        .ok_or(TErr::InvalidSession)
}

/// The handle `h` of session `s`.
fn handle_slot(t: &Tools, s: u64, h: u64) -> TResult<usize> {
    let session = session_slot(t, s)?;
    decode(TAG_PVAR, h)
        .filter(|&i| t.pvar_handles.get(i).is_some_and(|x| x.session == session))
        .ok_or(TErr::InvalidHandle)
}

/// The handles `target` names in session `s` (every one for `MPI_T_PVAR_ALL_HANDLES`).
fn targets(t: &Tools, s: u64, target: u64) -> TResult<(Vec<usize>, bool)> {
    if target == ALL_HANDLES {
        let session = session_slot(t, s)?;
        let all = (0..t.pvar_handles.items.len())
            .filter(|&i| t.pvar_handles.get(i).is_some_and(|x| x.session == session))
            .collect();
        return Ok((all, true));
    }
    Ok((vec![handle_slot(t, s, target)?], false))
}

/// `MPI_T_pvar_session_create`.
pub fn session_create() -> TResult<u64> {
    super::with_state(|t| {
        let slot = t.sessions.insert(Session, TErr::OutOfSessions)?;
        Ok(encode(TAG_SESSION, slot))
    })
}

/// `MPI_T_pvar_session_free`: frees the session's handles too.
pub fn session_free(s: u64) -> TResult<()> {
    super::with_state(|t| {
        let slot = session_slot(t, s)?;
        for i in 0..t.pvar_handles.items.len() {
            if t.pvar_handles.get(i).is_some_and(|h| h.session == slot) {
                t.pvar_handles.remove(i);
            }
        }
        t.sessions.remove(slot);
        Ok(())
    })
}

/// `MPI_T_pvar_handle_alloc`: `comm` is the object of a variable bound to a
/// communicator (None: no valid communicator was given). Returns the handle and its
/// element count.
pub fn handle_alloc(s: u64, i: i32, comm: Option<CommId>) -> TResult<(u64, usize)> {
    with_tools(|t, rt| {
        let session = session_slot(t, s)?;
        let d = def(i)?;
        let ranks = match d.bind {
            Bind::Comm => {
                let rt = rt.as_deref().ok_or(TErr::InvalidHandle)?;
                let c = comm
                    .and_then(|c| rt.comms.get(c).ok())
                    .ok_or(TErr::InvalidHandle)?;
                c.peer_group().members().to_vec()
            }
            Bind::NoObject => Vec::new(),
        };
        let cur = match rt.as_deref() {
            Some(rt) => sample(rt, d.source, &ranks),
            None => vec![0; count_of(d, &ranks)],
        };
        let count = cur.len();
        let h = Handle {
            session,
            var: i as usize,
            ranks,
            started: d.continuous,
            accum: vec![0; count],
            base: cur.clone(),
            seen: cur,
        };
        let slot = t.pvar_handles.insert(h, TErr::OutOfHandles)?;
        Ok((encode(TAG_PVAR, slot), count))
    })
}

fn count_of(d: &PvarDef, ranks: &[u32]) -> usize {
    match d.source {
        Source::SentMsgs | Source::SentBytes | Source::RecvMsgs | Source::RecvBytes => ranks.len(),
        Source::CollCalls => ALGORITHMS,
        _ => 1,
    }
}

/// `MPI_T_pvar_handle_free`.
pub fn handle_free(s: u64, h: u64) -> TResult<()> {
    super::with_state(|t| {
        let slot = handle_slot(t, s, h)?;
        t.pvar_handles.remove(slot);
        Ok(())
    })
}

/// `MPI_T_pvar_start` (`h` may be `MPI_T_PVAR_ALL_HANDLES`: every handle of a variable
/// that is not continuous).
pub fn start(s: u64, h: u64) -> TResult<()> {
    start_stop(s, h, true)
}

/// `MPI_T_pvar_stop`.
pub fn stop(s: u64, h: u64) -> TResult<()> {
    start_stop(s, h, false)
}

fn start_stop(s: u64, h: u64, start: bool) -> TResult<()> {
    with_tools(|t, rt| {
        let (slots, all) = targets(t, s, h)?;
        let rt = rt.as_deref();
        for i in slots {
            let x = t.pvar_handles.get_mut(i).expect("listed");
            if x.def().continuous {
                if all {
                    continue;
                }
                return Err(TErr::PvarNoStartstop);
            }
            if start {
                x.start(rt)
            } else {
                x.stop(rt)
            }
        }
        Ok(())
    })
}

/// `MPI_T_pvar_read`.
pub fn read(s: u64, h: u64) -> TResult<PvarValue> {
    with_tools(|t, rt| {
        let slot = handle_slot(t, s, h)?;
        let x = t.pvar_handles.get_mut(slot).expect("checked");
        let v = x.value(rt.as_deref());
        Ok(to_c(x.def(), v))
    })
}

/// `MPI_T_pvar_write`.
pub fn write(s: u64, h: u64, v: &PvarValue) -> TResult<()> {
    with_tools(|t, rt| {
        let slot = handle_slot(t, s, h)?;
        let x = t.pvar_handles.get_mut(slot).expect("checked");
        if x.def().readonly {
            return Err(TErr::PvarNoWrite);
        }
        let v = from_c(x.def(), v, x.accum.len())?;
        x.set(rt.as_deref(), v);
        Ok(())
    })
}

/// `MPI_T_pvar_reset` (`h` may be `MPI_T_PVAR_ALL_HANDLES`: every handle of a variable
/// that is not read-only).
pub fn reset(s: u64, h: u64) -> TResult<()> {
    with_tools(|t, rt| {
        let (slots, all) = targets(t, s, h)?;
        let rt = rt.as_deref();
        for i in slots {
            let x = t.pvar_handles.get_mut(i).expect("listed");
            if x.def().readonly {
                if all {
                    continue;
                }
                return Err(TErr::PvarNoWrite);
            }
            let n = x.accum.len();
            x.set(rt, vec![0; n]);
        }
        Ok(())
    })
}

/// `MPI_T_pvar_readreset`: read and reset with nothing counted in between (both under
/// the runtime lock that every counter is bumped under).
pub fn readreset(s: u64, h: u64) -> TResult<PvarValue> {
    with_tools(|t, rt| {
        let slot = handle_slot(t, s, h)?;
        let x = t.pvar_handles.get_mut(slot).expect("checked");
        let d = x.def();
        if d.readonly {
            return Err(TErr::PvarNoWrite);
        }
        if !d.atomic {
            return Err(TErr::PvarNoAtomic);
        }
        let rt = rt.as_deref();
        let v = x.value(rt);
        let n = x.accum.len();
        x.set(rt, vec![0; n]);
        Ok(to_c(d, v))
    })
}

/// Whether session `s` is valid (for the C binding's argument order of checks).
pub fn check_session(s: u64) -> TResult<()> {
    super::with_state(|t| session_slot(t, s).map(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for p in table() {
            assert!(!p.desc.is_empty());
            if p.continuous {
                assert!(p.readonly, "{}", p.name);
            }
            if p.class == Class::State {
                assert!(p.enum_index.is_some());
            }
        }
        let e = &super::super::enums()[super::super::algorithm_enum_index()];
        assert_eq!(e.name, ALGORITHM_ENUM);
        assert_eq!(e.items.len(), ALGORITHMS + 1);
        assert_eq!(e.items[1].1, "Barrier:dissemination");
    }

    #[test]
    fn timer_values_convert_between_seconds_and_nanoseconds() {
        let d = table().iter().find(|p| p.class == Class::Timer).unwrap();
        assert_eq!(to_c(d, vec![1_500_000_000]), PvarValue::Double(vec![1.5]));
        assert_eq!(
            from_c(d, &PvarValue::Double(vec![2.0]), 1),
            Ok(vec![2_000_000_000])
        );
        assert_eq!(
            from_c(d, &PvarValue::Double(vec![-1.0]), 1),
            Err(TErr::Invalid)
        );
    }
}
