//! `--config FILE`: the options of a long-running command from a TOML file.
//!
//! Every key of the file is the long name of an option of the command (`bind`,
//! `log-level`, `user-password-file`), so each option of the command line is available in
//! the file without a second list to keep in step, also for options added later. The
//! file's values become command-line arguments placed after the user's, for the options
//! the user did not give (nor set through an environment variable): the command line wins
//! over the file, the file over the defaults, and clap checks every value as it checks the
//! command line. A key that names no option, a value of the wrong TOML type and a value
//! the option refuses are errors naming the file, the line, the column and the key.

use std::collections::BTreeMap;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command};
use toml::Spanned;

/// A problem with the configuration file, already worded for the user (`FILE:LINE:COL: ...`).
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The outcome of [`apply`].
pub enum Applied {
    /// No `--config` on this command line: parse `args` as they are.
    Unchanged,
    /// The arguments with the file's options added, and where each key of the file is (to
    /// word clap's refusal of one of its values).
    Args(Vec<String>, FileKeys),
}

/// Line and column of each key of a file.
type KeyPlaces = BTreeMap<String, (usize, usize)>;

/// The keys taken from a configuration file, each with its line and column, to name the
/// key when clap refuses its value.
pub struct FileKeys {
    file: String,
    keys: KeyPlaces,
}

impl FileKeys {
    /// If `error` is clap's refusal of a value that came from the file, the same error
    /// worded with the file, line, column and key.
    pub fn explain(&self, error: &clap::Error) -> Option<ConfigError> {
        let clap::error::ContextValue::String(arg) =
            error.get(clap::error::ContextKind::InvalidArg)?
        else {
            return None;
        };
        let long = arg.strip_prefix("--")?.split([' ', '=']).next()?;
        let (line, column) = self.keys.get(long)?;
        let rendered = error.to_string();
        let first = rendered.lines().next().unwrap_or_default();
        let reason = first.strip_prefix("error: ").unwrap_or(first);
        Some(ConfigError(format!(
            "{}:{line}:{column}: {long}: {reason}",
            self.file
        )))
    }
}

/// Reads the `--config` file of the command `args` run (once `command` has parsed them
/// into `matches`) and adds its options to `args`.
pub fn apply(
    command: &Command,
    matches: &ArgMatches,
    args: &[String],
) -> Result<Applied, ConfigError> {
    let (leaf, leaf_matches, name) = leaf_command(command, matches);
    let Ok(Some(path)) = leaf_matches.try_get_one::<std::path::PathBuf>("config") else {
        return Ok(Applied::Unchanged);
    };
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read the configuration file {file}: {e}")))?;
    let (extra, keys) = arguments_of(&file, &text, &name, leaf, leaf_matches)?;
    let mut args = args.to_vec();
    // Before a `--` (after which everything is positional), else at the end.
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    args.splice(at..at, extra);
    Ok(Applied::Args(args, FileKeys { file, keys }))
}

/// The subcommand that runs, its matches and its full name (`buildwire haystack serve`).
fn leaf_command<'a>(
    command: &'a Command,
    matches: &'a ArgMatches,
) -> (&'a Command, &'a ArgMatches, String) {
    let (mut command, mut matches) = (command, matches);
    let mut name = command.get_name().to_owned();
    while let Some((sub_name, sub_matches)) = matches.subcommand() {
        match command.find_subcommand(sub_name) {
            Some(sub) => {
                (command, matches) = (sub, sub_matches);
                name = format!("{name} {sub_name}");
            }
            None => break,
        }
    }
    (command, matches, name)
}

/// Line and column (from 1) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The TOML type of `value`, for error messages.
fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date-time",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

/// One value of an option as its command-line text; `None` for arrays and tables.
fn scalar_text(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        toml::Value::Datetime(d) => Some(d.to_string()),
        toml::Value::Array(_) | toml::Value::Table(_) => None,
    }
}

/// Parses the file `text` and turns its keys into arguments of `command` for the options
/// `matches` did not get from the command line or the environment.
fn arguments_of(
    file: &str,
    text: &str,
    command_name: &str,
    command: &Command,
    matches: &ArgMatches,
) -> Result<(Vec<String>, KeyPlaces), ConfigError> {
    let table: BTreeMap<Spanned<String>, Spanned<toml::Value>> = toml::from_str(text)
        .map_err(|e| ConfigError(format!("{file}: {}", e.to_string().trim_end())))?;
    let mut entries: Vec<_> = table.into_iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    let mut extra = Vec::new();
    let mut keys = BTreeMap::new();
    for (key, value) in entries {
        let (line, column) = line_column(text, key.span().start);
        let name = key.get_ref().as_str();
        let at = format!("{file}:{line}:{column}");
        let option = command
            .get_arguments()
            .filter(|arg| !matches!(arg.get_id().as_str(), "config" | "help" | "version"))
            .find(|arg| arg.get_long() == Some(name) && !arg.is_positional());
        let Some(option) = option else {
            return Err(ConfigError(format!(
                "{at}: unknown key `{name}`: not an option of `{command_name}` (see \
                 `{command_name} --help`)"
            )));
        };
        keys.insert(name.to_owned(), (line, column));
        let given = matches!(
            matches.value_source(option.get_id().as_str()),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        let value = value.get_ref();
        let wrong = |wanted: &str, got: &toml::Value| {
            ConfigError(format!(
                "{at}: `{name}` takes {wanted}, not {}",
                type_name(got)
            ))
        };
        let flag = format!("--{name}");
        let mut arguments = Vec::new();
        match option.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => {
                let toml::Value::Boolean(on) = value else {
                    return Err(wrong("true or false", value));
                };
                let set = matches!(option.get_action(), ArgAction::SetTrue) == *on;
                if set {
                    arguments.push(flag);
                }
            }
            ArgAction::Count => {
                let toml::Value::Integer(times) = value else {
                    return Err(wrong("a count (an integer)", value));
                };
                arguments.extend((0..*times).map(|_| flag.clone()));
            }
            ArgAction::Append => {
                let items = match value {
                    toml::Value::Array(items) => items.iter().collect(),
                    other => vec![other],
                };
                for item in items {
                    let text = scalar_text(item)
                        .ok_or_else(|| wrong("a value or an array of values", item))?;
                    arguments.push(format!("{flag}={text}"));
                }
            }
            _ => {
                let text = scalar_text(value).ok_or_else(|| wrong("one value", value))?;
                arguments.push(format!("{flag}={text}"));
            }
        }
        if !given {
            extra.extend(arguments);
        }
    }
    Ok((extra, keys))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::{Arg, ArgAction, Command};

    use super::{Applied, apply};

    fn command() -> Command {
        Command::new("tool").subcommand(
            Command::new("serve")
                .arg(
                    Arg::new("config")
                        .long("config")
                        .value_parser(clap::value_parser!(std::path::PathBuf)),
                )
                .arg(Arg::new("bind").long("bind").default_value("127.0.0.1:1"))
                .arg(
                    Arg::new("port")
                        .long("port")
                        .value_parser(clap::value_parser!(u16)),
                )
                .arg(Arg::new("user").long("user").action(ArgAction::Append))
                .arg(Arg::new("quiet").long("quiet").action(ArgAction::SetTrue)),
        )
    }

    /// Runs `tool serve ARGS --config FILE` with `text` in FILE: the matches of the
    /// `serve` subcommand, or the error message.
    fn run(text: &str, args: &[&str]) -> Result<clap::ArgMatches, String> {
        let dir = std::env::temp_dir().join(format!("buildwire-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{:x}.toml", text.len() * 31 + args.len()));
        std::fs::write(&file, text).unwrap();
        let mut argv: Vec<String> = vec!["tool".into(), "serve".into()];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        argv.extend(["--config".to_owned(), file.display().to_string()]);
        let command = command();
        let matches = command.clone().try_get_matches_from(&argv).unwrap();
        let shown = file.display().to_string();
        let result = match apply(&command, &matches, &argv) {
            Ok(Applied::Unchanged) => panic!("the file was not read"),
            Ok(Applied::Args(argv, keys)) => command
                .try_get_matches_from(&argv)
                .map_err(|e| keys.explain(&e).map_or_else(|| e.to_string(), |e| e.0)),
            Err(e) => Err(e.0),
        };
        let _ = std::fs::remove_file(&file);
        result
            .map(|m| m.subcommand_matches("serve").unwrap().clone())
            .map_err(|e| e.replace(&shown, "FILE"))
    }

    #[test]
    fn the_command_line_wins_over_the_file_and_the_file_over_the_defaults() {
        let text = "bind = \"10.0.0.1:2\"\nport = 99\nuser = [\"a\", \"b\"]\nquiet = true\n";
        let from_file = run(text, &[]).unwrap();
        assert_eq!(from_file.get_one::<String>("bind").unwrap(), "10.0.0.1:2");
        assert_eq!(*from_file.get_one::<u16>("port").unwrap(), 99);
        let users: Vec<&String> = from_file.get_many::<String>("user").unwrap().collect();
        assert_eq!(users, ["a", "b"]);
        assert!(from_file.get_flag("quiet"));
        let overridden = run(text, &["--bind", "10.0.0.9:3", "--user", "c"]).unwrap();
        assert_eq!(overridden.get_one::<String>("bind").unwrap(), "10.0.0.9:3");
        let users: Vec<&String> = overridden.get_many::<String>("user").unwrap().collect();
        assert_eq!(users, ["c"]);
        assert_eq!(*overridden.get_one::<u16>("port").unwrap(), 99);
        let defaults = run("", &[]).unwrap();
        assert_eq!(defaults.get_one::<String>("bind").unwrap(), "127.0.0.1:1");
        assert!(!defaults.get_flag("quiet"));
    }

    #[test]
    fn a_wrong_key_or_value_names_the_file_line_column_and_key() {
        let cases = [
            (
                "bind = \"10.0.0.1:2\"\n\nprot = 5\n",
                "FILE:3:1: unknown key `prot`: not an option of `tool serve` (see `tool serve --help`)",
            ),
            (
                "quiet = \"yes\"\n",
                "FILE:1:1: `quiet` takes true or false, not a string",
            ),
            (
                "bind = [\"a\"]\n",
                "FILE:1:1: `bind` takes one value, not an array",
            ),
            (
                "  port = 70000\n",
                "FILE:1:3: port: invalid value '70000' for '--port <port>': 70000 is not in 0..=65535",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(run(text, &[]).unwrap_err(), expected);
        }
        assert!(
            run("bind = \n", &[])
                .unwrap_err()
                .starts_with("FILE: TOML parse error at line 1")
        );
    }
}
