//! Authorized sender display (`commands.ownerDisplay`).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::{input::OwnerDisplay, text};

/// Characters of a hashed owner token.
const TOKEN_LEN: usize = 12;

/// The owner ids as they should appear in the prompt: trimmed, blanks
/// dropped, hashed in hash mode, deduplicated and sorted.
pub fn display_tokens(ids: &[String], display: OwnerDisplay, secret: &str) -> Vec<String> {
    let mut tokens: Vec<String> = ids
        .iter()
        .map(|id| text::one_line(id))
        .filter(|id| !id.is_empty())
        .map(|id| match display {
            OwnerDisplay::Raw => id,
            OwnerDisplay::Hash => hash_token(&id, secret),
        })
        .collect();
    tokens.sort();
    tokens.dedup();
    tokens
}

/// First 12 hex chars of HMAC-SHA256(secret, id), or of SHA-256(id) when no
/// secret is configured.
pub fn hash_token(id: &str, secret: &str) -> String {
    let secret = secret.trim();
    let full = if secret.is_empty() {
        text::sha256_hex(id.as_bytes())
    } else {
        match <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()) {
            Ok(mut mac) => {
                mac.update(id.as_bytes());
                hex::encode(mac.finalize().into_bytes())
            }
            // HMAC accepts keys of any length; fall back to the plain hash
            // rather than ever leaking the raw id.
            Err(_) => text::sha256_hex(id.as_bytes()),
        }
    };
    full[..TOKEN_LEN].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ids_are_trimmed_sorted_and_deduplicated() {
        let ids = vec![
            " +2 ".to_owned(),
            String::new(),
            "+1".to_owned(),
            "+2".to_owned(),
        ];
        assert_eq!(
            display_tokens(&ids, OwnerDisplay::Raw, ""),
            vec!["+1", "+2"]
        );
    }

    #[test]
    fn hashed_ids_hide_the_raw_value_and_depend_on_the_secret() {
        let ids = vec!["+15551234".to_owned()];
        let a = display_tokens(&ids, OwnerDisplay::Hash, "k1");
        let b = display_tokens(&ids, OwnerDisplay::Hash, "k2");
        let plain = display_tokens(&ids, OwnerDisplay::Hash, "");
        for t in a.iter().chain(&b).chain(&plain) {
            assert_eq!(t.len(), 12);
            assert!(
                t.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            );
        }
        assert_ne!(a, b);
        assert_ne!(a, plain);
        assert_eq!(plain[0], text::sha256_hex(b"+15551234")[..12]);
    }
}
