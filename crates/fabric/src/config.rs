//! What a fabric needs to read its own scenario table: errors that name a dotted key, the
//! checks every table applies to numbers (ranges, finite values, time units), typed reading of
//! one table out of a scenario file, and the writer of the resolved form.
//!
//! A fabric crate names its own keys (`rack.delay_slots`, `network.queue_packets`); the
//! scenario crate adds the file and the line when it reports the error.

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use shoal_base::{Dur, Rate, Time};
use std::fmt::{self, Write};

/// What kind of mistake a configuration error reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be read.
    Io,
    /// The text is not valid TOML.
    Syntax,
    /// A key that the format does not have (or that this table or workload kind does not use).
    UnknownKey,
    /// A required key is absent.
    Missing,
    /// A value of the wrong type (a string where a number belongs, ...).
    Type,
    /// A value of the right type that is out of range or contradicts another one.
    Value,
    /// The fabric could not be built from valid-looking values (schedule, Clos, verifier).
    Build,
    /// The fabric refused to run the flows.
    Run,
}

/// A refused value: the dotted key as the scenario format names it (`rack.slot_ns`,
/// `rack.failures[2].node`; empty for the whole file), the kind of mistake and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub kind: ErrorKind,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// Why a fabric's table could not be resolved: a value it refused, or a TOML type error that
/// the scenario crate turns into a key and a line (it holds the parsed document).
#[derive(Debug)]
pub enum TableError {
    Config(ConfigError),
    Toml(toml::de::Error),
}

impl From<ConfigError> for TableError {
    fn from(e: ConfigError) -> Self {
        TableError::Config(e)
    }
}

impl From<toml::de::Error> for TableError {
    fn from(e: toml::de::Error) -> Self {
        TableError::Toml(e)
    }
}

/// An integer key's allowed range, written once and applied wherever a value enters: when a
/// scenario file is read (before the value is narrowed to its field's type) and when a
/// configuration built in code is validated.
#[derive(Clone, Copy, Debug)]
pub struct IntRule {
    pub key: &'static str,
    pub min: i64,
    pub max: i64,
}

impl IntRule {
    pub const fn new(key: &'static str, min: i64, max: i64) -> IntRule {
        IntRule { key, min, max }
    }

    /// `v`, or the error naming the key and the range.
    pub fn check(&self, v: i64) -> Result<i64, ConfigError> {
        if v < self.min || v > self.max {
            return Err(value(
                self.key,
                format!("{v} is out of range: must be {} to {}", self.min, self.max),
            ));
        }
        Ok(v)
    }

    /// `v` (or `default` when absent) checked and narrowed to the field's type.
    pub fn read<T: TryFrom<i64>>(&self, v: Option<i64>, default: i64) -> Result<T, ConfigError> {
        let v = self.check(v.unwrap_or(default))?;
        T::try_from(v).map_err(|_| value(self.key, format!("{v} does not fit this field")))
    }
}

/// The slowest rate a scenario may give, in Gb/s (see `Keys::gbps`).
pub const MIN_GBPS: f64 = 1e-3;
/// The fastest rate a scenario may give, in Gb/s.
pub const MAX_GBPS: f64 = 1e6;

/// A number as an error message shows it: in exponent form when very large or very small, so
/// that 1e308 is not printed as 309 digits.
pub fn short(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A value error at `key`.
pub fn value(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_owned(),
        kind: ErrorKind::Value,
        reason: reason.into(),
    }
}

/// Reads scenario values: which keys the file gives (to blame the right one of two that
/// conflict), and the range and unit checks every table shares. Errors name the key only.
pub struct Keys<'a> {
    given: &'a dyn Fn(&str) -> bool,
}

/// The `Keys` of a configuration built in code: no key is "given".
pub const NO_KEYS: Keys<'static> = Keys { given: &|_| false };

impl<'a> Keys<'a> {
    /// `given(key)` says whether the file gives the dotted key.
    pub fn new(given: &'a dyn Fn(&str) -> bool) -> Keys<'a> {
        Keys { given }
    }

    /// Whether the file gives `key`.
    pub fn given(&self, key: &str) -> bool {
        (self.given)(key)
    }

    pub fn err(&self, key: &str, kind: ErrorKind, reason: impl Into<String>) -> ConfigError {
        ConfigError {
            key: key.to_owned(),
            kind,
            reason: reason.into(),
        }
    }

    pub fn value(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        value(key, reason)
    }

    pub fn missing(&self, key: &str) -> ConfigError {
        self.err(key, ErrorKind::Missing, "required key is missing")
    }

    /// Of keys whose values conflict, listed most likely culprit first, the one to name in the
    /// error: the first the file gives (a conflict with a default is the given key's), or the
    /// first when it gives none.
    pub fn blame<'k>(&self, keys: &[&'k str]) -> &'k str {
        keys.iter().find(|k| self.given(k)).unwrap_or(&keys[0])
    }

    /// An integer in `min..=max`, or `default` when absent.
    pub fn int(
        &self,
        key: &str,
        v: Option<i64>,
        default: i64,
        min: i64,
        max: i64,
    ) -> Result<i64, ConfigError> {
        self.int_req(key, Some(v.unwrap_or(default)), min, max)
    }

    /// A required integer in `min..=max`.
    pub fn int_req(
        &self,
        key: &str,
        v: Option<i64>,
        min: i64,
        max: i64,
    ) -> Result<i64, ConfigError> {
        let v = v.ok_or_else(|| self.missing(key))?;
        if v < min || v > max {
            return Err(self.value(key, format!("{v} is out of range: must be {min} to {max}")));
        }
        Ok(v)
    }

    /// A finite number, at least `min` (or above it when `exclusive`).
    pub fn num(&self, key: &str, v: f64, min: f64, exclusive: bool) -> Result<f64, ConfigError> {
        if !v.is_finite() {
            return Err(self.value(key, format!("{v} is not a finite number")));
        }
        let ok = if exclusive { v > min } else { v >= min };
        if !ok {
            let bound = if exclusive { "above" } else { "at least" };
            return Err(self.value(
                key,
                format!(
                    "{} is out of range: must be {bound} {}",
                    short(v),
                    short(min)
                ),
            ));
        }
        Ok(v)
    }

    /// A rate given in Gb/s, from 1 Mb/s to 10⁶ Gb/s: a slower link would take longer than
    /// the picosecond clock can count to carry a large flow (and one below 1 b/s would
    /// serialize nothing), a faster one is a typo for a unit.
    pub fn gbps(&self, key: &str, gbps: f64) -> Result<Rate, ConfigError> {
        let gbps = self.num(key, gbps, 0.0, true)?;
        if !(MIN_GBPS..=MAX_GBPS).contains(&gbps) {
            return Err(self.value(
                key,
                format!(
                    "{} Gb/s is not a link rate: must be {MIN_GBPS} (1 Mb/s) to {MAX_GBPS:e} Gb/s",
                    short(gbps)
                ),
            ));
        }
        Ok(Rate((gbps * 1e9).round() as u64))
    }

    /// A number from `min` to `max` that the model keeps in steps of `1/steps` (a fraction in
    /// 1/65,536, a share in parts per million): the number of steps. A value the steps cannot
    /// hold to within 0.5% (a positive one that would round to 0, or 1.5e-6 kept in millionths
    /// as 2e-6) is refused, saying what it would have become, rather than changed silently.
    pub fn steps(
        &self,
        key: &str,
        v: f64,
        steps: f64,
        (min, max): (f64, f64),
    ) -> Result<u64, ConfigError> {
        let v = self.num(key, v, min, false)?;
        if v > max {
            return Err(self.value(
                key,
                format!(
                    "{} is out of range: must be {} to {}",
                    short(v),
                    short(min),
                    short(max)
                ),
            ));
        }
        let n = (v * steps).round();
        if (n / steps - v).abs() > 5e-3 * v {
            return Err(self.value(
                key,
                format!(
                    "{} cannot be kept: the model holds it in steps of {}, so it would become {}; \
                     give a multiple of the step",
                    short(v),
                    short(1.0 / steps),
                    short(n / steps)
                ),
            ));
        }
        Ok(n as u64)
    }

    /// Microseconds to picoseconds; `positive` refuses zero.
    pub fn us(&self, key: &str, v: f64, positive: bool) -> Result<u64, ConfigError> {
        let v = self.num(key, v, 0.0, positive)?;
        let ps = (v * 1e6).round();
        if ps >= u64::MAX as f64 / 2.0 {
            return Err(self.value(
                key,
                format!("{} us is longer than the simulator can count", short(v)),
            ));
        }
        check_picoseconds(self, key, v * 1e6, ps, positive, "us")?;
        Ok(ps as u64)
    }

    /// Nanoseconds to picoseconds; `positive` refuses zero. At most a second: no delay of a
    /// link, a device or a slot is longer (a larger value is a mistyped unit), and sums of
    /// such delays along paths and over a run then stay far from the clock's end.
    pub fn ns(&self, key: &str, v: f64, positive: bool) -> Result<Dur, ConfigError> {
        let v = self.num(key, v, 0.0, positive)?;
        if v > 1e9 {
            return Err(self.value(
                key,
                format!(
                    "{} ns is longer than a second: no delay is (a mistyped unit?)",
                    short(v)
                ),
            ));
        }
        let d = Dur::from_ns_f64(v).ok_or_else(|| {
            self.value(
                key,
                format!("{} ns is longer than the simulator can count", short(v)),
            )
        })?;
        check_picoseconds(self, key, v * 1e3, d.0 as f64, positive, "ns")?;
        Ok(d)
    }
}

/// A time given as `exact` picoseconds and held as the whole `held`: a time that is not zero
/// but rounds to zero is a typo for a unit, not a time to clamp, and one that whole picoseconds
/// cannot hold to within 0.5% (below 100 ps) is refused rather than rounded silently.
fn check_picoseconds(
    keys: &Keys<'_>,
    key: &str,
    exact: f64,
    held: f64,
    positive: bool,
    unit: &str,
) -> Result<(), ConfigError> {
    let given = short(if unit == "us" {
        exact / 1e6
    } else {
        exact / 1e3
    });
    if (positive || exact > 0.0) && held < 1.0 {
        return Err(keys.value(key, format!("{given} {unit} is below one picosecond")));
    }
    if (held - exact).abs() > 5e-3 * exact {
        return Err(keys.value(
            key,
            format!(
                "{given} {unit} cannot be held in whole picoseconds to within 0.5% (it would \
                 be {held} ps)"
            ),
        ));
    }
    Ok(())
}

/// The top-level table `name` of the scenario `text`, deserialized as `T` (whose own
/// `deny_unknown_fields` refuses keys it does not know); `None` when the file has no such
/// table. The other tables are skipped. Errors keep their position in `text`, so the scenario
/// crate can name the key and the line.
pub fn read_table<T: DeserializeOwned>(
    text: &str,
    name: &str,
) -> Result<Option<T>, toml::de::Error> {
    struct Pick<'n, T> {
        name: &'n str,
        _t: std::marker::PhantomData<T>,
    }
    impl<'de, T: DeserializeOwned> Visitor<'de> for Pick<'_, T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a scenario")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<T>, A::Error> {
            let mut found = None;
            while let Some(key) = map.next_key::<String>()? {
                if key == self.name {
                    found = Some(map.next_value::<T>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for Pick<'_, T> {
        type Value = Option<T>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
            d.deserialize_map(self)
        }
    }
    Pick {
        name,
        _t: std::marker::PhantomData,
    }
    .deserialize(toml::de::Deserializer::parse(text)?)
}

/// The resolved scenario as TOML text, written table by table: `key = value` lines in the
/// order given, so the file a run writes reads like the documentation.
#[derive(Default)]
pub struct TomlOut(String);

impl TomlOut {
    pub fn new() -> TomlOut {
        TomlOut(String::new())
    }

    /// Appends a raw line (a comment, say).
    pub fn line(&mut self, text: &str) {
        let _ = writeln!(self.0, "{text}");
    }

    /// Starts a table (`[name]`, or `[[name]]` given with its brackets) after a blank line.
    pub fn header(&mut self, name: &str) {
        let _ = writeln!(self.0, "\n{name}");
    }

    /// `key = value`, the value already in TOML form (see [`text`], [`float`], ...).
    pub fn kv(&mut self, key: &str, value: impl fmt::Display) {
        let _ = writeln!(self.0, "{key} = {value}");
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// A TOML string.
pub fn text(v: &str) -> String {
    toml::Value::String(v.to_owned()).to_string()
}

/// A TOML float (always with a decimal point or exponent).
pub fn float(v: f64) -> String {
    toml::Value::Float(v).to_string()
}

/// A time in microseconds, as the `*_us` keys take it.
pub fn time_us(t: Time) -> String {
    float(t.as_us_f64())
}

/// A duration in microseconds.
pub fn dur_us(d: Dur) -> String {
    float(d.as_us_f64())
}

/// A duration in nanoseconds, as the `*_ns` keys take it.
pub fn dur_ns(d: Dur) -> String {
    float(d.as_ns_f64())
}
