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
    pub fn from_files(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<Self, String> {
        let cert = read_certs(cert, "certificate")?;
        let key = read_key(key)?;
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
    /// not at all. Without `server_name` the URL's host is expected.
    pub fn from_files(
        ca: &Path,
        cert: Option<&Path>,
        key: Option<&Path>,
        server_name: Option<String>,
    ) -> Result<Self, String> {
        let ca = read_certs(ca, "CA certificate")?;
        let identity = match (cert, key) {
            (Some(cert), Some(key)) => Some((read_certs(cert, "certificate")?, read_key(key)?)),
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

fn read_key(path: &Path) -> Result<Vec<u8>, String> {
    let pem = read(path)?;
    match PrivateKeyDer::from_pem_slice(&pem) {
        Ok(_) => Ok(pem),
        Err(_) => Err(format!(
            "{} holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
            path.display()
        )),
    }
}
