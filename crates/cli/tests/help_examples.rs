//! Every example in every `--help` can be copied into a shell: each line starting with
//! `buildwire ` after "Example:"/"Examples:" (with its `\` continuations) is split the way a
//! shell splits it and must parse with `Cli::try_parse_from`, and `--help` at 80 columns
//! shows each of its lines unwrapped.

use buildwire_cli::Cli;
use clap::{CommandFactory, Parser};

/// One command line split into words as a POSIX shell would: single quotes keep everything,
/// double quotes keep everything but `\"` and `\\`, a backslash outside quotes keeps the next
/// character (and a backslash-newline disappears). Unquoted `#` at the start of a word starts
/// a comment, `>` redirects (it and its file are dropped) and `|` ends the command; an
/// unquoted `;` or `&` is an error: it would cut the command short in a shell.
fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let mut redirect = false;
    fn finish(word: &mut Option<String>, words: &mut Vec<String>, redirect: &mut bool) {
        if let Some(w) = word.take() {
            if *redirect {
                *redirect = false;
            } else {
                words.push(w);
            }
        }
    }
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => finish(&mut word, &mut words, &mut redirect),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            w.push(chars.next().unwrap_or_default());
                        }
                        Some('\\') if chars.peek() == Some(&'\n') => {
                            chars.next();
                        }
                        Some(c) => w.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(c) => word.get_or_insert_with(String::new).push(c),
            },
            '#' if word.is_none() => break,
            '|' => break,
            '>' => {
                finish(&mut word, &mut words, &mut redirect);
                redirect = true;
            }
            ';' | '&' => return Err(format!("unquoted `{c}` would end the command")),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    finish(&mut word, &mut words, &mut redirect);
    Ok(words)
}

#[test]
fn shell_words_split_like_a_shell() {
    let words = |s: &str| shell_words(s).unwrap();
    assert_eq!(words("a  b\tc"), ["a", "b", "c"]);
    assert_eq!(words("a 'ns=1;s=X' \"b c\""), ["a", "ns=1;s=X", "b c"]);
    assert_eq!(words(r#"a\ b "x\"y" 'it''s'"#), ["a b", "x\"y", "its"]);
    assert_eq!(words("a \\\n  b"), ["a", "b"]);
    assert_eq!(words("a \"1 \\\n2\""), ["a", "1 2"]);
    assert_eq!(words("a b   # a comment"), ["a", "b"]);
    assert_eq!(words("a --json > out.json"), ["a", "--json"]);
    assert_eq!(words("a b | head -1"), ["a", "b"]);
    assert_eq!(words("a x#y"), ["a", "x#y"]);
    assert!(shell_words("a ns=1;s=X").is_err());
    assert!(shell_words("a 'open").is_err());
}

/// The example lines of one help text: each `buildwire ...` line after an "Example(s):"
/// heading, with its `\` continuations.
fn examples(help: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_examples = false;
    let mut lines = help.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let line = match line
            .strip_prefix("Example:")
            .or(line.strip_prefix("Examples:"))
        {
            Some(rest) => {
                in_examples = true;
                rest.trim()
            }
            None => line,
        };
        if !in_examples || !line.starts_with("buildwire ") {
            continue;
        }
        let mut example = line.to_owned();
        while example.ends_with('\\') {
            let Some(next) = lines.next() else { break };
            example.push('\n');
            example.push_str(next);
        }
        found.push(example);
    }
    found
}

fn walk(command: &clap::Command, path: &mut Vec<String>, failures: &mut Vec<String>) -> usize {
    let mut count = 0;
    let name = path.join(" ");
    let raw = command
        .get_after_long_help()
        .or(command.get_after_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    // What `--help` shows at 80 columns: clap must not have wrapped an example line.
    let rendered = command
        .clone()
        .term_width(80)
        .render_long_help()
        .to_string();
    let shown: Vec<&str> = rendered.lines().map(str::trim).collect();
    for example in examples(&raw) {
        count += 1;
        for line in example.lines() {
            if !shown.iter().any(|shown| shown.ends_with(line)) {
                failures.push(format!(
                    "`{name} --help`: clap wraps this example line at 80 columns: {line:?}"
                ));
            }
        }
        match shell_words(&example) {
            Err(e) => failures.push(format!("`{name} --help`: {example:?}: {e}")),
            Ok(words) => {
                if let Err(e) = Cli::try_parse_from(&words) {
                    failures.push(format!(
                        "`{name} --help`: {example:?} does not parse:\n{}",
                        e.render()
                    ));
                }
            }
        }
    }
    for sub in command.get_subcommands() {
        path.push(sub.get_name().to_owned());
        count += walk(sub, path, failures);
        path.pop();
    }
    count
}

#[test]
fn every_help_example_parses() {
    let mut root = Cli::command();
    root.build();
    let mut failures = Vec::new();
    let count = walk(&root, &mut vec!["buildwire".to_owned()], &mut failures);
    assert!(count > 40, "only {count} examples found");
    assert!(
        failures.is_empty(),
        "{} of {count} help examples are wrong:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn examples_join_continuations() {
    let found = examples("Text.\n\nExamples:\n  buildwire a \\\n    --b\n  buildwire c\n\nMore.");
    assert_eq!(found, ["buildwire a \\\n--b", "buildwire c"]);
    assert_eq!(examples("Example: buildwire x --y"), ["buildwire x --y"]);
    assert!(examples("buildwire x, before any example heading").is_empty());
}
