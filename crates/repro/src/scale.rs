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

    /// The `(key, value)` pairs in order; a word without `=`, with an unknown key or with a key
    /// given before is refused (the later value would silently win).
    pub(crate) fn pairs(&self) -> Result<Vec<(&'a str, &'a str)>, ReproError> {
        let mut pairs: Vec<(&'a str, &'a str)> = Vec::new();
        for item in self.text.split_whitespace() {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| self.bad(&format!("{item:?} is not key=value")))?;
            if !self.known.contains(&key) {
                return Err(self.bad(&format!(
                    "unknown key {key:?} (the keys are {})",
                    self.known.join(", ")
                )));
            }
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(self.bad(&format!("{key} is given twice")));
            }
            pairs.push((key, value));
        }
        Ok(pairs)
    }

    /// `value` as a whole number.
    pub(crate) fn int(&self, key: &str, value: &str) -> Result<u64, ReproError> {
        value
            .parse::<u64>()
            .map_err(|_| self.bad(&format!("{key} wants a whole number, got {value:?}")))
    }

    /// `value` as a whole number of at least `min`; `why` says what the minimum is for. A
    /// smaller one is refused rather than raised to `min`, which would run another scale than
    /// the one asked for.
    pub(crate) fn at_least(
        &self,
        key: &str,
        value: &str,
        min: u64,
        why: &str,
    ) -> Result<u64, ReproError> {
        let n = self.int(key, value)?;
        if n < min {
            return Err(self.bad(&format!("{key} must be at least {min} ({why}), got {n}")));
        }
        Ok(n)
    }

    /// `value` as one number above 0.
    pub(crate) fn number(&self, key: &str, value: &str) -> Result<f64, ReproError> {
        match self.list(key, value)?[..] {
            [x] => Ok(x),
            _ => Err(self.bad(&format!("{key} wants one number, got {value:?}"))),
        }
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
        let err = Settings::new("flows=10 flows=20", &["flows"])
            .pairs()
            .unwrap_err();
        assert!(err.0.contains("flows is given twice"), "{}", err.0);
    }

    #[test]
    fn counts_below_their_minimum_and_lists_for_one_number_are_refused() {
        let set = Settings::new("", &[]);
        assert_eq!(set.at_least("flows", "1", 1, "a run needs one").unwrap(), 1);
        let err = set
            .at_least("flows", "0", 1, "a run needs one")
            .unwrap_err();
        assert!(
            err.0
                .contains("flows must be at least 1 (a run needs one), got 0"),
            "{}",
            err.0
        );
        assert_eq!(set.number("load", "0.5").unwrap(), 0.5);
        assert!(set.number("load", "0.5,0.6").is_err());
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
