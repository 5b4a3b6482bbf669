//! `buildwire help-markdown DIR` (hidden): the command-line reference of the user's guide,
//! written from the clap definitions themselves, so it lists every command and option as
//! the binary has them. `scripts/build-docs.sh` runs it before mdBook: `DIR/index.md` lists
//! the command families, and `DIR/FAMILY.md` (bacnet, haystack, opcua, bench) holds every
//! command of a family with its usage, description, arguments, options and examples.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Args, Command, CommandFactory};

use super::Cli;
use super::common::result::CommandResult;

#[derive(Debug, Args)]
pub struct HelpMarkdownArgs {
    /// Folder to write the pages into (created if missing).
    dir: PathBuf,
}

/// Writes the pages; prints the files written.
pub fn execute(args: &HelpMarkdownArgs) -> CommandResult {
    let mut root = Cli::command();
    root.build();
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| format!("cannot create {}: {e}", args.dir.display()))?;
    let mut index = String::from("# Command-line reference\n\n");
    index.push_str(
        "Generated from the `buildwire` binary's own definitions by `buildwire help-markdown` \
         (run by `make docs`); `buildwire COMMAND --help` shows the same text.\n\n",
    );
    if let Some(about) = root.get_long_about().or(root.get_about()) {
        let _ = writeln!(index, "{about}\n");
    }
    for family in visible_subcommands(&root) {
        let name = family.get_name();
        let _ = writeln!(
            index,
            "- [`buildwire {name}`]({name}.md): {}",
            one_line(
                family
                    .get_about()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            )
        );
        let mut page = String::new();
        write_command(&mut page, family, &format!("buildwire {name}"), 1);
        write_page(&args.dir.join(format!("{name}.md")), &page)?;
    }
    write_page(&args.dir.join("index.md"), &index)?;
    Ok(())
}

fn write_page(path: &Path, text: &str) -> CommandResult {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("{}", path.display());
    Ok(())
}

fn visible_subcommands(command: &Command) -> impl Iterator<Item = &Command> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
}

/// Paragraph text on one line.
fn one_line(text: String) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `command` (named `path`) and its subcommands, headings from `level`.
fn write_command(out: &mut String, command: &Command, path: &str, level: usize) {
    let hashes = "#".repeat(level.min(6));
    let _ = writeln!(out, "{hashes} `{path}`\n");
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(out, "{about}\n");
    }
    let mut usage_command = command.clone();
    let usage = usage_command.render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let (positionals, options): (Vec<&Arg>, Vec<&Arg>) = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .partition(|arg| arg.is_positional());
    if !positionals.is_empty() {
        out.push_str("Arguments:\n\n");
        for arg in positionals {
            let name = arg
                .get_value_names()
                .and_then(|names| names.first())
                .map_or_else(|| arg.get_id().as_str().to_uppercase(), ToString::to_string);
            let _ = writeln!(out, "- `{name}`: {}", describe(arg));
        }
        out.push('\n');
    }
    if !options.is_empty() {
        out.push_str("Options:\n\n");
        for arg in options {
            let _ = writeln!(out, "- `{}`: {}", option_form(arg), describe(arg));
        }
        out.push('\n');
    }
    if let Some(after) = command.get_after_long_help().or(command.get_after_help()) {
        let _ = writeln!(out, "```text\n{}\n```\n", after.to_string().trim_end());
    }
    for sub in visible_subcommands(command) {
        write_command(out, sub, &format!("{path} {}", sub.get_name()), level + 1);
    }
}

/// `-u, --user <NAME:PASSWORD>` as the help shows it.
fn option_form(arg: &Arg) -> String {
    let mut form = String::new();
    if let Some(short) = arg.get_short() {
        let _ = write!(form, "-{short}, ");
    }
    if let Some(long) = arg.get_long() {
        let _ = write!(form, "--{long}");
    }
    let takes_value = !matches!(
        arg.get_action(),
        ArgAction::SetTrue
            | ArgAction::SetFalse
            | ArgAction::Count
            | ArgAction::Help
            | ArgAction::HelpShort
            | ArgAction::HelpLong
            | ArgAction::Version
    );
    if takes_value {
        let name = arg
            .get_value_names()
            .and_then(|names| names.first())
            .map_or_else(|| arg.get_id().as_str().to_uppercase(), ToString::to_string);
        let _ = write!(form, " <{name}>");
    }
    form
}

/// The help text of an argument with its choices, default and environment variable.
fn describe(arg: &Arg) -> String {
    let mut text = one_line(
        arg.get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default(),
    );
    if !text.is_empty() && !text.ends_with(['.', ')', ':']) {
        text.push('.');
    }
    let choices: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| format!("`{}`", value.get_name()))
        .collect();
    if !choices.is_empty() && !matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse)
    {
        let _ = write!(text, " Choices: {}.", choices.join(", "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && !matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse)
    {
        let _ = write!(text, " Default: `{}`.", defaults.join(","));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(text, " Environment: `{}`.", env.to_string_lossy());
    }
    if arg.get_action().takes_values() && matches!(arg.get_action(), ArgAction::Append) {
        text.push_str(" Repeatable.");
    }
    text
}
