//! The reader's guard against being pointed inward (SSRF): a search result is untrusted input,
//! and a page URL may name, or resolve to, this machine, the local network or a cloud's
//! metadata service. Unless `search.read.allowPrivate` is set, only `http(s)` URLs whose
//! addresses are all public are read: an IP literal is checked here, a host name through
//! [`GuardedResolver`], the resolver of the reader's HTTP client, so the address checked is
//! the address connected to (no second lookup for a rebinding DNS server to answer
//! differently). Every redirect hop goes through the same checks.
//!
//! Behind a proxy (`http_proxy`, `https_proxy`, `all_proxy`, as the environment sets them)
//! the client hands a page's host name to the proxy unresolved, so the resolver never sees it:
//! then [`Proxies::check`] resolves every name itself before the request, with the same rule.
//! The proxy resolves it again, so a rebinding DNS server could still answer differently in
//! between; an operator who runs the proxy keeps it off the inside network. The proxies' own
//! hosts are the operator's choice, and are resolved whatever their addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why the address `ip` is not read, or `None` when it is public.
pub fn refused_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refused_v4(v4),
            None => refused_v6(v6),
        },
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        Some("a cloud metadata address")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || a == 0 {
        Some("not a unicast address")
    } else {
        None
    }
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some("a cloud metadata address")
    } else if ip.is_unique_local() {
        Some("a private address")
    } else if ip.is_unicast_link_local() {
        Some("a link-local address")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("not a unicast address")
    } else {
        None
    }
}

/// Whether `url` may be read: `http` or `https` with a host, and, unless `allow_private`, not
/// an IP literal of a refused address nor `localhost`. Host names are checked again when they
/// resolve.
pub fn check_url(url: &Url, allow_private: bool) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "its scheme `{}` is not http or https",
            url.scheme()
        ));
    }
    let Some(host) = url.host() else {
        return Err("it has no host".into());
    };
    if allow_private {
        return Ok(());
    }
    let ip = match host {
        url::Host::Ipv4(ip) => IpAddr::V4(ip),
        url::Host::Ipv6(ip) => IpAddr::V6(ip),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                return Err(private("localhost"));
            }
            return Ok(());
        }
    };
    match refused_ip(ip) {
        Some(why) => Err(private(why)),
        None => Ok(()),
    }
}

/// The cause of a refusal, with the way out.
fn private(what: &str) -> String {
    format!(
        "it points at {what}, which is not read unless `search.read.allowPrivate` is true (an intranet)"
    )
}

/// Why the resolver gave no address: the name does not resolve, or only to refused
/// addresses. Asking again gives the same answer, so the fetcher does not retry it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unresolved(pub String);

/// The reader client's resolver: the system's, keeping only public addresses unless private
/// ones are allowed (or the name is a proxy's, `exempt`).
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    pub allow_private: bool,
    pub exempt: Vec<String>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private
            || self
                .exempt
                .iter()
                .any(|host| host.eq_ignore_ascii_case(name.as_str()));
        Box::pin(async move {
            let kept = lookup(name.as_str(), allow_private).await?;
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

/// The addresses of `host` that may be read (all of them with `allow_private`), or why none.
async fn lookup(host: &str, allow_private: bool) -> Result<Vec<SocketAddr>, Unresolved> {
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| Unresolved(format!("`{host}` does not resolve ({e})")))?
        .collect();
    let kept: Vec<SocketAddr> = found
        .iter()
        .copied()
        .filter(|a| allow_private || refused_ip(a.ip()).is_none())
        .collect();
    if kept.is_empty() {
        let why = found
            .first()
            .and_then(|a| refused_ip(a.ip()))
            .unwrap_or("no address");
        return Err(Unresolved(private(&format!(
            "`{host}`, which resolves to {why}"
        ))));
    }
    Ok(kept)
}

/// The proxies the environment sets for the reader's client (reqwest reads the same
/// variables), by their hosts.
#[derive(Debug, Clone, Default)]
pub struct Proxies {
    hosts: Vec<String>,
}

/// The variables that set a proxy, in both cases as curl and reqwest read them.
const PROXY_VARS: &[&str] = &[
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
];

impl Proxies {
    /// The proxies of `env` (a variable's value by its name).
    pub fn of(env: impl Fn(&str) -> Option<String>) -> Proxies {
        let hosts = PROXY_VARS
            .iter()
            .filter_map(|var| env(var).filter(|v| !v.trim().is_empty()))
            .filter_map(|value| {
                let value = value.trim();
                let url = match value.contains("://") {
                    true => Url::parse(value),
                    false => Url::parse(&format!("http://{value}")),
                };
                Some(url.ok()?.host_str()?.trim_matches(['[', ']']).to_string())
            })
            .collect();
        Proxies { hosts }
    }

    /// The proxies' hosts, whose addresses are never refused.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Whether any proxy is set.
    pub fn any(&self) -> bool {
        !self.hosts.is_empty()
    }

    /// With a proxy set, `url`'s host name resolved here by the guard's rule, since the proxy
    /// is handed the name; `Err(cause)` when it may not be read. Without one, or for an IP
    /// literal (checked by [`check_url`]), nothing to do.
    pub async fn check(&self, url: &Url, allow_private: bool) -> Result<(), Unresolved> {
        match url.host() {
            Some(url::Host::Domain(name)) if self.any() && !allow_private => {
                lookup(name, false).await.map(|_| ())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn inward_addresses_are_refused_and_public_ones_kept() {
        for refused in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "fd00:ec2::254",
        ] {
            assert!(refused_ip(ip(refused)).is_some(), "{refused}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert_eq!(refused_ip(ip(public)), None, "{public}");
        }
    }

    #[test]
    fn urls_are_checked_by_scheme_and_literal_host() {
        let url = |s: &str| Url::parse(s).expect("a URL");
        assert!(check_url(&url("https://example.org/a"), false).is_ok());
        let refused = check_url(&url("http://127.0.0.1:8080/"), false).expect_err("loopback");
        assert!(refused.contains("allowPrivate"), "{refused}");
        assert!(check_url(&url("http://[::1]/"), false).is_err());
        assert!(check_url(&url("http://LOCALHOST./x"), false).is_err());
        assert!(check_url(&url("http://169.254.169.254/latest/meta-data"), false).is_err());
        assert!(check_url(&url("file:///etc/passwd"), true).is_err());
        assert!(check_url(&url("ftp://example.org/"), false).is_err());
        assert!(check_url(&url("http://127.0.0.1:8080/"), true).is_ok());
    }

    #[tokio::test]
    async fn the_resolver_drops_private_answers() {
        let guarded = GuardedResolver {
            allow_private: false,
            exempt: Vec::new(),
        };
        let name: Name = "localhost".parse().expect("a name");
        let err = guarded.resolve(name).await.err().expect("refused");
        assert!(err.to_string().contains("allowPrivate"), "{err}");
        let open = GuardedResolver {
            allow_private: true,
            exempt: Vec::new(),
        };
        let name: Name = "localhost".parse().expect("a name");
        let addrs: Vec<SocketAddr> = open.resolve(name).await.expect("resolved").collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    #[tokio::test]
    async fn behind_a_proxy_names_are_resolved_and_checked_before_the_request() {
        let env = |var: &str| match var {
            "https_proxy" => Some("proxy.test:3128".to_string()),
            "ALL_PROXY" => Some("socks5://[::1]:1080".to_string()),
            _ => None,
        };
        let proxies = Proxies::of(env);
        assert_eq!(proxies.hosts(), ["proxy.test", "::1"]);
        let url = |s: &str| Url::parse(s).expect("a URL");
        let refused = proxies
            .check(&url("http://localhost:8080/x"), false)
            .await
            .expect_err("loopback");
        assert!(refused.to_string().contains("allowPrivate"), "{refused}");
        assert!(proxies.check(&url("http://localhost/"), true).await.is_ok());
        assert!(
            proxies
                .check(&url("http://93.184.216.34/"), false)
                .await
                .is_ok()
        );
        let none = Proxies::of(|_| None);
        assert!(none.check(&url("http://localhost/"), false).await.is_ok());
    }
}
