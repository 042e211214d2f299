//! Which replica owns a session: a pure function of the session key and the fixed replica
//! count, computed the same way by the router (deploy/k8s/router/haproxy.cfg) and by every
//! replica, so a session has exactly one home whatever the router does.
//!
//! The router picks a replica with `use-server` rules on `crc32(route key) mod count`; a
//! replica computes the same owner for every session key it is asked about and refuses a call
//! about a session it does not own before anything is created. When the router cannot use the
//! owner (its DNS name stopped resolving, an operator disabled it) it falls back to another
//! replica, which refuses: the caller gets UNAVAILABLE naming the owner, never a second
//! session with the same key.
//!
//! The route key is the session key, except that a subagent session (`<parent>:subagent:<id>`,
//! nested children append again) routes as the key before its first `:subagent:` (its root
//! parent), and a cron session (`agent:<id>:cron:<job>`) routes as its agent's main session
//! (`agent:<id>:main`), where the agent's jobs live. Both rules are plain string cuts that
//! HAProxy's `regsub` and `field` converters compute too.
//!
//! What this is not: a membership protocol. The count is configuration (`--replica`), fixed by
//! the StatefulSet's replica count; changing it re-homes sessions (deploy/README.md).

use std::{fmt, str::FromStr};

use tonic::{Status, metadata::MetadataMap};

/// This process's place among the replicas: its ordinal (0-based) and how many there are.
/// The default, one replica of one, owns every session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    ordinal: u32,
    count: u32,
}

impl Default for Replica {
    fn default() -> Self {
        Self {
            ordinal: 0,
            count: 1,
        }
    }
}

impl fmt::Display for Replica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.ordinal, self.count)
    }
}

impl FromStr for Replica {
    type Err = String;

    /// `<ordinal>/<count>`, where the ordinal may be given as a StatefulSet pod name ending in
    /// it (`agent-service-1/2`), so Kubernetes can pass `$(POD_NAME)/2`.
    fn from_str(text: &str) -> Result<Self, String> {
        let shape = || {
            format!(
                "{text:?}: give <ordinal>/<count> (for example 1/2, or agent-service-1/2 from \
                 the StatefulSet pod name)"
            )
        };
        let (ordinal, count) = text.trim().rsplit_once('/').ok_or_else(shape)?;
        let ordinal = match ordinal.rsplit_once('-') {
            Some((name, ordinal)) if !name.is_empty() => ordinal,
            _ => ordinal,
        };
        let ordinal: u32 = ordinal.parse().map_err(|_| shape())?;
        let count: u32 = count.parse().map_err(|_| shape())?;
        if count == 0 || ordinal >= count {
            return Err(format!(
                "{text:?}: the ordinal must be below the replica count (0 to {})",
                count.saturating_sub(1)
            ));
        }
        Ok(Self { ordinal, count })
    }
}

impl Replica {
    /// Replica `ordinal` of `count`; None unless `ordinal < count`.
    pub fn new(ordinal: u32, count: u32) -> Option<Self> {
        (ordinal < count).then_some(Self { ordinal, count })
    }

    /// This replica's ordinal.
    pub fn ordinal(self) -> u32 {
        self.ordinal
    }

    /// How many replicas share the sessions.
    pub fn count(self) -> u32 {
        self.count
    }

    /// The runtime's view of ownership: whether this replica owns a session key; `None` for a
    /// single replica, which owns every session.
    pub fn session_owner(self) -> Option<agent_runtime::SessionOwner> {
        (self.count > 1).then(|| {
            std::sync::Arc::new(move |key: &str| self.owner_of(key) == self.ordinal)
                as agent_runtime::SessionOwner
        })
    }

    /// The ordinal of the replica that owns the session `key` (a full session key).
    pub fn owner_of(self, key: &str) -> u32 {
        crc32(route_key(key).as_bytes()) % self.count
    }

    /// Ok when this replica owns `key`; otherwise the refusal, naming the owner. A call that
    /// came through the router (it carries the routing header) gets UNAVAILABLE: the router
    /// could not reach the owner and fell back here, and the call succeeds once the owner is
    /// back. A call sent straight to the wrong replica gets FAILED_PRECONDITION: retrying it
    /// here will never work.
    pub fn check(self, key: &str, routed: bool) -> Result<(), Status> {
        let owner = self.owner_of(key);
        if owner == self.ordinal {
            return Ok(());
        }
        let message = format!(
            "session {key:?} lives on replica {owner} (agent-service-{owner}) of {count}, not \
             on this replica {this}: {advice}",
            count = self.count,
            this = self.ordinal,
            advice = if routed {
                "the router could not reach its owner; retry once that replica is back"
            } else {
                "send it through the router, or to that replica"
            }
        );
        Err(if routed {
            Status::unavailable(message)
        } else {
            Status::failed_precondition(message)
        })
    }
}

/// The key the router hashes for a session key: the part before the first `:subagent:` (a
/// subagent lives with its root parent), then for a cron session its agent's main session.
pub fn route_key(key: &str) -> String {
    let root = key.split_once(":subagent:").map_or(key, |(root, _)| root);
    let mut fields = root.split(':');
    match (fields.next(), fields.next(), fields.next()) {
        (Some(_), Some(agent), Some("cron")) => format!("agent:{agent}:main"),
        _ => root.to_owned(),
    }
}

/// The `x-openclaw-session-key` header of a call, if it has one: the router routes by it.
/// More than one is refused with INVALID_ARGUMENT (the router routes by one and the service
/// would check another), as is one that is not visible ASCII.
pub fn routing_header(metadata: &MetadataMap) -> Result<Option<&str>, Status> {
    let header = service_kit::SESSION_KEY_HEADER;
    let mut values = metadata.get_all(header).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Status::invalid_argument(format!(
            "{header}: sent more than once; send exactly one (the router routes by it)"
        )));
    }
    first
        .to_str()
        .map(|value| Some(value.trim()))
        .map_err(|_| Status::invalid_argument(format!("{header}: not visible ASCII text")))
}

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib and HAProxy's `crc32`
/// converter compute it). Bitwise: keys are short and this runs once per call.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_ieee_checksum() {
        // The standard check value, and zlib's crc32 of a session key.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }

    #[test]
    fn route_keys() {
        for (key, route) in [
            ("agent:main:main", "agent:main:main"),
            (
                "agent:main:telegram:direct:42",
                "agent:main:telegram:direct:42",
            ),
            ("agent:main:cron:j1", "agent:main:main"),
            ("agent:main:chat-7:subagent:ab12", "agent:main:chat-7"),
            (
                "agent:main:chat-7:subagent:ab12:subagent:cd34",
                "agent:main:chat-7",
            ),
            ("agent:main:cron:j1:subagent:ab12", "agent:main:main"),
            // The older child format routes by its agent, consistently on both sides.
            ("agent:main:subagent:ab12", "agent:main"),
            ("agent:main:crontab", "agent:main:crontab"),
        ] {
            assert_eq!(route_key(key), route, "{key}");
        }
    }

    #[test]
    fn replica_flags() {
        for (text, parsed) in [
            ("0/1", Replica::new(0, 1)),
            ("1/2", Replica::new(1, 2)),
            ("agent-service-1/2", Replica::new(1, 2)),
            (" 2/3 ", Replica::new(2, 3)),
        ] {
            assert_eq!(text.parse::<Replica>().ok(), parsed, "{text}");
        }
        for bad in ["", "1", "2/2", "0/0", "x/2", "1/two", "-1/2"] {
            let error = bad.parse::<Replica>().unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[test]
    fn one_replica_owns_everything_and_two_split_keys_between_them() {
        let keys: Vec<String> = (0..64).map(|i| format!("agent:main:k{i}")).collect();
        let single = Replica::default();
        assert!(keys.iter().all(|k| single.check(k, false).is_ok()));
        let (zero, one) = (Replica::new(0, 2).unwrap(), Replica::new(1, 2).unwrap());
        for key in &keys {
            // Exactly one of the two owns each key.
            assert_ne!(
                zero.check(key, false).is_ok(),
                one.check(key, false).is_ok(),
                "{key}"
            );
        }
        let owned_by_zero = keys.iter().filter(|k| zero.owner_of(k) == 0).count();
        assert!((16..48).contains(&owned_by_zero), "{owned_by_zero}");
    }

    #[test]
    fn a_refusal_names_the_owner_with_the_code_for_how_the_call_came() {
        let zero = Replica::new(0, 2).unwrap();
        let key = (0..64)
            .map(|i| format!("agent:main:k{i}"))
            .find(|k| zero.owner_of(k) == 1)
            .unwrap();
        let direct = zero.check(&key, false).unwrap_err();
        assert_eq!(direct.code(), tonic::Code::FailedPrecondition);
        assert!(
            direct.message().contains("replica 1 (agent-service-1)"),
            "{direct:?}"
        );
        let routed = zero.check(&key, true).unwrap_err();
        assert_eq!(routed.code(), tonic::Code::Unavailable);
        // A subagent of a session on replica 1 lives there too.
        let child = format!("{key}:subagent:ab12");
        assert_eq!(zero.owner_of(&child), 1);
    }

    #[test]
    fn two_routing_headers_are_refused() {
        let header = service_kit::SESSION_KEY_HEADER;
        let mut metadata = MetadataMap::new();
        assert_eq!(routing_header(&metadata).unwrap(), None);
        metadata.insert(header, "agent:main:a".parse().unwrap());
        assert_eq!(routing_header(&metadata).unwrap(), Some("agent:main:a"));
        metadata.append(header, "agent:main:b".parse().unwrap());
        let refused = routing_header(&metadata).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert!(refused.message().contains("more than once"), "{refused:?}");
    }
}
