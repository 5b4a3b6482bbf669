//! The PKI store on disk (the layout of OPC 10000-12 §F.1, simplified):
//!
//! ```text
//! DIR/own/cert.der            our application instance certificate
//! DIR/own/private/key.der     its RSA private key (PKCS#8 DER, mode 0600)
//! DIR/trusted/<sha1>.der      trusted peer certificates
//! DIR/rejected/<sha1>.der     peer certificates that were refused, for an operator to review
//! ```
//!
//! This is the one I/O part of the security layer: the sans-IO cores get a [`TrustList`] and
//! the own identity from here, and report rejected certificates, which the drivers write back
//! with [`Pki::reject_certificate`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::certificate::{Certificate, CertificateError, TrustList, thumbprint_hex};
use super::channel::LocalIdentity;
use super::crypto::{CryptoError, PrivateKey};

/// Days a generated certificate is valid (a year and a month).
pub const DEFAULT_CERTIFICATE_DAYS: u32 = 395;
/// Most certificates read from one folder.
pub const MAX_STORED_CERTIFICATES: usize = 10_000;

/// Why a PKI operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A certificate could not be parsed or created.
    #[error("{0}")]
    Certificate(#[from] CertificateError),
    /// The private key could not be parsed or generated.
    #[error("{0}")]
    Key(#[from] CryptoError),
    /// No certificate with that thumbprint or file name.
    #[error("no certificate {0} in the store (see `buildwire opcua certs list`)")]
    NotFound(String),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> PkiError + '_ {
    move |source| PkiError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Which list a stored certificate is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CertificateList {
    /// `trusted/`.
    Trusted,
    /// `rejected/`.
    Rejected,
}

impl CertificateList {
    fn folder(self) -> &'static str {
        match self {
            Self::Trusted => "trusted",
            Self::Rejected => "rejected",
        }
    }
}

/// Seconds since the Unix epoch now.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A PKI folder.
#[derive(Clone, Debug)]
pub struct Pki {
    root: PathBuf,
}

impl Pki {
    /// Opens (creating when missing) the store at `root`.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, PkiError> {
        let root = root.into();
        for folder in ["own/private", "trusted", "rejected"] {
            let path = root.join(folder);
            fs::create_dir_all(&path).map_err(io_error(&path))?;
        }
        Ok(Self { root })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Path of our certificate.
    pub fn own_certificate_path(&self) -> PathBuf {
        self.root.join("own/cert.der")
    }

    /// Path of our private key.
    pub fn own_key_path(&self) -> PathBuf {
        self.root.join("own/private/key.der")
    }

    /// Our certificate and key, if both exist.
    pub fn load_own(&self) -> Result<Option<LocalIdentity>, PkiError> {
        let (cert_path, key_path) = (self.own_certificate_path(), self.own_key_path());
        if !cert_path.exists() || !key_path.exists() {
            return Ok(None);
        }
        let certificate =
            Certificate::from_der(&fs::read(&cert_path).map_err(io_error(&cert_path))?)?;
        let key = PrivateKey::from_pkcs8(&fs::read(&key_path).map_err(io_error(&key_path))?)?;
        Ok(Some(LocalIdentity {
            certificate,
            private_key: Arc::new(key),
        }))
    }

    /// Creates (replacing any) our key and self-signed certificate for `application_uri`,
    /// named `name`, for `hosts` (DNS names or IP addresses).
    pub fn create_own(
        &self,
        application_uri: &str,
        name: &str,
        hosts: &[String],
        days: u32,
    ) -> Result<LocalIdentity, PkiError> {
        let key = PrivateKey::generate()?;
        let certificate =
            Certificate::create_self_signed(&key, application_uri, name, hosts, unix_now(), days)?;
        let key_path = self.own_key_path();
        write_private(&key_path, key.to_pkcs8())?;
        let cert_path = self.own_certificate_path();
        fs::write(&cert_path, certificate.der()).map_err(io_error(&cert_path))?;
        Ok(LocalIdentity {
            certificate,
            private_key: Arc::new(key),
        })
    }

    /// Our identity, created on first use. A stored certificate for another application URI
    /// is kept (the caller sees the URI it carries and may recreate it).
    pub fn own_or_create(
        &self,
        application_uri: &str,
        name: &str,
        hosts: &[String],
    ) -> Result<LocalIdentity, PkiError> {
        match self.load_own()? {
            Some(identity) => Ok(identity),
            None => self.create_own(application_uri, name, hosts, DEFAULT_CERTIFICATE_DAYS),
        }
    }

    fn list_path(&self, list: CertificateList) -> PathBuf {
        self.root.join(list.folder())
    }

    /// The certificates on `list` (unreadable files are skipped).
    pub fn certificates(&self, list: CertificateList) -> Result<Vec<Certificate>, PkiError> {
        let folder = self.list_path(list);
        let mut out = Vec::new();
        for entry in fs::read_dir(&folder)
            .map_err(io_error(&folder))?
            .take(MAX_STORED_CERTIFICATES)
        {
            let path = entry.map_err(io_error(&folder))?.path();
            if path.extension().is_some_and(|e| e == "der")
                && let Ok(bytes) = fs::read(&path)
                && let Ok(certificate) = Certificate::from_der(&bytes)
            {
                out.push(certificate);
            }
        }
        out.sort_by_key(Certificate::thumbprint_hex);
        Ok(out)
    }

    /// The trust list of `trusted/` (plus trust in everyone when `auto_trust`).
    pub fn trust_list(&self, auto_trust: bool) -> Result<TrustList, PkiError> {
        let mut list = TrustList::new(
            self.certificates(CertificateList::Trusted)?
                .iter()
                .map(Certificate::thumbprint),
        );
        list.auto_trust = auto_trust;
        Ok(list)
    }

    fn path_of(&self, list: CertificateList, certificate: &Certificate) -> PathBuf {
        self.list_path(list)
            .join(format!("{}.der", certificate.thumbprint_hex()))
    }

    /// Writes `certificate` to `list`, removing it from the other one.
    pub fn store(
        &self,
        list: CertificateList,
        certificate: &Certificate,
    ) -> Result<PathBuf, PkiError> {
        let path = self.path_of(list, certificate);
        fs::write(&path, certificate.der()).map_err(io_error(&path))?;
        let other = match list {
            CertificateList::Trusted => CertificateList::Rejected,
            CertificateList::Rejected => CertificateList::Trusted,
        };
        let stale = self.path_of(other, certificate);
        if stale.exists() {
            fs::remove_file(&stale).map_err(io_error(&stale))?;
        }
        Ok(path)
    }

    /// Records a certificate a peer presented that was not trusted (DER of it or its chain).
    pub fn reject_certificate(&self, der: &[u8]) -> Result<PathBuf, PkiError> {
        let certificate = Certificate::from_der(der)?;
        self.store(CertificateList::Rejected, &certificate)
    }

    /// Finds a stored certificate by thumbprint (hex, any case, a unique prefix of 8 or more
    /// digits is enough).
    pub fn find(&self, thumbprint: &str) -> Result<(CertificateList, Certificate), PkiError> {
        let wanted = thumbprint.trim().to_ascii_lowercase().replace(':', "");
        if wanted.len() >= 8 {
            for list in [CertificateList::Trusted, CertificateList::Rejected] {
                if let Some(found) = self
                    .certificates(list)?
                    .into_iter()
                    .find(|c| c.thumbprint_hex().starts_with(&wanted))
                {
                    return Ok((list, found));
                }
            }
        }
        Err(PkiError::NotFound(thumbprint.to_owned()))
    }

    /// Trusts a certificate given as a file (DER or PEM) or as the thumbprint of a stored one
    /// (moving it out of `rejected/`).
    pub fn trust(&self, file_or_thumbprint: &str) -> Result<Certificate, PkiError> {
        let path = Path::new(file_or_thumbprint);
        let certificate = if path.is_file() {
            let bytes = fs::read(path).map_err(io_error(path))?;
            Certificate::from_der(&pem_to_der(&bytes).unwrap_or(bytes))?
        } else {
            self.find(file_or_thumbprint)?.1
        };
        self.store(CertificateList::Trusted, &certificate)?;
        Ok(certificate)
    }

    /// Moves a stored certificate to `rejected/`.
    pub fn reject(&self, thumbprint: &str) -> Result<Certificate, PkiError> {
        let (_, certificate) = self.find(thumbprint)?;
        self.store(CertificateList::Rejected, &certificate)?;
        Ok(certificate)
    }

    /// Deletes a stored certificate from both lists.
    pub fn remove(&self, thumbprint: &str) -> Result<Certificate, PkiError> {
        let (_, certificate) = self.find(thumbprint)?;
        for list in [CertificateList::Trusted, CertificateList::Rejected] {
            let path = self.path_of(list, &certificate);
            if path.exists() {
                fs::remove_file(&path).map_err(io_error(&path))?;
            }
        }
        Ok(certificate)
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), PkiError> {
    #[cfg(unix)]
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(io_error(path))?;
        file.write_all(bytes).map_err(io_error(path))
    }
    #[cfg(not(unix))]
    {
        fs::write(path, bytes).map_err(io_error(path))
    }
}

/// The DER inside a PEM `CERTIFICATE` block, if `bytes` is PEM.
fn pem_to_der(bytes: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.find("-----BEGIN CERTIFICATE-----")? + "-----BEGIN CERTIFICATE-----".len();
    let end = text[start..].find("-----END CERTIFICATE-----")? + start;
    base64_decode(&text[start..end])
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\r' | b'\n' | b' ' | b'\t' => continue,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Some(out)
}

/// A short description of a certificate for listings.
pub fn describe(certificate: &Certificate) -> String {
    format!(
        "{} {} {}",
        thumbprint_hex(&certificate.thumbprint()),
        certificate.application_uri().unwrap_or("-"),
        certificate.subject()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "crypto")]
    #[test]
    fn own_identity_trust_and_reject() {
        let dir = std::env::temp_dir().join(format!("buildwire-pki-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let pki = Pki::open(&dir).unwrap();
        assert!(pki.load_own().unwrap().is_none());
        let own = pki
            .own_or_create("urn:a", "a", &["localhost".to_owned()])
            .unwrap();
        let again = pki.own_or_create("urn:other", "b", &[]).unwrap();
        assert_eq!(
            again.certificate, own.certificate,
            "created once, then loaded"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(pki.own_key_path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A peer's certificate: rejected, then trusted by thumbprint, then removed.
        let peer_key = PrivateKey::generate().unwrap();
        let peer =
            Certificate::create_self_signed(&peer_key, "urn:peer", "peer", &[], unix_now(), 10)
                .unwrap();
        pki.reject_certificate(peer.der()).unwrap();
        assert_eq!(
            pki.certificates(CertificateList::Rejected).unwrap(),
            std::slice::from_ref(&peer)
        );
        assert!(
            pki.trust_list(false)
                .unwrap()
                .validate(
                    &peer,
                    super::super::SecurityPolicy::Basic256Sha256,
                    unix_now(),
                    None
                )
                .is_err()
        );
        pki.trust(&peer.thumbprint_hex()[..10]).unwrap();
        assert!(
            pki.certificates(CertificateList::Rejected)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            pki.certificates(CertificateList::Trusted).unwrap(),
            std::slice::from_ref(&peer)
        );
        assert!(
            pki.trust_list(false)
                .unwrap()
                .validate(
                    &peer,
                    super::super::SecurityPolicy::Basic256Sha256,
                    unix_now(),
                    None
                )
                .is_ok()
        );
        pki.reject(&peer.thumbprint_hex()).unwrap();
        assert_eq!(
            pki.certificates(CertificateList::Rejected).unwrap(),
            std::slice::from_ref(&peer)
        );
        pki.remove(&peer.thumbprint_hex()).unwrap();
        assert!(
            pki.certificates(CertificateList::Rejected)
                .unwrap()
                .is_empty()
        );
        assert!(matches!(
            pki.remove("abcdef0123"),
            Err(PkiError::NotFound(_))
        ));
        // Trust from a file.
        let file = dir.join("peer.der");
        fs::write(&file, peer.der()).unwrap();
        pki.trust(file.to_str().unwrap()).unwrap();
        assert_eq!(pki.certificates(CertificateList::Trusted).unwrap(), [peer]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn base64() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVs\nbG8h").unwrap(), b"hello!");
        assert!(base64_decode("a*").is_none());
    }
}
