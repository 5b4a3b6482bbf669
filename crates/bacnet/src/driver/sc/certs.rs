//! Test and benchmark certificates for BACnet/SC (rcgen): an issuing CA and EC P-256
//! operational certificates with subject alternative names, written as PEM files the way
//! `buildwire bacnet sc-certs DIR` lays them out (`ca.crt`, `ca.key`, `NAME.crt`,
//! `NAME.key`). Operational certificates allow TLS client and server authentication, so one
//! certificate serves a node, a hub and a node accepting direct connections.
//!
//! Not a certificate authority for production sites: keys are written unencrypted (mode
//! 0600) and nothing tracks serial numbers or revocation.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, SanType,
};
use time::OffsetDateTime;

/// Subject alternative names every generated operational certificate carries, so that
/// tests on one machine verify host names: `localhost`, `127.0.0.1`, `::1`.
pub const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The certificate names `sc-certs` writes when none are given.
pub const DEFAULT_NAMES: [&str; 5] = ["hub", "failover", "node1", "node2", "client"];

/// Why certificates could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// rcgen refused the parameters.
    #[error("certificate generation: {0}")]
    Generation(#[from] rcgen::Error),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A name that cannot be a file name.
    #[error("`{0}` is not a certificate name: use letters, digits, `-` and `_`")]
    BadName(String),
}

/// Which key usages an operational certificate gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUsage {
    /// digitalSignature (what TLS 1.3 needs of an EC key).
    DigitalSignature,
    /// keyEncipherment only: a certificate BACnet/SC peers must refuse (for tests).
    KeyEnciphermentOnly,
}

/// Which extended key usages an operational certificate gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtendedKeyUsage {
    /// TLS client and server authentication (the default: hub, node and direct peer).
    ClientAndServer,
    /// TLS server authentication only.
    ServerOnly,
    /// TLS client authentication only.
    ClientOnly,
}

/// What to put in one operational certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationalSpec {
    /// Common name; also a DNS subject alternative name when it is a valid host name.
    pub name: String,
    /// Subject alternative names (DNS names or IP addresses).
    pub subject_alt_names: Vec<String>,
    /// Start of validity.
    pub not_before: SystemTime,
    /// End of validity.
    pub not_after: SystemTime,
    /// Key usage.
    pub key_usage: KeyUsage,
    /// Extended key usage.
    pub extended_key_usage: ExtendedKeyUsage,
}

impl OperationalSpec {
    /// A certificate for `name`, valid from an hour ago for `days` days, with the loopback
    /// names, digitalSignature and both TLS authentication purposes.
    pub fn new(name: &str, days: u32) -> Self {
        let now = SystemTime::now();
        let mut subject_alt_names: Vec<String> =
            LOOPBACK_NAMES.iter().map(|s| (*s).to_owned()).collect();
        if is_host_name(name) && !subject_alt_names.iter().any(|s| s == name) {
            subject_alt_names.push(name.to_owned());
        }
        Self {
            name: name.to_owned(),
            subject_alt_names,
            not_before: now - Duration::from_secs(3600),
            not_after: now + Duration::from_secs(u64::from(days) * 86_400),
            key_usage: KeyUsage::DigitalSignature,
            extended_key_usage: ExtendedKeyUsage::ClientAndServer,
        }
    }
}

fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
}

fn offset_time(at: SystemTime) -> OffsetDateTime {
    OffsetDateTime::from(at)
}

/// A generated certificate and its private key, PEM encoded.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate.
    pub certificate_pem: String,
    /// Its private key (PKCS#8).
    pub private_key_pem: String,
}

/// An issuing CA held in memory.
pub struct ScPki {
    params: CertificateParams,
    key: KeyPair,
    certificate_pem: String,
}

impl std::fmt::Debug for ScPki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScPki").finish_non_exhaustive()
    }
}

impl ScPki {
    /// A new self-signed CA (EC P-256) named `common_name`, valid for `days` days.
    pub fn generate(common_name: &str, days: u32) -> Result<Self, CertError> {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::default();
        let mut subject = DistinguishedName::new();
        subject.push(DnType::CommonName, common_name);
        params.distinguished_name = subject;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let now = SystemTime::now();
        params.not_before = offset_time(now - Duration::from_secs(3600));
        params.not_after = offset_time(now + Duration::from_secs(u64::from(days) * 86_400));
        let certificate = params.self_signed(&key)?;
        Ok(Self {
            certificate_pem: certificate.pem(),
            params,
            key,
        })
    }

    /// The CA certificate (the issuer certificate peers are configured with).
    pub fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// The CA's private key.
    pub fn private_key_pem(&self) -> String {
        self.key.serialize_pem()
    }

    /// Issues an operational certificate with a new EC P-256 key.
    pub fn issue(&self, spec: &OperationalSpec) -> Result<Issued, CertError> {
        let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
        let mut params = CertificateParams::default();
        let mut subject = DistinguishedName::new();
        subject.push(DnType::CommonName, spec.name.as_str());
        params.distinguished_name = subject;
        params.subject_alt_names = spec
            .subject_alt_names
            .iter()
            .map(|name| match name.parse() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => name.clone().try_into().map(SanType::DnsName),
            })
            .collect::<Result<_, _>>()?;
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = match spec.key_usage {
            KeyUsage::DigitalSignature => vec![KeyUsagePurpose::DigitalSignature],
            KeyUsage::KeyEnciphermentOnly => vec![KeyUsagePurpose::KeyEncipherment],
        };
        params.extended_key_usages = match spec.extended_key_usage {
            ExtendedKeyUsage::ClientAndServer => vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
            ExtendedKeyUsage::ServerOnly => vec![ExtendedKeyUsagePurpose::ServerAuth],
            ExtendedKeyUsage::ClientOnly => vec![ExtendedKeyUsagePurpose::ClientAuth],
        };
        params.use_authority_key_identifier_extension = true;
        params.not_before = offset_time(spec.not_before);
        params.not_after = offset_time(spec.not_after);
        let issuer = Issuer::from_params(&self.params, &self.key);
        let certificate = params.signed_by(&key, &issuer)?;
        Ok(Issued {
            certificate_pem: certificate.pem(),
            private_key_pem: key.serialize_pem(),
        })
    }
}

fn write_file(path: &Path, text: &str, private: bool) -> Result<(), CertError> {
    let io = |source| CertError::Io {
        path: path.to_owned(),
        source,
    };
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(path).map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)
}

/// Writes `NAME.crt` and `NAME.key` for an issued certificate into `directory`.
pub fn write_issued(directory: &Path, name: &str, issued: &Issued) -> Result<(), CertError> {
    if !is_file_name(name) {
        return Err(CertError::BadName(name.to_owned()));
    }
    write_file(
        &directory.join(format!("{name}.crt")),
        &issued.certificate_pem,
        false,
    )?;
    write_file(
        &directory.join(format!("{name}.key")),
        &issued.private_key_pem,
        true,
    )
}

fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Creates `directory` (if needed) and writes a new CA (`ca.crt`, `ca.key`) and one
/// operational certificate per name, each with the loopback names, the name itself and
/// `extra_names` as subject alternative names. Returns the files written.
pub fn write_pki(
    directory: &Path,
    names: &[String],
    extra_names: &[String],
    days: u32,
) -> Result<Vec<PathBuf>, CertError> {
    for name in names {
        if !is_file_name(name) || name == "ca" {
            return Err(CertError::BadName(name.clone()));
        }
    }
    fs::create_dir_all(directory).map_err(|source| CertError::Io {
        path: directory.to_owned(),
        source,
    })?;
    let pki = ScPki::generate("buildwire BACnet/SC test CA", days)?;
    let mut written = vec![directory.join("ca.crt"), directory.join("ca.key")];
    write_file(&written[0], pki.certificate_pem(), false)?;
    write_file(&written[1], &pki.private_key_pem(), true)?;
    for name in names {
        let mut spec = OperationalSpec::new(name, days);
        for extra in extra_names {
            if !spec.subject_alt_names.contains(extra) {
                spec.subject_alt_names.push(extra.clone());
            }
        }
        write_issued(directory, name, &pki.issue(&spec)?)?;
        written.push(directory.join(format!("{name}.crt")));
        written.push(directory.join(format!("{name}.key")));
    }
    Ok(written)
}
