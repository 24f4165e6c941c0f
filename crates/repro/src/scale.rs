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

    /// `value` as comma-separated fractions, each at least 0 and below 1.
    pub(crate) fn fractions(&self, key: &str, value: &str) -> Result<Vec<f64>, ReproError> {
        value
            .split(',')
            .map(|v| v.parse::<f64>().ok().filter(|x| (0.0..1.0).contains(x)))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| self.bad(&format!("{key} wants fractions in [0, 1), got {value:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_into_known_pairs_and_unknown_keys_are_named() {
        let set = Settings::new(" flows=10  fractions=0,0.5 ", &["flows", "fractions"]);
        assert_eq!(
            set.pairs().unwrap(),
            vec![("flows", "10"), ("fractions", "0,0.5")]
        );
        let err = Settings::new("flow=10", &["flows"]).pairs().unwrap_err();
        assert!(err.0.contains("unknown key \"flow\""), "{}", err.0);
        let err = Settings::new("flows", &["flows"]).pairs().unwrap_err();
        assert!(err.0.contains("not key=value"), "{}", err.0);
    }

    #[test]
    fn fractions_take_zero_and_refuse_one_or_more() {
        let set = Settings::new("", &[]);
        assert_eq!(
            set.fractions("f", "0,0.2,0.99").unwrap(),
            vec![0.0, 0.2, 0.99]
        );
        for bad in ["1", "0.5,1.5", "-0.1", "x", "0,,0.2", "NaN"] {
            assert!(set.fractions("f", bad).is_err(), "{bad}");
        }
        assert!(set.list("loads", "0").is_err());
        assert_eq!(set.list("loads", "0.1,0.7").unwrap(), vec![0.1, 0.7]);
    }
}
