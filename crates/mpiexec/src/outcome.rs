//! Why a job ended early, the one message mpiexec prints about it, and the exit status
//! that goes with it. Pure functions, no I/O.

/// How a rank process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    Exited(i32),
    Signaled(i32),
}

/// The first abnormal event of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A rank exited non-zero, or exited after PMI init without PMI finalize.
    RankExited {
        rank: u32,
        pid: i32,
        code: i32,
        before_finalize: bool,
    },
    /// A rank was killed by a signal.
    RankSignaled { rank: u32, pid: i32, signal: i32 },
    /// A rank called MPI_Abort (PMI abort).
    Aborted {
        rank: Option<u32>,
        code: i32,
        message: String,
    },
    /// A rank sent malformed or unknown PMI data.
    Protocol { rank: u32, pid: i32, reason: String },
    /// A rank exited while the others wait for it inside a PMI fence.
    FenceAbandoned {
        rank: u32,
        pid: i32,
        how: Termination,
    },
    /// `--timeout` expired.
    Timeout { secs: u64 },
    /// mpiexec itself received a signal.
    Interrupted { signal: i32 },
    /// A rank could not be started.
    LaunchFailed {
        rank: u32,
        program: String,
        error: String,
    },
    /// The proxy of a host (or the host) went away while ranks ran there.
    HostLost {
        host: String,
        reason: String,
        ranks: Vec<u32>,
    },
    /// Proxies could not be started or did not connect.
    ProxyStart { host: String, error: String },
    /// A job this job spawned (`MPI_Comm_spawn`) failed.
    SpawnedJobFailed { kvsname: String, how: Termination },
}

/// `SIGKILL`-style name of a signal number.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

fn describe(how: Termination) -> String {
    match how {
        Termination::Exited(c) => format!("exited with code {c}"),
        Termination::Signaled(s) => format!("was killed by signal {s} ({})", signal_name(s)),
    }
}

/// Classifies a rank's end. `None` if it was normal: code 0 and either PMI finalized or
/// PMI never initialized (a non-MPI program).
pub fn judge_exit(
    rank: u32,
    pid: i32,
    how: Termination,
    initialized: bool,
    finalized: bool,
) -> Option<Cause> {
    match how {
        Termination::Signaled(signal) => Some(Cause::RankSignaled { rank, pid, signal }),
        Termination::Exited(code) => {
            let before_finalize = initialized && !finalized;
            (code != 0 || before_finalize).then_some(Cause::RankExited {
                rank,
                pid,
                code,
                before_finalize,
            })
        }
    }
}

impl Cause {
    /// The single line printed to stderr (without the trailing newline).
    pub fn message(&self) -> String {
        let body = match self {
            Cause::RankExited {
                rank,
                pid,
                code,
                before_finalize,
            } => {
                let when = if *before_finalize {
                    " before MPI_Finalize"
                } else {
                    ""
                };
                format!("rank {rank} (pid {pid}) exited with code {code}{when}")
            }
            Cause::RankSignaled { rank, pid, signal } => format!(
                "rank {rank} (pid {pid}) {}",
                describe(Termination::Signaled(*signal))
            ),
            Cause::Aborted {
                rank,
                code,
                message,
            } => {
                let who = rank.map_or_else(|| "a process".to_owned(), |r| format!("rank {r}"));
                if message.is_empty() {
                    format!("{who} called MPI_Abort(code {code})")
                } else {
                    format!("{who} called MPI_Abort(code {code}): {message}")
                }
            }
            Cause::Protocol { rank, pid, reason } => {
                format!("rank {rank} (pid {pid}) broke the PMI protocol: {reason}")
            }
            Cause::FenceAbandoned { rank, pid, how } => format!(
                "rank {rank} (pid {pid}) {} while the other ranks wait for it in a PMI fence",
                describe(*how)
            ),
            Cause::Timeout { secs } => format!("timeout after {secs} s"),
            Cause::Interrupted { signal } => {
                format!("received signal {signal} ({})", signal_name(*signal))
            }
            Cause::LaunchFailed {
                rank,
                program,
                error,
            } => format!("cannot start rank {rank} ({program}): {error}"),
            Cause::HostLost {
                host,
                reason,
                ranks,
            } => {
                let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
                format!(
                    "lost the proxy on host {host} ({reason}) while rank(s) {} ran there",
                    list.join(",")
                )
            }
            Cause::ProxyStart { host, error } => {
                format!("cannot start the proxy on host {host}: {error}")
            }
            Cause::SpawnedJobFailed { kvsname, how } => {
                format!(
                    "the spawned job {kvsname} failed (its mpiexec {})",
                    describe(*how)
                )
            }
        };
        format!("mpiexec: {body}; terminating the job")
    }

    /// mpiexec's exit status for this cause (never 0).
    pub fn exit_code(&self) -> i32 {
        let nonzero = |c: i32| if c & 0xff == 0 { 1 } else { c & 0xff };
        match self {
            Cause::RankExited { code, .. } => nonzero(*code),
            Cause::RankSignaled { signal, .. } => 128 + signal,
            Cause::Aborted { code, .. } => nonzero(*code),
            Cause::Protocol { .. } => 1,
            Cause::FenceAbandoned { how, .. } => match how {
                Termination::Exited(c) => nonzero(*c),
                Termination::Signaled(s) => 128 + s,
            },
            Cause::Timeout { .. } => 124,
            Cause::Interrupted { signal } => 128 + signal,
            Cause::LaunchFailed { .. } => 2,
            Cause::HostLost { .. } => 1,
            Cause::ProxyStart { .. } => 2,
            Cause::SpawnedJobFailed { how, .. } => match how {
                Termination::Exited(c) => nonzero(*c),
                Termination::Signaled(s) => 128 + s,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_exits() {
        assert_eq!(judge_exit(0, 1, Termination::Exited(0), true, true), None);
        assert_eq!(judge_exit(0, 1, Termination::Exited(0), false, false), None);
    }

    #[test]
    fn messages_and_codes() {
        let c = judge_exit(2, 4242, Termination::Signaled(9), true, false).unwrap();
        assert_eq!(
            c.message(),
            "mpiexec: rank 2 (pid 4242) was killed by signal 9 (SIGKILL); terminating the job"
        );
        assert_eq!(c.exit_code(), 137);

        let c = judge_exit(0, 7, Termination::Exited(0), true, false).unwrap();
        assert_eq!(
            c.message(),
            "mpiexec: rank 0 (pid 7) exited with code 0 before MPI_Finalize; terminating the job"
        );
        assert_eq!(c.exit_code(), 1);

        let c = judge_exit(3, 8, Termination::Exited(5), false, false).unwrap();
        assert_eq!(
            c.message(),
            "mpiexec: rank 3 (pid 8) exited with code 5; terminating the job"
        );
        assert_eq!(c.exit_code(), 5);

        let c = Cause::Aborted {
            rank: Some(1),
            code: 3,
            message: "bad input".into(),
        };
        assert_eq!(
            c.message(),
            "mpiexec: rank 1 called MPI_Abort(code 3): bad input; terminating the job"
        );
        assert_eq!(c.exit_code(), 3);
        let c = Cause::Aborted {
            rank: Some(1),
            code: 0,
            message: String::new(),
        };
        assert_eq!(
            c.message(),
            "mpiexec: rank 1 called MPI_Abort(code 0); terminating the job"
        );
        assert_eq!(c.exit_code(), 1);
        assert_eq!(
            Cause::Aborted {
                rank: None,
                code: 256,
                message: String::new()
            }
            .exit_code(),
            1
        );
        assert_eq!(
            Cause::Aborted {
                rank: None,
                code: -1,
                message: String::new()
            }
            .exit_code(),
            255
        );

        let c = Cause::Timeout { secs: 3 };
        assert_eq!(
            c.message(),
            "mpiexec: timeout after 3 s; terminating the job"
        );
        assert_eq!(c.exit_code(), 124);
        assert_eq!(Cause::Interrupted { signal: 2 }.exit_code(), 130);
        assert!(Cause::Interrupted { signal: 15 }
            .message()
            .contains("SIGTERM"));
        let c = Cause::FenceAbandoned {
            rank: 1,
            pid: 9,
            how: Termination::Exited(0),
        };
        assert!(c.message().contains("wait for it in a PMI fence"));
        assert_eq!(c.exit_code(), 1);
    }
}
