//! `BacnetServer`: a tokio task that runs a [`DeviceServer`] on a [`BipTransport`] (or any
//! [`Transport`]: B/IPv6, a foreign-device or BBMD link). The task only moves datagrams in
//! and out and fires the server's deadlines; every protocol decision is made by the sans-IO
//! [`DeviceServer`].

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::bip::{BipConfig, BipTransport};
use super::transport::Transport;
use crate::app::{Destination, DeviceServer, Transmit};
use crate::link::BipRole;
use crate::network::LinkAddress;
use crate::objects::database::{ObjectDatabase, WriteHook};
use crate::tsm::TsmConfig;

/// How long the task sleeps when the server has no deadline (it wakes on input anyway).
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// What to serve and where.
pub struct BacnetServerConfig {
    /// Local address; port 0 picks a free port.
    pub bind: SocketAddrV4,
    /// The subnet's broadcast address (127.255.255.255 on loopback); `None` serves only
    /// unicast and answers Who-Is with a unicast I-Am.
    pub broadcast: Option<Ipv4Addr>,
    /// The objects to serve (build one with `DeviceProfile::build`).
    pub database: ObjectDatabase,
    /// Timeouts, APDU size and segmentation limits.
    pub tsm: TsmConfig,
    /// Answer Who-Is with a unicast I-Am instead of a broadcast.
    pub unicast_i_am: bool,
    /// Broadcast an I-Am when started.
    pub announce: bool,
    /// The B/IP link role: a plain node (default), a BBMD, or a foreign device registered
    /// with a BBMD (its broadcasts then go through the BBMD).
    pub role: BipRole,
}

impl BacnetServerConfig {
    /// Serves `database` on `bind` with the default TSM settings, the conventional
    /// broadcast address of `bind`'s network, and an I-Am at start-up.
    pub fn new(bind: SocketAddrV4, database: ObjectDatabase) -> Self {
        Self {
            bind,
            broadcast: BipConfig::with_default_broadcast(bind).broadcast,
            database,
            tsm: TsmConfig::default(),
            unicast_i_am: false,
            announce: true,
            role: BipRole::Node,
        }
    }
}

/// A running BACnet device, on B/IP by default (`A` is the link's address type).
#[derive(Debug)]
pub struct BacnetServer<A: LinkAddress = SocketAddrV4> {
    core: Arc<Mutex<DeviceServer<A>>>,
    /// Wakes the task after a change from outside (a local set may owe COV notifications).
    wake: Arc<tokio::sync::Notify>,
    local: A,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

fn lock<A>(core: &Mutex<DeviceServer<A>>) -> MutexGuard<'_, DeviceServer<A>> {
    // A panic inside `with_database` poisons the lock; the data is still consistent
    // (every change is one database call), so keep serving.
    core.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl BacnetServer {
    /// Binds the sockets and starts serving.
    pub async fn start(config: BacnetServerConfig) -> io::Result<Self> {
        let transport = BipTransport::bind_with_role(
            &BipConfig {
                bind: config.bind,
                broadcast: config.broadcast,
            },
            config.role.clone(),
        )
        .await?;
        let server = Self::start_on(transport, config).await?;
        // Broadcasts go to this device's port: an asker on another port (a tool on an
        // ephemeral port of this host) gets the answer directly as well.
        let port = server.local_addr().port();
        server.with_server(|s| {
            s.set_hears_broadcasts(Box::new(move |peer: &SocketAddrV4| peer.port() == port));
        });
        Ok(server)
    }
}

impl<A: LinkAddress> BacnetServer<A> {
    /// Starts serving on a bound transport (B/IPv6, a router port...); `config.bind`,
    /// `config.broadcast` and `config.role` are not used (the transport is already bound).
    pub async fn start_on<T: Transport<Address = A>>(
        transport: T,
        config: BacnetServerConfig,
    ) -> io::Result<Self> {
        let can_broadcast = transport.can_broadcast();
        let mut server = DeviceServer::new(config.database, config.tsm);
        server.set_clock(super::clock::local_now());
        server.set_utc_offset_minutes(super::clock::utc_offset_minutes());
        server.set_link_mac(|link| T::mac_of(link).as_bytes().to_vec());
        server.set_unicast_i_am(config.unicast_i_am || !can_broadcast);
        if config.announce && can_broadcast {
            server.i_am();
        }
        // Evaluate schedules and calendars and start the trend logs now, not at the first
        // request or idle wake-up.
        server.handle_timeout(std::time::Instant::now());
        let local = transport.local_link_address();
        let core = Arc::new(Mutex::new(server));
        let wake = Arc::new(tokio::sync::Notify::new());
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(serve(
            transport,
            Arc::clone(&core),
            Arc::clone(&wake),
            stopped,
        ));
        Ok(Self {
            core,
            wake,
            local,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> A {
        self.local
    }

    /// Runs `f` on the object database (to read or change objects from Rust). Changes
    /// are then checked for COV notifications, which go out right away.
    pub fn with_database<R>(&self, f: impl FnOnce(&mut ObjectDatabase) -> R) -> R {
        self.with_server(|server| f(server.database_mut()))
    }

    /// Runs `f` on the sans-IO device server (passwords, COV limits, events, counters);
    /// then as [`Self::with_database`].
    pub fn with_server<R>(&self, f: impl FnOnce(&mut DeviceServer<A>) -> R) -> R {
        let result = {
            let mut core = lock(&self.core);
            let result = f(&mut core);
            core.set_clock(super::clock::local_now());
            core.process_changes(std::time::Instant::now());
            result
        };
        self.wake.notify_one();
        result
    }

    /// Installs a hook run for each property a network write changes.
    pub fn set_write_hook(&self, hook: WriteHook) {
        lock(&self.core).database_mut().set_write_hook(hook);
    }

    /// The server's counters.
    pub fn stats(&self) -> (crate::app::ServerStats, crate::tsm::TsmStats) {
        let core = lock(&self.core);
        (core.stats(), core.tsm_stats())
    }

    /// Stops serving and waits for the task to end.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl<A: LinkAddress> Drop for BacnetServer<A> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn send<T: Transport>(transport: &T, transmit: &Transmit<T::Address>) {
    // Send failures (a peer gone, a full socket buffer) lose one datagram; the TSM's
    // retries on both sides recover as they would from a lost packet.
    let _ = match transmit.destination {
        Destination::Unicast(to) => transport.send_unicast(to, &transmit.npdu).await,
        Destination::Broadcast => transport.send_broadcast(&transmit.npdu).await,
    };
}

async fn serve<T: Transport>(
    transport: T,
    core: Arc<Mutex<DeviceServer<T::Address>>>,
    wake: Arc<tokio::sync::Notify>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        let (pending, deadline) = {
            let mut core = lock(&core);
            let pending: Vec<Transmit<T::Address>> =
                std::iter::from_fn(|| core.poll_transmit()).collect();
            (pending, core.poll_timeout())
        };
        for transmit in &pending {
            send(&transport, transmit).await;
        }
        let wake_at = deadline.map_or_else(
            || tokio::time::Instant::now() + IDLE_WAKE,
            tokio::time::Instant::from_std,
        );
        tokio::select! {
            _ = &mut stopped => break,
            received = transport.receive() => match received {
                Ok(received) => {
                    let mut core = lock(&core);
                    core.set_clock(super::clock::local_now());
                    core.handle_npdu(
                        std::time::Instant::now(),
                        received.source,
                        &received.npdu,
                        received.broadcast,
                    );
                }
                // A socket error: keep going, but do not spin if the socket is broken for
                // good. (Undecodable datagrams are dropped inside the transport.)
                Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            },
            () = tokio::time::sleep_until(wake_at) => {
                let mut core = lock(&core);
                core.set_clock(super::clock::local_now());
                core.handle_timeout(std::time::Instant::now());
            }
            () = wake.notified() => {}
        }
    }
}
