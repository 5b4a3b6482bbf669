//! Users for the server: `name:password:role` triples (hashed when read) and users files of
//! salted SCRAM keys (`name:role:iterations:salt:storedKey:serverKey`, see
//! [`crate::auth::parse_user_file`]), and the function that makes a users-file line from a
//! password.

use std::path::Path;

use crate::auth::{Role, User, parse_user_file};

use super::ServerError;

/// PBKDF2 iterations for users given with a password.
pub const DEFAULT_ITERATIONS: u32 = 10_000;

/// Reads `name:password:role` (the password may itself hold `:`; the role is after the
/// last one) and salts and hashes the password with `iterations` PBKDF2 rounds.
pub fn parse_user_spec(spec: &str, iterations: u32) -> Result<User, String> {
    let (name, rest) = spec
        .split_once(':')
        .ok_or_else(|| "expected NAME:PASSWORD:ROLE".to_owned())?;
    let (password, role) = rest
        .rsplit_once(':')
        .ok_or_else(|| "expected NAME:PASSWORD:ROLE".to_owned())?;
    if name.is_empty() || password.is_empty() {
        return Err("the name and the password must not be empty".into());
    }
    let role: Role = role.parse()?;
    User::with_password(name, password, role, iterations.max(4096)).map_err(|e| e.to_string())
}

/// A users-file line for a user: the password is salted and hashed, never stored.
pub fn user_file_line(
    name: &str,
    password: &str,
    role: Role,
    iterations: u32,
) -> Result<String, String> {
    if name.is_empty() || name.contains(':') || name.contains('\n') {
        return Err("a user name must be non-empty, without `:` or newlines".into());
    }
    User::with_password(name, password, role, iterations.max(4096))
        .map(|u| u.to_line())
        .map_err(|e| e.to_string())
}

/// Reads a users file.
pub fn load_users_file(path: &Path) -> Result<Vec<User>, ServerError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ServerError::io(path.display().to_string(), e))?;
    Ok(parse_user_file(&text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_and_lines() {
        let u = parse_user_spec("ann:pa:ss:operator", 4096).unwrap();
        assert_eq!((u.name.as_str(), u.role), ("ann", Role::Operator));
        assert!(!u.credentials.verify_proof("x", &[0; 32]));
        assert!(parse_user_spec("ann:secret", 4096).is_err());
        assert!(parse_user_spec("ann:secret:root", 4096).is_err());
        assert!(parse_user_spec(":secret:admin", 4096).is_err());
        let line = user_file_line("bob", "pw", Role::Viewer, 4096).unwrap();
        let users = parse_user_file(&line).unwrap();
        assert_eq!(users[0].name, "bob");
        assert!(!line.contains("pw:"));
        assert!(user_file_line("a:b", "pw", Role::Viewer, 4096).is_err());
    }
}
