//! Issue 30, item 2: a B/IP device bound to an address of a subnet smaller than /24 takes
//! its broadcast address from the interface's netmask. Inside a network namespace made for
//! the test (root and iproute2 needed; otherwise the test prints why and passes), a veth
//! pair holds 10.99.0.1/28 and 10.99.0.2/28; the device binds 10.99.0.1:47808 (before the
//! fix its broadcast socket went to 10.99.0.255, which no interface holds: "cannot bind"),
//! and a Who-Is sent to 10.99.0.15, the /28's broadcast, is answered. No traffic leaves the
//! namespace.

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;
#[allow(dead_code)]
mod raw_support;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::Duration;

use buildwire_bacnet::driver::{BacnetServer, BacnetServerConfig, BipConfig};

const DEVICE: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 2);
const BROADCAST_28: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 15);

/// Runs `ip ARGS`, giving its error text on failure.
fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A namespace deleted on drop (with the veth pair inside it).
struct Namespace(String);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.0]);
    }
}

fn make_namespace() -> Result<Namespace, String> {
    let name = format!("bwbip{}", std::process::id());
    ip(&["netns", "add", &name])?;
    let namespace = Namespace(name);
    let n = namespace.0.as_str();
    ip(&[
        "-n", n, "link", "add", "bwa", "type", "veth", "peer", "name", "bwb",
    ])?;
    ip(&["-n", n, "addr", "add", "10.99.0.1/28", "dev", "bwa"])?;
    ip(&["-n", n, "addr", "add", "10.99.0.2/28", "dev", "bwb"])?;
    for link in ["lo", "bwa", "bwb"] {
        ip(&["-n", n, "link", "set", link, "up"])?;
    }
    Ok(namespace)
}

/// Moves this thread (only it) into the namespace.
fn enter(namespace: &Namespace) -> Result<(), String> {
    let path = format!("/run/netns/{}", namespace.0);
    let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    // SAFETY: setns reads the descriptor `file` keeps open for the call and changes this
    // thread's network namespace; no memory of ours is touched.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("setns {path}: {}", std::io::Error::last_os_error()))
    }
}

#[test]
fn a_device_on_a_28_broadcasts_to_the_subnet_of_its_netmask() {
    let namespace = match make_namespace() {
        Ok(namespace) => namespace,
        Err(reason) => {
            println!("skipped: no network namespace can be made here ({reason})");
            return;
        }
    };
    let outcome = std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<(), String> {
                enter(&namespace)?;
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                runtime.block_on(exercise());
                Ok(())
            })
            .join()
    });
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(reason)) => println!("skipped: cannot enter the namespace ({reason})"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
    drop(namespace);
}

async fn exercise() {
    let bind = SocketAddrV4::new(DEVICE, 47808);
    assert_eq!(
        BipConfig::with_default_broadcast(bind).broadcast,
        Some(BROADCAST_28)
    );
    let mut config = BacnetServerConfig::new(
        bind,
        profiles::stress_profile().build().expect("test setup"),
    );
    config.announce = false;
    // The I-Am comes back to the asker's port.
    config.unicast_i_am = true;
    let server = BacnetServer::start(config)
        .await
        .expect("binds 10.99.0.1 and its /28 broadcast address");

    let socket = tokio::net::UdpSocket::bind(SocketAddrV4::new(PEER, 0))
        .await
        .expect("test setup");
    socket.set_broadcast(true).expect("test setup");
    let mut npdu = Vec::new();
    buildwire_bacnet::network::Npdu::local_apdu(&[0x10, 0x08], false).encode(&mut npdu);
    let mut datagram = Vec::new();
    buildwire_bacnet::link::Bvll::OriginalBroadcastNpdu(&npdu).encode(&mut datagram);
    socket
        .send_to(&datagram, SocketAddrV4::new(BROADCAST_28, 47808))
        .await
        .expect("send inside the namespace");
    let i_am = raw_support::receive(&socket, Duration::from_secs(3))
        .await
        .expect("the Who-Is to 10.99.0.15 is answered");
    assert_eq!(&i_am[..2], &[0x10, 0x00], "an I-Am: {i_am:?}");
    drop(server);
}
