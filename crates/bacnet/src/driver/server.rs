//! `BacnetServer`: a tokio task that runs a [`DeviceServer`] on a [`BipTransport`]. The
//! task only moves datagrams in and out and fires the server's deadlines; every protocol
//! decision is made by the sans-IO [`DeviceServer`].

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::bip::{BipConfig, BipTransport, MAX_BIP_DATAGRAM};
use crate::app::{Destination, DeviceServer, Transmit};
use crate::objects::database::{ObjectDatabase, WriteHook};
use crate::tsm::TsmConfig;

/// How long the task sleeps when the server has no deadline (it wakes on input anyway).
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// What to serve and where.
pub struct ServerConfig {
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
}

impl ServerConfig {
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
        }
    }
}

/// A running BACnet/IP device.
#[derive(Debug)]
pub struct BacnetServer {
    core: Arc<Mutex<DeviceServer>>,
    local: SocketAddrV4,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

fn lock(core: &Mutex<DeviceServer>) -> MutexGuard<'_, DeviceServer> {
    // A panic inside `with_database` poisons the lock; the data is still consistent
    // (every change is one database call), so keep serving.
    core.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl BacnetServer {
    /// Binds the sockets and starts serving.
    pub async fn start(config: ServerConfig) -> io::Result<Self> {
        let transport = BipTransport::bind(&BipConfig {
            bind: config.bind,
            broadcast: config.broadcast,
        })
        .await?;
        let mut server = DeviceServer::new(config.database, config.tsm);
        server.set_unicast_i_am(config.unicast_i_am || config.broadcast.is_none());
        if config.announce && config.broadcast.is_some() {
            server.i_am();
        }
        let local = transport.local_addr();
        let core = Arc::new(Mutex::new(server));
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(serve(transport, Arc::clone(&core), stopped));
        Ok(Self {
            core,
            local,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.local
    }

    /// Runs `f` on the object database (to read or change objects from Rust).
    pub fn with_database<R>(&self, f: impl FnOnce(&mut ObjectDatabase) -> R) -> R {
        f(lock(&self.core).database_mut())
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

impl Drop for BacnetServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn send(transport: &BipTransport, transmit: &Transmit) {
    // Send failures (a peer gone, a full socket buffer) lose one datagram; the TSM's
    // retries on both sides recover as they would from a lost packet.
    let _ = match transmit.destination {
        Destination::Unicast(to) => transport.send_unicast(to, &transmit.npdu).await,
        Destination::Broadcast => transport.send_broadcast(&transmit.npdu).await,
    };
}

async fn serve(
    transport: BipTransport,
    core: Arc<Mutex<DeviceServer>>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut buf = vec![0u8; MAX_BIP_DATAGRAM];
    loop {
        let (pending, deadline) = {
            let mut core = lock(&core);
            let pending: Vec<Transmit> = std::iter::from_fn(|| core.poll_transmit()).collect();
            (pending, core.poll_timeout())
        };
        for transmit in &pending {
            send(&transport, transmit).await;
        }
        let wake = deadline.map_or_else(
            || tokio::time::Instant::now() + IDLE_WAKE,
            tokio::time::Instant::from_std,
        );
        tokio::select! {
            _ = &mut stopped => break,
            received = transport.recv(&mut buf) => match received {
                Ok(received) => {
                    if let Some(npdu) = received.npdu {
                        let mut core = lock(&core);
                        core.database_mut().set_clock(super::clock::local_now());
                        core.handle_npdu(
                            std::time::Instant::now(),
                            received.source,
                            &npdu,
                            received.broadcast,
                        );
                    }
                }
                // Not BACnet/IP: drop it.
                Err(Ok(_)) => {}
                // A socket error (ICMP port unreachable surfacing on Linux...): keep going,
                // but do not spin if the socket is broken for good.
                Err(Err(_)) => tokio::time::sleep(Duration::from_millis(1)).await,
            },
            () = tokio::time::sleep_until(wake) => {
                lock(&core).handle_timeout(std::time::Instant::now());
            }
        }
    }
}
