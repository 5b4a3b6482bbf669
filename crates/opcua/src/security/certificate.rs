//! Application instance certificates (OPC 10000-4 §6.1, OPC 10000-6 §6.2): parsing (x509-parser),
//! self-signed creation (rcgen, signing with an aws-lc-rs RSA key), and the checks a peer's
//! certificate must pass before a channel opens: trust, validity period, key size of the
//! policy, and the application URI in the subjectAltName.

use std::collections::BTreeSet;
use std::net::IpAddr;

use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::crypto::{CryptoError, PrivateKey, PublicKey, sha1};
use super::policy::SecurityPolicy;
use crate::types::StatusCode;

/// Longest certificate (chain) accepted, in bytes.
pub const MAX_CERTIFICATE_SIZE: usize = 32 * 1024;

/// Why a certificate is unusable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CertificateError {
    /// Not a DER X.509 certificate.
    #[error("not a DER X.509 certificate: {0}")]
    Parse(String),
    /// Not an RSA key we can use.
    #[error("the certificate's key is not usable: {0}")]
    Key(#[from] CryptoError),
    /// rcgen refused to create the certificate.
    #[error("cannot create the certificate: {0}")]
    Create(String),
}

/// The SHA-1 thumbprint of a DER certificate, as lowercase hex.
pub fn thumbprint_hex(thumbprint: &[u8]) -> String {
    thumbprint.iter().map(|b| format!("{b:02x}")).collect()
}

/// A parsed certificate with what the secure channel needs of it.
#[derive(Clone, Debug)]
pub struct Certificate {
    der: Vec<u8>,
    thumbprint: [u8; 20],
    public_key: PublicKey,
    subject: String,
    application_uri: Option<String>,
    dns_names: Vec<String>,
    ip_addresses: Vec<IpAddr>,
    not_before: i64,
    not_after: i64,
}

impl PartialEq for Certificate {
    fn eq(&self, other: &Self) -> bool {
        self.der == other.der
    }
}

impl Certificate {
    /// Parses the first certificate of `der` (a certificate or a chain of concatenated DER
    /// certificates, as OPC UA sends them).
    pub fn from_der(der: &[u8]) -> Result<Self, CertificateError> {
        if der.len() > MAX_CERTIFICATE_SIZE {
            return Err(CertificateError::Parse(format!(
                "{} bytes exceed the {MAX_CERTIFICATE_SIZE}-byte limit",
                der.len()
            )));
        }
        let (rest, certificate) = X509Certificate::from_der(der)
            .map_err(|error| CertificateError::Parse(error.to_string()))?;
        let own = &der[..der.len() - rest.len()];
        let public_key = PublicKey::from_spki_der(certificate.public_key().raw)?;
        let mut application_uri = None;
        let mut dns_names = Vec::new();
        let mut ip_addresses = Vec::new();
        for extension in certificate.extensions() {
            if let ParsedExtension::SubjectAlternativeName(san) = extension.parsed_extension() {
                for name in &san.general_names {
                    match name {
                        GeneralName::URI(uri) if application_uri.is_none() => {
                            application_uri = Some((*uri).to_owned());
                        }
                        GeneralName::DNSName(dns) => dns_names.push((*dns).to_owned()),
                        GeneralName::IPAddress(bytes) => match bytes.len() {
                            4 => ip_addresses.push(IpAddr::from(
                                <[u8; 4]>::try_from(*bytes).unwrap_or_default(),
                            )),
                            16 => ip_addresses.push(IpAddr::from(
                                <[u8; 16]>::try_from(*bytes).unwrap_or_default(),
                            )),
                            _ => {}
                        },
                        _ => {}
                    }
                }
            }
        }
        let validity = certificate.validity();
        Ok(Self {
            der: own.to_vec(),
            thumbprint: sha1(own),
            public_key,
            subject: certificate.subject().to_string(),
            application_uri,
            dns_names,
            ip_addresses,
            not_before: validity.not_before.timestamp(),
            not_after: validity.not_after.timestamp(),
        })
    }

    /// A self-signed application instance certificate for `key`: subject CN `name`,
    /// subjectAltName with the application URI and every host (DNS name or IP address),
    /// valid from one day before `now_unix` for `days`, with the key usages OPC UA asks for.
    pub fn create_self_signed(
        key: &PrivateKey,
        application_uri: &str,
        name: &str,
        hosts: &[String],
        now_unix: i64,
        days: u32,
    ) -> Result<Self, CertificateError> {
        let serial = super::crypto::random_bytes(16)?;
        let der = super::crypto::self_signed_der(
            key,
            application_uri,
            name,
            hosts,
            &serial,
            civil_from_unix(now_unix - 86_400),
            civil_from_unix(now_unix + i64::from(days) * 86_400),
        )?;
        Self::from_der(&der)
    }

    /// The DER encoding.
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// SHA-1 of the DER encoding (the thumbprint of OPC 10000-6 §6.7.2.3).
    pub fn thumbprint(&self) -> [u8; 20] {
        self.thumbprint
    }

    /// The thumbprint as lowercase hex.
    pub fn thumbprint_hex(&self) -> String {
        thumbprint_hex(&self.thumbprint)
    }

    /// The RSA public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public_key
    }

    /// The subject distinguished name.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The first URI of the subjectAltName: the application URI.
    pub fn application_uri(&self) -> Option<&str> {
        self.application_uri.as_deref()
    }

    /// DNS names of the subjectAltName.
    pub fn dns_names(&self) -> &[String] {
        &self.dns_names
    }

    /// IP addresses of the subjectAltName.
    pub fn ip_addresses(&self) -> &[IpAddr] {
        &self.ip_addresses
    }

    /// Validity period, Unix seconds.
    pub fn validity(&self) -> (i64, i64) {
        (self.not_before, self.not_after)
    }

    /// Key size in bits.
    pub fn key_bits(&self) -> usize {
        self.public_key.size_bytes() * 8
    }

    /// The checks of OPC 10000-4 §6.1.3 that need no trust list: validity at `now_unix`
    /// (Bad_CertificateTimeInvalid), key size within the policy's range
    /// (Bad_CertificatePolicyCheckFailed) and, when given, the application URI
    /// (Bad_CertificateUriInvalid).
    pub fn check(
        &self,
        policy: SecurityPolicy,
        now_unix: i64,
        application_uri: Option<&str>,
    ) -> Result<(), StatusCode> {
        if now_unix < self.not_before || now_unix > self.not_after {
            return Err(StatusCode::BAD_CERTIFICATE_TIME_INVALID);
        }
        if let Some(algorithms) = policy.algorithms() {
            let bits = self.key_bits();
            if bits < algorithms.min_key_bits || bits > algorithms.max_key_bits {
                return Err(StatusCode::BAD_CERTIFICATE_POLICY_CHECK_FAILED);
            }
        }
        if let Some(uri) = application_uri
            && !uri.is_empty()
            && self.application_uri.as_deref() != Some(uri)
        {
            return Err(StatusCode::BAD_CERTIFICATE_URI_INVALID);
        }
        Ok(())
    }
}

/// (year, month, day) of a Unix time (proleptic Gregorian, UTC).
fn civil_from_unix(unix: i64) -> (i32, u8, u8) {
    let (year, month, day) = buildwire_civil::civil_from_unix_seconds(unix);
    (
        i32::try_from(year).unwrap_or(9999),
        u8::try_from(month).unwrap_or(1),
        u8::try_from(day).unwrap_or(1),
    )
}

/// The trust decision for peers' certificates: the thumbprints of trusted certificates, or
/// trust in everyone (tests and demos only). Sans-IO: the [`Pki`](super::Pki) fills it from
/// disk and writes the rejected certificates the core reports.
#[derive(Clone, Debug, Default)]
pub struct TrustList {
    trusted: BTreeSet<[u8; 20]>,
    /// Accept every certificate that passes the other checks.
    pub auto_trust: bool,
}

impl TrustList {
    /// A list trusting these certificates.
    pub fn new(trusted: impl IntoIterator<Item = [u8; 20]>) -> Self {
        Self {
            trusted: trusted.into_iter().collect(),
            auto_trust: false,
        }
    }

    /// A list that trusts every certificate.
    pub fn trust_all() -> Self {
        Self {
            trusted: BTreeSet::new(),
            auto_trust: true,
        }
    }

    /// Adds a trusted certificate.
    pub fn add(&mut self, thumbprint: [u8; 20]) {
        self.trusted.insert(thumbprint);
    }

    /// Trust, then the checks of [`Certificate::check`]: Bad_CertificateUntrusted for an
    /// unknown certificate.
    pub fn validate(
        &self,
        certificate: &Certificate,
        policy: SecurityPolicy,
        now_unix: i64,
        application_uri: Option<&str>,
    ) -> Result<(), StatusCode> {
        if !self.auto_trust && !self.trusted.contains(&certificate.thumbprint) {
            return Err(StatusCode::BAD_CERTIFICATE_UNTRUSTED);
        }
        certificate.check(policy, now_unix, application_uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_unix(0), (1970, 1, 1));
        assert_eq!(civil_from_unix(951_782_400), (2000, 2, 29));
        assert_eq!(civil_from_unix(1_798_761_600), (2027, 1, 1));
    }

    #[cfg(feature = "crypto")]
    #[test]
    fn self_signed_certificate_carries_uri_hosts_and_key() {
        let key = PrivateKey::generate().unwrap();
        let now = 1_800_000_000;
        let hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let certificate =
            Certificate::create_self_signed(&key, "urn:test:app", "test app", &hosts, now, 400)
                .unwrap();
        assert_eq!(certificate.application_uri(), Some("urn:test:app"));
        assert_eq!(certificate.dns_names(), ["localhost"]);
        assert_eq!(certificate.ip_addresses(), [IpAddr::from([127, 0, 0, 1])]);
        assert_eq!(certificate.key_bits(), 2048);
        assert!(certificate.subject().contains("CN=test app"));
        assert_eq!(certificate.thumbprint(), sha1(certificate.der()));
        let (from, to) = certificate.validity();
        assert!(from <= now - 86_400 && to >= now + 399 * 86_400);
        // The certificate's key is the private key's public half: a signature verifies.
        let signature = key
            .sign(super::super::AsymmetricSignature::RsaPkcs1Sha256, b"x")
            .unwrap();
        certificate
            .public_key()
            .verify(
                super::super::AsymmetricSignature::RsaPkcs1Sha256,
                b"x",
                &signature,
            )
            .unwrap();
        // A chain: the first certificate is taken.
        let mut chain = certificate.der().to_vec();
        chain.extend_from_slice(certificate.der());
        assert_eq!(Certificate::from_der(&chain).unwrap(), certificate);

        let policy = SecurityPolicy::Basic256Sha256;
        assert_eq!(certificate.check(policy, now, Some("urn:test:app")), Ok(()));
        assert_eq!(
            certificate.check(policy, now, Some("urn:other")),
            Err(StatusCode::BAD_CERTIFICATE_URI_INVALID)
        );
        assert_eq!(
            certificate.check(policy, now + 500 * 86_400, None),
            Err(StatusCode::BAD_CERTIFICATE_TIME_INVALID)
        );
        let mut trust = TrustList::default();
        assert_eq!(
            trust.validate(&certificate, policy, now, None),
            Err(StatusCode::BAD_CERTIFICATE_UNTRUSTED)
        );
        trust.add(certificate.thumbprint());
        assert_eq!(trust.validate(&certificate, policy, now, None), Ok(()));
        assert!(
            TrustList::trust_all()
                .validate(&certificate, policy, now, None)
                .is_ok()
        );
        assert!(Certificate::from_der(&[0x30, 0x03, 1, 2, 3]).is_err());
    }
}
