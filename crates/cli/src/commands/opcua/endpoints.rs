//! `buildwire opcua endpoints URL`: what a user checks first about a server: its endpoints
//! (security policy, mode, security level, user token types), then, over a session opened
//! with the usual client options, its ServerStatus (state, times, BuildInfo) and namespaces.

use buildwire_opcua::client::structures::Structure;
use buildwire_opcua::client::value_text::value_to_json;
use buildwire_opcua::driver::OpcuaClient;
use buildwire_opcua::encoding::Variant;
use buildwire_opcua::security::SecurityPolicy;
use buildwire_opcua::services::well_known_nodes as ids;
use buildwire_opcua::services::{AttributeId, EndpointDescription};
use clap::Args;
use serde_json::{Value, json};

use super::client_args::{ClientArgs, connect};
use crate::commands::common::result::CommandResult;

#[derive(Debug, Args)]
pub struct EndpointsArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// Only list the endpoints (GetEndpoints needs no session); skip ServerStatus and the
    /// namespaces.
    #[arg(long)]
    no_session: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// A security policy's short name (`Basic256Sha256`), or its URI when unknown.
fn policy_name(uri: &str) -> String {
    SecurityPolicy::from_uri(uri).map_or_else(|| uri.to_owned(), |p| p.name().to_owned())
}

fn endpoint_json(endpoint: &EndpointDescription) -> Value {
    let uri = endpoint.security_policy_uri.as_str().unwrap_or_default();
    let policy = policy_name(uri);
    let tokens: Vec<Value> = endpoint
        .user_identity_tokens
        .iter()
        .map(|token| {
            let token_uri = token.security_policy_uri.as_str().unwrap_or_default();
            json!({
                "type": format!("{:?}", token.token_type),
                "policy_id": token.policy_id.as_str().unwrap_or_default(),
                "security_policy": (!token_uri.is_empty()).then(|| policy_name(token_uri)),
            })
        })
        .collect();
    json!({
        "url": endpoint.endpoint_url.as_str().unwrap_or_default(),
        "security_policy": policy,
        "security_mode": format!("{:?}", endpoint.security_mode),
        "security_level": endpoint.security_level,
        "user_tokens": tokens,
        "server": endpoint.server.application_uri.as_str().unwrap_or_default(),
        "server_name": endpoint.server.application_name.text.as_str().unwrap_or_default(),
        "has_certificate": endpoint.server_certificate.as_bytes().is_some_and(|b| !b.is_empty()),
    })
}

/// ServerStatus and NamespaceArray over a session.
async fn session_facts(args: &ClientArgs) -> Result<Value, Box<dyn std::error::Error>> {
    let mut client = connect(args).await?;
    let values = client
        .read(
            &[ids::SERVER_SERVER_STATUS, ids::SERVER_NAMESPACE_ARRAY],
            AttributeId::Value,
        )
        .await;
    let _ = client.close().await;
    let values = values?;
    let status = values
        .first()
        .and_then(|v| v.value.as_ref())
        .map_or(Value::Null, |value| match value {
            Variant::ExtensionObject(object) => {
                Structure::decode(object).map_or_else(|| value_to_json(value), |s| s.to_json())
            }
            other => value_to_json(other),
        });
    let namespaces = values
        .get(1)
        .and_then(|v| v.value.as_ref())
        .map_or(Value::Null, value_to_json);
    Ok(json!({"server_status": status, "namespaces": namespaces}))
}

pub async fn endpoints(args: EndpointsArgs) -> CommandResult {
    let endpoints = OpcuaClient::discover_endpoints(&args.client.endpoint)
        .await
        .map_err(|e| format!("cannot get the endpoints of {}: {e}", args.client.endpoint))?;
    let rows: Vec<Value> = endpoints.iter().map(endpoint_json).collect();
    let session = if args.no_session {
        None
    } else {
        Some(session_facts(&args.client).await.map_err(|e| e.to_string()))
    };
    if args.json {
        let mut out = json!({"endpoint": args.client.endpoint, "endpoints": rows});
        match &session {
            Some(Ok(facts)) => {
                out["server_status"] = facts["server_status"].clone();
                out["namespaces"] = facts["namespaces"].clone();
            }
            Some(Err(reason)) => out["session_error"] = json!(reason),
            None => {}
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_text(&rows, session.as_ref());
    }
    match session {
        Some(Err(reason)) => Err(format!(
            "the endpoints answered, but no session could be opened: {reason} \
             (--user, --security, or --no-session to list endpoints only)"
        )
        .into()),
        _ => Ok(()),
    }
}

fn print_text(rows: &[Value], session: Option<&Result<Value, String>>) {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    for (index, row) in rows.iter().enumerate() {
        let tokens: Vec<String> = row["user_tokens"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| match t["security_policy"].as_str() {
                Some(policy) => format!("{} ({policy})", text(&t["type"])),
                None => text(&t["type"]),
            })
            .collect();
        println!(
            "endpoint {}: {} {} {} (level {})",
            index + 1,
            text(&row["url"]),
            text(&row["security_policy"]),
            text(&row["security_mode"]),
            row["security_level"]
        );
        println!("  user tokens: {}", tokens.join(", "));
    }
    if let Some(first) = rows.first() {
        println!(
            "server: {} ({})",
            text(&first["server_name"]),
            text(&first["server"])
        );
    }
    let Some(Ok(facts)) = session else { return };
    let status = &facts["server_status"];
    let build = &status["build_info"];
    println!(
        "state: {}, started {}, now {}",
        text(&status["state"]),
        text(&status["start_time"]),
        text(&status["current_time"])
    );
    println!(
        "product: {} {} by {} (build {}, {})",
        text(&build["product_name"]),
        text(&build["software_version"]),
        text(&build["manufacturer_name"]),
        text(&build["build_number"]),
        text(&build["build_date"])
    );
    for (index, uri) in facts["namespaces"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        println!("ns={index}: {}", text(uri));
    }
}
