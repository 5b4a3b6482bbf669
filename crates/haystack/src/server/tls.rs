//! TLS and mutual TLS for the server (rustls with the ring provider; TLS 1.2 and 1.3).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::ServerError;

/// The server's certificate chain and key (PEM), and optionally the CA whose client
/// certificates it requires (mutual TLS).
#[derive(Clone)]
pub struct TlsConfig {
    cert_chain_pem: Vec<u8>,
    key_pem: Vec<u8>,
    client_ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("mutual", &self.client_ca_pem.is_some())
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path).map_err(|e| ServerError::io(path.display().to_string(), e))
}

impl TlsConfig {
    /// A certificate chain (leaf first) and its private key, both PEM.
    pub fn from_pem(cert_chain_pem: impl Into<Vec<u8>>, key_pem: impl Into<Vec<u8>>) -> Self {
        Self {
            cert_chain_pem: cert_chain_pem.into(),
            key_pem: key_pem.into(),
            client_ca_pem: None,
        }
    }

    /// The same from PEM files.
    pub fn from_files(cert_chain: &Path, key: &Path) -> Result<Self, ServerError> {
        Ok(Self::from_pem(read(cert_chain)?, read(key)?))
    }

    /// Requires every client to present a certificate signed by one of these CAs (PEM).
    pub fn require_client_certs(mut self, client_ca_pem: impl Into<Vec<u8>>) -> Self {
        self.client_ca_pem = Some(client_ca_pem.into());
        self
    }

    /// The rustls server configuration.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, ServerError> {
        let bad = |what: &str, e: &dyn std::fmt::Display| ServerError::Tls(format!("{what}: {e}"));
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(&self.cert_chain_pem)
                .collect::<Result<_, _>>()
                .map_err(|e| bad("certificate chain", &e))?;
        if certs.is_empty() {
            return Err(ServerError::Tls("no certificate in the chain PEM".into()));
        }
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem).map_err(|e| bad("key", &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| bad("protocol versions", &e))?;
        let builder = match &self.client_ca_pem {
            None => builder.with_no_client_auth(),
            Some(pem) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in CertificateDer::pem_slice_iter(pem) {
                    let cert = cert.map_err(|e| bad("client CA", &e))?;
                    roots.add(cert).map_err(|e| bad("client CA", &e))?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .map_err(|e| bad("client verifier", &e))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder
            .with_single_cert(certs, key)
            .map_err(|e| bad("certificate", &e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    pub(crate) fn acceptor(&self) -> Result<TlsAcceptor, ServerError> {
        Ok(TlsAcceptor::from(self.server_config()?))
    }
}
