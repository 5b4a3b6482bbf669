//! The netmask of a local IPv4 address, from the interface that holds it (`getifaddrs`), so
//! that a B/IP socket bound to that address broadcasts to its subnet's real broadcast
//! address rather than a guess.

use std::net::Ipv4Addr;

/// The netmask of the interface that holds `address`, or `None` when no interface of this
/// network namespace holds it (or the list cannot be read).
pub(crate) fn netmask_of(address: Ipv4Addr) -> Option<Ipv4Addr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a pointer to a list it allocates into `list`; on success we
    // walk it read-only below and hand it back to freeifaddrs exactly once.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut entry = list;
    while !entry.is_null() {
        // SAFETY: `entry` is a non-null node of the list getifaddrs returned, which stays
        // valid until freeifaddrs below.
        let node = unsafe { &*entry };
        // SAFETY: each address pointer is null or points to a sockaddr of the family its
        // sa_family names; AF_INET ones are sockaddr_in.
        if let (Some(ip), Some(mask)) =
            unsafe { (ipv4_of(node.ifa_addr), ipv4_of(node.ifa_netmask)) }
            && ip == address
        {
            found = Some(mask);
            break;
        }
        entry = node.ifa_next;
    }
    // SAFETY: `list` came from a successful getifaddrs and is freed once; nothing of it is
    // used afterwards (the result was copied out).
    unsafe { libc::freeifaddrs(list) };
    found
}

/// The IPv4 address of a sockaddr, when it is one.
///
/// # Safety
/// `address` is null or points to a valid sockaddr whose `sa_family` tells its real type.
unsafe fn ipv4_of(address: *const libc::sockaddr) -> Option<Ipv4Addr> {
    if address.is_null() {
        return None;
    }
    // SAFETY: non-null and valid per the function's contract.
    if i32::from(unsafe { (*address).sa_family }) != libc::AF_INET {
        return None;
    }
    // SAFETY: an AF_INET sockaddr is a sockaddr_in.
    let v4 = unsafe { &*address.cast::<libc::sockaddr_in>() };
    Some(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_has_the_8_netmask() {
        assert_eq!(
            netmask_of(Ipv4Addr::LOCALHOST),
            Some(Ipv4Addr::new(255, 0, 0, 0))
        );
        // No interface holds a TEST-NET-3 address.
        assert_eq!(netmask_of(Ipv4Addr::new(203, 0, 113, 77)), None);
    }
}
