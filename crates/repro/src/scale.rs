//! `--scale` settings (`Options::scale`): white-space separated `key=value` words that an
//! experiment reads against its own keys, with errors that name the word and the key.

use crate::ReproError;

/// One `--scale` text, split into words.
pub(crate) struct Settings<'a> {
    text: &'a str,
    /// The keys the experiment knows, for the error on any other.
    known: &'static [&'static str],
}

impl<'a> Settings<'a> {
    pub(crate) fn new(text: &'a str, known: &'static [&'static str]) -> Self {
        Settings { text, known }
    }

    /// An error about this text.
    pub(crate) fn bad(&self, what: &str) -> ReproError {
        ReproError(format!("--scale: {what} (in {:?})", self.text))
    }

    /// The `(key, value)` pairs in order; a word without `=` or with an unknown key is refused.
    pub(crate) fn pairs(&self) -> Result<Vec<(&'a str, &'a str)>, ReproError> {
        self.text
            .split_whitespace()
            .map(|item| {
                let (key, value) = item
                    .split_once('=')
                    .ok_or_else(|| self.bad(&format!("{item:?} is not key=value")))?;
                if !self.known.contains(&key) {
                    return Err(
                        self.bad(&format!("unknown key {key:?} ({})", self.known.join(", ")))
                    );
                }
                Ok((key, value))
            })
            .collect()
    }

    /// `value` as a whole number.
    pub(crate) fn int(&self, key: &str, value: &str) -> Result<u64, ReproError> {
        value
            .parse::<u64>()
            .map_err(|_| self.bad(&format!("{key} wants a whole number, got {value:?}")))
    }

    /// `value` as comma-separated positive numbers.
    pub(crate) fn list(&self, key: &str, value: &str) -> Result<Vec<f64>, ReproError> {
        value
            .split(',')
            .map(|v| v.parse::<f64>().ok().filter(|x| *x > 0.0 && x.is_finite()))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| self.bad(&format!("{key} wants numbers > 0, got {value:?}")))
    }
}
