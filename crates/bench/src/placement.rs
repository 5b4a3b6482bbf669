//! Where benchmark threads run. On these small virtual machines a request/response loop
//! between two threads is several times faster when both share one core than when each wakes
//! the other across cores, so the placement is a reported parameter, never left implicit.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Thread placement for a client/server pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Let the scheduler choose (what a user's deployment usually gets).
    #[default]
    Free,
    /// Pin client and server to the same core (core 0).
    SameCore,
    /// Pin the server to core 0 and the client to core 1.
    SplitCores,
}

/// Which side of the pair a thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The answering thread.
    Server,
    /// The requesting thread.
    Client,
}

impl Placement {
    /// Pins the calling thread according to this placement. Returns false when pinning was
    /// asked for but the operating system refused (for example, fewer cores than needed).
    pub fn apply(self, side: Side) -> bool {
        let core = match (self, side) {
            (Placement::Free, _) => return true,
            (Placement::SameCore, _) | (Placement::SplitCores, Side::Server) => 0,
            (Placement::SplitCores, Side::Client) => 1,
        };
        pin_current_thread(core)
    }
}

#[cfg(target_os = "linux")]
fn pin_current_thread(core: usize) -> bool {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it, and
    // sched_setaffinity(0, ...) applies to the calling thread with a correctly sized set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_current_thread(_core: usize) -> bool {
    false
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Placement::Free => "free",
            Placement::SameCore => "same-core",
            Placement::SplitCores => "split-cores",
        })
    }
}

impl FromStr for Placement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "free" => Ok(Placement::Free),
            "same-core" => Ok(Placement::SameCore),
            "split-cores" => Ok(Placement::SplitCores),
            other => Err(format!(
                "unknown placement `{other}`: use free, same-core or split-cores"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in [Placement::Free, Placement::SameCore, Placement::SplitCores] {
            assert_eq!(p.to_string().parse::<Placement>(), Ok(p));
        }
        assert!("sideways".parse::<Placement>().is_err());
    }

    #[test]
    fn pinning_to_core_zero_works_on_linux() {
        let handle = std::thread::spawn(|| Placement::SameCore.apply(Side::Client));
        let pinned = handle.join().unwrap();
        assert_eq!(pinned, cfg!(target_os = "linux"));
    }
}
