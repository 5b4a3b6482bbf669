//! The robust side of [`BacnetClient`]: a per-device concurrency limit with a firm time
//! limit on every call, whole-array reads that fall back to one element at a time, and
//! `read_many`, which batches reads into ReadPropertyMultiple where the device offers it.
//! The decisions are the sans-IO ones of [`crate::app::read_plan`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, oneshot};

use super::{BacnetClient, Command, closed, unexpected};
use crate::app::read_plan::{
    self, MAX_FALLBACK_ELEMENTS, MAX_READS_PER_REQUEST, MAX_REQUEST_BYTES,
};
use crate::app::{ClientError, CovNotification, PeerAddress, Reply};
use crate::encoding::{ApplicationValue, Element, ObjectIdentifier, ObjectPropertyReference};
use crate::enums::PropertyIdentifier;
use crate::network::{DeviceAddress, LinkAddress};
use crate::services::{ComplexAckParameters, ConfirmedRequest, ReadPropertyRequest};
use crate::tsm::RequestTiming;

/// Default limit on requests outstanding to one device.
pub const DEFAULT_MAX_CONCURRENT_PER_DEVICE: usize = 16;
/// Notices (COV notifications, I-Ams) buffered for one subscription task; past this the
/// oldest wait and new ones are dropped for that subscription only.
pub(super) const NOTICE_BUFFER: usize = 256;
/// Devices whose concurrency limit is remembered before idle entries are forgotten.
const MAX_LIMITED_DEVICES: usize = 4096;

/// What the client task passes to the COV subscription tasks.
#[derive(Debug, Clone)]
pub(super) enum Notice<A> {
    /// A COV notification.
    Notification(CovNotification<A>),
    /// An I-Am (a device that may have restarted) from this address.
    IAm(PeerAddress<A>),
}

/// Routes notices to the subscription tasks: a COV notification to the one subscription
/// of its process identifier, an I-Am to every subscription (each checks the address).
/// One routing step per notification, however many subscriptions there are (a broadcast
/// channel woke every subscription task for every notification, and a burst made them lag
/// and drop notifications).
#[derive(Debug)]
pub(super) struct NoticeRouter<A> {
    routes: Mutex<HashMap<u32, mpsc::Sender<Notice<A>>>>,
}

impl<A: LinkAddress> NoticeRouter<A> {
    fn new() -> Self {
        Self {
            routes: Mutex::new(HashMap::new()),
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<u32, mpsc::Sender<Notice<A>>>> {
        self.routes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The notices of subscription `process` from now on, until [`Self::remove`].
    pub(super) fn add(&self, process: u32) -> mpsc::Receiver<Notice<A>> {
        let (sender, receiver) = mpsc::channel(NOTICE_BUFFER);
        self.routes().insert(process, sender);
        receiver
    }

    /// Stops routing to subscription `process`.
    pub(super) fn remove(&self, process: u32) {
        self.routes().remove(&process);
    }

    /// Routes one notice (a full or closed subscription queue drops it).
    pub(super) fn route(&self, notice: Notice<A>) {
        let routes = self.routes();
        match &notice {
            Notice::Notification(notification) => {
                let process = notification.request.subscriber_process_identifier;
                if let Some(route) = routes.get(&process) {
                    let _ = route.try_send(notice);
                }
            }
            Notice::IAm(_) => {
                for route in routes.values() {
                    let _ = route.try_send(notice.clone());
                }
            }
        }
    }
}

/// State shared by the client's callers and its subscription tasks.
#[derive(Debug)]
pub(super) struct Extras<A> {
    pub(super) notices: Arc<NoticeRouter<A>>,
    pub(super) next_process: AtomicU32,
    /// The time a request's limit allows beyond its reply timeouts (see [`send_request`]).
    pub(super) slack: Duration,
    per_device: AtomicUsize,
    limits: Mutex<HashMap<DeviceAddress<A>, Arc<Semaphore>>>,
    without_rpm: Mutex<HashSet<DeviceAddress<A>>>,
}

impl<A: LinkAddress> Extras<A> {
    pub(super) fn new(slack: Duration) -> Self {
        Self {
            notices: Arc::new(NoticeRouter::new()),
            next_process: AtomicU32::new(1),
            slack,
            per_device: AtomicUsize::new(DEFAULT_MAX_CONCURRENT_PER_DEVICE),
            limits: Mutex::new(HashMap::new()),
            without_rpm: Mutex::new(HashSet::new()),
        }
    }

    fn semaphore(&self, device: DeviceAddress<A>) -> Arc<Semaphore> {
        let per_device = self.per_device.load(Ordering::Relaxed).max(1);
        let mut limits = self
            .limits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if limits.len() >= MAX_LIMITED_DEVICES && !limits.contains_key(&device) {
            // Forget the devices with nothing outstanding.
            limits.retain(|_, s| s.available_permits() < per_device);
        }
        Arc::clone(
            limits
                .entry(device)
                .or_insert_with(|| Arc::new(Semaphore::new(per_device))),
        )
    }

    fn offers_rpm(&self, device: &DeviceAddress<A>) -> bool {
        !self
            .without_rpm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(device)
    }

    fn note_no_rpm(&self, device: DeviceAddress<A>) {
        self.without_rpm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(device);
    }
}

tokio::task_local! {
    /// The reply timeout and retries of the requests made inside [`with_timing`].
    static CALL_TIMING: RequestTiming;
}

/// Runs `future` with its own reply timeout and retries for every request it makes
/// through a [`BacnetClient`] (reads with their element-by-element fallback, batched
/// reads, writes, the other services) instead of the client's [`crate::TsmConfig`]; each
/// request's overall time limit follows. COV renewals, which run on their own, keep the
/// client's settings.
///
/// ```no_run
/// # async fn demo(client: &buildwire_bacnet::driver::BacnetClient) {
/// use std::time::Duration;
/// use buildwire_bacnet::RequestTiming;
/// use buildwire_bacnet::driver::with_timing;
/// let quick = RequestTiming { apdu_timeout: Duration::from_millis(300), retries: 0 };
/// let device: std::net::SocketAddrV4 = "127.0.0.1:47808".parse().unwrap();
/// let answer = with_timing(quick, client.read_str(device, "ai,1", "pv")).await;
/// # }
/// ```
pub async fn with_timing<F: Future>(timing: RequestTiming, future: F) -> F::Output {
    CALL_TIMING.scope(timing, future).await
}

/// Sends one request through the client task, at most `per-device limit` at a time to
/// one device, and gives up after `limit` (the wait for a turn included), or after the
/// limit of the timing [`with_timing`] set (`slack` is what `limit` allows beyond the
/// client's own reply timeouts: segment windows, route discovery, a margin).
pub(super) async fn send_request<A: LinkAddress>(
    commands: &mpsc::Sender<Command<A>>,
    extras: &Extras<A>,
    limit: Duration,
    to: DeviceAddress<A>,
    request: ConfirmedRequest,
) -> Result<Reply, ClientError> {
    let timing = CALL_TIMING.try_with(|t| *t).ok();
    let limit = timing.map_or(limit, |t| {
        t.apdu_timeout
            .saturating_mul(u32::from(t.retries) + 1)
            .saturating_add(extras.slack)
    });
    let semaphore = extras.semaphore(to);
    let call = async {
        let _turn = semaphore.acquire().await.map_err(|_| closed())?;
        let (reply, answer) = oneshot::channel();
        commands
            .send(Command::Request {
                to,
                request,
                timing,
                reply,
            })
            .await
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    };
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result,
        Err(_) => Err(ClientError::Timeout),
    }
}

type BoxedRead<'a> =
    Pin<Box<dyn Future<Output = Vec<Result<Vec<Element>, ClientError>>> + Send + 'a>>;

impl<A: LinkAddress> BacnetClient<A> {
    /// Sets how many requests may be outstanding to one device at a time (default
    /// [`DEFAULT_MAX_CONCURRENT_PER_DEVICE`]); applies to devices not yet contacted.
    pub fn set_max_concurrent_per_device(&self, limit: usize) {
        self.extras
            .per_device
            .store(limit.max(1), Ordering::Relaxed);
    }

    /// One ReadProperty, without the element-by-element fallback.
    pub(super) async fn read_once(
        &self,
        to: DeviceAddress<A>,
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

    /// Reads an array one element at a time: its length (index 0), then each element,
    /// concurrently within the per-device limit; the elements come back in order.
    pub async fn read_array_elements(
        &self,
        to: impl Into<DeviceAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
    ) -> Result<Vec<Element>, ClientError> {
        let to = to.into();
        let length = match self
            .read_once(to, object, property, Some(0))
            .await?
            .as_slice()
        {
            [Element::Application(ApplicationValue::Unsigned(n))] => *n,
            other => {
                return Err(ClientError::BadReply(format!(
                    "the length of {object} {property} is not an Unsigned: {other:?}"
                )));
            }
        };
        let length = u32::try_from(length)
            .ok()
            .filter(|n| *n <= MAX_FALLBACK_ELEMENTS)
            .ok_or_else(|| {
                ClientError::BadReply(format!(
                    "{object} {property} has {length} elements, more than {MAX_FALLBACK_ELEMENTS}"
                ))
            })?;
        let reads: Vec<_> = (1..=length)
            .map(|index| self.read_once(to, object, property, Some(index)))
            .collect();
        let mut elements = Vec::new();
        for (index, result) in (1..=length).zip(join_all(reads).await) {
            match result {
                Ok(element) => elements.extend(element),
                // A busy device may abort or drop one of many concurrent reads: that element
                // is read once more, alone, before the whole read fails.
                Err(ClientError::Abort { .. } | ClientError::Timeout) => {
                    elements.extend(self.read_once(to, object, property, Some(index)).await?);
                }
                Err(error) => return Err(error),
            }
        }
        Ok(elements)
    }

    /// Reads many properties of one device: in ReadPropertyMultiple batches when the
    /// device offers the service, else (or for what a batch cannot carry) one
    /// ReadProperty each — every one within the per-device limit and its time limit.
    /// The results come back in the order of `references`.
    pub async fn read_many(
        &self,
        to: impl Into<DeviceAddress<A>>,
        references: &[ObjectPropertyReference],
    ) -> Vec<Result<Vec<Element>, ClientError>> {
        let to = to.into();
        if !self.extras.offers_rpm(&to) {
            return self.read_singly(to, references).await;
        }
        let batches = read_plan::batches(references, MAX_READS_PER_REQUEST, MAX_REQUEST_BYTES);
        let reads: Vec<_> = batches
            .into_iter()
            .map(|range| self.read_batch(to, &references[range]))
            .collect();
        join_all(reads).await.into_iter().flatten().collect()
    }

    /// One ReadPropertyMultiple of `references`, split in two when its answer is too long,
    /// read singly when the device does not offer the service.
    fn read_batch<'a>(
        &'a self,
        to: DeviceAddress<A>,
        references: &'a [ObjectPropertyReference],
    ) -> BoxedRead<'a> {
        Box::pin(async move {
            if references.len() == 1 || !self.extras.offers_rpm(&to) {
                return self.read_singly(to, references).await;
            }
            let request =
                ConfirmedRequest::ReadPropertyMultiple(read_plan::rpm_request(references));
            match self.request(to, request).await {
                Ok(Reply::ComplexAck(ComplexAckParameters::ReadPropertyMultiple(ack))) => {
                    read_plan::spread_results(references, &ack.results)
                }
                Ok(other) => references.iter().map(|_| Err(unexpected(&other))).collect(),
                Err(error) if read_plan::is_unsupported_service(&error) => {
                    self.extras.note_no_rpm(to);
                    self.read_singly(to, references).await
                }
                Err(error) if read_plan::is_segmentation_failure(&error) => {
                    let (first, second) = references.split_at(references.len() / 2);
                    let (mut a, b) =
                        tokio::join!(self.read_batch(to, first), self.read_batch(to, second));
                    a.extend(b);
                    a
                }
                Err(error) => references.iter().map(|_| Err(error.clone())).collect(),
            }
        })
    }

    async fn read_singly(
        &self,
        to: DeviceAddress<A>,
        references: &[ObjectPropertyReference],
    ) -> Vec<Result<Vec<Element>, ClientError>> {
        let reads: Vec<_> = references
            .iter()
            .map(|r| self.read(to, r.object, r.property, r.array_index))
            .collect();
        join_all(reads).await
    }
}

/// Runs futures concurrently and gives their outputs in order (the per-device semaphore
/// bounds how many requests are really outstanding).
pub(crate) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut set = Vec::with_capacity(futures.len());
    for future in futures {
        set.push(Box::pin(future));
    }
    let mut outputs: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, future) in outputs.iter_mut().zip(set.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(output) => *slot = Some(output),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
