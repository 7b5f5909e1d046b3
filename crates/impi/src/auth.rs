//! Authentication of a client to the server (spec 2.3.3): the method numbers and masks,
//! the key, the server's choice by preference list, and the `IMPI_Server_auth` reply.
//!
//! Only the two mandated methods exist: `IMPI_AUTH_NONE` (0), offered when the
//! environment variable `IMPI_AUTH_NONE` is present, and `IMPI_AUTH_KEY` (1), offered
//! when `IMPI_AUTH_KEY` holds a key.

use crate::wire::{get_i32, put_i32, ProtocolError};

/// `IMPI_AUTH_NONE`: no authentication.
pub const AUTH_NONE: u32 = 0;
/// `IMPI_AUTH_KEY`: the client sends a 64-bit key that must equal the server's.
pub const AUTH_KEY: u32 = 1;

/// The variable whose presence (any value, even empty) enables `IMPI_AUTH_NONE`.
pub const ENV_AUTH_NONE: &str = "IMPI_AUTH_NONE";
/// The variable holding the 64-bit key of `IMPI_AUTH_KEY`.
pub const ENV_AUTH_KEY: &str = "IMPI_AUTH_KEY";

/// Size of `IMPI_Server_auth` (`which`, `len`).
pub const SERVER_AUTH_LEN: usize = 8;
/// Size of `IMPI_Auth_key`.
pub const AUTH_KEY_LEN: usize = 8;
/// Largest `AUTH` payload accepted (1024 masks, 32768 method numbers).
pub const MAX_AUTH_PAYLOAD: usize = 4096;

/// Name of a method number, for messages.
pub fn method_name(m: u32) -> String {
    match m {
        AUTH_NONE => "IMPI_AUTH_NONE".into(),
        AUTH_KEY => "IMPI_AUTH_KEY".into(),
        _ => format!("authentication method {m}"),
    }
}

/// The methods this side has available for negotiation (implemented and enabled).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// `IMPI_AUTH_NONE` is enabled.
    pub none: bool,
    /// `IMPI_AUTH_KEY` is enabled with this key.
    pub key: Option<u64>,
}

impl AuthConfig {
    /// From the two environment variables' values (`none`: whether `IMPI_AUTH_NONE` is
    /// set; `key`: the value of `IMPI_AUTH_KEY`, if set).
    pub fn from_env_values(none: bool, key: Option<&str>) -> Result<AuthConfig, String> {
        let key = match key {
            None => None,
            Some(s) => Some(parse_key(s).map_err(|e| format!("{ENV_AUTH_KEY}={s:?}: {e}"))?),
        };
        Ok(AuthConfig { none, key })
    }

    /// From this process's environment.
    pub fn from_env() -> Result<AuthConfig, String> {
        let none = std::env::var_os(ENV_AUTH_NONE).is_some();
        match std::env::var_os(ENV_AUTH_KEY) {
            None => AuthConfig::from_env_values(none, None),
            Some(v) => match v.to_str() {
                Some(s) => AuthConfig::from_env_values(none, Some(s)),
                None => Err(format!("{ENV_AUTH_KEY} is not valid UTF-8")),
            },
        }
    }

    /// Available method numbers, strongest first.
    pub fn available(&self) -> Vec<u32> {
        let mut v = Vec::new();
        if self.key.is_some() {
            v.push(AUTH_KEY);
        }
        if self.none {
            v.push(AUTH_NONE);
        }
        v
    }

    /// The client's `auth_mask` words: bit `i` of word `j` is method `32 j + i`.
    pub fn masks(&self) -> Vec<u32> {
        let mut m = 0u32;
        for a in self.available() {
            m |= 1 << a;
        }
        vec![m]
    }
}

/// Parses a key: a decimal number, or hexadecimal after `0x`, that fits 64 bits.
pub fn parse_key(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse::<u64>()
    };
    r.map_err(|_| "not an unsigned 64-bit key (decimal, or hexadecimal after 0x)".to_string())
}

/// Parses the server's `-auth` preference list: comma-separated method numbers or
/// ranges `a-b`, most preferred first; a range runs from `a` to `b` in either direction
/// (the spec's example `3,1-0` means 3, then 1, then 0). Repeats keep their first place.
pub fn parse_preference(s: &str) -> Result<Vec<u32>, String> {
    let mut out: Vec<u32> = Vec::new();
    let num = |t: &str| -> Result<u32, String> {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("-auth {s}: {t:?} is not a method number"))
    };
    for item in s.split(',') {
        if item.trim().is_empty() {
            return Err(format!("-auth {s}: empty item"));
        }
        let range: Vec<u32> = match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a.abs_diff(b) > 1024 {
                    return Err(format!("-auth {s}: range {item} is too long"));
                }
                if a <= b {
                    (a..=b).collect()
                } else {
                    (b..=a).rev().collect()
                }
            }
            None => vec![num(item)?],
        };
        for m in range {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// Whether the client's masks offer method `m`.
pub fn mask_has(masks: &[u32], m: u32) -> bool {
    masks
        .get((m / 32) as usize)
        .is_some_and(|w| w & (1 << (m % 32)) != 0)
}

/// The server's choice: the first method of its order (the `-auth` list, else its
/// available methods strongest first) that it has available and the client offers.
pub fn choose(
    server: &AuthConfig,
    preference: Option<&[u32]>,
    client_masks: &[u32],
) -> Option<u32> {
    let available = server.available();
    let order: Vec<u32> = match preference {
        Some(p) => p
            .iter()
            .copied()
            .filter(|m| available.contains(m))
            .collect(),
        None => available,
    };
    order.into_iter().find(|&m| mask_has(client_masks, m))
}

/// `IMPI_Server_auth`: the chosen method and the length of the follow-on messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerAuth {
    pub which: i32,
    pub len: i32,
}

impl ServerAuth {
    pub fn encode(&self) -> [u8; SERVER_AUTH_LEN] {
        let mut v = Vec::with_capacity(SERVER_AUTH_LEN);
        put_i32(&mut v, self.which);
        put_i32(&mut v, self.len);
        v.try_into().unwrap()
    }

    pub fn decode(b: &[u8]) -> ServerAuth {
        ServerAuth {
            which: get_i32(b, 0),
            len: get_i32(b, 4),
        }
    }
}

/// Decodes the `AUTH` payload (one or more `IMPI_Client_auth` masks).
pub fn decode_masks(payload: &[u8]) -> Result<Vec<u32>, ProtocolError> {
    if payload.is_empty() || payload.len() % 4 != 0 || payload.len() > MAX_AUTH_PAYLOAD {
        return Err(ProtocolError::new(format!(
            "AUTH payload of {} bytes (must be a positive multiple of 4, at most {MAX_AUTH_PAYLOAD})",
            payload.len()
        )));
    }
    Ok(payload
        .chunks(4)
        .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_2_1_masks() {
        let none = AuthConfig {
            none: true,
            key: None,
        };
        let key = AuthConfig {
            none: false,
            key: Some(5678),
        };
        let both = AuthConfig {
            none: true,
            key: Some(1),
        };
        assert_eq!(none.masks(), vec![0x0001]);
        assert_eq!(key.masks(), vec![0x0002]);
        assert_eq!(both.masks(), vec![0x0003]);
        assert!(AuthConfig::default().available().is_empty());
    }

    #[test]
    fn preference_list_of_the_spec() {
        assert_eq!(parse_preference("3,1-0").unwrap(), vec![3, 1, 0]);
        assert_eq!(parse_preference("0-1").unwrap(), vec![0, 1]);
        assert_eq!(parse_preference("1,1,0").unwrap(), vec![1, 0]);
        assert!(parse_preference("1,,0").is_err());
        assert!(parse_preference("x").is_err());
        assert!(parse_preference("0-99999").is_err());
    }

    #[test]
    fn server_chooses_strongest_common_method() {
        let server = AuthConfig {
            none: true,
            key: Some(7),
        };
        assert_eq!(choose(&server, None, &[0x3]), Some(AUTH_KEY));
        assert_eq!(choose(&server, None, &[0x1]), Some(AUTH_NONE));
        assert_eq!(choose(&server, Some(&[3, 0, 1]), &[0x3]), Some(AUTH_NONE));
        // A list without NONE forbids it.
        assert_eq!(choose(&server, Some(&[1]), &[0x1]), None);
        assert_eq!(
            choose(
                &AuthConfig {
                    none: false,
                    key: Some(1)
                },
                None,
                &[0x1]
            ),
            None
        );
        // A second mask word names methods 32..63.
        assert!(mask_has(&[0, 1], 32));
        assert!(!mask_has(&[1], 32));
    }

    #[test]
    fn keys() {
        assert_eq!(parse_key("5678"), Ok(5678));
        assert_eq!(parse_key("0xff"), Ok(255));
        assert_eq!(parse_key("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_key("-1").is_err());
        assert!(parse_key("secret").is_err());
        assert!(AuthConfig::from_env_values(false, Some("abc")).is_err());
    }

    #[test]
    fn server_auth_and_masks_wire() {
        assert_eq!(
            ServerAuth { which: 1, len: 0 }.encode(),
            [0, 0, 0, 1, 0, 0, 0, 0]
        );
        assert_eq!(decode_masks(&[0, 0, 0, 2]).unwrap(), vec![2]);
        assert!(decode_masks(&[]).is_err());
        assert!(decode_masks(&[0, 0, 2]).is_err());
    }
}
