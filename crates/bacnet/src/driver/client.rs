//! `BacnetClient`: a tokio task that runs a [`ClientCore`] on a [`BipTransport`], with an
//! async API (read, write, read/write multiple, Who-Is, Who-Has). The task only moves
//! datagrams, fires deadlines and hands each completion to the caller waiting for it.
//!
//! Every call ends: the TSM's own timeout (APDU timeout × (retries + 1)) answers
//! [`ClientError::Timeout`], and a wall-clock limit above that guards against anything
//! else going wrong.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::bip::{BipConfig, BipTransport, MAX_BIP_DATAGRAM};
use crate::app::{Announcement, ClientCore, ClientError, Destination, Reply, Transmit};
use crate::encoding::{Element, ObjectIdentifier};
use crate::enums::PropertyIdentifier;
use crate::services::{
    ComplexAckParameters, ConfirmedRequest, IAm, IHave, InstanceRange, ReadAccessResult,
    ReadAccessSpecification, ReadPropertyMultipleRequest, ReadPropertyRequest, WhoHasObject,
    WriteAccessSpecification, WritePropertyMultipleRequest, WritePropertyRequest,
};
use crate::tsm::TsmConfig;

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
    /// Timeouts, retries, APDU size and segmentation.
    pub tsm: TsmConfig,
}

impl ClientConfig {
    /// Default TSM settings on `bind`.
    pub fn new(bind: SocketAddrV4, broadcast: Option<Ipv4Addr>) -> Self {
        Self {
            bind,
            broadcast,
            tsm: TsmConfig::default(),
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
    fn accepts(&self, announcement: &Announcement) -> bool {
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

enum Command {
    Request {
        to: SocketAddrV4,
        request: ConfirmedRequest,
        reply: oneshot::Sender<Result<Reply, ClientError>>,
    },
    Discover {
        wanted: Wanted,
        destination: Destination,
        wait: Duration,
        reply: oneshot::Sender<Vec<Announcement>>,
    },
}

struct Collector {
    wanted: Wanted,
    until: Instant,
    found: Vec<Announcement>,
    reply: oneshot::Sender<Vec<Announcement>>,
}

/// An async BACnet/IP client.
#[derive(Debug)]
pub struct BacnetClient {
    commands: mpsc::Sender<Command>,
    local: SocketAddrV4,
    has_broadcast: bool,
    limit: Duration,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Command {
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
        let transport = BipTransport::bind(&BipConfig {
            bind: config.bind,
            broadcast: config.broadcast,
        })
        .await?;
        let local = transport.local_addr();
        let transport_broadcast = transport.broadcast_addr().is_some();
        let attempts = u32::from(config.tsm.retries) + 1;
        let limit = config
            .tsm
            .apdu_timeout
            .saturating_mul(attempts)
            .saturating_add(config.tsm.segment_timeout.saturating_mul(4))
            .saturating_add(SAFETY_MARGIN);
        let (commands, receiver) = mpsc::channel(COMMAND_QUEUE);
        let core = ClientCore::new(config.tsm);
        let task = tokio::spawn(run(transport, core, receiver));
        Ok(Self {
            commands,
            local,
            has_broadcast: transport_broadcast,
            limit,
            task,
        })
    }

    /// The local address.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.local
    }

    /// Sends any confirmed request and waits for its answer.
    pub async fn request(
        &self,
        to: SocketAddrV4,
        request: ConfirmedRequest,
    ) -> Result<Reply, ClientError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Request { to, request, reply })
            .await
            .map_err(|_| closed())?;
        match tokio::time::timeout(self.limit, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(closed()),
            Err(_) => Err(ClientError::Timeout),
        }
    }

    /// Reads one property (or one array element; index 0 is the array's length).
    pub async fn read(
        &self,
        to: SocketAddrV4,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<Vec<Element>, ClientError> {
        let request = ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object,
            property,
            array_index,
        });
        match self.request(to, request).await? {
            Reply::ComplexAck(ComplexAckParameters::ReadProperty(ack)) => Ok(ack.value),
            other => Err(unexpected(&other)),
        }
    }

    /// [`Self::read`] with string shorthands: `"ai,1"`, `"pv"` or `"present-value"`.
    pub async fn read_str(
        &self,
        to: SocketAddrV4,
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
        to: SocketAddrV4,
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
        to: SocketAddrV4,
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
        to: SocketAddrV4,
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
        destination: Destination,
        wait: Duration,
    ) -> Result<Vec<Announcement>, ClientError> {
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
    ) -> Result<Vec<(SocketAddrV4, IAm)>, ClientError> {
        self.who_is_at(Destination::Broadcast, range, wait).await
    }

    /// Sends a Who-Is to `destination` (broadcast or one address) and collects the I-Am
    /// answers that arrive within `wait`.
    pub async fn who_is_at(
        &self,
        destination: Destination,
        range: Option<InstanceRange>,
        wait: Duration,
    ) -> Result<Vec<(SocketAddrV4, IAm)>, ClientError> {
        let found = self.discover(Wanted::IAm(range), destination, wait).await?;
        Ok(found
            .into_iter()
            .filter_map(|a| match a {
                Announcement::IAm(from, i_am) => Some((from, i_am)),
                Announcement::IHave(..) => None,
            })
            .collect())
    }

    /// Sends a Who-Has for an object (by identifier or name) and collects the I-Have
    /// answers that arrive within `wait`.
    pub async fn who_has(
        &self,
        destination: Destination,
        object: WhoHasObject,
        wait: Duration,
    ) -> Result<Vec<(SocketAddrV4, IHave)>, ClientError> {
        let found = self
            .discover(Wanted::IHave(object), destination, wait)
            .await?;
        Ok(found
            .into_iter()
            .filter_map(|a| match a {
                Announcement::IHave(from, i_have) => Some((from, i_have)),
                Announcement::IAm(..) => None,
            })
            .collect())
    }

    /// Stops the client task; pending calls end with an error.
    pub fn shutdown(&self) {
        self.task.abort();
    }
}

impl Drop for BacnetClient {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn closed() -> ClientError {
    ClientError::Io("the client task has stopped".to_owned())
}

fn unexpected(reply: &Reply) -> ClientError {
    ClientError::BadReply(format!("unexpected answer {reply:?}"))
}

async fn send(transport: &BipTransport, transmit: &Transmit) -> io::Result<()> {
    match transmit.destination {
        Destination::Unicast(to) => transport.send_unicast(to, &transmit.npdu).await,
        Destination::Broadcast => transport.send_broadcast(&transmit.npdu).await,
    }
}

type Pending = HashMap<(SocketAddrV4, u8), oneshot::Sender<Result<Reply, ClientError>>>;

async fn run(transport: BipTransport, mut core: ClientCore, mut commands: mpsc::Receiver<Command>) {
    let mut buf = vec![0u8; MAX_BIP_DATAGRAM];
    let mut pending: Pending = HashMap::new();
    let mut collectors: Vec<Collector> = Vec::new();
    let mut open = true;
    loop {
        // Deliver what is finished, then send what is queued.
        while let Some(completion) = core.poll_completion() {
            if let Some(reply) = pending.remove(&(completion.peer, completion.invoke_id)) {
                let _ = reply.send(completion.result);
            }
        }
        while let Some(announcement) = core.poll_announcement() {
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
            .filter(|(_, reply)| reply.is_closed())
            .map(|(key, _)| *key)
            .collect();
        for key in abandoned {
            pending.remove(&key);
            core.cancel(key.0, key.1);
        }
        while let Some(transmit) = core.poll_transmit() {
            // A failed send is a lost datagram: the TSM retries, then times out.
            let _ = send(&transport, &transmit).await;
        }
        if !open && pending.is_empty() && collectors.is_empty() {
            break;
        }
        let deadline = [
            core.poll_timeout().map(Instant::from_std),
            collectors.iter().map(|c| c.until).min(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or_else(|| now + IDLE_WAKE);
        tokio::select! {
            command = commands.recv(), if open => match command {
                Some(Command::Request { to, request, reply }) => {
                    match core.send(std::time::Instant::now(), to, &request) {
                        Ok(invoke_id) => {
                            pending.insert((to, invoke_id), reply);
                        }
                        Err(error) => {
                            let _ = reply.send(Err(error));
                        }
                    }
                }
                Some(Command::Discover { wanted, destination, wait, reply }) => {
                    match &wanted {
                        Wanted::IAm(range) => core.who_is(*range, destination),
                        Wanted::IHave(object) => {
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
                None => open = false,
            },
            received = transport.recv(&mut buf) => match received {
                Ok(received) => {
                    if let Some(npdu) = received.npdu {
                        core.handle_npdu(std::time::Instant::now(), received.source, &npdu);
                    }
                }
                Err(Ok(_)) => {}
                Err(Err(_)) => tokio::time::sleep(Duration::from_millis(1)).await,
            },
            () = tokio::time::sleep_until(deadline) => {
                core.handle_timeout(std::time::Instant::now());
            }
        }
    }
}
