//! COV subscriptions of [`BacnetClient`] as async streams: [`BacnetClient::subscribe_cov`]
//! subscribes once (its errors come back at once), then a task keeps the subscription
//! alive — renewing it, subscribing again after a device restart — as the sans-IO
//! [`CovSubscriber`] decides, and forwards the matching notifications to the
//! [`CovSubscription`] stream. Dropping the stream (or [`CovSubscription::cancel`]) ends
//! the task and cancels the subscription on the device.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::{BacnetClient, Command, Extras, Notice};
use crate::app::PeerAddress;
use crate::app::{ClientError, CovNotification, CovOptions, CovSubscriber, Reply};
use crate::network::RoutedAddress;
use crate::network::{DeviceAddress, LinkAddress};
use crate::services::ConfirmedRequest;

/// Notifications buffered between the task and a slow reader of the stream; past this the
/// task waits (and the client's shared channel may drop older notifications).
const STREAM_BUFFER: usize = 256;

/// A live COV subscription: a stream of the notifications it receives.
#[derive(Debug)]
pub struct CovSubscription<A: LinkAddress = std::net::SocketAddrV4> {
    notifications: mpsc::Receiver<CovNotification<A>>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    process_identifier: u32,
}

impl<A: LinkAddress> CovSubscription<A> {
    /// The next notification (the first is the device's initial one), or `None` once the
    /// client stopped.
    pub async fn next(&mut self) -> Option<CovNotification<A>> {
        self.notifications.recv().await
    }

    /// The process identifier the subscription uses.
    pub const fn process_identifier(&self) -> u32 {
        self.process_identifier
    }

    /// Cancels the subscription on the device and waits for that to be done.
    pub async fn cancel(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl<A: LinkAddress> Stream for CovSubscription<A> {
    type Item = CovNotification<A>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.notifications.poll_recv(cx)
    }
}

impl<A: LinkAddress> Drop for CovSubscription<A> {
    fn drop(&mut self) {
        // The task sees the stop (or the closed stream) and cancels on the device.
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// What the maintenance task needs from the client.
struct Link<A: LinkAddress> {
    commands: mpsc::Sender<Command<A>>,
    extras: Arc<Extras<A>>,
    limit: Duration,
}

impl<A: LinkAddress> Link<A> {
    async fn request(
        &self,
        to: DeviceAddress<A>,
        request: ConfirmedRequest,
    ) -> Result<Reply, ClientError> {
        super::send_request(&self.commands, &self.extras, self.limit, to, request).await
    }
}

impl<A: LinkAddress> BacnetClient<A> {
    /// Subscribes to COV notifications of `options.object` (SubscribeCOV, or
    /// SubscribeCOVProperty when `options.property` is set) on the device at `to`.
    /// Returns once the device accepted the subscription (or with its error); the stream
    /// then yields every notification, the initial one first, while the subscription is
    /// renewed and restored after device restarts (see [`CovSubscriber`]).
    pub async fn subscribe_cov(
        &self,
        to: impl Into<DeviceAddress<A>>,
        options: CovOptions,
    ) -> Result<CovSubscription<A>, ClientError> {
        let to = to.into();
        let process_identifier = self.extras.next_process.fetch_add(1, Ordering::Relaxed);
        let mut subscriber =
            CovSubscriber::new(std::time::Instant::now(), process_identifier, options);
        // Listen before subscribing, so the initial notification is not missed.
        let notices = self.extras.notices.add(process_identifier);
        let link = Link {
            commands: self.commands.clone(),
            extras: Arc::clone(&self.extras),
            limit: self.limit,
        };
        let request = subscriber
            .poll_request(std::time::Instant::now())
            .ok_or_else(|| ClientError::InvalidArgument("subscription not due".to_owned()))?;
        match link.request(to, request).await {
            Ok(Reply::SimpleAck) => subscriber.on_answer(std::time::Instant::now(), true),
            Ok(other) => {
                self.extras.notices.remove(process_identifier);
                return Err(super::unexpected(&other));
            }
            Err(error) => {
                self.extras.notices.remove(process_identifier);
                return Err(error);
            }
        }
        let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(maintain(link, to, subscriber, notices, sender, stopped));
        Ok(CovSubscription {
            notifications: receiver,
            stop: Some(stop),
            task: Some(task),
            process_identifier,
        })
    }
}

/// True when a message from `from` comes from the device the client calls `device` (a
/// routed device is recognised by its network and MAC, whichever router brought it).
fn is_from<A: LinkAddress>(device: &DeviceAddress<A>, from: &PeerAddress<A>) -> bool {
    match device {
        DeviceAddress::Local(link) => from.remote.is_none() && from.link == *link,
        DeviceAddress::Remote(remote) | DeviceAddress::Via { remote, .. } => {
            from.remote.map(RoutedAddress::from) == Some(*remote)
        }
    }
}

async fn maintain<A: LinkAddress>(
    link: Link<A>,
    device: DeviceAddress<A>,
    mut subscriber: CovSubscriber,
    mut notices: mpsc::Receiver<Notice<A>>,
    out: mpsc::Sender<CovNotification<A>>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        let now = std::time::Instant::now();
        if let Some(request) = subscriber.poll_request(now) {
            let success = matches!(link.request(device, request).await, Ok(Reply::SimpleAck));
            subscriber.on_answer(std::time::Instant::now(), success);
            continue;
        }
        let wake = subscriber.deadline().map_or_else(
            || tokio::time::Instant::now() + Duration::from_secs(3600),
            tokio::time::Instant::from_std,
        );
        tokio::select! {
            _ = &mut stopped => break,
            () = out.closed() => break,
            notice = notices.recv() => match notice {
                Some(Notice::Notification(notification)) => {
                    if is_from(&device, &notification.from)
                        && subscriber.matches(&notification.request)
                        && out.send(notification).await.is_err()
                    {
                        break;
                    }
                }
                Some(Notice::IAm(from)) => {
                    if is_from(&device, &from) {
                        subscriber.on_device_announced(std::time::Instant::now());
                    }
                }
                None => {
                    link.extras.notices.remove(subscriber.process_identifier());
                    return;
                }
            },
            () = tokio::time::sleep_until(wake) => {}
        }
    }
    link.extras.notices.remove(subscriber.process_identifier());
    // Best effort: a device that does not answer keeps the subscription until its
    // lifetime ends.
    let _ = link.request(device, subscriber.cancel_request()).await;
}
