//! A checked statement and the helpers experiments use to phrase them alike.

use serde::Serialize;

/// One checked statement of a paper.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claim {
    pub figure: String,
    pub claim: String,
    pub paper: String,
    pub ours: String,
    pub tolerance: String,
    pub pass: bool,
}

impl Claim {
    pub(crate) fn new(
        figure: &str,
        claim: &str,
        paper: impl Into<String>,
        ours: impl Into<String>,
        tolerance: impl Into<String>,
        pass: bool,
    ) -> Claim {
        Claim {
            figure: figure.to_string(),
            claim: claim.to_string(),
            paper: paper.into(),
            ours: ours.into(),
            tolerance: tolerance.into(),
            pass,
        }
    }

    /// A claim whose input is missing (a baseline not computed, a run that measured nothing):
    /// reported as not checked, and counted as a miss.
    pub(crate) fn not_checked(
        figure: &str,
        claim: &str,
        paper: impl Into<String>,
        why: &str,
    ) -> Claim {
        Claim::new(
            figure,
            claim,
            paper,
            format!("not checked: {why}"),
            "-",
            false,
        )
    }

    /// `ours` within `rel` (a fraction) of `paper`.
    pub(crate) fn relative(
        figure: &str,
        claim: &str,
        unit: &str,
        paper: f64,
        ours: f64,
        rel: f64,
    ) -> Claim {
        Claim::new(
            figure,
            claim,
            format!("{paper:.2} {unit}"),
            format!("{ours:.2} {unit}"),
            format!("±{:.0}%", rel * 100.0),
            (ours - paper).abs() <= rel * paper.abs(),
        )
    }
}
