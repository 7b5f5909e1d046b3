//! Valgrind client requests that tell DRD and Helgrind which hand-offs between threads
//! order memory (feature `valgrind`, off by default; without it the calls are empty).
//! The tools know pthread's primitives only; the runtime lock is an atomic flag, so
//! without these every access under it from two threads would be reported as a race.
//!
//! The one request used, "happens before / after an object", has the same number in
//! `drd.h` (`ANNOTATE_HAPPENS_BEFORE`) and `helgrind.h` (`USERSO_SEND_PRE`).

/// `VG_USERREQ__DRD_ANNOTATE_HAPPENS_BEFORE` (= Helgrind's `_VG_USERREQ__HG_USERSO_SEND_PRE`).
#[cfg(all(feature = "valgrind", target_arch = "x86_64"))]
const HAPPENS_BEFORE: usize = 0x4847_0121;
/// `VG_USERREQ__DRD_ANNOTATE_HAPPENS_AFTER` (= `_VG_USERREQ__HG_USERSO_RECV_POST`).
#[cfg(all(feature = "valgrind", target_arch = "x86_64"))]
const HAPPENS_AFTER: usize = 0x4847_0122;

/// Valgrind's client request: a no-op sequence on a real CPU, a call into the tool
/// under Valgrind.
#[cfg(all(feature = "valgrind", target_arch = "x86_64"))]
#[inline(always)]
fn request(code: usize, arg: usize) {
    let args: [usize; 6] = [code, arg, 0, 0, 0, 0];
    let mut res: usize = 0;
    // SAFETY: the rotations sum to 128 bits (rdi unchanged) and `xchg rbx, rbx` changes
    // nothing; Valgrind recognises the sequence and reads the six words at rax (alive
    // for the statement), writing its answer to rdx.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
            inout("rdx") res,
            in("rax") args.as_ptr(),
            options(nostack, preserves_flags),
        );
    }
    let _ = res;
}

/// Everything this thread did so far happens before what a thread does after
/// [`happens_after`] on the same object.
#[inline(always)]
pub(crate) fn happens_before(obj: *const u8) {
    #[cfg(all(feature = "valgrind", target_arch = "x86_64"))]
    request(HAPPENS_BEFORE, obj as usize);
    let _ = obj;
}

/// See [`happens_before`].
#[inline(always)]
pub(crate) fn happens_after(obj: *const u8) {
    #[cfg(all(feature = "valgrind", target_arch = "x86_64"))]
    request(HAPPENS_AFTER, obj as usize);
    let _ = obj;
}
