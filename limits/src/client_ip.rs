//! The client address the per-IP limit is keyed by.
//!
//! `X-Forwarded-For` is believed only when the TCP peer is one of `server.trusted_proxies`;
//! otherwise anyone could pick a fresh address per request and escape the limit. Behind
//! trusted proxies the list is read from the right (each proxy appends the address it saw),
//! skipping trusted hops; the first untrusted address is the client.

use std::net::IpAddr;

/// Parsed `server.trusted_proxies`.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    blocks: Vec<(IpAddr, u8)>,
}

/// The resolved client address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

impl TrustedProxies {
    /// From the configuration's strings; invalid entries are refused by config validation
    /// before this runs, so here they are skipped.
    pub fn from_config(entries: &[String]) -> Self {
        TrustedProxies {
            blocks: entries
                .iter()
                .filter_map(|e| horst_config::parse_cidr(e).ok())
                .collect(),
        }
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.blocks
            .iter()
            .any(|(net, bits)| in_block(ip, canonical(*net), *bits))
    }

    /// The client address for a request from `peer` with these `X-Forwarded-For` header values.
    pub fn resolve<'a>(
        &self,
        peer: IpAddr,
        forwarded_for: impl IntoIterator<Item = &'a str>,
    ) -> ClientIp {
        let peer = canonical(peer);
        if !self.contains(peer) {
            return ClientIp(peer);
        }
        let hops: Vec<IpAddr> = forwarded_for
            .into_iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<IpAddr>().ok())
            .collect::<Option<Vec<_>>>()
            // A garbled header from a trusted proxy: fall back to the proxy itself rather
            // than trusting part of it.
            .unwrap_or_default();
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            let hop = canonical(hop);
            client = hop;
            if !self.contains(hop) {
                break;
            }
        }
        ClientIp(client)
    }
}

/// IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) count as their IPv4 address (a dual-stack
/// listener sees IPv4 clients that way; limits and caps must count them as one).
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

fn in_block(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let mask = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits.min(32))
            };
            u32::from(a) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let mask = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - bits.min(128))
            };
            u128::from(a) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn untrusted_peer_is_the_client_whatever_it_forwards() {
        let t = TrustedProxies::from_config(&["10.0.0.0/8".into()]);
        assert_eq!(
            t.resolve(ip("203.0.113.9"), ["1.2.3.4"]).0,
            ip("203.0.113.9")
        );
        let none = TrustedProxies::default();
        assert_eq!(
            none.resolve(ip("127.0.0.1"), ["1.2.3.4"]).0,
            ip("127.0.0.1")
        );
    }

    #[test]
    fn trusted_proxy_forwards_the_rightmost_untrusted_address() {
        let t = TrustedProxies::from_config(&["10.0.0.0/8".into(), "::1".into()]);
        // The client forged the first entry; the proxy appended the real one.
        assert_eq!(
            t.resolve(ip("10.1.2.3"), ["6.6.6.6, 198.51.100.7"]).0,
            ip("198.51.100.7")
        );
        // Two trusted hops.
        assert_eq!(
            t.resolve(ip("10.1.2.3"), ["198.51.100.7", "10.9.9.9"]).0,
            ip("198.51.100.7")
        );
        assert_eq!(t.resolve(ip("::1"), ["2001:db8::1"]).0, ip("2001:db8::1"));
        // No header, or a garbled one: the proxy itself.
        assert_eq!(t.resolve(ip("10.1.2.3"), []).0, ip("10.1.2.3"));
        assert_eq!(t.resolve(ip("10.1.2.3"), ["nonsense"]).0, ip("10.1.2.3"));
        // Mapped addresses count as IPv4.
        assert_eq!(
            t.resolve(ip("::ffff:10.0.0.1"), ["198.51.100.7"]).0,
            ip("198.51.100.7")
        );
    }

    #[test]
    fn cidr_matching() {
        assert!(in_block(ip("10.255.0.1"), ip("10.0.0.0"), 8));
        assert!(!in_block(ip("11.0.0.1"), ip("10.0.0.0"), 8));
        assert!(in_block(ip("1.2.3.4"), ip("0.0.0.0"), 0));
        assert!(in_block(ip("2001:db8::5"), ip("2001:db8::"), 32));
        assert!(!in_block(ip("2001:db9::5"), ip("2001:db8::"), 32));
    }
}
