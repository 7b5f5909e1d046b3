//! Which IPv4 address a rank listens on and publishes in its business card.
//!
//! - `OXMPI_TCP_ADDR=A.B.C.D`: listen on that address and publish it;
//! - `OXMPI_TCP_IF=NAME`: the IPv4 address of that interface, likewise;
//! - otherwise listen on every address and publish the first IPv4 address of an
//!   interface that is up and not loopback (127.0.0.1 if there is none); peers on the
//!   same node then connect through 127.0.0.1.

use std::net::Ipv4Addr;

/// Where to listen and what to tell peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenPlan {
    pub bind: Ipv4Addr,
    pub publish: Ipv4Addr,
    /// Peers on the same node may use 127.0.0.1 (the socket listens on every address).
    pub loopback_ok: bool,
}

/// Decides the plan from the two settings.
pub fn plan(addr: Option<&str>, iface: Option<&str>) -> Result<ListenPlan, String> {
    if let Some(a) = addr {
        let ip: Ipv4Addr = a
            .trim()
            .parse()
            .map_err(|_| format!("OXMPI_TCP_ADDR={a:?} is not an IPv4 address"))?;
        return Ok(ListenPlan {
            bind: ip,
            publish: ip,
            loopback_ok: ip.is_unspecified(),
        });
    }
    let ifaces = interfaces();
    if let Some(name) = iface {
        let ip = ifaces
            .iter()
            .find(|(n, _, _)| n == name.trim())
            .map(|(_, ip, _)| *ip)
            .ok_or_else(|| {
                format!("OXMPI_TCP_IF={name:?}: no such interface with an IPv4 address")
            })?;
        return Ok(ListenPlan {
            bind: ip,
            publish: ip,
            loopback_ok: false,
        });
    }
    let publish = ifaces
        .iter()
        .find(|(_, ip, up)| *up && !ip.is_loopback())
        .map(|(_, ip, _)| *ip)
        .unwrap_or(Ipv4Addr::LOCALHOST);
    Ok(ListenPlan {
        bind: Ipv4Addr::UNSPECIFIED,
        publish,
        loopback_ok: true,
    })
}

/// (name, IPv4 address, up) of every interface that has an IPv4 address.
fn interfaces() -> Vec<(String, Ipv4Addr, bool)> {
    let Ok(list) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    list.filter_map(|i| {
        let sin = i.address.as_ref()?.as_sockaddr_in()?;
        let up = i.flags.contains(nix::net::if_::InterfaceFlags::IFF_UP);
        Some((i.interface_name.clone(), sin.ip(), up))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_and_interface_choices() {
        let p = plan(Some("127.0.0.1"), None).unwrap();
        assert_eq!(p.bind, Ipv4Addr::LOCALHOST);
        assert!(!p.loopback_ok);
        assert!(plan(Some("300.1.1.1"), None).is_err());
        let p = plan(None, Some("lo")).unwrap();
        assert_eq!(p.publish, Ipv4Addr::LOCALHOST);
        assert!(plan(None, Some("no-such-if0"))
            .unwrap_err()
            .contains("no such interface"));
        let p = plan(None, None).unwrap();
        assert!(p.bind.is_unspecified() && p.loopback_ok);
    }
}
