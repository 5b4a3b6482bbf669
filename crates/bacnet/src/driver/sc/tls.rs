//! TLS 1.3 with mutual authentication for BACnet/SC (Annex AB.7.4), on rustls with the ring
//! provider: each side presents its operational certificate and accepts a peer only when
//! the peer's certificate chains to one of the configured issuer certificates, is within
//! its validity period, is meant for the role (TLS client or server authentication) and, if
//! it has a key usage extension, allows digital signatures.
//!
//! A refused peer's certificate is described in the error (subject, issuer, validity, and
//! what was wrong in words), which the drivers log as one line per refusal.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    CertificateError, DigitallySignedStruct, DistinguishedName, Error, OtherError, RootCertStore,
    SignatureScheme,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

/// Where the operational certificate, its key and the issuer certificates are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScTlsFiles {
    /// PEM: the operational certificate (and any intermediates after it).
    pub certificate: PathBuf,
    /// PEM: its private key (PKCS#8, SEC1 or PKCS#1).
    pub private_key: PathBuf,
    /// PEM files of the issuer certificates trusted for peers (one or more each).
    pub issuers: Vec<PathBuf>,
}

impl ScTlsFiles {
    /// The files `DIR/NAME.crt`, `DIR/NAME.key` and `DIR/ca.crt`, as `sc-certs` writes them.
    pub fn in_directory(directory: &Path, name: &str) -> Self {
        Self {
            certificate: directory.join(format!("{name}.crt")),
            private_key: directory.join(format!("{name}.key")),
            issuers: vec![directory.join("ca.crt")],
        }
    }
}

/// Why the TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// A file could not be read or holds no usable PEM block.
    #[error("{path}: {detail}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// rustls refused the material (a key that does not match the certificate...).
    #[error("TLS configuration: {0}")]
    Rustls(String),
}

fn file_error(path: &Path, detail: impl fmt::Display) -> TlsSetupError {
    TlsSetupError::File {
        path: path.to_owned(),
        detail: detail.to_string(),
    }
}

fn load_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_error(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(path, e))?;
    if certificates.is_empty() {
        return Err(file_error(path, "no CERTIFICATE block in the file"));
    }
    Ok(certificates)
}

fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsSetupError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| file_error(path, e))
}

fn issuer_store(files: &ScTlsFiles) -> Result<Arc<RootCertStore>, TlsSetupError> {
    let mut store = RootCertStore::empty();
    for path in &files.issuers {
        for certificate in load_certificates(path)? {
            store
                .add(certificate)
                .map_err(|e| file_error(path, format!("not a usable issuer certificate: {e}")))?;
        }
    }
    if store.is_empty() {
        return Err(TlsSetupError::Rustls(
            "no issuer certificates: give at least one --ca file".to_owned(),
        ));
    }
    Ok(Arc::new(store))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The configuration of a hub (or a node accepting direct connections): TLS 1.3 only, the
/// client must present a certificate that chains to the issuers.
pub fn server_config(files: &ScTlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsSetupError> {
    let provider = provider();
    let inner = WebPkiClientVerifier::builder_with_provider(issuer_store(files)?, provider.clone())
        .build()
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
    let verifier = Arc::new(PeerVerifier {
        client: Some(inner),
        server: None,
    });
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            load_certificates(&files.certificate)?,
            load_key(&files.private_key)?,
        )
        .map_err(|e| TlsSetupError::Rustls(format!("{}: {e}", files.certificate.display())))?;
    Ok(Arc::new(config))
}

/// The configuration of a node connecting to a hub (or to a peer directly): TLS 1.3 only,
/// it presents its operational certificate and checks the server's against the issuers
/// and the host name of the URI.
pub fn client_config(files: &ScTlsFiles) -> Result<Arc<rustls::ClientConfig>, TlsSetupError> {
    let provider = provider();
    let inner = WebPkiServerVerifier::builder_with_provider(issuer_store(files)?, provider.clone())
        .build()
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
    let verifier = Arc::new(PeerVerifier {
        client: None,
        server: Some(inner),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(
            load_certificates(&files.certificate)?,
            load_key(&files.private_key)?,
        )
        .map_err(|e| TlsSetupError::Rustls(format!("{}: {e}", files.certificate.display())))?;
    Ok(Arc::new(config))
}

/// A refused peer certificate, described for a log line.
pub struct RefusedCertificate {
    subject: String,
    issuer: String,
    validity: String,
    reason: String,
}

impl RefusedCertificate {
    fn new(certificate: &CertificateDer<'_>, reason: String) -> Self {
        match x509_parser::parse_x509_certificate(certificate.as_ref()) {
            Ok((_, parsed)) => Self {
                subject: parsed.subject().to_string(),
                issuer: parsed.issuer().to_string(),
                validity: format!(
                    "{} to {}",
                    parsed.validity().not_before,
                    parsed.validity().not_after
                ),
                reason,
            },
            Err(_) => Self {
                subject: "(undecodable certificate)".to_owned(),
                issuer: String::new(),
                validity: String::new(),
                reason,
            },
        }
    }

    /// What was wrong, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for RefusedCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "certificate \"{}\" (issuer \"{}\", valid {}) refused: {}",
            self.subject, self.issuer, self.validity, self.reason
        )
    }
}

impl fmt::Debug for RefusedCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for RefusedCertificate {}

fn unix_text(time: UnixTime) -> String {
    let seconds = time.as_secs();
    match time::OffsetDateTime::from_unix_timestamp(i64::try_from(seconds).unwrap_or(i64::MAX)) {
        Ok(at) => at.to_string(),
        Err(_) => format!("{seconds} s after 1970"),
    }
}

/// Plain words for the errors of certificate verification.
fn explain(error: &Error, role: &str) -> String {
    match error {
        Error::InvalidCertificate(e) => match e {
            CertificateError::UnknownIssuer => {
                "it is not signed by a trusted issuer (check the issuer certificates, --ca)"
                    .to_owned()
            }
            CertificateError::Expired => "it has expired".to_owned(),
            CertificateError::ExpiredContext { time, not_after } => format!(
                "it expired at {} (now {})",
                unix_text(*not_after),
                unix_text(*time)
            ),
            CertificateError::NotValidYet => "it is not valid yet".to_owned(),
            CertificateError::NotValidYetContext { time, not_before } => format!(
                "it is not valid before {} (now {})",
                unix_text(*not_before),
                unix_text(*time)
            ),
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                format!("its extended key usage does not allow TLS {role} authentication")
            }
            // webpki finds the issuer by name: a same-named CA with another key ends here.
            CertificateError::BadSignature => "it is not signed by a trusted issuer (its \
                signature does not verify with the issuer certificate of that name)"
                .to_owned(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// The words of a TLS failure: the refused certificate's description when the peer's
/// certificate was refused, else the error itself.
pub(crate) fn describe_tls_error(error: &std::io::Error) -> String {
    let refusal = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Error>())
        .and_then(|tls| match tls {
            Error::InvalidCertificate(CertificateError::Other(OtherError(other))) => other
                .downcast_ref::<RefusedCertificate>()
                .map(ToString::to_string),
            _ => None,
        });
    refusal.unwrap_or_else(|| error.to_string())
}

/// Why a certificate fails the checks beyond the chain.
#[derive(Debug, thiserror::Error)]
enum KeyUsageError {
    #[error("it does not decode: {0}")]
    Decode(x509_parser::nom::Err<x509_parser::error::X509Error>),
    #[error("its key usage ({0}) lacks digitalSignature")]
    NoDigitalSignature(String),
    #[error("its key usage extension does not decode: {0}")]
    Extension(x509_parser::error::X509Error),
}

/// Extra checks beyond the chain: a key usage extension must allow digital signatures
/// (what TLS 1.3 does with the key).
fn check_key_usage(certificate: &CertificateDer<'_>) -> Result<(), KeyUsageError> {
    let (_, parsed) =
        x509_parser::parse_x509_certificate(certificate.as_ref()).map_err(KeyUsageError::Decode)?;
    match parsed.key_usage() {
        Ok(Some(usage)) if !usage.value.digital_signature() => {
            Err(KeyUsageError::NoDigitalSignature(usage.value.to_string()))
        }
        Ok(_) => Ok(()),
        Err(e) => Err(KeyUsageError::Extension(e)),
    }
}

fn refused(certificate: &CertificateDer<'_>, reason: String) -> Error {
    Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
        RefusedCertificate::new(certificate, reason),
    ))))
}

/// The standard verifiers plus the key-usage check and the descriptive errors.
#[derive(Debug)]
struct PeerVerifier {
    client: Option<Arc<dyn ClientCertVerifier>>,
    server: Option<Arc<WebPkiServerVerifier>>,
}

impl PeerVerifier {
    fn finish(
        certificate: &CertificateDer<'_>,
        result: Result<(), Error>,
        role: &str,
    ) -> Result<(), Error> {
        match result {
            Ok(()) => check_key_usage(certificate)
                .map_err(|reason| refused(certificate, reason.to_string())),
            Err(error) => Err(refused(certificate, explain(&error, role))),
        }
    }

    fn schemes(&self) -> Vec<SignatureScheme> {
        match (&self.client, &self.server) {
            (Some(client), _) => client.supported_verify_schemes(),
            (None, Some(server)) => server.supported_verify_schemes(),
            (None, None) => Vec::new(),
        }
    }
}

/// The configurations allow TLS 1.3 only, so TLS 1.2 signatures are never checked.
fn tls12_refused() -> Error {
    Error::General("BACnet/SC uses TLS 1.3 only".to_owned())
}

fn no_verifier() -> Error {
    Error::General("BACnet/SC TLS verifier without a role".to_owned())
}

impl ClientCertVerifier for PeerVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.client
            .as_ref()
            .map_or(&[], |client| client.root_hint_subjects())
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let client = self.client.as_ref().ok_or_else(no_verifier)?;
        let result = client
            .verify_client_cert(end_entity, intermediates, now)
            .map(|_| ());
        Self::finish(end_entity, result, "client")?;
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        Err(tls12_refused())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let client = self.client.as_ref().ok_or_else(no_verifier)?;
        client.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}

impl ServerCertVerifier for PeerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let server = self.server.as_ref().ok_or_else(no_verifier)?;
        let result = server
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map(|_| ());
        Self::finish(end_entity, result, "server")?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        Err(tls12_refused())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let server = self.server.as_ref().ok_or_else(no_verifier)?;
        server.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}
