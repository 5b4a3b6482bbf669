//! `--csv`: rows over time and tables as CSV (RFC 4180): a header row, then one line per
//! row. A field holding a comma, a double quote, a line break or leading/trailing spaces is
//! quoted, with its double quotes doubled. Lines end with `\n`.

use serde_json::Value;

/// One field, quoted when it needs to be.
pub fn field(text: &str) -> String {
    let needs_quotes =
        text.contains([',', '"', '\n', '\r']) || text.starts_with(' ') || text.ends_with(' ');
    if needs_quotes {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// One line (without its line end) of `fields`.
pub fn line<S: AsRef<str>>(fields: &[S]) -> String {
    fields
        .iter()
        .map(|f| field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",")
}

/// A JSON value as one field: null is empty, a string its text, anything else its JSON.
pub fn json_field(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The line of a JSON object's `columns`.
pub fn json_line(row: &Value, columns: &[&str]) -> String {
    let fields: Vec<String> = columns
        .iter()
        .map(|column| json_field(&row[*column]))
        .collect();
    line(&fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field(""), "");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field(" padded"), "\" padded\"");
        assert_eq!(line(&["a", "b,c", ""]), "a,\"b,c\",");
    }

    #[test]
    fn json_rows() {
        let row = json!({"node": "ns=1;s=X", "value": 1.5, "status": "Good", "type": null});
        assert_eq!(
            json_line(&row, &["node", "value", "type", "status", "missing"]),
            "ns=1;s=X,1.5,,Good,"
        );
        assert_eq!(json_field(&json!([1, 2])), "[1,2]");
        assert_eq!(json_field(&json!(true)), "true");
    }
}
