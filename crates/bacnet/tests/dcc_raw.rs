//! Issue 30, item 3: DeviceCommunicationControl sent as raw datagrams on 127.0.0.1
//! (Clause 16.1). `disable`: only DeviceCommunicationControl and ReinitializeDevice are
//! answered; `disable-initiation`: requests are answered, nothing is initiated (the I-Am
//! that answers a Who-Is is the standard's one exception).

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;
mod raw_support;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use buildwire_bacnet::ObjectIdentifier;
use buildwire_bacnet::driver::{BacnetServer, BacnetServerConfig};
use tokio::net::UdpSocket;

use raw_support::receive;

/// ReadProperty of the device's object-name (77), unsegmented, max-APDU 1476.
fn read_name(invoke_id: u8, device: ObjectIdentifier) -> Vec<u8> {
    let mut apdu = vec![0x00, 0x05, invoke_id, 0x0C, 0x0C];
    apdu.extend_from_slice(&device.to_u32().to_be_bytes());
    apdu.extend_from_slice(&[0x19, 77]);
    apdu
}

/// DeviceCommunicationControl (service 17) with enable-disable [1] and no password.
fn dcc(invoke_id: u8, enable_disable: u8) -> Vec<u8> {
    vec![0x00, 0x05, invoke_id, 17, 0x19, enable_disable]
}

/// Who-Is without a range.
const WHO_IS: [u8; 2] = [0x10, 0x08];

const WAIT: Duration = Duration::from_secs(2);
const SILENCE: Duration = Duration::from_millis(600);

async fn setup() -> (BacnetServer, UdpSocket, SocketAddrV4, ObjectIdentifier) {
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        profiles::stress_profile().build().expect("test setup"),
    );
    config.announce = false;
    // Answers to Who-Is come back to the asker, not to 127.255.255.255.
    config.unicast_i_am = true;
    // A long segment timeout: no window is sent again while a test listens for silence.
    config.tsm.segment_timeout = Duration::from_secs(10);
    let server = BacnetServer::start(config).await.expect("test setup");
    let to = server.local_addr();
    let device = server.with_database(|db| db.device_identifier());
    let socket = UdpSocket::bind("127.0.0.1:0").await.expect("test setup");
    (server, socket, to, device)
}

#[tokio::test]
async fn disable_silences_everything_but_dcc_until_enable() {
    let (server, socket, to, device) = setup().await;
    let send = |apdu: Vec<u8>, reply: bool| raw_support::send(&socket, to, apdu, reply);

    send(read_name(1, device), true).await;
    let answer = receive(&socket, WAIT)
        .await
        .expect("answered while enabled");
    assert_eq!(&answer[..3], &[0x30, 1, 0x0C]);

    // disable (1): SimpleACK.
    send(dcc(2, 1), true).await;
    assert_eq!(receive(&socket, WAIT).await, Some(vec![0x20, 2, 17]));

    // ReadProperty and Who-Is get nothing at all.
    send(read_name(3, device), true).await;
    send(WHO_IS.to_vec(), false).await;
    assert_eq!(
        receive(&socket, SILENCE).await,
        None,
        "silent while disabled"
    );

    // enable (0): answered, and so is ReadProperty again.
    send(dcc(4, 0), true).await;
    assert_eq!(receive(&socket, WAIT).await, Some(vec![0x20, 4, 17]));
    send(read_name(5, device), true).await;
    let answer = receive(&socket, WAIT).await.expect("answered again");
    assert_eq!(&answer[..3], &[0x30, 5, 0x0C]);
    drop(server);
}

#[tokio::test]
async fn disable_initiation_still_answers_and_initiates_nothing() {
    let (server, socket, to, device) = setup().await;
    let send = |apdu: Vec<u8>, reply: bool| raw_support::send(&socket, to, apdu, reply);

    // disable-initiation (2).
    send(dcc(1, 2), true).await;
    assert_eq!(receive(&socket, WAIT).await, Some(vec![0x20, 1, 17]));

    send(read_name(2, device), true).await;
    let answer = receive(&socket, WAIT).await.expect("still answered");
    assert_eq!(&answer[..3], &[0x30, 2, 0x0C]);
    // Nothing else arrives: no I-Am or other message of the device's own.
    assert_eq!(receive(&socket, SILENCE).await, None);
    assert_eq!(
        server.with_server(|s| s.communication_state()),
        buildwire_bacnet::app::device_control::CommunicationState::InitiationDisabled
    );
    drop(server);
}

#[tokio::test]
async fn disable_stops_an_answer_being_sent_in_segments() {
    let (server, socket, to, device) = setup().await;
    let send = |apdu: Vec<u8>, reply: bool| raw_support::send(&socket, to, apdu, reply);

    // ReadProperty of object-list (76) at max-APDU 50, segments accepted: the answer
    // comes in segments, a window at a time.
    let mut read = vec![0x02, 0x00, 9, 0x0C, 0x0C];
    read.extend_from_slice(&device.to_u32().to_be_bytes());
    read.extend_from_slice(&[0x19, 76]);
    send(read, true).await;
    let mut last = None;
    while let Some(segment) = receive(&socket, Duration::from_millis(300)).await {
        assert_eq!(
            segment[0] & 0xF8,
            0x38,
            "a segmented ComplexACK: {segment:?}"
        );
        last = Some((segment[2], segment[3]));
    }
    let (sequence, window) = last.expect("a first window");

    send(dcc(10, 1), true).await;
    assert_eq!(receive(&socket, WAIT).await, Some(vec![0x20, 10, 17]));

    // The SegmentACK of the window is dropped: no next window.
    send(vec![0x40, 9, sequence, window], false).await;
    assert_eq!(
        receive(&socket, SILENCE).await,
        None,
        "silent while disabled"
    );
    drop(server);
}

#[tokio::test]
async fn a_disable_of_zero_minutes_is_indefinite() {
    let (server, socket, to, device) = setup().await;
    let send = |apdu: Vec<u8>, reply: bool| raw_support::send(&socket, to, apdu, reply);

    // disable with time-duration [0] = 0, as tools send for "no limit".
    send(vec![0x00, 0x05, 1, 17, 0x09, 0x00, 0x19, 0x01], true).await;
    assert_eq!(receive(&socket, WAIT).await, Some(vec![0x20, 1, 17]));
    send(read_name(2, device), true).await;
    assert_eq!(receive(&socket, SILENCE).await, None, "still disabled");
    drop(server);
}
