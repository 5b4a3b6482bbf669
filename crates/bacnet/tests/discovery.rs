//! Issue 25: whole-site discovery (`driver::discovery`) on loopback. A site of several
//! hundred devices, each its own `BacnetServer` on 127.0.1.x / 127.0.2.x sharing one port,
//! found by a paced Who-Is sweep in instance ranges, its I-Ams deduplicated; devices
//! behind a router found through Who-Is-Router-To-Network; a device's inventory and
//! points read through the router.
#![allow(clippy::unwrap_used)]

mod support_network;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Mutex;
use std::time::Duration;

use buildwire_bacnet::driver::discovery::{self, Progress, SweepOptions};
use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig, ClientConfig};
use buildwire_bacnet::network::DeviceAddress;

use support_network::{LOOPBACK_BROADCAST, LoopbackBipToBip, free_port};

/// Devices of the large site.
const SITE_DEVICES: u32 = 300;
/// The first device instance of the site.
const FIRST_INSTANCE: u32 = 10_000;

/// The `n`th address of the site: 127.0.1.1, ..., 127.0.1.250, 127.0.2.1, ...
fn site_address(n: u32, port: u16) -> SocketAddrV4 {
    let third = u8::try_from(1 + n / 250).unwrap();
    let fourth = u8::try_from(1 + n % 250).unwrap();
    SocketAddrV4::new(Ipv4Addr::new(127, 0, third, fourth), port)
}

async fn site_device(address: SocketAddrV4, instance: u32) -> BacnetServer {
    let mut profile = profiles::large_profile(2);
    profile.device.instance = instance;
    let mut config = BacnetServerConfig::new(address, profile.build().unwrap());
    config.broadcast = Some(LOOPBACK_BROADCAST);
    config.announce = false;
    BacnetServer::start(config).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_of_several_hundred_devices_is_found_in_paced_ranges_and_deduplicated() {
    let port = free_port();
    let mut servers = Vec::new();
    for n in 0..SITE_DEVICES {
        servers.push(site_device(site_address(n, port), FIRST_INSTANCE + n).await);
    }
    // A second device configured with the first one's instance, at another address, and
    // one outside the swept instances.
    let twin = site_address(SITE_DEVICES, port);
    servers.push(site_device(twin, FIRST_INSTANCE).await);
    servers.push(site_device(site_address(SITE_DEVICES + 1, port), 900_000).await);

    let client = BacnetClient::start(ClientConfig::new(
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, port),
        Some(LOOPBACK_BROADCAST),
    ))
    .await
    .unwrap();
    let options = SweepOptions {
        low: FIRST_INSTANCE,
        high: FIRST_INSTANCE + 499,
        range_size: 50,
        pause: Duration::from_millis(30),
        wait: Duration::from_secs(2),
        routers: false,
        ..SweepOptions::default()
    };
    let heard = Mutex::new(Vec::new());
    let site = discovery::sweep(&client, &options, &|progress| {
        heard.lock().unwrap().push(progress);
    })
    .await
    .unwrap();

    // 500 instances in ranges of 50: ten Who-Is, each reported.
    assert_eq!(site.who_is_sent, 10);
    let heard = heard.into_inner().unwrap();
    assert_eq!(heard.len(), 10, "{heard:?}");
    assert!(heard.contains(&Progress::WhoIs {
        sent: 10,
        total: 10
    }));
    // Every device once, by instance; the twin only as a second address of its instance.
    assert_eq!(site.devices.len(), SITE_DEVICES as usize);
    let instances: Vec<u32> = site
        .devices
        .iter()
        .map(|d| d.i_am.device.instance())
        .collect();
    let expected: Vec<u32> = (FIRST_INSTANCE..FIRST_INSTANCE + SITE_DEVICES).collect();
    assert_eq!(instances, expected);
    assert!(site.answers > u64::from(SITE_DEVICES), "{}", site.answers);
    let first = &site.devices[0];
    assert_eq!(first.also_at.len(), 1, "{first:?}");
    let addresses = [first.address, first.also_at[0]];
    assert!(
        addresses.contains(&DeviceAddress::Local(twin)),
        "{addresses:?}"
    );
    assert!(
        addresses.contains(&DeviceAddress::Local(site_address(0, port))),
        "{addresses:?}"
    );
    for device in &site.devices[1..] {
        assert!(device.also_at.is_empty(), "{device:?}");
    }

    // One device of the site, read whole: its inventory and points.
    let some = &site.devices[123];
    let inventory = discovery::object_inventory(&client, some.address, Some(some.i_am.device))
        .await
        .unwrap();
    assert_eq!(inventory.objects.len(), 3, "{inventory:?}");
    let points =
        discovery::read_points(&client, some.address, &inventory.objects[1..], &|_| {}).await;
    assert_eq!(points.len(), 2);
    assert!(
        points
            .iter()
            .all(|p| p.name.is_some() && p.errors.is_empty()),
        "{points:?}"
    );

    client.shutdown();
    for server in servers {
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_behind_a_router_are_found_through_who_is_router_to_network() {
    let setup = LoopbackBipToBip::start().await;
    let DeviceAddress::Local(router) = setup.router_port1() else {
        panic!("the router is local");
    };
    // A client that broadcasts locally only: without asking for routers it cannot see
    // network 2.
    let mut config = ClientConfig::new(
        SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 4), router.port()),
        Some(LOOPBACK_BROADCAST),
    );
    config.global_broadcasts = false;
    let client = BacnetClient::start(config).await.unwrap();
    let local_only = SweepOptions {
        wait: Duration::from_millis(800),
        routers: false,
        ..SweepOptions::default()
    };
    let site = discovery::sweep(&client, &local_only, &|_| {})
        .await
        .unwrap();
    assert!(site.devices.is_empty(), "{:?}", site.devices);

    let with_routers = SweepOptions {
        routers: true,
        router_wait: Duration::from_millis(500),
        ..local_only
    };
    let site = discovery::sweep(&client, &with_routers, &|_| {})
        .await
        .unwrap();
    assert_eq!(site.networks, vec![(2, router)]);
    assert_eq!(site.who_is_sent, 2);
    assert_eq!(site.devices.len(), 1, "{:?}", site.devices);
    let device = &site.devices[0];
    assert_eq!(device.i_am.device.instance(), 400);
    assert_eq!(device.address, setup.server_address());

    // Through the router: the inventory (the device asked by the wildcard instance) and
    // the points.
    let inventory = discovery::object_inventory(&client, device.address, None)
        .await
        .unwrap();
    assert_eq!(inventory.device, device.i_am.device);
    let expected = setup.reference.with_database(|db| db.len());
    assert_eq!(inventory.objects.len(), expected);
    let points = discovery::read_points(&client, device.address, &inventory.objects, &|_| {}).await;
    assert_eq!(points.len(), expected);
    let named = points.iter().filter(|p| p.name.is_some()).count();
    assert_eq!(named, expected, "{points:?}");
    client.shutdown();
    setup.shutdown().await;
}
