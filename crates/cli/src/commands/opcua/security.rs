//! The security options of `buildwire opcua ...` and `buildwire opcua certs`: the PKI folder
//! (own certificate, trusted, rejected), `--security POLICY --mode sign|encrypt` for client
//! commands and `--security POLICY[,POLICY..]` for `serve`.

use std::path::PathBuf;

use buildwire_opcua::client::ClientConfig;
use buildwire_opcua::driver::security::{SecureClientOptions, secure_client_config, x509_identity};
use buildwire_opcua::security::pki::{CertificateList, Pki};
use buildwire_opcua::security::{Certificate, LocalIdentity, MessageSecurityMode, SecurityPolicy};
use buildwire_opcua::server::ServerSecurity;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::commands::common::result::CommandResult;

type BoxError = Box<dyn std::error::Error>;

/// The default PKI folder: `$XDG_DATA_HOME/buildwire/opcua/pki`, else
/// `~/.local/share/buildwire/opcua/pki`, else `./buildwire-opcua-pki`.
pub fn default_pki_dir() -> PathBuf {
    if let Some(data) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(data).join("buildwire/opcua/pki");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join(".local/share/buildwire/opcua/pki");
    }
    PathBuf::from("buildwire-opcua-pki")
}

fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// The application URI used when the PKI has no certificate yet.
pub fn default_application_uri() -> String {
    format!("urn:{}:buildwire:opcua", host_name())
}

fn default_hosts() -> Vec<String> {
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let name = host_name();
    if !hosts.contains(&name) {
        hosts.push(name);
    }
    hosts
}

/// Opens the PKI and loads our certificate, creating it on first use.
pub fn own_identity(pki_dir: &std::path::Path) -> Result<(Pki, LocalIdentity), BoxError> {
    let pki = Pki::open(pki_dir)?;
    let identity = pki.own_or_create(
        &default_application_uri(),
        &format!("buildwire@{}", host_name()),
        &default_hosts(),
    )?;
    Ok((pki, identity))
}

/// Message security mode on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Signed (MessageSecurityMode Sign).
    Sign,
    /// Signed and encrypted (SignAndEncrypt).
    Encrypt,
}

impl ModeArg {
    fn mode(self) -> MessageSecurityMode {
        match self {
            Self::Sign => MessageSecurityMode::Sign,
            Self::Encrypt => MessageSecurityMode::SignAndEncrypt,
        }
    }
}

fn parse_policy(text: &str) -> Result<SecurityPolicy, String> {
    SecurityPolicy::from_name(text).ok_or_else(|| {
        format!(
            "unknown security policy `{text}`; choose one of {}",
            SecurityPolicy::ALL.map(SecurityPolicy::name).join(", ")
        )
    })
}

/// Security options of the client commands.
#[derive(Debug, Args)]
pub struct ClientSecurityArgs {
    /// Security policy: None, Basic256Sha256, Aes128_Sha256_RsaOaep or Aes256_Sha256_RsaPss.
    #[arg(long = "security", value_name = "POLICY", default_value = "None", value_parser = parse_policy)]
    pub policy: SecurityPolicy,
    /// Message security mode with a secured policy (default: encrypt).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// PKI folder (own certificate, trusted/, rejected/); created on first use.
    #[arg(long, value_name = "DIR")]
    pub pki: Option<PathBuf>,
    /// Trust the server's certificate without it being in trusted/ (tests and demos).
    #[arg(long)]
    pub trust_server: bool,
    /// Log in with this user certificate (DER; an X509 identity token, secured policies
    /// only); needs --user-key.
    #[arg(long, value_name = "FILE", requires = "user_key")]
    pub user_cert: Option<PathBuf>,
    /// The private key of --user-cert (PKCS#8 DER, as `certs create` writes it).
    #[arg(long, value_name = "FILE", requires = "user_cert")]
    pub user_key: Option<PathBuf>,
    /// Send the --password in CLEAR when neither the server's UserName token policy nor
    /// the channel encrypts it (otherwise such a login fails before the password leaves).
    #[arg(long)]
    pub allow_cleartext_password: bool,
}

impl ClientSecurityArgs {
    /// Fills `config.security` (and the application URI from our certificate): asks the
    /// server for its certificate and checks it against trusted/; an unknown one is stored in
    /// rejected/ and refused with the command that trusts it.
    pub async fn apply(&self, config: &mut ClientConfig) -> Result<(), BoxError> {
        config.allow_cleartext_password = self.allow_cleartext_password;
        if !self.policy.is_secured() {
            if self.mode.is_some() || self.user_cert.is_some() {
                return Err(
                    "--mode and --user-cert need --security with a policy other than None".into(),
                );
            }
            return Ok(());
        }
        if let (Some(cert), Some(key)) = (&self.user_cert, &self.user_key) {
            config.identity = x509_identity(cert, key)?;
        }
        let dir = self.pki.clone().unwrap_or_else(default_pki_dir);
        let options = SecureClientOptions {
            policy: self.policy,
            mode: self.mode.unwrap_or(ModeArg::Encrypt).mode(),
            pki_dir: &dir,
            application_uri: &default_application_uri(),
            hosts: &default_hosts(),
            trust_server: self.trust_server,
        };
        secure_client_config(config, &options).await?;
        Ok(())
    }
}

/// Which modes `serve` offers with its secured policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServeModeArg {
    /// Sign only.
    Sign,
    /// SignAndEncrypt only.
    Encrypt,
    /// Both (default).
    Both,
}

/// Security options of `serve`.
#[derive(Debug, Args)]
pub struct ServeSecurityArgs {
    /// Offer these policies (comma-separated: Basic256Sha256,Aes128_Sha256_RsaOaep,
    /// Aes256_Sha256_RsaPss, or None). Without it only SecurityPolicy None is offered.
    #[arg(long = "security", value_name = "POLICY[,POLICY..]", value_parser = parse_policy, value_delimiter = ',')]
    pub policies: Vec<SecurityPolicy>,
    /// Modes offered with the secured policies.
    #[arg(long = "mode", value_enum, default_value_t = ServeModeArg::Both)]
    pub mode: ServeModeArg,
    /// PKI folder (own certificate, trusted/, rejected/); created on first use.
    #[arg(long, value_name = "DIR")]
    pub pki: Option<PathBuf>,
    /// Trust every client certificate (tests and demos only).
    #[arg(long)]
    pub auto_trust: bool,
    /// Accept --user passwords sent in CLEAR over a SecurityPolicy None channel, readable by
    /// anyone on the network. Without it, a server with users encrypts them with its
    /// certificate (created in --pki on first run) on every endpoint.
    #[arg(long)]
    pub allow_cleartext_passwords: bool,
}

impl ServeSecurityArgs {
    /// The server's security configuration and its application URI (from the certificate).
    /// With `users`, the certificate is needed even for SecurityPolicy None alone: the None
    /// endpoint's UserName policy encrypts passwords with it.
    pub fn server_security(
        &self,
        users: bool,
    ) -> Result<(ServerSecurity, Option<String>), BoxError> {
        if self.policies.is_empty() && !users {
            return Ok((ServerSecurity::default(), None));
        }
        let policies = &self.policies;
        let modes: &[MessageSecurityMode] = match self.mode {
            ServeModeArg::Sign => &[MessageSecurityMode::Sign],
            ServeModeArg::Encrypt => &[MessageSecurityMode::SignAndEncrypt],
            ServeModeArg::Both => &[
                MessageSecurityMode::Sign,
                MessageSecurityMode::SignAndEncrypt,
            ],
        };
        let mut endpoints = Vec::new();
        if policies.is_empty() {
            endpoints.push((SecurityPolicy::None, MessageSecurityMode::None));
        }
        for policy in policies {
            if policy.is_secured() {
                endpoints.extend(modes.iter().map(|mode| (*policy, *mode)));
            } else {
                endpoints.push((SecurityPolicy::None, MessageSecurityMode::None));
            }
        }
        let dir = self.pki.clone().unwrap_or_else(default_pki_dir);
        let (pki, identity) = own_identity(&dir)?;
        let uri = identity.certificate.application_uri().map(str::to_owned);
        // The trust list is read once at start: trust new clients, then restart.
        let trust = pki.trust_list(self.auto_trust)?;
        Ok((
            ServerSecurity {
                identity: Some(identity),
                endpoints,
                trust,
                pki: Some(pki),
            },
            uri,
        ))
    }
}

/// `buildwire opcua certs ...`.
#[derive(Debug, Args)]
pub struct CertsArgs {
    #[command(subcommand)]
    command: CertsCommand,
    /// PKI folder (default: $XDG_DATA_HOME/buildwire/opcua/pki).
    #[arg(long, value_name = "DIR", global = true)]
    pki: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum CertsCommand {
    /// Create our application instance certificate (self-signed RSA 2048, application URI
    /// and hosts in the subjectAltName); keeps an existing one unless --force.
    Create {
        /// The application URI (default: urn:HOSTNAME:buildwire:opcua).
        #[arg(long)]
        application_uri: Option<String>,
        /// The subject common name.
        #[arg(long)]
        name: Option<String>,
        /// DNS names or IP addresses for the subjectAltName (default: localhost, 127.0.0.1,
        /// the host name); repeat for more.
        #[arg(long = "host")]
        hosts: Vec<String>,
        /// Days of validity.
        #[arg(long, default_value_t = buildwire_opcua::security::pki::DEFAULT_CERTIFICATE_DAYS)]
        days: u32,
        /// Replace an existing certificate and key.
        #[arg(long)]
        force: bool,
    },
    /// Show our certificate.
    Show,
    /// List trusted and rejected peer certificates.
    List,
    /// Trust a certificate: a DER or PEM file, or the thumbprint (or an 8+ digit prefix) of
    /// one in rejected/.
    Trust {
        /// FILE or THUMBPRINT.
        certificate: String,
    },
    /// Move a trusted certificate to rejected/.
    Reject {
        /// THUMBPRINT (or an 8+ digit prefix).
        thumbprint: String,
    },
    /// Delete a certificate from trusted/ and rejected/.
    Remove {
        /// THUMBPRINT (or an 8+ digit prefix).
        thumbprint: String,
    },
}

fn certificate_json(certificate: &Certificate) -> Value {
    let (from, to) = certificate.validity();
    json!({
        "thumbprint": certificate.thumbprint_hex(),
        "subject": certificate.subject(),
        "application_uri": certificate.application_uri(),
        "dns_names": certificate.dns_names(),
        "ip_addresses": certificate.ip_addresses().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "not_before_unix": from,
        "not_after_unix": to,
        "key_bits": certificate.key_bits(),
    })
}

fn print_certificate(label: &str, certificate: &Certificate) {
    println!(
        "{label} {}  {}  {}  {} bits",
        certificate.thumbprint_hex(),
        certificate.application_uri().unwrap_or("-"),
        certificate.subject(),
        certificate.key_bits()
    );
}

/// Runs `buildwire opcua certs`.
pub fn certs(args: CertsArgs) -> CommandResult {
    let dir = args.pki.clone().unwrap_or_else(default_pki_dir);
    let pki = Pki::open(&dir)?;
    let (action, list, certificate) = match args.command {
        CertsCommand::Create {
            application_uri,
            name,
            hosts,
            days,
            force,
        } => {
            let existing = pki.load_own()?;
            let (created, identity) = match existing {
                Some(identity) if !force => (false, identity),
                _ => {
                    let uri = application_uri.unwrap_or_else(default_application_uri);
                    let name = name.unwrap_or_else(|| format!("buildwire@{}", host_name()));
                    let hosts = if hosts.is_empty() {
                        default_hosts()
                    } else {
                        hosts
                    };
                    (true, pki.create_own(&uri, &name, &hosts, days)?)
                }
            };
            let action = if created { "created" } else { "exists" };
            (action, "own", identity.certificate)
        }
        CertsCommand::Show => {
            let identity = pki.load_own()?.ok_or_else(|| {
                format!(
                    "no certificate in {}; create one with `buildwire opcua certs create`",
                    dir.display()
                )
            })?;
            ("show", "own", identity.certificate)
        }
        CertsCommand::List => {
            let trusted = pki.certificates(CertificateList::Trusted)?;
            let rejected = pki.certificates(CertificateList::Rejected)?;
            if args.json {
                println!(
                    "{}",
                    json!({
                        "pki": dir.display().to_string(),
                        "trusted": trusted.iter().map(certificate_json).collect::<Vec<_>>(),
                        "rejected": rejected.iter().map(certificate_json).collect::<Vec<_>>(),
                    })
                );
            } else {
                println!("PKI {}", dir.display());
                for certificate in &trusted {
                    print_certificate("trusted ", certificate);
                }
                for certificate in &rejected {
                    print_certificate("rejected", certificate);
                }
                if trusted.is_empty() && rejected.is_empty() {
                    println!("no peer certificates yet (refused ones land in rejected/)");
                }
            }
            return Ok(());
        }
        CertsCommand::Trust { certificate } => ("trusted", "trusted", pki.trust(&certificate)?),
        CertsCommand::Reject { thumbprint } => ("rejected", "rejected", pki.reject(&thumbprint)?),
        CertsCommand::Remove { thumbprint } => ("removed", "none", pki.remove(&thumbprint)?),
    };
    if args.json {
        let mut value = certificate_json(&certificate);
        value["action"] = json!(action);
        value["list"] = json!(list);
        value["pki"] = json!(dir.display().to_string());
        if list == "own" {
            value["certificate_file"] = json!(pki.own_certificate_path().display().to_string());
            value["key_file"] = json!(pki.own_key_path().display().to_string());
        }
        println!("{value}");
    } else {
        print_certificate(action, &certificate);
        if list == "own" {
            println!("certificate {}", pki.own_certificate_path().display());
        }
    }
    Ok(())
}
