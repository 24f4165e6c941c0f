//! Scenario files (DESIGN.md principle 4): a TOML file in, a resolved and validated run out.
//!
//! A scenario names a fabric (the Shoal rack, a packet-switched baseline on a `[network]`, ...),
//! its parameters, a workload, when to stop and optionally one parameter to sweep. [`parse`]
//! and [`load`] fill every default (the paper's §7.1 rack), check every value and refuse
//! unknown keys, naming the file, the dotted key and the reason. The fabric's own table is
//! read by the fabric ([`shoal_fabric::FabricKind`]), found by name in [`registry`]. The format
//! is documented in `docs/scenarios.md`.
//!
//! ```
//! let s = shoal_scenario::parse(
//!     "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = 1000\n",
//!     "tiny.toml",
//! )?;
//! assert_eq!((s.name.as_str(), s.nodes(), s.flows().len()), ("tiny", 8, 8));
//! assert!(shoal_scenario::parse("[rack]\nnodez = 8\n", "typo.toml").is_err());
//! # Ok::<(), shoal_scenario::ScenarioError>(())
//! ```

#![forbid(unsafe_code)]

mod error;
mod raw;
pub mod registry;
mod resolve;
mod resolved;
mod workload;

pub use error::ScenarioError;
pub use resolve::{DEFAULT_SEED, MATRIX_KEYS, WORKLOAD_KEYS};
pub use shoal_fabric::config::ErrorKind;
pub use workload::{Background, CollectiveJob, WorkloadSpec, collective_plan};

use error::{describe_serde, line_of, path_at};
use raw::RawFile;
use resolve::Ctx;
use shoal_base::{Rate, rng};
use shoal_fabric::{Fabric, Progress, ResolvedFabric, RunLimits, RunOutput};
use shoal_metrics::IdealFct;
use shoal_workload::{Flow, FlowSource};
use std::fmt;
use std::path::Path;
use toml::de::DeTable;

/// The version written into resolved scenarios and results.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The scenario `shoal run` uses when given none: the §7.1 rack under a permutation.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");

/// The origin reported for errors in [`DEFAULT_SCENARIO`].
pub const DEFAULT_ORIGIN: &str = "scenarios/default.toml (built in)";

/// One parameter varied over values (`[sweep]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// A dotted key of the scenario format, e.g. `rack.slot_ns`.
    pub parameter: String,
    pub values: Vec<SweepValue>,
}

/// One value of a sweep: any TOML scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepValue {
    Integer(i64),
    Float(f64),
    Text(String),
    Bool(bool),
}

impl SweepValue {
    fn from_toml(v: &toml::Value) -> Option<SweepValue> {
        Some(match v {
            toml::Value::Integer(i) => SweepValue::Integer(*i),
            toml::Value::Float(f) => SweepValue::Float(*f),
            toml::Value::String(s) => SweepValue::Text(s.clone()),
            toml::Value::Boolean(b) => SweepValue::Bool(*b),
            _ => return None,
        })
    }

    fn to_toml(&self) -> toml::Value {
        match self {
            SweepValue::Integer(i) => toml::Value::Integer(*i),
            SweepValue::Float(f) => toml::Value::Float(*f),
            SweepValue::Text(s) => toml::Value::String(s.clone()),
            SweepValue::Bool(b) => toml::Value::Boolean(*b),
        }
    }

    /// The value as a number, for a plot's x axis (`None` for text).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            SweepValue::Integer(i) => Some(*i as f64),
            SweepValue::Float(f) => Some(*f),
            SweepValue::Bool(b) => Some(f64::from(u8::from(*b))),
            SweepValue::Text(_) => None,
        }
    }
}

/// The label of a sweep point: the number as written, or the text without quotes.
impl fmt::Display for SweepValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepValue::Text(s) => f.write_str(s),
            other => write!(f, "{}", other.to_toml()),
        }
    }
}

/// A resolved, validated scenario: everything a run needs.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The run seed: every random choice (flows, random failures, corruption) derives from it.
    pub seed: u64,
    /// The fabric with every default filled in, as its crate resolved it; [`Scenario::spec`]
    /// gives its own type (`shoal_rack::RackSpec`, `shoal_psn::NetworkSpec`, ...).
    pub fabric: Box<dyn ResolvedFabric>,
    pub workload: WorkloadSpec,
    pub limits: RunLimits,
    pub sweep: Option<Sweep>,
    /// Where the scenario came from (a path, or a description for built-in and generated ones).
    pub origin: String,
    /// The parsed document, edited by [`Scenario::with_seed`] and by sweeps.
    document: toml::Table,
}

/// Written out because `derive` cannot compare the boxed fabric (rust-lang/rust#31740).
impl PartialEq for Scenario {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.description == o.description
            && self.seed == o.seed
            && self.fabric.same(o.fabric.as_ref())
            && self.workload == o.workload
            && self.limits == o.limits
            && self.sweep == o.sweep
            && self.origin == o.origin
            && self.document == o.document
    }
}

/// Reads and resolves the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let origin = path.display().to_string();
    let io = |line, reason| ScenarioError {
        origin: origin.clone(),
        line,
        key: String::new(),
        kind: ErrorKind::Io,
        reason,
    };
    let bytes = read_capped(path).map_err(|e| io(None, e))?;
    // TOML is UTF-8: say on which line the first byte that is not lies.
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        io(
            Some(line),
            "not UTF-8 text: a TOML scenario must be UTF-8".to_owned(),
        )
    })?;
    parse(&text, &origin)
}

/// The largest scenario file read: far above any real one (the committed ones are a few KiB),
/// and it keeps `shoal run /dev/zero` from reading until memory runs out.
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// The file's bytes, refused past [`MAX_SCENARIO_BYTES`].
fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(format!(
            "larger than {} MiB: not a scenario file",
            MAX_SCENARIO_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// Resolves scenario `text`; `origin` (usually the file name) names it in errors and gives the
/// default scenario name (its stem).
pub fn parse(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let stem = Path::new(origin)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scenario");
    parse_document(text, origin, true, stem)
}

/// The built-in default scenario, resolved.
pub fn default_scenario() -> Result<Scenario, ScenarioError> {
    parse(DEFAULT_SCENARIO, DEFAULT_ORIGIN)
}

fn parse_document(
    text: &str,
    origin: &str,
    lines: bool,
    default_name: &str,
) -> Result<Scenario, ScenarioError> {
    let error = |line, key: String, kind, reason: String| ScenarioError {
        origin: origin.to_owned(),
        line: if lines { line } else { None },
        key,
        kind,
        reason,
    };
    let (partial, errors) = DeTable::parse_recoverable(text);
    if let Some(e) = errors.first() {
        let span = e.span();
        let key = span
            .as_ref()
            .and_then(|s| {
                path_at(partial.get_ref(), s, "").or_else(|| key_by_header(text, s.clone()))
            })
            .unwrap_or_default();
        return Err(error(
            span.map(|s| line_of(text, s.start)),
            key,
            ErrorKind::Syntax,
            format!("TOML syntax: {}", e.message()),
        ));
    }
    let spanned = partial;
    let doc_ref = spanned.get_ref();
    let raw: RawFile =
        toml::from_str(text).map_err(|e| toml_error(origin, text, doc_ref, lines, &e))?;
    let document: toml::Table = toml::from_str(text).map_err(|e| {
        error(
            None,
            String::new(),
            ErrorKind::Syntax,
            format!("TOML: {}", e.message()),
        )
    })?;
    // Serde skips the tables `RawFile` does not name: refuse those no fabric reads either.
    let known: Vec<&str> = resolve::SHARED_TABLES
        .into_iter()
        .chain(registry::fabric_tables())
        .collect();
    if let Some(table) = document.keys().find(|k| !known.contains(&k.as_str())) {
        let expected: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
        let line = error::span_of(doc_ref, table)
            .filter(|_| lines)
            .map(|s| line_of(text, s.start));
        return Err(error(
            line,
            table.clone(),
            ErrorKind::UnknownKey,
            format!("unknown key (expected one of {})", expected.join(", ")),
        ));
    }
    let ctx = Ctx {
        origin,
        text,
        doc: doc_ref,
        lines,
    };
    let r = resolve::resolve(&ctx, raw, default_name)?;
    let scenario = Scenario {
        name: r.name,
        description: r.description,
        seed: r.seed,
        fabric: r.fabric,
        workload: r.workload,
        limits: r.limits,
        sweep: r.sweep,
        origin: origin.to_owned(),
        document,
    };
    // Every sweep point is resolved now, so a bad value is refused when the file is loaded.
    scenario.sweep_points()?;
    Ok(scenario)
}

/// For syntax errors at a key the recovered document lacks (a duplicate key): the key as
/// written, under the last table header before it.
fn key_by_header(text: &str, span: std::ops::Range<usize>) -> Option<String> {
    let written = text.get(span.clone())?.trim();
    let bare = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    if !bare(written) {
        return None;
    }
    let header = text[..span.start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| {
            let name = l.trim_start_matches('[');
            name[..name.find(']').unwrap_or(name.len())]
                .trim()
                .to_owned()
        });
    Some(match header {
        Some(h) if !h.is_empty() => format!("{h}.{written}"),
        _ => written.to_owned(),
    })
}

/// A TOML type error (`e`, positioned in `text`) as a scenario error naming the key and line.
pub(crate) fn toml_error(
    origin: &str,
    text: &str,
    doc: &DeTable<'_>,
    lines: bool,
    e: &toml::de::Error,
) -> ScenarioError {
    let span = e.span();
    let path = span.as_ref().and_then(|s| path_at(doc, s, ""));
    let (kind, key, reason) = describe_serde(e.message(), path);
    ScenarioError {
        origin: origin.to_owned(),
        line: span.filter(|_| lines).map(|s| line_of(text, s.start)),
        key,
        kind,
        reason,
    }
}

/// Sets the dotted `key` of `doc` to `value`, creating tables on the way.
fn set_dotted(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let mut parts = key.split('.').peekable();
    let mut table = doc;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            table.insert(part.to_owned(), value);
            return Ok(());
        }
        let next = table
            .entry(part.to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match next {
            toml::Value::Table(t) => t,
            _ => return Err(format!("{part} is not a table")),
        };
    }
    Ok(())
}

impl Scenario {
    /// The flows of a list workload (`WorkloadSpec::is_list`), drawn from the stream
    /// `("scenario.workload", 0)` of the seed: sorted by start time, ids `0..`. The same seed
    /// always gives the same flows. Streaming kinds have no list (this returns none): pull
    /// their flows from [`Scenario::source`].
    pub fn flows(&self) -> Vec<Flow> {
        let mut rng = rng::stream(self.seed, "scenario.workload", 0);
        self.workload.generate(self.nodes(), &mut rng)
    }

    /// The workload as a stream of flows for a fabric to pull (list workloads drawn as
    /// [`Scenario::flows`] draws them), and the number of flows it will give if known.
    pub fn source(&self) -> Result<(Box<dyn FlowSource>, Option<u64>), ScenarioError> {
        let mut rng = rng::stream(self.seed, "scenario.workload", 0);
        let source = self
            .workload
            .source(self.nodes(), self.seed, &mut rng)
            .map_err(|reason| ScenarioError {
                origin: self.origin.clone(),
                line: None,
                key: "workload".into(),
                kind: ErrorKind::Value,
                reason,
            })?;
        Ok((source, self.workload.flow_count()))
    }

    /// The same scenario with another seed (as `shoal run --seed` does): the flows and any
    /// random node failures are drawn again. TOML integers are signed, so seeds are kept
    /// below 2^63 (higher bits are dropped).
    pub fn with_seed(&self, seed: u64) -> Scenario {
        let seed = seed & i64::MAX as u64;
        let mut s = self.clone();
        s.seed = seed;
        s.fabric.reseed(seed);
        // The document seeds the sweep points, so it has to agree; scenario.seed is a valid
        // key path whatever the document holds.
        let _ = set_dotted(
            &mut s.document,
            "scenario.seed",
            toml::Value::Integer(seed as i64),
        );
        s
    }

    /// The scenario with each dotted key set to its value, resolved again from its document as
    /// a file would be (so everything that depends on a key, e.g. a load's arrival rate on
    /// `rack.nodes`, follows it). Scaled-down experiments are made this way.
    pub fn with_settings(
        &self,
        settings: &[(&str, toml::Value)],
    ) -> Result<Scenario, ScenarioError> {
        let shown: Vec<String> = settings.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let origin = format!("{} ({})", self.origin, shown.join(", "));
        let fail = |key: &str, reason: String| ScenarioError {
            origin: origin.clone(),
            line: None,
            key: key.to_owned(),
            kind: ErrorKind::Value,
            reason,
        };
        let mut doc = self.document.clone();
        for (key, value) in settings {
            set_dotted(&mut doc, key, value.clone()).map_err(|e| fail(key, e))?;
        }
        let text = toml::to_string(&doc).map_err(|e| fail("", e.to_string()))?;
        let mut s = parse_document(&text, &origin, false, &self.name)?;
        s.origin = self.origin.clone();
        Ok(s)
    }

    /// One scenario per sweep value, each resolved like a file from the document with the swept
    /// key set (and `[sweep]` removed), in the order of `values`. Empty without a sweep.
    pub fn sweep_points(&self) -> Result<Vec<(SweepValue, Scenario)>, ScenarioError> {
        let Some(sweep) = &self.sweep else {
            return Ok(Vec::new());
        };
        sweep
            .values
            .iter()
            .map(|value| {
                let origin = format!(
                    "{} (sweep point {} = {value})",
                    self.origin, sweep.parameter
                );
                let fail = |reason: String| ScenarioError {
                    origin: origin.clone(),
                    line: None,
                    key: sweep.parameter.clone(),
                    kind: ErrorKind::Value,
                    reason,
                };
                let mut doc = self.document.clone();
                doc.remove("sweep");
                set_dotted(&mut doc, &sweep.parameter, value.to_toml()).map_err(fail)?;
                let text = toml::to_string(&doc).map_err(|e| fail(e.to_string()))?;
                let point = parse_document(&text, &origin, false, &self.name)?;
                Ok((value.clone(), point))
            })
            .collect()
    }

    /// This scenario as TOML with every default filled in, the delay in slots, every failure
    /// listed (random ones drawn), and the seed and tool version in `[scenario]`: loading it
    /// gives the same rack, workload, limits and seed. A sweep is not included (the text
    /// describes one run; see [`Scenario::document_toml`]).
    pub fn resolved_toml(&self) -> String {
        resolved::write(self)
    }

    /// The parsed document (comments dropped) with the seed and tool version set: for a sweep,
    /// what reproduces every point.
    pub fn document_toml(&self) -> String {
        let mut doc = self.document.clone();
        let _ = set_dotted(
            &mut doc,
            "scenario.tool_version",
            toml::Value::String(TOOL_VERSION.to_owned()),
        );
        let _ = set_dotted(
            &mut doc,
            "scenario.seed",
            toml::Value::Integer(self.seed as i64),
        );
        toml::to_string(&doc).unwrap_or_default()
    }

    /// The fabric's configuration as its own type, if it is a `T` (`shoal_rack::RackSpec`,
    /// `shoal_psn::NetworkSpec`, ...).
    pub fn spec<T: 'static>(&self) -> Option<&T> {
        self.fabric.as_any().downcast_ref()
    }

    /// The fabric's configuration to change in place (scaled-down experiments do this).
    pub fn spec_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.fabric.as_any_mut().downcast_mut()
    }

    /// The fabric's name: "shoal", or a packet fabric's transport ("dctcp", "ndp", ...).
    pub fn fabric_name(&self) -> &str {
        self.fabric.name()
    }

    /// Nodes (hosts) the workload spreads over.
    pub fn nodes(&self) -> usize {
        self.fabric.nodes()
    }

    /// A node's rate (Shoal: all channels; a packet fabric: the host link), the R of a load.
    pub fn node_rate(&self) -> Rate {
        self.fabric.node_rate()
    }

    /// What a lone flow takes on the idle fabric, for slowdowns.
    pub fn ideal_fct(&self) -> Result<IdealFct, ScenarioError> {
        self.fabric.ideal_fct().map_err(|e| self.run_error(e))
    }

    fn run_error(&self, e: shoal_fabric::config::ConfigError) -> ScenarioError {
        ScenarioError {
            origin: self.origin.clone(),
            line: None,
            key: e.key,
            kind: e.kind,
            reason: e.reason,
        }
    }

    /// Builds whichever fabric the scenario names.
    pub fn build_fabric(&self) -> Result<Box<dyn Fabric>, ScenarioError> {
        self.fabric.build().map_err(|e| self.run_error(e))
    }

    /// Builds the fabric and runs the flows until the scenario's limits.
    pub fn run(&self, progress: &mut dyn Progress) -> Result<RunOutput, ScenarioError> {
        let mut fabric = self.build_fabric()?;
        let (mut flows, _) = self.source()?;
        fabric
            .run(flows.as_mut(), self.limits, progress)
            .map_err(|e| ScenarioError {
                origin: self.origin.clone(),
                line: None,
                key: String::new(),
                kind: ErrorKind::Run,
                reason: e.to_string(),
            })
    }
}
