//! Scenario errors: every one names the file, the key (a dotted path such as `rack.slot_ns` or
//! `rack.failures[2].node`) and the reason, plus the line when the key appears in the file.

use shoal_fabric::config::ErrorKind;
use std::fmt;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// Why a scenario was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or other origin) the scenario came from.
    pub origin: String,
    /// 1-based line of the offending key or value, when the file has it.
    pub line: Option<usize>,
    /// Dotted path of the offending key; empty for errors about the whole file.
    pub key: String,
    pub kind: ErrorKind,
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.origin)?,
            None => write!(f, "{}: ", self.origin)?,
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        // Whichever check wrote the reason, a value such as 1e308 is not shown as 309 digits.
        f.write_str(&short_numbers(&self.reason))
    }
}

impl std::error::Error for ScenarioError {}

/// 1-based line of byte offset `at` in `text`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    if a.is_empty() || b.is_empty() {
        // An empty span points between characters: it belongs to a range that contains it.
        let (point, range) = if a.is_empty() { (a, b) } else { (b, a) };
        return range.start <= point.start && point.start <= range.end;
    }
    a.start < b.end && b.start < a.end
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

/// The dotted path of the deepest key or value in `table` whose span overlaps `span`.
pub(crate) fn path_at(table: &DeTable<'_>, span: &Range<usize>, prefix: &str) -> Option<String> {
    for (key, value) in table.iter() {
        let path = join(prefix, key.get_ref());
        if overlaps(&key.span(), span) {
            return Some(path);
        }
        if let Some(found) = value_path_at(value, span, &path) {
            return Some(found);
        }
    }
    None
}

fn value_path_at(value: &Spanned<DeValue<'_>>, span: &Range<usize>, path: &str) -> Option<String> {
    match value.get_ref() {
        DeValue::Table(t) => path_at(t, span, path)
            .or_else(|| overlaps(&value.span(), span).then(|| path.to_owned())),
        DeValue::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| value_path_at(item, span, &format!("{path}[{i}]")))
            .or_else(|| overlaps(&value.span(), span).then(|| path.to_owned())),
        _ => overlaps(&value.span(), span).then(|| path.to_owned()),
    }
}

/// The span of the key at dotted `path` (with `[i]` indices), if the document has it.
pub(crate) fn span_of(table: &DeTable<'_>, path: &str) -> Option<Range<usize>> {
    let mut current: Option<&Spanned<DeValue<'_>>> = None;
    let mut span = None;
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let t = match current {
            None => table,
            Some(v) => v.get_ref().as_table()?,
        };
        let (k, v) = t.iter().find(|(k, _)| k.get_ref() == name)?;
        span = Some(k.span());
        current = Some(v);
        if let Some(i) = index {
            let item = v.get_ref().as_array()?.get(i)?;
            span = Some(item.span());
            current = Some(item);
        }
    }
    span
}

/// Rewrites serde's messages in the scenario format's own words, and finds the key they are
/// about: serde names a missing field but not its table, an unknown field but not its path.
pub(crate) fn describe_serde(message: &str, path: Option<String>) -> (ErrorKind, String, String) {
    let path = path.unwrap_or_default();
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (field, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let key = if path.rsplit('.').next() == Some(field) {
            path
        } else {
            join(&path, field)
        };
        let expected = expected.trim_start_matches(", ");
        let reason = if expected.is_empty() || expected.starts_with("there are no fields") {
            "unknown key: this table takes no keys".to_owned()
        } else {
            format!("unknown key ({expected})")
        };
        return (ErrorKind::UnknownKey, key, reason);
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let field = rest.trim_end_matches('`');
        return (
            ErrorKind::Missing,
            join(&path, field),
            "required key is missing".to_owned(),
        );
    }
    let reason = message
        .replace("expected i64", "expected an integer")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected f64", "expected a number")
        .replace("invalid type:", "wrong type:");
    let kind = if message.starts_with("invalid type") {
        ErrorKind::Type
    } else {
        ErrorKind::Value
    };
    (kind, path, reason)
}

/// `text` with every number of more than 20 digits in exponent form: the TOML parser and
/// Rust's `{}` print a float such as 1e308 as all its 309 digits.
fn short_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(tail.len());
        let number = tail[..end].trim_end_matches('.');
        let digits = number.chars().filter(char::is_ascii_digit).count();
        match number.parse::<f64>() {
            Ok(v) if digits > 20 => out.push_str(&format!("{v:e}")),
            _ => out.push_str(number),
        }
        rest = &tail[number.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::short_numbers;

    #[test]
    fn long_numbers_are_written_short_and_others_kept() {
        let huge = format!("{}", 1e308);
        assert_eq!(
            short_numbers(&format!("floating point `{huge}`, expected an integer")),
            "floating point `1e308`, expected an integer"
        );
        let kept = "line 3: 0.5 and 65535 and 1.25e-3 and v1.2.";
        assert_eq!(short_numbers(kept), kept);
    }
}
