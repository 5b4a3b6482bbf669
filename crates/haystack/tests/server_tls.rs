//! HTTPS, WSS and mutual TLS with certificates made by rcgen for the test.
#![allow(clippy::unwrap_used)]

mod server_support;

use std::sync::Arc;

use buildwire_haystack::server::{HaystackServer, TlsConfig};
use futures_util::{SinkExt, StreamExt};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use server_support::*;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

struct Pki {
    ca_pem: String,
    server_cert_pem: String,
    server_key_pem: String,
    client_cert_pem: String,
    client_key_pem: String,
    stranger_cert_pem: String,
    stranger_key_pem: String,
}

fn pki() -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "buildwire test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>, cn: &str| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert_pem, server_key_pem) =
        leaf(vec!["localhost".into(), "127.0.0.1".into()], "server");
    let (client_cert_pem, client_key_pem) = leaf(vec!["client".into()], "client");
    // A certificate from another CA.
    let stranger = rcgen::generate_simple_self_signed(vec!["stranger".to_owned()]).unwrap();
    Pki {
        ca_pem: ca_cert.pem(),
        server_cert_pem,
        server_key_pem,
        client_cert_pem,
        client_key_pem,
        stranger_cert_pem: stranger.cert.pem(),
        stranger_key_pem: stranger.signing_key.serialize_pem(),
    }
}

fn client(pki: &Pki, identity: Option<(&str, &str)>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap());
    if let Some((cert, key)) = identity {
        let pem = format!("{cert}{key}");
        builder = builder.identity(reqwest::Identity::from_pem(pem.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn https_and_wss() {
    let pki = pki();
    let tls = TlsConfig::from_pem(pki.server_cert_pem.clone(), pki.server_key_pem.clone());
    let server = HaystackServer::start(server_config().tls(tls))
        .await
        .unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let mut http = Http::with_client(client(&pki, None), &server.url());
    http.login("viewer", PASSWORD).await.unwrap();
    let sites = http.get("read", "filter=site", None).await.zinc();
    assert_eq!(sites.row_count(), 1);
    // Plain HTTP to the TLS port fails.
    let plain = reqwest::get(server.url().replace("https", "http") + "/about").await;
    assert!(plain.is_err() || plain.unwrap().status().as_u16() >= 400);

    // WSS with the same CA.
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(pki.ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let mut request = server.ws_url().into_client_request().unwrap();
    request.headers_mut().insert(
        "Authorization",
        format!("BEARER authToken={}", http.token.clone().unwrap())
            .parse()
            .unwrap(),
    );
    let connector = tokio_tungstenite::Connector::Rustls(Arc::new(config));
    let (mut ws, _) =
        tokio_tungstenite::connect_async_tls_with_config(request, None, false, Some(connector))
            .await
            .unwrap();
    ws.send(Message::text(r#"{"id":"1","op":"about"}"#))
        .await
        .unwrap();
    let Some(Ok(Message::Text(text))) = ws.next().await else {
        panic!("no answer")
    };
    assert!(text.contains("haystackVersion"), "{text}");
    server.stop().await.unwrap();
}

use rustls::pki_types::pem::PemObject;

#[tokio::test]
async fn mutual_tls_requires_a_client_certificate_from_the_ca() {
    let pki = pki();
    let tls = TlsConfig::from_pem(pki.server_cert_pem.clone(), pki.server_key_pem.clone())
        .require_client_certs(pki.ca_pem.clone());
    let server = HaystackServer::start(server_config().tls(tls))
        .await
        .unwrap();
    let about = format!("{}/about", server.url());
    // Without a certificate, or with one from another CA: no connection.
    assert!(client(&pki, None).get(&about).send().await.is_err());
    let stranger = client(&pki, Some((&pki.stranger_cert_pem, &pki.stranger_key_pem)));
    assert!(stranger.get(&about).send().await.is_err());
    // With the right certificate, Haystack auth still applies on top.
    let good = client(&pki, Some((&pki.client_cert_pem, &pki.client_key_pem)));
    let r = good.get(&about).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let mut http = Http::with_client(good, &server.url());
    http.login("admin", PASSWORD).await.unwrap();
    assert_eq!(http.get("about", "", None).await.status, 200);
    server.stop().await.unwrap();
}

#[test]
fn bad_tls_material_is_an_error() {
    let pki = pki();
    assert!(
        TlsConfig::from_pem("", pki.server_key_pem.clone())
            .server_config()
            .is_err()
    );
    assert!(
        TlsConfig::from_pem(pki.server_cert_pem.clone(), "")
            .server_config()
            .is_err()
    );
    let mismatched = TlsConfig::from_pem(pki.server_cert_pem.clone(), pki.client_key_pem.clone());
    assert!(mismatched.server_config().is_err());
    let bad_ca = TlsConfig::from_pem(pki.server_cert_pem.clone(), pki.server_key_pem.clone())
        .require_client_certs("not pem");
    assert!(bad_ca.server_config().is_err());
}
