//! One error for every refused input: the input's key (as `SizeSpec`'s fields and the CLI's
//! flags name it, with `_` for `-`) and the reason, so a caller can say which flag or scenario
//! key to change.

use std::fmt;

/// An input the models cannot size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizingError {
    /// The input at fault, e.g. `nodes` or `circuit_switch_watts`.
    pub key: &'static str,
    pub reason: String,
}

impl SizingError {
    pub(crate) fn new(key: &'static str, reason: impl Into<String>) -> SizingError {
        SizingError {
            key,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for SizingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}

impl std::error::Error for SizingError {}

/// `value` is finite and within `lo..=hi`, or an error naming `key`.
pub(crate) fn check_range(
    key: &'static str,
    value: f64,
    lo: f64,
    hi: f64,
) -> Result<f64, SizingError> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(SizingError::new(
            key,
            format!("must be a number from {lo} to {hi}, got {value:?}"),
        ))
    }
}
