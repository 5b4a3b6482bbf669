//! Users and roles, and the users file: one user a line,
//! `name:role:iterations:salt:storedKey:serverKey` (the last three in standard base64), with
//! `#` comments. The file holds no passwords, only SCRAM's salted keys.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::scram::ScramCredentials;
use super::token::{RandomError, random_bytes};

/// What a user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Reads only: about, read, nav, hisRead, watches.
    Viewer,
    /// A viewer who may also command points and write histories (pointWrite, hisWrite,
    /// invokeAction).
    Operator,
    /// Everything, including changes to the database and users.
    Admin,
}

impl Role {
    /// The role's name in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "viewer" => Ok(Role::Viewer),
            "operator" => Ok(Role::Operator),
            "admin" => Ok(Role::Admin),
            _ => Err(format!("unknown role `{s}`: use admin, operator or viewer")),
        }
    }
}

/// A user the server knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Login name.
    pub name: String,
    /// What the user may do.
    pub role: Role,
    /// SCRAM keys.
    pub credentials: ScramCredentials,
}

impl User {
    /// A user from a plaintext password, with a fresh 16-byte salt.
    pub fn with_password(
        name: &str,
        password: &str,
        role: Role,
        iterations: u32,
    ) -> Result<Self, RandomError> {
        let salt: [u8; 16] = random_bytes()?;
        Ok(Self {
            name: name.to_owned(),
            role,
            credentials: ScramCredentials::derive(password, &salt, iterations),
        })
    }

    /// The user's line in a users file.
    pub fn to_line(&self) -> String {
        let c = &self.credentials;
        format!(
            "{}:{}:{}:{}:{}:{}",
            self.name,
            self.role.name(),
            c.iterations,
            STANDARD.encode(&c.salt),
            STANDARD.encode(c.stored_key),
            STANDARD.encode(c.server_key)
        )
    }
}

/// A users file line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("users file line {line}: {message}")]
pub struct UserFileError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads a users file.
pub fn parse_user_file(text: &str) -> Result<Vec<User>, UserFileError> {
    let mut users = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |message: String| UserFileError {
            line: i + 1,
            message,
        };
        let parts: Vec<&str> = line.split(':').collect();
        let [name, role, iterations, salt, stored, server] = parts[..] else {
            return Err(err(format!(
                "expected name:role:iterations:salt:storedKey:serverKey, found {} fields",
                parts.len()
            )));
        };
        if name.is_empty() || users.iter().any(|u: &User| u.name == name) {
            return Err(err(format!("user name `{name}` is empty or repeated")));
        }
        let key = |what: &str, text: &str| -> Result<[u8; 32], UserFileError> {
            STANDARD
                .decode(text)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| err(format!("{what} is not 32 bytes of base64")))
        };
        users.push(User {
            name: name.to_owned(),
            role: role.parse().map_err(err)?,
            credentials: ScramCredentials {
                salt: STANDARD
                    .decode(salt)
                    .map_err(|_| err("salt is not base64".into()))?,
                iterations: iterations
                    .parse()
                    .map_err(|_| err(format!("iterations `{iterations}` is not a number")))?,
                stored_key: key("storedKey", stored)?,
                server_key: key("serverKey", server)?,
            },
        });
    }
    Ok(users)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_file_round_trips() {
        let a = User::with_password("ann", "secret", Role::Admin, 4096).unwrap();
        let b = User::with_password("bob", "other", Role::Viewer, 4096).unwrap();
        let text = format!("# users\n{}\n\n{}\n", a.to_line(), b.to_line());
        assert_eq!(parse_user_file(&text).unwrap(), vec![a, b]);
    }

    #[test]
    fn users_file_errors_name_the_line() {
        let e = parse_user_file("# c\nann:admin:4096").unwrap_err();
        assert_eq!(e.line, 2);
        let good = User::with_password("ann", "x", Role::Admin, 4096)
            .unwrap()
            .to_line();
        let e = parse_user_file(&format!("{good}\n{good}")).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("repeated"));
        let bad_role = good.replace(":admin:", ":root:");
        assert!(
            parse_user_file(&bad_role)
                .unwrap_err()
                .message
                .contains("unknown role")
        );
    }

    #[test]
    fn roles_are_ordered_by_power() {
        assert!(Role::Admin > Role::Operator && Role::Operator > Role::Viewer);
        assert_eq!("Operator".parse::<Role>(), Ok(Role::Operator));
    }
}
