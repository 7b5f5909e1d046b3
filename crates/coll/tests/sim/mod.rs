//! A simulated network that runs the schedules of all ranks of one collective call with
//! real buffers: one FIFO per (sender, receiver) pair (the tag is per call, so MPI's
//! non-overtaking rule is the whole matching rule), a seeded random choice of which
//! rank acts next, sends that complete only when matched (rendezvous; or, in eager
//! mode, at once with the data copied), and detection of deadlock, length mismatches
//! and messages left unmatched at the end.

use std::collections::VecDeque;

use oxmpi_coll::schedule::{BufRef, Local, Region, Schedule};

/// `dst = src op dst` over whole elements.
pub type OpFn = dyn Fn(&[u8], &mut [u8]);

/// One rank's buffers.
#[derive(Clone, Debug, Default)]
pub struct Bufs {
    pub send: Vec<u8>,
    pub recv: Vec<u8>,
    pub tmp: Vec<Vec<u8>>,
}

impl Bufs {
    fn slice(&self, r: Region) -> &[u8] {
        if r.len == 0 {
            return &[];
        }
        let b = match r.buf {
            BufRef::Send => &self.send,
            BufRef::Recv => &self.recv,
            BufRef::Tmp(i) => &self.tmp[i as usize],
        };
        &b[r.off..r.off + r.len]
    }

    fn slice_mut(&mut self, r: Region) -> &mut [u8] {
        if r.len == 0 {
            return &mut [];
        }
        let b = match r.buf {
            BufRef::Send => panic!("write to the send buffer"),
            BufRef::Recv => &mut self.recv,
            BufRef::Tmp(i) => &mut self.tmp[i as usize],
        };
        &mut b[r.off..r.off + r.len]
    }
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct PendingSend {
    from: usize,
    region: Region,
    /// Eager mode: the data, copied when posted.
    data: Option<Vec<u8>>,
}

struct PendingRecv {
    region: Region,
}

#[derive(Default)]
struct RankState {
    round: usize,
    posted: bool,
    outstanding: usize,
    done: bool,
}

/// What happened, for extra checks.
pub struct Trace {
    /// Step at which each rank first posted anything (or finished, if it never posted).
    pub entered: Vec<usize>,
    /// Step at which each rank finished.
    pub finished: Vec<usize>,
    pub messages: usize,
}

/// Runs one collective. `bufs[i].tmp` is (re)allocated from the schedule, filled with junk.
pub fn run(
    scheds: &[Schedule],
    bufs: &mut [Bufs],
    op: &OpFn,
    seed: u64,
    eager: bool,
) -> Result<Trace, String> {
    let n = scheds.len();
    let mut rng = Rng(seed);
    for (i, (s, b)) in scheds.iter().zip(bufs.iter_mut()).enumerate() {
        b.tmp = s
            .tmp_sizes()
            .iter()
            .map(|&len| (0..len).map(|k| (k * 31 + i * 7 + 0x5a) as u8).collect())
            .collect();
    }
    let mut st: Vec<RankState> = (0..n).map(|_| RankState::default()).collect();
    let mut sends: Vec<VecDeque<PendingSend>> = (0..n * n).map(|_| VecDeque::new()).collect();
    let mut recvs: Vec<VecDeque<PendingRecv>> = (0..n * n).map(|_| VecDeque::new()).collect();
    let mut trace = Trace {
        entered: vec![usize::MAX; n],
        finished: vec![0; n],
        messages: 0,
    };
    for (i, s) in scheds.iter().enumerate() {
        if s.round_count() == 0 {
            st[i].done = true;
            trace.entered[i] = 0;
        }
    }
    let mut step = 0usize;
    let mut ready = Vec::with_capacity(n);
    loop {
        step += 1;
        ready.clear();
        ready.extend((0..n).filter(|&i| !st[i].done && (!st[i].posted || st[i].outstanding == 0)));
        if ready.is_empty() {
            if st.iter().all(|s| s.done) {
                break;
            }
            let stuck: Vec<String> = (0..n)
                .filter(|&i| !st[i].done)
                .map(|i| {
                    format!(
                        "rank {i} in round {} ({} outstanding)",
                        st[i].round, st[i].outstanding
                    )
                })
                .collect();
            return Err(format!("deadlock: {}", stuck.join("; ")));
        }
        let me = ready[rng.below(ready.len())];
        let round = scheds[me].round(st[me].round);
        if !st[me].posted {
            trace.entered[me] = trace.entered[me].min(step);
            st[me].posted = true;
            for x in round.recvs {
                let peer = x.peer as usize;
                if peer >= n {
                    return Err(format!("rank {me} receives from rank {peer} of {n}"));
                }
                recvs[peer * n + me].push_back(PendingRecv { region: x.region });
                st[me].outstanding += 1;
            }
            for x in round.sends {
                let peer = x.peer as usize;
                if peer >= n {
                    return Err(format!("rank {me} sends to rank {peer} of {n}"));
                }
                let data = eager.then(|| bufs[me].slice(x.region).to_vec());
                if !eager {
                    st[me].outstanding += 1;
                }
                sends[me * n + peer].push_back(PendingSend {
                    from: me,
                    region: x.region,
                    data,
                });
            }
            // Match everything that can be matched now.
            let mut pairs: Vec<usize> = round
                .recvs
                .iter()
                .map(|x| x.peer as usize * n + me)
                .collect();
            pairs.extend(round.sends.iter().map(|x| me * n + x.peer as usize));
            for p in pairs {
                while !sends[p].is_empty() && !recvs[p].is_empty() {
                    let s = sends[p].pop_front().unwrap();
                    let r = recvs[p].pop_front().unwrap();
                    let (src, dst) = (p / n, p % n);
                    if s.region.len != r.region.len {
                        return Err(format!(
                            "length mismatch: rank {src} sends {} bytes, rank {dst} receives {}",
                            s.region.len, r.region.len
                        ));
                    }
                    let data = match s.data {
                        Some(d) => d,
                        None => bufs[s.from].slice(s.region).to_vec(),
                    };
                    bufs[dst].slice_mut(r.region).copy_from_slice(&data);
                    st[dst].outstanding -= 1;
                    if !eager {
                        st[src].outstanding -= 1;
                    }
                    trace.messages += 1;
                }
            }
        } else {
            for l in round.locals {
                match *l {
                    Local::Copy { src, dst } => {
                        let d = bufs[me].slice(src).to_vec();
                        bufs[me].slice_mut(dst).copy_from_slice(&d);
                    }
                    Local::Reduce { src, dst } => {
                        let d = bufs[me].slice(src).to_vec();
                        op(&d, bufs[me].slice_mut(dst));
                    }
                }
            }
            st[me].posted = false;
            st[me].round += 1;
            if st[me].round == scheds[me].round_count() {
                st[me].done = true;
                trace.finished[me] = step;
            }
        }
    }
    let left: usize =
        sends.iter().map(|q| q.len()).sum::<usize>() + recvs.iter().map(|q| q.len()).sum::<usize>();
    if left > 0 {
        return Err(format!("{left} messages left unmatched"));
    }
    Ok(trace)
}
