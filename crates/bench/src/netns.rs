//! `--netns`: separate hosts without Docker. Linux network namespaces joined by veth pairs
//! (iproute2, as root), made for one run and deleted when it ends.
//!
//! The benchmark process (the clients) stays in the namespace it was started in; each server,
//! router or BBMD process runs in a namespace of its own (`ip netns exec`), reached through a
//! veth pair whose other end is in the clients' namespace or in a router's namespace. Only the
//! addresses made here are used: no traffic leaves the namespaces of the run.

use std::net::Ipv4Addr;
use std::process::Command;

/// Why a namespace lab could not be made.
#[derive(Debug, thiserror::Error)]
#[error(
    "--netns: `ip {command}` failed: {detail}; network namespaces need root and iproute2 \
     (apt-get install iproute2); run without --netns, or with --processes for separate \
     processes on 127.0.0.1"
)]
pub struct NetnsError {
    command: String,
    detail: String,
}

/// A set of namespaces and links, deleted on drop.
#[derive(Debug)]
pub struct NetnsLab {
    prefix: String,
    namespaces: Vec<String>,
    /// veth ends left in the initial namespace (deleted with their peers, listed to be sure).
    root_links: Vec<String>,
}

/// Where one end of a link goes: the initial namespace (the benchmark's) or a made one.
#[derive(Clone, Copy, Debug)]
pub enum End<'a> {
    /// The namespace the benchmark runs in.
    Here,
    /// A namespace of the lab, by the name [`NetnsLab::namespace`] returned.
    In(&'a str),
}

fn ip(args: &[&str]) -> Result<(), NetnsError> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| NetnsError {
            command: args.join(" "),
            detail: e.to_string(),
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(NetnsError {
            command: args.join(" "),
            detail: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

impl NetnsLab {
    /// An empty lab; names carry the process id so that runs at once do not collide.
    pub fn new() -> Self {
        NetnsLab {
            prefix: format!("bwb{}", std::process::id()),
            namespaces: Vec::new(),
            root_links: Vec::new(),
        }
    }

    /// Makes a namespace (`role` is a short tag such as `srv`) with its loopback up.
    pub fn namespace(&mut self, role: &str) -> Result<String, NetnsError> {
        let name = format!("{}{role}", self.prefix);
        ip(&["netns", "add", &name])?;
        self.namespaces.push(name.clone());
        ip(&["-n", &name, "link", "set", "lo", "up"])?;
        Ok(name)
    }

    /// Joins `a` and `b` with a veth pair and gives each end an address in a /24.
    pub fn link(
        &mut self,
        a: (End<'_>, Ipv4Addr),
        b: (End<'_>, Ipv4Addr),
    ) -> Result<(), NetnsError> {
        let index = self.root_links.len() + self.namespaces.len();
        let (name_a, name_b) = (
            format!("{}a{index}", self.prefix),
            format!("{}b{index}", self.prefix),
        );
        ip(&[
            "link", "add", &name_a, "type", "veth", "peer", "name", &name_b,
        ])?;
        for (end, name, address) in [(a.0, &name_a, a.1), (b.0, &name_b, b.1)] {
            let cidr = format!("{address}/24");
            match end {
                End::Here => {
                    self.root_links.push(name.clone());
                    ip(&["addr", "add", &cidr, "dev", name])?;
                    ip(&["link", "set", name, "up"])?;
                }
                End::In(ns) => {
                    ip(&["link", "set", name, "netns", ns])?;
                    ip(&["-n", ns, "addr", "add", &cidr, "dev", name])?;
                    ip(&["-n", ns, "link", "set", name, "up"])?;
                }
            }
        }
        Ok(())
    }

    /// Adds one more address to the veth end of the initial namespace on `address`'s /24
    /// (the router check listens on its own address).
    pub fn add_address_here(&mut self, on: Ipv4Addr, address: Ipv4Addr) -> Result<(), NetnsError> {
        let [a, b, c, _] = on.octets();
        let [x, y, z, _] = address.octets();
        if (a, b, c) != (x, y, z) {
            return Err(NetnsError {
                command: format!("addr add {address}"),
                detail: format!("{address} is not on the /24 of {on}"),
            });
        }
        let Some(link) = self.root_links.last().cloned() else {
            return Err(NetnsError {
                command: format!("addr add {address}"),
                detail: "no link in this namespace yet".into(),
            });
        };
        ip(&["addr", "add", &format!("{address}/24"), "dev", &link])
    }

    /// `ip netns exec NAMESPACE program args...`, ready to start.
    pub fn command_in(namespace: &str, program: &std::path::Path) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", namespace]).arg(program);
        command
    }
}

impl Default for NetnsLab {
    fn default() -> Self {
        NetnsLab::new()
    }
}

impl Drop for NetnsLab {
    fn drop(&mut self) {
        for link in &self.root_links {
            let _ = ip(&["link", "del", link]);
        }
        for name in self.namespaces.iter().rev() {
            let _ = ip(&["netns", "del", name]);
        }
    }
}

/// Moves the calling thread (only it: a network namespace is per thread) into the lab's
/// namespace `namespace`, as `ip netns exec` would for a process. For a thread that serves
/// one measurement and ends: it cannot come back.
pub fn enter_on_this_thread(namespace: &str) -> Result<(), NetnsError> {
    use std::os::fd::AsRawFd;
    let path = format!("/run/netns/{namespace}");
    let error = |detail: String| NetnsError {
        command: format!("setns {path}"),
        detail,
    };
    let file = std::fs::File::open(&path).map_err(|e| error(e.to_string()))?;
    // SAFETY: setns only reads the descriptor, which `file` keeps open for the call; it
    // changes this thread's network namespace and touches no memory of ours.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc == 0 {
        Ok(())
    } else {
        Err(error(std::io::Error::last_os_error().to_string()))
    }
}

/// The broadcast address of `address`'s /24.
pub fn broadcast_24(address: Ipv4Addr) -> Ipv4Addr {
    let [a, b, c, _] = address.octets();
    Ipv4Addr::new(a, b, c, 255)
}
