//! The options every OPC UA client command shares (endpoint, user, security) and the client
//! configuration and connection they describe.

use buildwire_opcua::client::{ClientConfig, ClientIdentity};
use buildwire_opcua::driver::OpcuaClient;
use buildwire_opcua::encoding::NodeId;
use clap::Args;

use crate::commands::common::service::ClientLogArgs;
use crate::commands::opcua::security::ClientSecurityArgs;

/// Options shared by the client commands.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The server, `opc.tcp://HOST:PORT[/PATH]`.
    pub endpoint: String,
    /// Log in as NAME:PASSWORD (or NAME with --password) instead of anonymously; under a
    /// secured policy the password is encrypted with the server's certificate.
    #[arg(long, value_name = "NAME:PASSWORD")]
    user: Option<String>,
    /// The password for --user NAME.
    #[arg(long, requires = "user")]
    password: Option<String>,
    #[command(flatten)]
    security: ClientSecurityArgs,
    #[command(flatten)]
    logs: ClientLogArgs,
}

pub fn parse_node(text: &str) -> Result<NodeId, Box<dyn std::error::Error>> {
    text.parse::<NodeId>()
        .map_err(|e| format!("`{text}`: {e} (forms: i=2258, ns=1;i=5000, ns=2;s=Name)").into())
}

pub fn split_user(text: &str) -> Result<(String, String), Box<dyn std::error::Error>> {
    let (name, password) = text
        .split_once(':')
        .ok_or_else(|| "a user is NAME:PASSWORD (no `:` found)".to_owned())?;
    Ok((name.to_owned(), password.to_owned()))
}

fn identity(args: &ClientArgs) -> Result<ClientIdentity, Box<dyn std::error::Error>> {
    Ok(match &args.user {
        Some(user) => {
            let (user_name, password) = match &args.password {
                Some(password) => (user.clone(), password.clone()),
                None => split_user(user)?,
            };
            ClientIdentity::UserName {
                user_name,
                password,
            }
        }
        None => ClientIdentity::Anonymous,
    })
}

/// The client configuration the common options describe: endpoint, identity and security
/// (which may fetch and check the server's certificate).
pub async fn client_config(args: &ClientArgs) -> Result<ClientConfig, Box<dyn std::error::Error>> {
    args.logs.start_logs()?;
    let mut config = ClientConfig::new(&args.endpoint);
    config.identity = identity(args)?;
    args.security.apply(&mut config).await?;
    Ok(config)
}

pub async fn connect(args: &ClientArgs) -> Result<OpcuaClient, Box<dyn std::error::Error>> {
    let config = client_config(args).await?;
    OpcuaClient::connect_with(config)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", args.endpoint).into())
}
