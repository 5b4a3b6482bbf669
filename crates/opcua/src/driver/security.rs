//! Preparing a secured client connection (the I/O part: the PKI folder and the server's
//! certificate from GetEndpoints), shared by the CLI and the Python package.

use std::path::Path;
use std::sync::Arc;

use super::client::{ClientError, OpcuaClient};
use crate::client::{ClientConfig, ClientIdentity, ClientSecurity};
use crate::security::pki::{Pki, unix_now};
use crate::security::{
    Certificate, LocalIdentity, MessageSecurityMode, PrivateKey, SecurityPolicy,
};
use crate::types::StatusCode;

/// What a secured client connection needs beyond the endpoint.
#[derive(Clone, Debug)]
pub struct SecureClientOptions<'a> {
    /// The policy (not None).
    pub policy: SecurityPolicy,
    /// Sign or SignAndEncrypt.
    pub mode: MessageSecurityMode,
    /// The PKI folder: our certificate (created on first use), trusted/, rejected/.
    pub pki_dir: &'a Path,
    /// Application URI and hosts for a certificate created on first use.
    pub application_uri: &'a str,
    /// DNS names or IP addresses for a certificate created on first use.
    pub hosts: &'a [String],
    /// Trust the server's certificate even when it is not in trusted/.
    pub trust_server: bool,
}

fn pki_error(error: impl std::fmt::Display) -> ClientError {
    ClientError::status(StatusCode::BAD_CONFIGURATION_ERROR, error.to_string())
}

/// Fills `config.security` (and `config.application_uri` from our certificate): loads or
/// creates our certificate, asks the server for its certificate and checks it against
/// trusted/. An unknown server certificate is stored in rejected/ and refused with
/// Bad_CertificateUntrusted and the command that trusts it.
pub async fn secure_client_config(
    config: &mut ClientConfig,
    options: &SecureClientOptions<'_>,
) -> Result<(), ClientError> {
    let pki = Pki::open(options.pki_dir).map_err(pki_error)?;
    let identity = pki
        .own_or_create(
            options.application_uri,
            options.application_uri,
            options.hosts,
        )
        .map_err(pki_error)?;
    let server =
        OpcuaClient::server_certificate(&config.endpoint_url, options.policy, options.mode).await?;
    let trust = pki.trust_list(options.trust_server).map_err(pki_error)?;
    if let Err(status) = trust.validate(&server, options.policy, unix_now(), None) {
        let thumbprint = server.thumbprint_hex();
        if status == StatusCode::BAD_CERTIFICATE_UNTRUSTED {
            pki.reject_certificate(server.der()).map_err(pki_error)?;
            return Err(ClientError::status(
                status,
                format!(
                    "the server's certificate {thumbprint} ({}) is not trusted; it was stored in {}; trust it with `buildwire opcua certs trust {thumbprint} --pki {}` or pass --trust-server",
                    server.subject(),
                    options.pki_dir.join("rejected").display(),
                    options.pki_dir.display()
                ),
            ));
        }
        return Err(ClientError::status(
            status,
            format!("the server's certificate {thumbprint} is refused"),
        ));
    }
    if let Some(uri) = identity.certificate.application_uri() {
        config.application_uri = uri.to_owned();
    }
    config.security = ClientSecurity {
        policy: options.policy,
        mode: options.mode,
        identity: Some(identity),
        server_certificate: Some(server),
    };
    Ok(())
}

/// An X509 user identity from a DER certificate and a PKCS#8 DER key file.
pub fn x509_identity(certificate: &Path, key: &Path) -> Result<ClientIdentity, ClientError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| pki_error(format!("{}: {e}", path.display())))
    };
    let parsed = Certificate::from_der(&read(certificate)?)
        .map_err(|e| pki_error(format!("{}: {e}", certificate.display())))?;
    let private_key = PrivateKey::from_pkcs8(&read(key)?)
        .map_err(|e| pki_error(format!("{}: {e}", key.display())))?;
    Ok(ClientIdentity::X509(LocalIdentity {
        certificate: parsed,
        private_key: Arc::new(private_key),
    }))
}
