//! MPI-4 sessions (MPI-4.1 section 11.3): the session table, process sets, groups
//! from process sets, and communicators made from a group without a parent
//! communicator (`MPI_Comm_create_from_group`, `MPI_Intercomm_create_from_groups`).
//!
//! A session holds a reference on the runtime ([`runtime::open_session`]): the first
//! session starts it when nothing else did, the world model and sessions share it, and
//! the last user leaves it (see the module doc of [`crate::runtime`]). A session does
//! not make `MPI_COMM_WORLD` or `MPI_COMM_SELF` valid; only `MPI_Init` does.
//!
//! Process sets: `mpi://WORLD` (every process of the job), `mpi://SELF` (this process)
//! and `mpix://SHARED` (the processes on this node, as `MPI_COMM_TYPE_SHARED` groups
//! them; the name Open MPI uses for that set). Each has the info key `mpi_size`.
//! Groups name processes by world rank, like every group of the engine, so groups from
//! sessions and from the world model can be compared and combined.
//!
//! Agreement without a parent communicator: a communicator from a group needs a
//! context id free at every member, agreed by the members alone. They run the usual
//! mask agreement (`commops::agree_all`, through the lowest member) on
//! `MPI_COMM_WORLD`'s collective context (id 1) with envelopes whose source is the
//! world rank. That context belongs to the job whether or not the world model runs
//! (its slot is never handed to another communicator, `context::local_mask`), and the
//! tags are from communicator management's reserved block (`internal_coll`), derived
//! from a hash of the string tag; each member also sends the string tag and the group,
//! and the root refuses a mismatch. Calls that run at the same time on overlapping
//! groups must use different string tags, as the standard requires; two different
//! tags whose 20-bit hashes collide, used at once on overlapping groups, can get each
//! other's messages (the mismatch check then fails the calls rather than mixing them).

use crate::comm::{Comm, CommId, Errhandler, Group};
use crate::context::{self, Mask};
use crate::errhandler;
use crate::error::{err, Error, ErrorClass, Result};
use crate::internal_coll::{self as ic, Member, Reader, Team, Writer};
use crate::runtime::{self, ThreadLevel};
use std::sync::{Arc, Mutex, MutexGuard};

/// Index of a session in the table.
pub type SessionId = u32;

/// The process set of every process of the job.
pub const PSET_WORLD: &str = "mpi://WORLD";
/// The process set of this process alone.
pub const PSET_SELF: &str = "mpi://SELF";
/// The process set of the processes on this node.
pub const PSET_SHARED: &str = "mpix://SHARED";
/// The process sets every session lists, in order.
pub const PSETS: [&str; 3] = [PSET_WORLD, PSET_SELF, PSET_SHARED];

/// `MPI_MAX_PSET_NAME_LEN`: process set names are shorter (with their NUL, at most).
pub const MAX_PSET_NAME: usize = 256;
/// `MPI_MAX_STRINGTAG_LEN`: string tags are shorter (with their NUL, at most).
pub const MAX_STRINGTAG: usize = 256;

/// The collective context of `MPI_COMM_WORLD`, on which group members agree.
const AGREE_CTX: u32 = 1;

struct Session {
    errhandler: Errhandler,
    thread_level: ThreadLevel,
}

static TABLE: Mutex<Vec<Option<Session>>> = Mutex::new(Vec::new());

fn table() -> MutexGuard<'static, Vec<Option<Session>>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn invalid(id: SessionId) -> Error {
    Error::new(
        ErrorClass::Session,
        format!("invalid session (index {id}: finalized or never created)"),
    )
}

fn check_handler(e: Errhandler) -> Result<()> {
    match e {
        Errhandler::User(i) if !errhandler::is_live(i) => err(
            ErrorClass::Arg,
            format!("invalid error handler (user handler {i} was freed)"),
        ),
        _ => Ok(()),
    }
}

/// `MPI_Session_init`: opens a session asking for thread support `required` with
/// error handler `errhandler` (starting the runtime if nothing runs yet).
pub fn init(required: ThreadLevel, errhandler: Errhandler) -> Result<SessionId> {
    check_handler(errhandler)?;
    let thread_level = runtime::open_session(required)?;
    errhandler::retain(errhandler);
    let s = Session {
        errhandler,
        thread_level,
    };
    let mut t = table();
    let i = match t.iter().position(|s| s.is_none()) {
        Some(i) => {
            t[i] = Some(s);
            i
        }
        None => {
            t.push(Some(s));
            t.len() - 1
        }
    };
    Ok(i as SessionId)
}

/// `MPI_Session_finalize`: closes the session. The program must have freed the
/// communicators it made from the session's groups (the standard makes the call
/// erroneous otherwise); the runtime stays up for other users.
pub fn finalize(id: SessionId) -> Result<()> {
    let s = table()
        .get_mut(id as usize)
        .and_then(|s| s.take())
        .ok_or_else(|| invalid(id))?;
    // A buffer attached to the session is detached, once its messages have left.
    runtime::block_on(|rt| Ok(crate::p2p_mpi4::session_buffer_drained(rt, id).then_some(())))?;
    // The last user of the runtime lets buffered sends and queued packets leave
    // before the runtime goes dormant (the exit hook only says goodbye to the job).
    // Earlier, they belong to models that are still running and drain later.
    if runtime::last_user() {
        runtime::block_on(|rt| {
            let drained = crate::p2p_mpi4::drained(rt);
            Ok((drained && !rt.device.bsend.busy() && !rt.device.has_outgoing()).then_some(()))
        })?;
    }
    errhandler::release(s.errhandler);
    runtime::close_session();
    Ok(())
}

/// Fails with `MPI_ERR_SESSION` unless `id` names an open session.
pub fn check(id: SessionId) -> Result<()> {
    match table().get(id as usize) {
        Some(Some(_)) => Ok(()),
        _ => Err(invalid(id)),
    }
}

/// The handler of session `id` (None when it is not open).
pub fn errhandler_of(id: SessionId) -> Option<Errhandler> {
    table()
        .get(id as usize)
        .and_then(|s| s.as_ref())
        .map(|s| s.errhandler)
}

/// `MPI_Session_set_errhandler`.
pub fn set_errhandler(id: SessionId, e: Errhandler) -> Result<()> {
    check_handler(e)?;
    let old = {
        let mut t = table();
        let s = t
            .get_mut(id as usize)
            .and_then(|s| s.as_mut())
            .ok_or_else(|| invalid(id))?;
        errhandler::retain(e);
        std::mem::replace(&mut s.errhandler, e)
    };
    errhandler::release(old);
    Ok(())
}

/// `MPI_Session_get_errhandler`: a new reference for the caller.
pub fn get_errhandler(id: SessionId) -> Result<Errhandler> {
    let e = errhandler_of(id).ok_or_else(|| invalid(id))?;
    errhandler::retain(e);
    Ok(e)
}

/// The thread support level of session `id`.
pub fn thread_level(id: SessionId) -> Result<ThreadLevel> {
    table()
        .get(id as usize)
        .and_then(|s| s.as_ref())
        .map(|s| s.thread_level)
        .ok_or_else(|| invalid(id))
}

/// `MPI_Session_get_info`: the hints in use, as (key, value) pairs.
pub fn info(id: SessionId) -> Result<Vec<(String, String)>> {
    let level = thread_level(id)?;
    Ok(vec![("thread_level".into(), level.name().into())])
}

/// `MPI_Session_get_num_psets` / `MPI_Session_get_nth_pset`: the process sets.
pub fn psets(id: SessionId) -> Result<&'static [&'static str]> {
    check(id)?;
    Ok(&PSETS)
}

/// The members (world ranks) of process set `name` (`MPI_ERR_ARG` for a name that
/// is no process set).
pub fn pset_members(id: SessionId, name: &str) -> Result<Vec<u32>> {
    check(id)?;
    runtime::with(|rt| {
        Ok(match name {
            PSET_WORLD => (0..rt.world_size).collect(),
            PSET_SELF => vec![rt.world_rank],
            PSET_SHARED => rt.node_ranks.clone(),
            _ => {
                return err(
                    ErrorClass::Arg,
                    format!(
                        "unknown process set {name:?} (the sets are {})",
                        PSETS.join(", ")
                    ),
                )
            }
        })
    })
}

/// `MPI_Session_get_pset_info`: the info of process set `name` (`mpi_size`).
pub fn pset_info(id: SessionId, name: &str) -> Result<Vec<(String, String)>> {
    let n = pset_members(id, name)?.len();
    Ok(vec![("mpi_size".into(), n.to_string())])
}

/// `MPI_Group_from_session_pset`.
pub fn group_from_pset(id: SessionId, name: &str) -> Result<Group> {
    Ok(Group::new(pset_members(id, name)?).in_session(Some(id)))
}

// ----- communicators from groups ----------------------------------------------------------

/// FNV-1a of the string tag, folded to the bits a reserved tag carries.
fn tag_hash(stringtag: &str) -> i32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in stringtag.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 20)) as i32
}

fn check_stringtag(stringtag: &str) -> Result<()> {
    if stringtag.len() >= MAX_STRINGTAG {
        return err(
            ErrorClass::Arg,
            format!(
                "stringtag is {} bytes long (at most MPI_MAX_STRINGTAG_LEN - 1 = {})",
                stringtag.len(),
                MAX_STRINGTAG - 1
            ),
        );
    }
    Ok(())
}

fn my_world() -> Result<u32> {
    runtime::with(|rt| Ok(rt.world_rank))
}

/// Members of `g` as envelope sources on the agreement context: their world ranks.
fn team(g: &Group, me: usize, tag: i32, root: usize) -> Team {
    Team {
        ctx: AGREE_CTX,
        tag,
        members: g
            .members()
            .iter()
            .map(|&w| Member {
                world: w,
                id: w as i32,
            })
            .collect(),
        me,
        root,
    }
}

/// What every member contributes besides its mask: the string tag and the groups, so
/// the root can refuse members that disagree (or a stray message of another call).
fn call_payload(stringtag: &str, groups: &[&Group]) -> Vec<u8> {
    let mut w = Writer::default();
    w.bytes(stringtag.as_bytes());
    for g in groups {
        w.u32s(g.members());
    }
    w.finish()
}

fn install(
    ctx: u32,
    group: Arc<Group>,
    remote: Option<Arc<Group>>,
    errhandler: Errhandler,
) -> Result<CommId> {
    let session = group.session();
    runtime::with(|rt| {
        let rank = group.rank_of_world(rt.world_rank).ok_or_else(|| {
            Error::new(
                ErrorClass::Intern,
                "the new communicator does not contain this process",
            )
        })?;
        Ok(rt.comms.insert(Comm {
            ctx,
            rank,
            group,
            remote,
            errhandler,
            name: String::new(),
            attrs: Default::default(),
            topo: None,
            hints: Default::default(),
            session,
        }))
    })
}

fn position(g: &Group, me: u32, what: &str) -> Result<usize> {
    if g.size() == 0 {
        return err(ErrorClass::Group, format!("{what} is empty"));
    }
    g.rank_of_world(me).map(|r| r as usize).ok_or_else(|| {
        Error::new(
            ErrorClass::Group,
            format!("the calling process (world rank {me}) is not a member of {what}"),
        )
    })
}

/// `MPI_Comm_create_from_group`: collective over the members of `group` only; the new
/// communicator gets `errhandler`.
pub fn comm_create_from_group(
    group: &Group,
    stringtag: &str,
    errhandler: Errhandler,
) -> Result<CommId> {
    check_stringtag(stringtag)?;
    check_handler(errhandler)?;
    let me = my_world()?;
    let pos = position(group, me, "the group")?;
    let t = team(group, pos, ic::from_group_tag(tag_hash(stringtag)), 0);
    let mine = call_payload(stringtag, &[group]);
    let (ctx, all, _held) = crate::commops::agree_all(&t, mine.clone())?;
    if let Some(i) = all.iter().position(|p| *p != mine) {
        return err(
            ErrorClass::Arg,
            format!(
                "the members disagree: world rank {} gave another stringtag or group than {stringtag:?} and this group",
                group.members()[i]
            ),
        );
    }
    install(ctx, Arc::new(group.clone()), None, errhandler)
}

/// `MPI_Intercomm_create_from_groups`: collective over both groups; the leaders
/// exchange the groups and agree on a context id free at every member of both.
pub fn intercomm_create_from_groups(
    local: &Group,
    local_leader: i32,
    remote: &Group,
    remote_leader: i32,
    stringtag: &str,
    errhandler: Errhandler,
) -> Result<CommId> {
    check_stringtag(stringtag)?;
    check_handler(errhandler)?;
    let me = my_world()?;
    let pos = position(local, me, "local_group")?;
    if !(0..local.size()).contains(&local_leader) {
        return err(
            ErrorClass::Rank,
            format!(
                "invalid local_leader {local_leader} (local_group size {})",
                local.size()
            ),
        );
    }
    let Some(rw) = remote.world_of(remote_leader) else {
        return err(
            ErrorClass::Rank,
            format!(
                "invalid remote_leader {remote_leader} (remote_group size {})",
                remote.size()
            ),
        );
    };
    if let Some(w) = local
        .members()
        .iter()
        .find(|w| remote.rank_of_world(**w).is_some())
    {
        return err(
            ErrorClass::Group,
            format!("local_group and remote_group overlap (world rank {w} is in both)"),
        );
    }
    let h = tag_hash(stringtag);
    let t = team(
        local,
        pos,
        ic::from_groups_local_tag(h),
        local_leader as usize,
    );
    let mut w = Writer::default();
    let (mask, _held) = crate::commops::held_mask()?;
    w.bytes(&mask.encode());
    w.bytes(&call_payload(stringtag, &[local, remote]));
    let all = t.gather(w.finish())?;
    let outcome = all.map(|all| {
        let r = (|| {
            let mine = call_payload(stringtag, &[local, remote]);
            let mut m = Mask::full();
            for (i, b) in all.iter().enumerate() {
                let mut r = Reader::new(b);
                m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
                if r.bytes()? != mine.as_slice() {
                    return err(
                        ErrorClass::Arg,
                        format!(
                            "the members disagree: world rank {} gave another stringtag or groups",
                            local.members()[i]
                        ),
                    );
                }
            }
            let mut x = Writer::default();
            x.bytes(&m.encode()).u32s(local.members()).u32s(remote.members());
            let theirs = ic::swap(
                Member {
                    world: rw,
                    id: rw as i32,
                },
                me as i32,
                AGREE_CTX,
                ic::from_groups_leaders_tag(h),
                x.finish(),
            )?;
            let mut r = Reader::new(&theirs);
            m.and(&Mask::decode(r.bytes()?).ok_or_else(malformed)?);
            let (their_local, their_remote) = (r.u32s()?, r.u32s()?);
            if their_local != remote.members() || their_remote != local.members() {
                return err(
                    ErrorClass::Arg,
                    "the two leaders disagree on the groups (each side's remote_group must be the other's local_group)",
                );
            }
            let mut o = Writer::default();
            o.u32(context::choose(&m)?);
            Ok(o.finish())
        })();
        ic::encode_outcome(&r)
    });
    let b = t.bcast(outcome)?;
    let body = ic::decode_outcome(&b)?;
    let ctx = Reader::new(&body).u32()?;
    install(
        ctx,
        Arc::new(local.clone()),
        Some(Arc::new(remote.clone())),
        errhandler,
    )
}

fn malformed() -> Error {
    Error::new(
        ErrorClass::Intern,
        "malformed communicator-management message from a peer",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_hashes_differ_and_are_stable() {
        assert_eq!(tag_hash("a"), tag_hash("a"));
        assert_ne!(tag_hash("a"), tag_hash("b"));
        assert_ne!(tag_hash(""), tag_hash("org.example.lib"));
    }

    #[test]
    fn payload_names_tag_and_groups() {
        let g = Group::new(vec![0, 2]);
        let h = Group::new(vec![1]);
        assert_ne!(call_payload("x", &[&g]), call_payload("y", &[&g]));
        assert_ne!(call_payload("x", &[&g]), call_payload("x", &[&h]));
        assert_eq!(call_payload("x", &[&g, &h]), call_payload("x", &[&g, &h]));
    }

    #[test]
    fn bad_arguments() {
        assert_eq!(
            check_stringtag(&"t".repeat(MAX_STRINGTAG))
                .unwrap_err()
                .class,
            ErrorClass::Arg
        );
        check_stringtag(&"t".repeat(MAX_STRINGTAG - 1)).unwrap();
        assert_eq!(check(12345).unwrap_err().class, ErrorClass::Session);
        assert_eq!(
            position(&Group::new(vec![]), 0, "the group")
                .unwrap_err()
                .class,
            ErrorClass::Group
        );
        assert_eq!(
            position(&Group::new(vec![1, 2]), 0, "the group")
                .unwrap_err()
                .class,
            ErrorClass::Group
        );
    }
}
