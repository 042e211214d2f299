//! Test-only PKI (feature `test-pki`): a CA generated in memory and the
//! server and client certificates it signs, as PEM, for TLS and mTLS tests
//! over real sockets. Never for production: keys live in memory and in
//! whatever temporary files a test writes.

#![expect(
    clippy::expect_used,
    reason = "test support: a failure to generate a certificate is a test failure"
)]

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

use crate::tls::{ClientTls, ServerTls};

/// A certificate and its private key, as PEM.
#[derive(Debug, Clone)]
pub struct CertPair {
    /// The certificate.
    pub cert: String,
    /// Its private key.
    pub key: String,
}

/// A certificate authority.
pub struct TestCa {
    /// The CA certificate (what clients and servers trust).
    pub cert: String,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

impl TestCa {
    /// A new self-signed CA named `name`.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate").pem();
        Self {
            cert,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` (DNS names or IP addresses).
    pub fn server(&self, names: &[&str]) -> CertPair {
        self.leaf(names, "server", ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate with common name `name`.
    pub fn client(&self, name: &str) -> CertPair {
        self.leaf(&[], name, ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn leaf(&self, names: &[&str], common_name: &str, usage: ExtendedKeyUsagePurpose) -> CertPair {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("leaf params");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        CertPair {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }

    /// Server TLS with a certificate for `localhost` and 127.0.0.1; with
    /// `client_ca`, client certificates it signed are required.
    pub fn server_tls(&self, client_ca: Option<&TestCa>) -> ServerTls {
        let pair = self.server(&["localhost", "127.0.0.1"]);
        ServerTls::from_pem(&pair.cert, &pair.key, client_ca.map(|ca| ca.cert.as_str()))
    }

    /// Client TLS trusting this CA, expecting `localhost`, presenting
    /// `identity` when given.
    pub fn client_tls(&self, identity: Option<&CertPair>) -> ClientTls {
        ClientTls::from_pem(
            &self.cert,
            identity.map(|p| (p.cert.as_str(), p.key.as_str())),
            Some("localhost"),
        )
    }
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write PEM file");
    path
}
