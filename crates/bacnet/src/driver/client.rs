//! `BacnetClient`: a tokio task that runs a [`ClientCore`] on a [`BipTransport`] (or any
//! [`Transport`]), with an async API (read, write, read/write multiple, Who-Is, Who-Has).
//! The task only moves datagrams, fires deadlines and hands each completion to the caller
//! waiting for it.
//!
//! Devices on other networks are addressed as [`DeviceAddress::Remote`] (`NETWORK:HEXMAC`
//! or `NETWORK:HOST:PORT`); a sans-IO [`RouteCache`] finds their router
//! (Who-Is-Router-To-Network when the network is unknown) and remembers it.
//!
//! Every call ends: the TSM's own timeout (APDU timeout × (retries + 1)) answers
//! [`ClientError::Timeout`], and a wall-clock limit above that guards against anything
//! else going wrong.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};

use super::transport::Transport;
use crate::app::PeerAddress;
use crate::link::BipRole;
use crate::network::{DeviceAddress, LinkAddress, RouteCache, RoutedAddress};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::bip::{BipConfig, BipTransport};
use crate::apdu::ConfirmedServiceChoice;
use crate::app::{Announcement, ClientCore, ClientError, Completion, Destination, Reply, Transmit};
use crate::encoding::{Element, ObjectIdentifier};
use crate::enums::PropertyIdentifier;
use crate::services::{
    ComplexAckParameters, ConfirmedRequest, IAm, IHave, InstanceRange, ReadAccessResult,
    ReadAccessSpecification, ReadPropertyMultipleRequest, UnconfirmedRequest, WhoHasObject,
    WriteAccessSpecification, WritePropertyMultipleRequest, WritePropertyRequest,
};
use crate::tsm::{RequestTiming, TsmConfig};

mod cov;
mod robust;
mod services;
pub use cov::CovSubscription;
pub(crate) use robust::join_all;
pub use robust::{DEFAULT_MAX_CONCURRENT_PER_DEVICE, with_timing};
use robust::{Extras, Notice, send_request};

/// The standard BACnet/IP UDP port (0xBAC0), where broadcasts of a client bound to port 0 go.
pub const STANDARD_PORT: u16 = 0xBAC0;
/// Most requests the API queues before callers wait for the task.
const COMMAND_QUEUE: usize = 1024;
/// Time added to the TSM's own limit before a call gives up on its own.
const SAFETY_MARGIN: Duration = Duration::from_secs(2);
/// How long the task sleeps when nothing is due (it wakes on input anyway).
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// Where the client binds and how it times out.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Local address; port 0 picks a free port.
    pub bind: SocketAddrV4,
    /// The subnet's broadcast address for Who-Is / Who-Has; `None` for unicast only.
    pub broadcast: Option<Ipv4Addr>,
    /// The UDP port broadcasts go to; `None`: the bound port, or the standard 47808 when
    /// the client was bound to port 0 (its own port is then one nobody else listens on).
    pub broadcast_port: Option<u16>,
    /// Timeouts, retries, APDU size and segmentation.
    pub tsm: TsmConfig,
    /// The B/IP link role: a plain node (default), or a foreign device registered with a
    /// BBMD (Who-Is then reaches the BBMD's subnets).
    pub role: BipRole,
    /// Broadcast Who-Is / Who-Has with DNET X'FFFF' so routers pass them to every network
    /// (default); off for local broadcasts only.
    pub global_broadcasts: bool,
    /// Most requests outstanding to one device at a time (others wait their turn within
    /// their own time limit).
    pub max_concurrent_per_device: usize,
}

impl ClientConfig {
    /// Default TSM settings on `bind`.
    pub fn new(bind: SocketAddrV4, broadcast: Option<Ipv4Addr>) -> Self {
        Self {
            bind,
            broadcast,
            broadcast_port: None,
            tsm: TsmConfig::default(),
            role: BipRole::Node,
            global_broadcasts: true,
            max_concurrent_per_device: robust::DEFAULT_MAX_CONCURRENT_PER_DEVICE,
        }
    }
}

/// What a Who-Is or Who-Has collects.
#[derive(Debug, Clone)]
enum Wanted {
    IAm(Option<InstanceRange>),
    IHave(WhoHasObject),
}

impl Wanted {
    fn accepts<A>(&self, announcement: &Announcement<A>) -> bool {
        match (self, announcement) {
            (Self::IAm(range), Announcement::IAm(_, i_am)) => {
                range.is_none_or(|r| r.contains(i_am.device.instance()))
            }
            (Self::IHave(WhoHasObject::Identifier(id)), Announcement::IHave(_, i_have)) => {
                i_have.object == *id
            }
            (Self::IHave(WhoHasObject::Name(name)), Announcement::IHave(_, i_have)) => {
                i_have.object_name == *name
            }
            _ => false,
        }
    }
}

enum Command<A> {
    Request {
        to: DeviceAddress<A>,
        request: ConfirmedRequest,
        /// The call's own reply timeout and retries ([`with_timing`]).
        timing: Option<RequestTiming>,
        reply: oneshot::Sender<Result<Reply, ClientError>>,
    },
    Discover {
        wanted: Wanted,
        destination: Destination<A>,
        /// A remote network to ask (DNET), for Who-Is only.
        network: Option<u16>,
        wait: Duration,
        reply: oneshot::Sender<Vec<Announcement<A>>>,
    },
    /// Broadcast a network-layer message (Who-Is-Router-To-Network).
    BroadcastNetworkMessage(Vec<u8>),
    /// The routes known so far.
    Routes(oneshot::Sender<Vec<(u16, A)>>),
    /// An unconfirmed request to send as it is (TimeSynchronization...).
    Unconfirmed {
        request: UnconfirmedRequest,
        destination: Destination<A>,
    },
}

struct Collector<A> {
    wanted: Wanted,
    until: Instant,
    found: Vec<Announcement<A>>,
    reply: oneshot::Sender<Vec<Announcement<A>>>,
}

/// A request waiting for the route to its network.
type Parked = (
    RoutedAddress,
    (ConfirmedRequest, Option<RequestTiming>),
    oneshot::Sender<Result<Reply, ClientError>>,
);

/// An async BACnet client, on B/IP by default (`A` is the link's address type).
#[derive(Debug)]
pub struct BacnetClient<A: LinkAddress = SocketAddrV4> {
    commands: mpsc::Sender<Command<A>>,
    local: A,
    has_broadcast: bool,
    limit: Duration,
    task: JoinHandle<()>,
    /// Concurrency limits, ReadPropertyMultiple support, COV notices (see `robust`).
    extras: std::sync::Arc<Extras<A>>,
}

/// The address an announcement came from, as the client API names devices.
fn device_address<A>(peer: PeerAddress<A>) -> DeviceAddress<A> {
    match peer.remote {
        Some(remote) => DeviceAddress::Remote(remote.into()),
        None => DeviceAddress::Local(peer.link),
    }
}

impl<A> std::fmt::Debug for Command<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl BacnetClient {
    /// Binds `bind` (port 0 picks one) with the default TSM settings.
    pub async fn bind(bind: SocketAddrV4, broadcast: Option<Ipv4Addr>) -> io::Result<Self> {
        Self::start(ClientConfig::new(bind, broadcast)).await
    }

    /// Binds and starts the client task.
    pub async fn start(config: ClientConfig) -> io::Result<Self> {
        let bip = BipConfig {
            bind: config.bind,
            broadcast: config.broadcast,
        };
        let broadcast_port = config
            .broadcast_port
            .or_else(|| (config.bind.port() == 0).then_some(STANDARD_PORT));
        let transport = match broadcast_port {
            Some(port) => BipTransport::bind_client(&bip, config.role.clone(), port).await?,
            None => BipTransport::bind_with_role(&bip, config.role.clone()).await?,
        };
        let client = Self::start_on(transport, config.tsm, config.global_broadcasts)?;
        client.set_max_concurrent_per_device(config.max_concurrent_per_device);
        Ok(client)
    }
}

impl<A: LinkAddress> BacnetClient<A> {
    /// Starts the client task on a bound transport (B/IPv6...), with the TSM settings and
    /// global (DNET X'FFFF') or local broadcasts.
    pub fn start_on<T: Transport<Address = A>>(
        transport: T,
        tsm: TsmConfig,
        global_broadcasts: bool,
    ) -> io::Result<Self> {
        let local = transport.local_link_address();
        let transport_broadcast = transport.can_broadcast();
        let attempts = u32::from(tsm.retries) + 1;
        // A remote device may first need its router found: that many more seconds.
        let discovery = crate::network::RouteCacheConfig::default();
        let slack = tsm
            .segment_timeout
            .saturating_mul(4)
            .saturating_add(discovery.retry_interval * u32::from(discovery.attempts))
            .saturating_add(SAFETY_MARGIN);
        let limit = tsm
            .apdu_timeout
            .saturating_mul(attempts)
            .saturating_add(slack);
        let (commands, receiver) = mpsc::channel(COMMAND_QUEUE);
        let mut core = ClientCore::new(tsm);
        core.set_global_broadcasts(global_broadcasts);
        let extras = std::sync::Arc::new(Extras::new(slack));
        let task = tokio::spawn(run(
            transport,
            core,
            receiver,
            std::sync::Arc::clone(&extras.notices),
        ));
        Ok(Self {
            commands,
            local,
            has_broadcast: transport_broadcast,
            limit,
            task,
            extras,
        })
    }

    /// The local address.
    pub fn local_addr(&self) -> A {
        self.local
    }

    /// Sends any confirmed request and waits for its answer.
    /// At most the per-device limit of requests are outstanding to one device; the time
    /// limit covers the wait for a turn and the answer.
    pub async fn request(
        &self,
        to: impl Into<DeviceAddress<A>>,
        request: ConfirmedRequest,
    ) -> Result<Reply, ClientError> {
        send_request(&self.commands, &self.extras, self.limit, to.into(), request).await
    }

    /// Reads one property (or one array element; index 0 is the array's length). A whole
    /// property whose answer needs segmentation that the device (or this client) cannot
    /// do is read again element by element ([`Self::read_array_elements`]).
    pub async fn read(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<Vec<Element>, ClientError> {
        let to = to.into();
        match self.read_once(to, object, property, array_index).await {
            Err(error)
                if array_index.is_none()
                    && crate::app::read_plan::is_segmentation_failure(&error) =>
            {
                // When the device refuses reads by index too, its first answer says most;
                // when the element reads fail otherwise (no answer, a bad answer), that is
                // the error to report.
                self.read_array_elements(to, object, property)
                    .await
                    .map_err(|fallback| match fallback {
                        ClientError::Error { .. } | ClientError::Reject(_) => error,
                        other => other,
                    })
            }
            other => other,
        }
    }

    /// [`Self::read`] with string shorthands: `"ai,1"`, `"pv"` or `"present-value"`.
    pub async fn read_str(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: &str,
        property: &str,
    ) -> Result<Vec<Element>, ClientError> {
        let object = object
            .parse::<ObjectIdentifier>()
            .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
        let property = property
            .parse::<PropertyIdentifier>()
            .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
        self.read(to, object, property, None).await
    }

    /// Writes one property with an optional priority (1..=16) and array index.
    pub async fn write(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        value: Vec<Element>,
        priority: Option<u8>,
        array_index: Option<u32>,
    ) -> Result<(), ClientError> {
        let request = ConfirmedRequest::WriteProperty(WritePropertyRequest {
            object,
            property,
            array_index,
            value,
            priority,
        });
        match self.request(to, request).await? {
            Reply::SimpleAck => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// ReadPropertyMultiple: per-object results, each property with its value or error.
    pub async fn read_multiple(
        &self,
        to: impl Into<DeviceAddress<A>>,
        specifications: Vec<ReadAccessSpecification>,
    ) -> Result<Vec<ReadAccessResult>, ClientError> {
        let request =
            ConfirmedRequest::ReadPropertyMultiple(ReadPropertyMultipleRequest { specifications });
        match self.request(to, request).await? {
            Reply::ComplexAck(ComplexAckParameters::ReadPropertyMultiple(ack)) => Ok(ack.results),
            other => Err(unexpected(&other)),
        }
    }

    /// WritePropertyMultiple; a failure names the first write that failed.
    pub async fn write_multiple(
        &self,
        to: impl Into<DeviceAddress<A>>,
        specifications: Vec<WriteAccessSpecification>,
    ) -> Result<(), ClientError> {
        let request = ConfirmedRequest::WritePropertyMultiple(WritePropertyMultipleRequest {
            specifications,
        });
        match self.request(to, request).await? {
            Reply::SimpleAck => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    async fn discover(
        &self,
        wanted: Wanted,
        destination: Destination<A>,
        network: Option<u16>,
        wait: Duration,
    ) -> Result<Vec<Announcement<A>>, ClientError> {
        if destination == Destination::Broadcast && !self.has_broadcast {
            return Err(ClientError::InvalidArgument(
                "this client has no broadcast address: bind it with one, or ask one device"
                    .to_owned(),
            ));
        }
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Discover {
                wanted,
                destination,
                network,
                wait,
                reply,
            })
            .await
            .map_err(|_| closed())?;
        match tokio::time::timeout(wait.saturating_add(SAFETY_MARGIN), answer).await {
            Ok(Ok(found)) => Ok(found),
            _ => Err(closed()),
        }
    }

    /// Broadcasts a Who-Is and collects the I-Am answers that arrive within `wait`.
    pub async fn who_is(
        &self,
        range: Option<InstanceRange>,
        wait: Duration,
    ) -> Result<Vec<(DeviceAddress<A>, IAm)>, ClientError> {
        self.who_is_at(Destination::Broadcast, range, wait).await
    }

    /// Sends a Who-Is to `destination` (broadcast or one address) and collects the I-Am
    /// answers that arrive within `wait`.
    pub async fn who_is_at(
        &self,
        destination: Destination<A>,
        range: Option<InstanceRange>,
        wait: Duration,
    ) -> Result<Vec<(DeviceAddress<A>, IAm)>, ClientError> {
        let found = self
            .discover(Wanted::IAm(range), destination, None, wait)
            .await?;
        Ok(i_ams(found))
    }

    /// Broadcasts a Who-Is for the devices of one remote `network` (DNET `network`; the
    /// router serving it broadcasts it there) and collects the I-Am answers that arrive
    /// within `wait`.
    pub async fn who_is_on_network(
        &self,
        network: u16,
        range: Option<InstanceRange>,
        wait: Duration,
    ) -> Result<Vec<(DeviceAddress<A>, IAm)>, ClientError> {
        let found = self
            .discover(
                Wanted::IAm(range),
                Destination::Broadcast,
                Some(network),
                wait,
            )
            .await?;
        Ok(i_ams(found))
    }

    /// Broadcasts Who-Is-Router-To-Network (every network), waits `wait` for the
    /// I-Am-Router-To-Network answers and gives every route known then: network number
    /// and the router's address on the local network.
    pub async fn find_routers(&self, wait: Duration) -> Result<Vec<(u16, A)>, ClientError> {
        if !self.has_broadcast {
            return Err(ClientError::InvalidArgument(
                "this client has no broadcast address: bind it with one to find routers".to_owned(),
            ));
        }
        let npdu =
            crate::network::message::NetworkMessage::WhoIsRouterToNetwork(None).to_local_npdu();
        self.commands
            .send(Command::BroadcastNetworkMessage(npdu))
            .await
            .map_err(|_| closed())?;
        tokio::time::sleep(wait).await;
        self.routes().await
    }

    /// The routes this client knows: network number and router, from
    /// I-Am-Router-To-Network answers and from routed traffic.
    pub async fn routes(&self) -> Result<Vec<(u16, A)>, ClientError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Routes(reply))
            .await
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())
    }

    /// Sends a Who-Has for an object (by identifier or name) and collects the I-Have
    /// answers that arrive within `wait`.
    pub async fn who_has(
        &self,
        destination: Destination<A>,
        object: WhoHasObject,
        wait: Duration,
    ) -> Result<Vec<(DeviceAddress<A>, IHave)>, ClientError> {
        let found = self
            .discover(Wanted::IHave(object), destination, None, wait)
            .await?;
        Ok(found
            .into_iter()
            .filter_map(|a| match a {
                Announcement::IHave(from, i_have) => Some((device_address(from), i_have)),
                Announcement::IAm(..) => None,
            })
            .collect())
    }

    /// Stops the client task; pending calls end with an error.
    pub fn shutdown(&self) {
        self.task.abort();
    }
}

impl<A: LinkAddress> Drop for BacnetClient<A> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The I-Ams of `found`, with the address of each device.
fn i_ams<A>(found: Vec<Announcement<A>>) -> Vec<(DeviceAddress<A>, IAm)> {
    found
        .into_iter()
        .filter_map(|a| match a {
            Announcement::IAm(from, i_am) => Some((device_address(from), i_am)),
            Announcement::IHave(..) => None,
        })
        .collect()
}

fn closed() -> ClientError {
    ClientError::Io("the client task has stopped".to_owned())
}

fn unexpected(reply: &Reply) -> ClientError {
    ClientError::BadReply(format!("unexpected answer {reply:?}"))
}

async fn send<T: Transport>(transport: &T, transmit: &Transmit<T::Address>) -> io::Result<()> {
    match transmit.destination {
        Destination::Unicast(to) => transport.send_unicast(to, &transmit.npdu).await,
        Destination::Broadcast => transport.send_broadcast(&transmit.npdu).await,
    }
}

/// A request sent and waiting for its answer: who waits, and what the log line says.
struct Waiting {
    reply: oneshot::Sender<Result<Reply, ClientError>>,
    service: ConfirmedServiceChoice,
    sent: std::time::Instant,
}

type Pending<A> = HashMap<(PeerAddress<A>, u8), Waiting>;

/// A debug line when segments were sent or received since `seen` (sent, received), with
/// the peer a received segment came from.
fn log_segments<A: LinkAddress>(core: &ClientCore<A>, seen: &mut (u64, u64), from: Option<&A>) {
    let stats = core.tsm_stats();
    if (stats.segments_sent, stats.segments_received) == *seen {
        return;
    }
    let segments_sent = stats.segments_sent - seen.0;
    let segments_received = stats.segments_received - seen.1;
    *seen = (stats.segments_sent, stats.segments_received);
    let peer = from.map(|from| format!("{from:?}")).unwrap_or_default();
    tracing::debug!(peer, segments_sent, segments_received, "segmented transfer");
}

/// The log line of a finished request: the answer at debug level; an Error, Reject or
/// Abort from the peer at info level, within the budget of lines about peers' errors.
fn log_completion<A: LinkAddress>(
    completion: &Completion<A>,
    waiting: &Waiting,
    now: std::time::Instant,
) {
    let peer = crate::driver::peer_log::peer_text(&completion.peer);
    let invoke_id = completion.invoke_id;
    let service = waiting.service.to_string();
    let duration_ms = now.saturating_duration_since(waiting.sent).as_secs_f64() * 1000.0;
    match &completion.result {
        Ok(reply) => {
            let answer = match reply {
                Reply::SimpleAck => "simple-ack",
                Reply::ComplexAck(_) => "complex-ack",
            };
            tracing::debug!(
                peer,
                invoke_id,
                service,
                answer,
                duration_ms,
                "request answered"
            );
        }
        Err(ClientError::Timeout) => tracing::debug!(
            peer = %peer,
            invoke_id,
            service,
            duration_ms,
            "request timed out: no answer after every retry"
        ),
        Err(
            error @ (ClientError::Error { .. }
            | ClientError::WriteMultipleFailed { .. }
            | ClientError::ChangeListFailed { .. }
            | ClientError::Reject(_)
            | ClientError::Abort { .. }),
        ) => {
            if let Some(suppressed) = crate::driver::peer_log::admit() {
                let answer = match error {
                    ClientError::Reject(_) => "reject",
                    ClientError::Abort {
                        by_server: true, ..
                    } => "abort",
                    ClientError::Abort { .. } => "aborted-by-client",
                    _ => "error",
                };
                tracing::info!(
                    peer = %peer,
                    invoke_id,
                    service,
                    answer,
                    reason = %error,
                    duration_ms,
                    suppressed,
                    "request refused by the peer"
                );
            }
        }
        Err(error) => tracing::debug!(
            peer = %peer,
            invoke_id,
            service,
            reason = %error,
            duration_ms,
            "request failed"
        ),
    }
}

/// Sends a request to a known peer; the reply sender waits in `pending`.
fn submit<A: LinkAddress>(
    core: &mut ClientCore<A>,
    pending: &mut Pending<A>,
    peer: PeerAddress<A>,
    (request, timing): &(ConfirmedRequest, Option<RequestTiming>),
    reply: oneshot::Sender<Result<Reply, ClientError>>,
) {
    let now = std::time::Instant::now();
    let sent = match timing {
        Some(timing) => core.send_timed(now, peer, request, *timing),
        None => core.send(now, peer, request),
    };
    let service = request.service_choice();
    match sent {
        Ok(invoke_id) => {
            let peer_text = crate::driver::peer_log::peer_text(&peer);
            tracing::debug!(peer = peer_text, invoke_id, service = %service, "request sent");
            pending.insert(
                (peer, invoke_id),
                Waiting {
                    reply,
                    service,
                    sent: now,
                },
            );
        }
        Err(error) => {
            let peer = crate::driver::peer_log::peer_text(&peer);
            tracing::debug!(peer, service = %service, reason = %error, "request not sent");
            let _ = reply.send(Err(error));
        }
    }
}

async fn run<T: Transport>(
    transport: T,
    mut core: ClientCore<T::Address>,
    mut commands: mpsc::Receiver<Command<T::Address>>,
    notices: std::sync::Arc<robust::NoticeRouter<T::Address>>,
) {
    let mut pending: Pending<T::Address> = HashMap::new();
    let mut collectors: Vec<Collector<T::Address>> = Vec::new();
    let mut routes: RouteCache<T::Address, Parked> = RouteCache::default();
    let mut open = true;
    // Set when a deadline passed: the datagrams the core sends next are retries (of a
    // request, or of a segment window).
    let mut after_timeout = false;
    // Segments sent and received so far (a segmented transfer logs its progress).
    let mut segments = (0, 0);
    loop {
        // Requests whose router is now known go out; those without one fail.
        while let Some((router, (remote, request, reply))) = routes.poll_ready() {
            let peer = PeerAddress {
                link: router,
                remote: Some(remote.remote()),
            };
            submit(&mut core, &mut pending, peer, &request, reply);
        }
        while let Some((network, (_, _, reply))) = routes.poll_failed() {
            let _ = reply.send(Err(ClientError::NoRoute(network)));
        }
        while let Some(npdu) = routes.poll_transmit() {
            let _ = transport.send_broadcast(&npdu).await;
        }
        // Deliver what is finished, then send what is queued.
        while let Some(completion) = core.poll_completion() {
            if let Some(waiting) = pending.remove(&(completion.peer, completion.invoke_id)) {
                log_completion(&completion, &waiting, std::time::Instant::now());
                let _ = waiting.reply.send(completion.result);
            }
        }
        // COV notifications and I-Ams for the subscription tasks (none listening: dropped).
        while let Some(notification) = core.poll_notification() {
            notices.route(Notice::Notification(notification));
        }
        while let Some(announcement) = core.poll_announcement() {
            if let Announcement::IAm(from, _) = &announcement {
                notices.route(Notice::IAm(*from));
            }
            for collector in &mut collectors {
                if collector.wanted.accepts(&announcement)
                    && !collector.found.contains(&announcement)
                {
                    collector.found.push(announcement.clone());
                }
            }
        }
        let now = Instant::now();
        let (done, waiting): (Vec<_>, Vec<_>) =
            collectors.into_iter().partition(|c| c.until <= now);
        collectors = waiting;
        for collector in done {
            let _ = collector.reply.send(collector.found);
        }
        // Callers that gave up free their invoke id.
        let abandoned: Vec<_> = pending
            .iter()
            .filter(|(_, waiting)| waiting.reply.is_closed())
            .map(|(key, _)| *key)
            .collect();
        for key in abandoned {
            pending.remove(&key);
            core.cancel(key.0, key.1);
        }
        while let Some(transmit) = core.poll_transmit() {
            let peer = || crate::driver::peer_log::destination_text(&transmit.destination);
            if after_timeout {
                let bytes = transmit.npdu.len();
                tracing::debug!(peer = peer(), bytes, "no answer in time: sending again");
            }
            // A failed send is a lost datagram: the TSM retries, then times out.
            if let Err(error) = send(&transport, &transmit).await {
                tracing::debug!(peer = peer(), %error, "send failed");
            }
        }
        after_timeout = false;
        log_segments(&core, &mut segments, None);
        if !open && pending.is_empty() && collectors.is_empty() {
            break;
        }
        let deadline = [
            core.poll_timeout().map(Instant::from_std),
            routes.poll_timeout().map(Instant::from_std),
            collectors.iter().map(|c| c.until).min(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or_else(|| now + IDLE_WAKE);
        tokio::select! {
            command = commands.recv(), if open => match command {
                Some(Command::Request { to, request, timing, reply }) => {
                    let request = (request, timing);
                    match to {
                    DeviceAddress::Local(link) => {
                        submit(&mut core, &mut pending, PeerAddress::local(link), &request, reply);
                    }
                    DeviceAddress::Via { router, remote } => {
                        let peer = PeerAddress {
                            link: router,
                            remote: Some(remote.remote()),
                        };
                        submit(&mut core, &mut pending, peer, &request, reply);
                    }
                    DeviceAddress::Remote(remote) => {
                        let now = std::time::Instant::now();
                        if let Some((router, (remote, request, reply))) =
                            routes.resolve(now, remote.network, (remote, request, reply))
                        {
                            let peer = PeerAddress {
                                link: router,
                                remote: Some(remote.remote()),
                            };
                            submit(&mut core, &mut pending, peer, &request, reply);
                        }
                    }
                }
                }
                Some(Command::Discover { wanted, destination, network, wait, reply }) => {
                    match (&wanted, network) {
                        (Wanted::IAm(range), Some(network)) => {
                            core.who_is_on_network(*range, network);
                        }
                        (Wanted::IAm(range), None) => core.who_is(*range, destination),
                        (Wanted::IHave(object), _) => {
                            core.who_has(None, object.clone(), destination);
                        }
                    }
                    collectors.push(Collector {
                        wanted,
                        until: Instant::now() + wait,
                        found: Vec::new(),
                        reply,
                    });
                }
                Some(Command::BroadcastNetworkMessage(npdu)) => {
                    let _ = transport.send_broadcast(&npdu).await;
                }
                Some(Command::Routes(reply)) => {
                    let _ = reply.send(routes.routes());
                }
                Some(Command::Unconfirmed { request, destination }) => {
                    core.send_unconfirmed(&request, destination);
                }
                None => open = false,
            },
            received = transport.receive() => match received {
                Ok(received) => {
                    let now = std::time::Instant::now();
                    // Network-layer messages teach routes; everything else is the core's.
                    if !routes.handle_npdu(now, received.source, &received.npdu) {
                        let malformed = core.malformed();
                        core.handle_npdu(now, received.source, &received.npdu);
                        log_segments(&core, &mut segments, Some(&received.source));
                        if core.malformed() > malformed
                            && let Some(suppressed) = crate::driver::peer_log::admit()
                        {
                            let what = "malformed message from a peer: dropped";
                            tracing::warn!(peer = ?received.source, suppressed, "{what}");
                        }
                    }
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            },
            () = tokio::time::sleep_until(deadline) => {
                let now = std::time::Instant::now();
                core.handle_timeout(now);
                routes.handle_timeout(now);
                after_timeout = true;
            }
        }
    }
}
