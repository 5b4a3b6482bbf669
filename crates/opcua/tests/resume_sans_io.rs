//! `ClientConnection::resume` against the sans-IO server core, bytes moved by hand: the
//! existing session is re-activated on a new channel (OPC 10000-4 §5.6.3.1); a session the
//! server no longer knows is replaced by exactly one new session; a session that could not be
//! re-activated for another reason is not taken over and times out on the server.

#[cfg(test)]
mod resume_sans_io_tests {
    use std::time::{Duration, Instant};

    use buildwire_opcua::client::reconnect::{ResumeSession, SessionOutcome};
    use buildwire_opcua::client::{
        ClientConfig, ClientConnection, ClientEvent, ClientIdentity, ClientState,
    };
    use buildwire_opcua::server::{Server, ServerConfig, ServerConnection, UserAccount};
    use buildwire_opcua::{DateTime, StatusCode};

    fn server() -> Server {
        server_started_at(DateTime::MIN)
    }

    /// The server's random source (session ids, tokens) is seeded from its start time: a
    /// restarted server starts at another time.
    fn server_started_at(start_time: DateTime) -> Server {
        let config = ServerConfig {
            start_time,
            users: vec![UserAccount {
                user_name: "alice".into(),
                password: "secret".into(),
            }],
            allow_cleartext_passwords: true,
            ..ServerConfig::default()
        };
        Server::new(config, Instant::now()).unwrap()
    }

    fn alice(password: &str) -> ClientConfig {
        let mut config = ClientConfig::new("opc.tcp://localhost:4840/");
        config.allow_cleartext_password = true;
        config.identity = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: password.into(),
        };
        config
    }

    /// Moves bytes both ways until neither side has anything to send; returns the events.
    fn pump(
        server: &mut Server,
        side: &mut ServerConnection,
        client: &mut ClientConnection,
    ) -> Vec<ClientEvent> {
        let now = Instant::now();
        let mut events = Vec::new();
        loop {
            let mut moved = false;
            while let Some(bytes) = client.poll_transmit() {
                side.handle_bytes(server, now, &bytes);
                moved = true;
            }
            while let Some(bytes) = side.poll_transmit() {
                client.handle_bytes(now, &bytes);
                moved = true;
            }
            while let Some(event) = client.poll_event() {
                events.push(event);
            }
            if !moved {
                return events;
            }
        }
    }

    /// A first connection with a new session; returns what resuming it needs.
    fn first_session(server: &mut Server) -> ResumeSession {
        let mut side = ServerConnection::new(server);
        let mut client = ClientConnection::new(alice("secret"), Instant::now(), DateTime(1));
        let events = pump(server, &mut side, &mut client);
        assert_eq!(events, [ClientEvent::SessionActivated]);
        assert_eq!(client.session_outcome(), Some(SessionOutcome::Created));
        // The connection is lost here: the server side and client are simply dropped.
        client.resume_session().unwrap()
    }

    #[test]
    fn the_existing_session_is_reactivated_on_a_new_channel() {
        let mut server = server();
        let resume = first_session(&mut server);
        assert_eq!(server.sessions.len(), 1);

        let mut side = ServerConnection::new(&server);
        let mut client =
            ClientConnection::resume(alice("secret"), Instant::now(), DateTime(1), resume.clone());
        let events = pump(&mut server, &mut side, &mut client);
        assert_eq!(events, [ClientEvent::SessionActivated]);
        assert_eq!(client.state(), ClientState::Active);
        assert_eq!(client.session_outcome(), Some(SessionOutcome::Reactivated));
        assert_eq!(client.session_id(), &resume.session_id);
        assert_eq!(server.sessions.len(), 1, "no second session");
    }

    #[test]
    fn a_session_the_server_lost_is_replaced_by_one_new_session() {
        let mut old_server = server();
        let resume = first_session(&mut old_server);

        // A restarted server knows nothing of the old session.
        let mut restarted = server_started_at(DateTime(1_000_000));
        let mut side = ServerConnection::new(&restarted);
        let mut client =
            ClientConnection::resume(alice("secret"), Instant::now(), DateTime(1), resume.clone());
        let events = pump(&mut restarted, &mut side, &mut client);
        assert_eq!(events, [ClientEvent::SessionActivated]);
        assert_eq!(client.session_outcome(), Some(SessionOutcome::Recreated));
        assert_eq!(restarted.sessions.len(), 1);
        let fresh = client.resume_session().unwrap();
        assert_ne!(fresh.authentication_token, resume.authentication_token);
    }

    #[test]
    fn a_session_refused_for_another_reason_is_not_taken_over_and_times_out() {
        let mut server = server();
        let resume = first_session(&mut server);
        let now = Instant::now();
        assert!(
            server
                .sessions
                .find_any(&resume.authentication_token, now)
                .is_ok()
        );

        // The password changed meanwhile: ActivateSession is refused with
        // Bad_UserAccessDenied, which does not say the session is gone.
        let mut side = ServerConnection::new(&server);
        let mut client = ClientConnection::resume(
            alice("changed"),
            Instant::now(),
            DateTime(1),
            resume.clone(),
        );
        let events = pump(&mut server, &mut side, &mut client);
        // The client asked to close the old session, but a session is bound to its channel
        // (OPC 10000-4 §5.6.4), so it lives on until its timeout, then goes.
        let session = server
            .sessions
            .find_any(&resume.authentication_token, now)
            .unwrap();
        let timeout = session.timeout;
        // Beside it: the new session whose activation failed too (dropped when its channel
        // closes, or at its timeout like the old one).
        assert_eq!(server.sessions.len(), 2);
        assert_eq!(
            server
                .sessions
                .expire(now + timeout - Duration::from_secs(1)),
            0
        );
        assert_eq!(
            server
                .sessions
                .expire(now + timeout + Duration::from_secs(60)),
            2
        );
        assert!(server.sessions.is_empty());
        // ... and the new one fails the same way, which closes the connection with that status.
        assert!(
            matches!(
                events.last(),
                Some(ClientEvent::Closed { status, .. }) if *status == StatusCode::BAD_USER_ACCESS_DENIED
            ),
            "{events:?}"
        );
    }
}
