//! Shared set-ups of the network tests: a router between a client network and a stress
//! server network on loopback (distinct ports stand for distinct networks), and the check
//! that a client reads and writes every stress-server object through it.
#![allow(dead_code, clippy::unwrap_used)]

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};

use buildwire_bacnet::ObjectIdentifier;
use buildwire_bacnet::app::ClientError;
use buildwire_bacnet::driver::{
    BacnetClient, BacnetRouter, BacnetServer, BacnetServerConfig, Bip6Config, Bip6Transport,
    BipConfig, BipTransport, ClientConfig, RouterOptions, RouterPort,
};
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::enums::{ObjectType, PropertyIdentifier as P};
use buildwire_bacnet::link::bip6::Vmac;
use buildwire_bacnet::network::address::bip_mac;
use buildwire_bacnet::network::{DeviceAddress, LinkAddress, MacAddress, RoutedAddress};
use buildwire_bacnet::objects::PropertySelection;
use buildwire_bacnet::objects::device::DeviceConfig;
use buildwire_bacnet::objects::profile::DeviceProfile;
use buildwire_bacnet::services::{PropertyReference, ReadAccessSpecification, ReadResult};
use buildwire_bacnet::tsm::TsmConfig;
// The including test declares `mod profiles` (crates/bench/src/bacnet/profiles.rs).
use crate::profiles::stress_profile;

pub const LOOPBACK_BROADCAST: Ipv4Addr = Ipv4Addr::new(127, 255, 255, 255);

/// A port free on 127.0.0.1 (and, as far as anyone can tell, on 127.0.0.x).
pub fn free_port() -> u16 {
    let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

fn routed(network: u16, mac: MacAddress) -> DeviceAddress {
    DeviceAddress::Remote(RoutedAddress { network, mac })
}

async fn bip(bind: SocketAddrV4) -> BipTransport {
    BipTransport::bind(&BipConfig {
        bind,
        broadcast: Some(LOOPBACK_BROADCAST),
    })
    .await
    .unwrap()
}

/// The device a router hosts in these tests: Device 500, "Router-500".
pub fn router_device() -> (
    buildwire_bacnet::objects::database::ObjectDatabase,
    TsmConfig,
) {
    let profile = DeviceProfile {
        device: DeviceConfig {
            instance: 500,
            name: "Router-500".to_owned(),
            ..DeviceConfig::default()
        },
        objects: Vec::new(),
    };
    (profile.build().unwrap(), TsmConfig::default())
}

/// Network 1: the router's port 1 at 127.0.0.1:P1 and the client at 127.0.0.2:P1.
/// Network 2: the router's port 2 at 127.0.0.1:P2 and the stress server at 127.0.0.3:P2.
pub struct LoopbackBipToBip {
    pub router: BacnetRouter,
    pub client: BacnetClient,
    pub reference: Reference,
    p1: u16,
    p2: u16,
}

/// Where to check what the server holds.
pub enum Reference {
    Ipv4(BacnetServer),
    Ipv6(BacnetServer<Vmac>),
    Sc(BacnetServer<buildwire_bacnet::link::sc::Vmac>),
}

impl Reference {
    pub fn with_database<R>(
        &self,
        f: impl FnOnce(&mut buildwire_bacnet::objects::database::ObjectDatabase) -> R,
    ) -> R {
        match self {
            Self::Ipv4(server) => server.with_database(f),
            Self::Ipv6(server) => server.with_database(f),
            Self::Sc(server) => server.with_database(f),
        }
    }
}

impl LoopbackBipToBip {
    pub async fn start() -> Self {
        Self::start_inner(false).await
    }

    pub async fn start_with_router_device() -> Self {
        Self::start_inner(true).await
    }

    async fn start_inner(with_device: bool) -> Self {
        let (p1, p2) = (free_port(), free_port());
        let ports = vec![
            RouterPort::Bip {
                network: 1,
                transport: bip(SocketAddrV4::new(Ipv4Addr::LOCALHOST, p1)).await,
            },
            RouterPort::Bip {
                network: 2,
                transport: bip(SocketAddrV4::new(Ipv4Addr::LOCALHOST, p2)).await,
            },
        ];
        let options = RouterOptions {
            device: with_device.then(router_device),
            ..RouterOptions::default()
        };
        let router = BacnetRouter::start(ports, options).await.unwrap();
        let mut config = BacnetServerConfig::new(
            SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 3), p2),
            stress_profile().build().unwrap(),
        );
        config.broadcast = Some(LOOPBACK_BROADCAST);
        config.announce = false;
        let server = BacnetServer::start(config).await.unwrap();
        let client = BacnetClient::start(ClientConfig::new(
            SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), p1),
            Some(LOOPBACK_BROADCAST),
        ))
        .await
        .unwrap();
        // The server's own database says what the network must see.
        Self {
            router,
            client,
            reference: Reference::Ipv4(server),
            p1,
            p2,
        }
    }

    /// The stress server as the client names it: `2:7f000003PPPP`.
    pub fn server_address(&self) -> DeviceAddress {
        routed(
            2,
            bip_mac(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 3), self.p2)),
        )
    }

    /// The router's own address on network 1.
    pub fn router_port1(&self) -> DeviceAddress {
        DeviceAddress::Local(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.p1))
    }

    /// The router as a node of network 2.
    pub fn router_on_network2(&self) -> DeviceAddress {
        routed(2, bip_mac(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.p2)))
    }

    pub async fn shutdown(self) {
        self.client.shutdown();
        self.router.shutdown().await;
        if let Reference::Ipv4(server) = self.reference {
            server.shutdown().await;
        }
    }
}

/// Network 1 as in [`LoopbackBipToBip`]; network 2 is B/IPv6 on [::1]: the router's port
/// (VMAC 0x0000FE) and the stress server (VMAC of device 400, 0x000190). Loopback has no
/// multicast here, so the router's port is told where the server's VMAC is; the server
/// learns the router's from its first message.
pub struct LoopbackBipToBip6 {
    pub router: BacnetRouter,
    pub client: BacnetClient,
    pub reference: Reference,
}

pub const SERVER_VMAC: Vmac = Vmac([0x00, 0x01, 0x90]);
pub const ROUTER_VMAC: Vmac = Vmac([0x00, 0x00, 0xFE]);

impl LoopbackBipToBip6 {
    pub async fn start() -> Self {
        let p1 = free_port();
        let server_transport = Bip6Transport::bind(&Bip6Config {
            multicast: None,
            ..Bip6Config::new(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 0, 0, 0), SERVER_VMAC)
        })
        .await
        .unwrap();
        let router6 = Bip6Transport::bind(&Bip6Config {
            multicast: None,
            ..Bip6Config::new(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 0, 0, 0), ROUTER_VMAC)
        })
        .await
        .unwrap();
        router6.learn(SERVER_VMAC, server_transport.local_addr());
        let ports = vec![
            RouterPort::Bip {
                network: 1,
                transport: bip(SocketAddrV4::new(Ipv4Addr::LOCALHOST, p1)).await,
            },
            RouterPort::Bip6 {
                network: 2,
                transport: router6,
            },
        ];
        let router = BacnetRouter::start(ports, RouterOptions::default())
            .await
            .unwrap();
        let mut config = BacnetServerConfig::new(
            SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
            stress_profile().build().unwrap(),
        );
        config.announce = false;
        let server = BacnetServer::start_on(server_transport, config)
            .await
            .unwrap();
        let client = BacnetClient::start(ClientConfig::new(
            SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), p1),
            Some(LOOPBACK_BROADCAST),
        ))
        .await
        .unwrap();
        Self {
            router,
            client,
            reference: Reference::Ipv6(server),
        }
    }

    /// The stress server as the client names it: `2:000190`.
    pub fn server_address(&self) -> DeviceAddress {
        routed(2, MacAddress::new(&SERVER_VMAC.0).unwrap())
    }

    pub async fn shutdown(self) {
        self.client.shutdown();
        self.router.shutdown().await;
        if let Reference::Ipv6(server) = self.reference {
            server.shutdown().await;
        }
    }
}

/// What a write does to a value of `object`'s present-value type.
fn present_value_for(object: ObjectIdentifier) -> Option<Element> {
    let value = match object.object_type() {
        ObjectType::AnalogInput | ObjectType::AnalogOutput | ObjectType::AnalogValue => {
            ApplicationValue::Real(42.25)
        }
        ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue => {
            ApplicationValue::Enumerated(1)
        }
        ObjectType::MultiStateInput
        | ObjectType::MultiStateOutput
        | ObjectType::MultiStateValue => ApplicationValue::Unsigned(2),
        _ => return None,
    };
    Some(Element::Application(value))
}

/// Through `client`, reads every property of every object of the server (ReadProperty-
/// Multiple `all`) and compares each with the server's own database; then writes the
/// present-value of every object that has one (at priority 8) and checks the outcome,
/// success or the exact error, against the database, and that successful writes read back.
pub async fn check_every_stress_object<A: LinkAddress>(
    client: &BacnetClient<A>,
    target: DeviceAddress<A>,
    reference: &Reference,
) {
    let objects: Vec<ObjectIdentifier> =
        reference.with_database(|db| db.objects().map(|o| o.identifier()).collect());
    assert!(objects.len() >= 40, "{}", objects.len());
    let mut properties_read = 0;
    for &object in &objects {
        let results = client
            .read_multiple(
                target,
                vec![ReadAccessSpecification {
                    object,
                    properties: vec![PropertyReference {
                        property: P::All,
                        array_index: None,
                    }],
                }],
            )
            .await
            .unwrap_or_else(|e| panic!("{object}: {e}"));
        assert_eq!(results.len(), 1);
        let expected = reference
            .with_database(|db| db.read_selection(object, PropertySelection::All))
            .unwrap();
        let got = &results[0].results;
        assert_eq!(got.len(), expected.len(), "{object}");
        for (read, (property, value)) in got.iter().zip(expected) {
            assert_eq!(read.property, property, "{object}");
            if matches!(property, P::LocalTime | P::LocalDate) {
                continue;
            }
            match (&read.result, value) {
                (ReadResult::Value(got), Ok(expected)) => {
                    assert_eq!(got, &expected, "{object} {property}");
                }
                (ReadResult::Error(got), Err(expected)) => {
                    assert_eq!((got.class, got.code), (expected.class, expected.code));
                }
                (got, expected) => panic!("{object} {property}: {got:?} vs {expected:?}"),
            }
            properties_read += 1;
        }
    }
    assert!(properties_read > 400, "{properties_read}");
    let mut written = 0;
    for &object in &objects {
        let Some(value) = present_value_for(object) else {
            continue;
        };
        let got = client
            .write(
                target,
                object,
                P::PresentValue,
                vec![value.clone()],
                Some(8),
                None,
            )
            .await;
        // The same write again, locally, must end the same way (writes are idempotent).
        let local = reference.with_database(|db| {
            db.write_property(
                object,
                P::PresentValue,
                None,
                std::slice::from_ref(&value),
                Some(8),
            )
        });
        match (got, local) {
            (Ok(()), Ok(_)) => {
                let back = client
                    .read(target, object, P::PresentValue, None)
                    .await
                    .unwrap();
                assert_eq!(back, vec![value], "{object}");
                written += 1;
            }
            (Err(ClientError::Error { error, .. }), Err(expected)) => {
                assert_eq!(
                    (error.class, error.code),
                    (expected.class, expected.code),
                    "{object}"
                );
            }
            (got, local) => panic!("{object}: network {got:?}, local {local:?}"),
        }
    }
    // AO 5, AV 5, BO 3, BV 3, MSV 2 take a commanded present-value.
    assert!(written >= 18, "{written}");
}
