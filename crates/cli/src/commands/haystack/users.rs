//! `buildwire haystack users TARGET list|add|remove [NAME]`: the users of a users file (for
//! servers without a database) or of a Redis or PostgreSQL backend, stored as salted SCRAM
//! keys. Passwords come from a prompt without echo, a file or an environment variable,
//! never from the command line. Also the `--user-env` / `--user-password-file` options of
//! `haystack serve`.

use std::fs::File;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use buildwire_haystack::auth::{Role, User, parse_user_file};
use buildwire_haystack::server::{DEFAULT_ITERATIONS, parse_user_spec, user_file_line};
use clap::{Args, ValueEnum};

use crate::commands::common::result::CommandResult;

/// What `users` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UsersAction {
    /// Print the users (name and role).
    List,
    /// Add a user, or replace the password and role of one.
    Add,
    /// Remove a user.
    Remove,
}

#[derive(Debug, Args)]
pub struct UsersArgs {
    /// A users file (created by the first `add`), or a backend URL:
    /// redis://HOST:PORT[/DB][?prefix=NAME] or postgres://USER@HOST:PORT/DB.
    #[arg(value_name = "FILE|URL", required_unless_present = "backend")]
    target: Option<String>,
    /// list, add or remove.
    #[arg(value_name = "ACTION")]
    action: Option<UsersAction>,
    /// The user's name (add and remove).
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// The role of the added user: admin, operator or viewer.
    #[arg(long, default_value = "viewer")]
    role: Role,
    /// Read the password from the first line of this file instead of a prompt.
    #[arg(long, value_name = "FILE", conflicts_with = "password_env")]
    password_file: Option<PathBuf>,
    /// Read the password from this environment variable instead of a prompt.
    #[arg(long, value_name = "VARIABLE")]
    password_env: Option<String>,
    /// PBKDF2 iterations for the added user (at least 4096).
    #[arg(long, default_value_t = DEFAULT_ITERATIONS)]
    iterations: u32,
    /// Print the users (name and role) as JSON.
    #[arg(long)]
    json: bool,
    /// The backend, in the older form `users --backend URL --add ... --remove ...`.
    #[arg(long, value_name = "URL", conflicts_with = "target")]
    backend: Option<String>,
    /// With --backend: add or replace a user as NAME:PASSWORD:ROLE; repeat. Insecure: the
    /// password shows in the process list and the shell history; prefer `URL add NAME`.
    #[arg(long = "add", value_name = "NAME:PASSWORD:ROLE", requires = "backend")]
    add: Vec<String>,
    /// With --backend: remove a user by name; repeat.
    #[arg(long = "remove", value_name = "NAME", requires = "backend")]
    remove: Vec<String>,
}

pub const USERS_AFTER_HELP: &str = "The target is a users file, read by `buildwire haystack \
    serve --users FILE` when it starts (restart it after a change), or a Redis or PostgreSQL \
    backend, whose servers all share its users and read new ones every 5 seconds. Only \
    salted SCRAM keys are stored, never passwords. The password of `add` is asked twice \
    without echo, or read with --password-file or --password-env; standard input that is \
    not a terminal is read as the password too. The file format is in the user's guide \
    (File formats).\n\n\
    Examples:\n  \
    buildwire haystack users users.txt add ann --role operator   # asks twice\n  \
    buildwire haystack users users.txt add bot --role viewer \\\n      --password-file bot.pw\n  \
    buildwire haystack users users.txt add bot --password-env BOT_PW\n  \
    buildwire haystack users users.txt list --json\n  \
    buildwire haystack users users.txt remove ann\n  \
    buildwire haystack serve --data site.zinc --users users.txt\n  \
    buildwire haystack users redis://127.0.0.1:6379 add ann --role operator\n  \
    buildwire haystack users postgres://postgres@127.0.0.1:5432/site remove ann";

fn is_backend_url(target: &str) -> bool {
    ["redis://", "rediss://", "postgres://", "postgresql://"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

pub fn users(args: UsersArgs) -> CommandResult {
    if let Some(url) = &args.backend {
        let url = url.clone();
        return backend_users(&url, &args);
    }
    let target = args
        .target
        .clone()
        .ok_or("give a users file or a backend URL")?;
    if is_backend_url(&target) {
        backend_users(&target, &args)
    } else {
        file_users(Path::new(&target), &args)
    }
}

/// The name `add` and `remove` need.
fn name_of(args: &UsersArgs) -> Result<&str, String> {
    let name = args.name.as_deref().ok_or_else(|| {
        "give the user's name after the action, e.g. `users users.txt add ann`".to_owned()
    })?;
    if name.is_empty() || name.contains(':') || name.chars().any(char::is_whitespace) {
        return Err(format!(
            "`{name}` cannot be a user name: use letters, digits and punctuation other than `:`"
        ));
    }
    Ok(name)
}

/// The password of `add`: from --password-file, --password-env, a prompt without echo, or
/// standard input when it is not a terminal.
fn password_of(args: &UsersArgs, name: &str) -> Result<String, String> {
    let password = if let Some(path) = &args.password_file {
        first_line(path)?
    } else if let Some(variable) = &args.password_env {
        std::env::var(variable)
            .map_err(|_| format!("the environment variable {variable} is not set"))?
    } else if std::io::stdin().is_terminal() {
        let first = prompt_hidden(&format!("password for {name}: "))?;
        let again = prompt_hidden("again: ")?;
        if first != again {
            return Err("the two passwords differ; nothing was changed".into());
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read the password from standard input: {e}"))?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if password.is_empty() {
        return Err("the password is empty".into());
    }
    Ok(password)
}

/// The first line of a password file, without its line end.
pub fn first_line(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
    Ok(text.lines().next().unwrap_or("").to_owned())
}

/// Asks on the terminal with echo off (restored afterwards, also on error).
fn prompt_hidden(prompt: &str) -> Result<String, String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let tty = File::options()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("cannot open the terminal for the password prompt: {e}"))?;
    let saved = tcgetattr(&tty).map_err(|e| format!("cannot read the terminal mode: {e}"))?;
    let mut quiet = saved.clone();
    quiet.local_modes -= LocalModes::ECHO;
    tcsetattr(&tty, OptionalActions::Now, &quiet)
        .map_err(|e| format!("cannot turn the terminal echo off: {e}"))?;
    let read = (|| {
        let mut out = &tty;
        out.write_all(prompt.as_bytes())?;
        out.flush()?;
        let mut line = String::new();
        std::io::BufReader::new(&tty).read_line(&mut line)?;
        out.write_all(b"\n")?;
        Ok::<String, std::io::Error>(line)
    })();
    let restored = tcsetattr(&tty, OptionalActions::Now, &saved);
    let line = read.map_err(|e| format!("cannot read the password: {e}"))?;
    restored.map_err(|e| format!("cannot turn the terminal echo back on: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// The user name of a users-file line, for lines that hold a user.
fn line_user(line: &str) -> Option<&str> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    line.split(':').next()
}

fn print_users(users: &[User], json: bool) {
    if json {
        let list: Vec<_> = users
            .iter()
            .map(|u| serde_json::json!({"name": u.name, "role": u.role.name()}))
            .collect();
        println!("{}", serde_json::json!({ "users": list }));
    } else {
        for u in users {
            println!("{} ({})", u.name, u.role.name());
        }
    }
}

const FILE_HEADER: &str = "# buildwire Haystack users: name:role:iterations:salt:storedKey:serverKey\n\
    # (SCRAM-SHA-256 keys, no passwords). Edit with `buildwire haystack users FILE add|remove`.\n";

fn file_users(path: &Path, args: &UsersArgs) -> CommandResult {
    let action = args
        .action
        .ok_or("give an action after the file: list, add or remove")?;
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display()).into()),
    };
    let text = existing.clone().unwrap_or_default();
    // Refuse to rewrite a file that is not a valid users file (its error names the line).
    parse_user_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    match action {
        UsersAction::List => {
            if existing.is_none() {
                return Err(format!("{} does not exist: `add` creates it", path.display()).into());
            }
        }
        UsersAction::Add => {
            let name = name_of(args)?;
            let password = password_of(args, name)?;
            let line = user_file_line(name, &password, args.role, args.iterations)?;
            match lines.iter().position(|l| line_user(l) == Some(name)) {
                Some(i) => {
                    if let Some(slot) = lines.get_mut(i) {
                        *slot = line;
                    }
                    eprintln!(
                        "replaced {name} ({}) in {}",
                        args.role.name(),
                        path.display()
                    );
                }
                None => {
                    if existing.is_none() {
                        lines.extend(FILE_HEADER.lines().map(str::to_owned));
                    }
                    lines.push(line);
                    eprintln!("added {name} ({}) to {}", args.role.name(), path.display());
                }
            }
            write_private(path, &lines)?;
        }
        UsersAction::Remove => {
            let name = name_of(args)?;
            let before = lines.len();
            lines.retain(|l| line_user(l) != Some(name));
            if lines.len() == before {
                return Err(format!("{} has no user {name}", path.display()).into());
            }
            write_private(path, &lines)?;
            eprintln!("removed {name} from {}", path.display());
        }
    }
    if action == UsersAction::List {
        print_users(&parse_user_file(&text)?, args.json);
    }
    Ok(())
}

/// Writes the file through a temporary file in the same folder and a rename, readable by
/// its owner only (the keys allow an offline guessing attack on weak passwords).
fn write_private(path: &Path, lines: &[String]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = lines.join("\n");
    text.push('\n');
    parse_user_file(&text).map_err(|e| format!("internal: the new file is invalid: {e}"))?;
    let file_name = path
        .file_name()
        .ok_or_else(|| format!("{} is not a file name", path.display()))?
        .to_string_lossy();
    let temp = path.with_file_name(format!(".{file_name}.tmp{}", std::process::id()));
    let written = (|| {
        let mut file = File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}

fn backend_users(url: &str, args: &UsersArgs) -> CommandResult {
    let mut added = Vec::new();
    for spec in &args.add {
        let user = parse_user_spec(spec, args.iterations)
            .map_err(|e| format!("--add {}: {e}", spec.split(':').next().unwrap_or("")))?;
        added.push((user.name.clone(), user.to_line()));
    }
    let mut removed: Vec<String> = args.remove.clone();
    match args.action {
        Some(UsersAction::Add) => {
            let name = name_of(args)?;
            let password = password_of(args, name)?;
            added.push((
                name.to_owned(),
                user_file_line(name, &password, args.role, args.iterations)?,
            ));
        }
        Some(UsersAction::Remove) => removed.push(name_of(args)?.to_owned()),
        Some(UsersAction::List) | None => {}
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let backend = buildwire_haystack::backends::open(url).await?;
        let store = backend.shared_auth().ok_or(
            "this backend keeps no users: give a users file, redis://HOST:PORT or \
             postgres://USER@HOST:PORT/DB",
        )?;
        store.put_users(&added).await?;
        for name in &removed {
            if !store.remove_user(name).await? {
                eprintln!("no user {name} to remove");
            }
        }
        let lines = store.users().await?;
        print_users(&parse_user_file(&lines.join("\n"))?, args.json);
        Ok(())
    })
}

/// The options of `haystack serve` that give users whose password is not on the command
/// line.
#[derive(Debug, Args)]
pub struct ServeUserArgs {
    /// A user whose password is in an environment variable, as NAME:VARIABLE:ROLE; repeat.
    #[arg(long = "user-env", value_name = "NAME:VARIABLE:ROLE")]
    user_env: Vec<String>,
    /// A user whose password is the first line of a file, as NAME:FILE:ROLE; repeat.
    #[arg(long = "user-secret-file", value_name = "NAME:FILE:ROLE")]
    user_secret_file: Vec<String>,
}

impl ServeUserArgs {
    /// The users of these options, salted and hashed with `iterations`.
    pub fn users(&self, iterations: Option<u32>) -> Result<Vec<User>, String> {
        let iterations = iterations.unwrap_or(DEFAULT_ITERATIONS).max(4096);
        let mut users = Vec::new();
        let specs = self.user_env.iter().map(|s| ("--user-env", s, true)).chain(
            self.user_secret_file
                .iter()
                .map(|s| ("--user-secret-file", s, false)),
        );
        for (option, spec, from_env) in specs {
            // The name ends at the first `:` and the role starts after the last one, so a
            // file path may hold `:` itself.
            let split = spec
                .split_once(':')
                .and_then(|(name, rest)| rest.rsplit_once(':').map(|(s, r)| (name, s, r)));
            let Some((name, source, role)) = split else {
                return Err(format!(
                    "{option} {spec}: expected {}",
                    if from_env {
                        "NAME:VARIABLE:ROLE"
                    } else {
                        "NAME:FILE:ROLE"
                    }
                ));
            };
            let role: Role = role.parse().map_err(|e| format!("{option} {name}: {e}"))?;
            let password = if from_env {
                std::env::var(source).map_err(|_| {
                    format!("{option} {name}: the environment variable {source} is not set")
                })?
            } else {
                first_line(Path::new(source))?
            };
            if name.is_empty() || password.is_empty() {
                return Err(format!(
                    "{option} {spec}: the name and the password must not be empty"
                ));
            }
            users.push(
                User::with_password(name, &password, role, iterations)
                    .map_err(|e| format!("{option} {name}: {e}"))?,
            );
        }
        Ok(users)
    }
}
