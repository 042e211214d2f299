//! TLS material from PEM files, checked at startup, for tonic's rustls
//! transport (feature `tls-aws-lc`).
//!
//! Files are read once, when the process starts: rotating a certificate
//! means restarting (prompt-service is stateless; agent-service drains).
//! Every problem names the file and what was expected in it, never key
//! material.

use std::{fmt, path::Path, time::Duration};

use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// How long a client may take to finish the TLS handshake: a peer that
/// opens connections and stalls must not hold them forever.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A server's certificate chain and key, and optionally the CA whose
/// client certificates it requires (mTLS).
#[derive(Clone)]
pub struct ServerTls {
    cert: Vec<u8>,
    key: Vec<u8>,
    client_ca: Option<Vec<u8>>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls")
            .field("mtls", &self.client_ca.is_some())
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Reads and checks the PEM files: `cert` (the chain, leaf first),
    /// `key` (PKCS#8, PKCS#1 or SEC1) and the optional client CA bundle.
    /// The key must be the certificate's own: a pair that does not match
    /// would pass startup and fail every handshake.
    pub fn from_files(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<Self, String> {
        let (cert, key) = read_pair(cert, key)?;
        let client_ca = client_ca
            .map(|path| read_certs(path, "client CA certificate"))
            .transpose()?;
        Ok(Self {
            cert,
            key,
            client_ca,
        })
    }

    /// From PEM text already in memory (tests).
    pub fn from_pem(cert: &str, key: &str, client_ca: Option<&str>) -> Self {
        Self {
            cert: cert.as_bytes().to_vec(),
            key: key.as_bytes().to_vec(),
            client_ca: client_ca.map(|ca| ca.as_bytes().to_vec()),
        }
    }

    /// Whether callers must present a certificate signed by the client CA.
    pub fn requires_client_cert(&self) -> bool {
        self.client_ca.is_some()
    }

    /// tonic's server configuration. With a client CA the handshake
    /// verifies any certificate a client presents and refuses one the CA
    /// did not sign; a client without a certificate still completes the
    /// handshake so that health checks work, and the auth layer refuses
    /// its other calls (UNAUTHENTICATED).
    pub fn server_config(&self) -> ServerTlsConfig {
        let config = ServerTlsConfig::new()
            .identity(Identity::from_pem(&self.cert, &self.key))
            .timeout(HANDSHAKE_TIMEOUT);
        match &self.client_ca {
            Some(ca) => config
                .client_ca_root(Certificate::from_pem(ca))
                .client_auth_optional(true),
            None => config,
        }
    }
}

/// What a client needs to reach a TLS server: the CA to verify it with,
/// an optional client certificate (mTLS) and the name to expect in the
/// server's certificate.
#[derive(Clone)]
pub struct ClientTls {
    ca: Vec<u8>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
    server_name: Option<String>,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls")
            .field("client_cert", &self.identity.is_some())
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl ClientTls {
    /// Reads and checks the PEM files. `cert` and `key` come together or
    /// not at all, and the key must be the certificate's. Without
    /// `server_name` the URL's host is expected.
    pub fn from_files(
        ca: &Path,
        cert: Option<&Path>,
        key: Option<&Path>,
        server_name: Option<String>,
    ) -> Result<Self, String> {
        let ca = read_certs(ca, "CA certificate")?;
        let identity = match (cert, key) {
            (Some(cert), Some(key)) => Some(read_pair(cert, key)?),
            (None, None) => None,
            (Some(_), None) => return Err("a client certificate needs its key file".to_owned()),
            (None, Some(_)) => return Err("a client key needs its certificate file".to_owned()),
        };
        Ok(Self {
            ca,
            identity,
            server_name,
        })
    }

    /// From PEM text already in memory (tests).
    pub fn from_pem(ca: &str, identity: Option<(&str, &str)>, server_name: Option<&str>) -> Self {
        Self {
            ca: ca.as_bytes().to_vec(),
            identity: identity.map(|(c, k)| (c.as_bytes().to_vec(), k.as_bytes().to_vec())),
            server_name: server_name.map(str::to_owned),
        }
    }

    /// tonic's client configuration. Only this CA is trusted (no system
    /// roots); pass a system bundle as the CA file to trust public CAs.
    pub fn client_config(&self) -> ClientTlsConfig {
        let mut config = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&self.ca))
            .timeout(HANDSHAKE_TIMEOUT);
        if let Some((cert, key)) = &self.identity {
            config = config.identity(Identity::from_pem(cert, key));
        }
        if let Some(name) = &self.server_name {
            config = config.domain_name(name.clone());
        }
        config
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    let pem = read(path)?;
    let certs: Result<Vec<CertificateDer<'_>>, _> = CertificateDer::pem_slice_iter(&pem).collect();
    match certs {
        Ok(certs) if !certs.is_empty() => Ok(pem),
        Ok(_) => Err(format!(
            "{} holds no PEM {what} (-----BEGIN CERTIFICATE-----)",
            path.display()
        )),
        Err(e) => Err(format!("{}: invalid PEM {what}: {e}", path.display())),
    }
}

fn read_key(path: &Path) -> Result<(Vec<u8>, PrivateKeyDer<'static>), String> {
    let pem = read(path)?;
    match PrivateKeyDer::from_pem_slice(&pem) {
        Ok(key) => Ok((pem, key)),
        Err(_) => Err(format!(
            "{} holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
            path.display()
        )),
    }
}

/// A certificate chain and its private key, checked to belong together:
/// the key's public half must be the one in the leaf certificate. rustls
/// would find out at the first handshake, after the server said it was
/// listening; here both files are named before anything starts.
fn read_pair(cert_path: &Path, key_path: &Path) -> Result<(Vec<u8>, Vec<u8>), String> {
    let cert = read_certs(cert_path, "certificate")?;
    let (key, key_der) = read_key(key_path)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: invalid PEM certificate: {e}", cert_path.display()))?;
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let mismatch = |detail: &dyn fmt::Display| {
        format!(
            "the key in {} does not belong to the certificate in {} ({detail})",
            key_path.display(),
            cert_path.display()
        )
    };
    let signing_key = provider
        .key_provider
        .load_private_key(key_der)
        .map_err(|e| format!("{}: unusable private key: {e}", key_path.display()))?;
    match rustls::sign::CertifiedKey::new(chain, signing_key).keys_match() {
        Ok(()) => Ok((cert, key)),
        // A key type whose public half rustls cannot derive: the handshake decides.
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => Ok((cert, key)),
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            Err(mismatch(&"their public keys differ"))
        }
        Err(e) => Err(mismatch(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_pki::{TestCa, write};

    #[test]
    fn a_certificate_with_another_pairs_key_is_refused_naming_both_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = TestCa::new("test CA");
        let (first, second) = (ca.server(&["localhost"]), ca.client("c"));
        let cert = write(dir.path(), "cert.pem", &first.cert);
        let key = write(dir.path(), "key.pem", &first.key);
        let other = write(dir.path(), "other.pem", &second.key);
        let ca_file = write(dir.path(), "ca.pem", &ca.cert);
        assert!(ServerTls::from_files(&cert, &key, None).is_ok());
        let expected = format!(
            "the key in {} does not belong to the certificate in {} (their public keys differ)",
            other.display(),
            cert.display()
        );
        assert_eq!(
            ServerTls::from_files(&cert, &other, None).map(|_| ()),
            Err(expected.clone())
        );
        // A client identity is checked the same way.
        assert_eq!(
            ClientTls::from_files(&ca_file, Some(&cert), Some(&other), None).map(|_| ()),
            Err(expected)
        );
    }
}
