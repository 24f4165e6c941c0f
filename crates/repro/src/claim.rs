//! A checked statement and the helpers experiments use to phrase them alike.

use serde::Serialize;

/// How a claim came out. Only `Pass` counts as a pass in any total; the two named kinds of
/// not passing say whose the difference is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Ours is within the tolerance, fixed before the run.
    Pass,
    /// Ours is outside the tolerance (or nothing was measured); `why` says what the
    /// measurement shows.
    Miss,
    /// The printed number does not follow from the paper's own stated inputs: a test derives
    /// another value from them, and `why` names the value and the test.
    PaperInconsistent,
    /// The paper's input is not public (a production trace, lost prices); ours ran on a
    /// stand-in, and `why` points to the stand-in's sensitivity sweep.
    InputUnavailable,
}

impl Verdict {
    /// All verdicts, in the order totals list them.
    pub const ALL: [Verdict; 4] = [
        Verdict::Pass,
        Verdict::Miss,
        Verdict::PaperInconsistent,
        Verdict::InputUnavailable,
    ];

    /// The word tables, JSON and the results database use.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Miss => "miss",
            Verdict::PaperInconsistent => "paper-inconsistent",
            Verdict::InputUnavailable => "input-unavailable",
        }
    }

    /// The verdict `word` names ([`Verdict::as_str`]'s words).
    pub fn parse(word: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == word)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One checked statement of a paper.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claim {
    pub figure: String,
    /// The statement checked: stable across runs of one scale (the index matches claims by
    /// it), so a measured reason goes into `why`, not here.
    pub claim: String,
    pub paper: String,
    pub ours: String,
    pub tolerance: String,
    pub verdict: Verdict,
    /// Why a claim that does not pass does not: what the measurement shows, the paper's
    /// inconsistency and its test, or the missing input. Empty for a pass.
    pub why: String,
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
            verdict: if pass { Verdict::Pass } else { Verdict::Miss },
            why: String::new(),
        }
    }

    /// Whether ours is within the tolerance: the only verdict that counts as a pass.
    pub fn pass(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// A miss's measured reason (a pass keeps none).
    pub(crate) fn because(mut self, why: impl Into<String>) -> Claim {
        if !self.pass() {
            self.why = why.into();
        }
        self
    }

    /// A claim whose printed number does not follow from the paper's own inputs: `why` gives
    /// the value they do give and names the test that derives it. Only for a claim that
    /// does not pass (a pass stays a pass).
    pub(crate) fn paper_inconsistent(mut self, why: impl Into<String>) -> Claim {
        if !self.pass() {
            self.verdict = Verdict::PaperInconsistent;
            self.why = why.into();
        }
        self
    }

    /// A claim whose paper input is not public: `why` names the stand-in and its sensitivity
    /// sweep. Only for a claim that does not pass.
    pub(crate) fn input_unavailable(mut self, why: impl Into<String>) -> Claim {
        if !self.pass() {
            self.verdict = Verdict::InputUnavailable;
            self.why = why.into();
        }
        self
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
        .because(why)
    }

    /// `ours` within `rel` (a fraction) of `paper`, on both sides. A value that is not a number
    /// (nothing was measured) leaves the claim not checked.
    pub(crate) fn relative(
        figure: &str,
        claim: &str,
        unit: &str,
        paper: f64,
        ours: f64,
        rel: f64,
    ) -> Claim {
        if !ours.is_finite() {
            return Claim::not_checked(
                figure,
                claim,
                format!("{paper:.2} {unit}"),
                "nothing was measured",
            );
        }
        Claim::new(
            figure,
            claim,
            format!("{paper:.2} {unit}"),
            format!("{ours:.2} {unit}"),
            format!("±{:.0}%", rel * 100.0),
            (ours - paper).abs() <= rel * paper.abs(),
        )
    }

    /// A share (a fraction, shown in percent) within `points` percentage points of the paper's, on
    /// both sides; `detail` follows ours in brackets (what the share was computed from).
    pub(crate) fn points(
        figure: &str,
        claim: &str,
        paper: f64,
        ours: f64,
        points: f64,
        detail: &str,
    ) -> Claim {
        let paper_text = format!("{:.0}%", paper * 100.0);
        if !ours.is_finite() {
            return Claim::not_checked(figure, claim, paper_text, "nothing was measured");
        }
        Claim::new(
            figure,
            claim,
            paper_text,
            format!("{:.0}% ({detail})", ours * 100.0),
            format!("±{points:.0} points"),
            (ours - paper).abs() * 100.0 <= points + 1e-9,
        )
    }

    /// `ours` within a factor `factor` of `paper` on either side (`paper / factor ..= paper *
    /// factor`): for quantities the paper states roughly ("about 3 s", "over 6 times") or that
    /// scale by orders of magnitude.
    pub(crate) fn factor(
        figure: &str,
        claim: &str,
        paper: impl Into<String>,
        (paper_value, ours_value): (f64, f64),
        ours: impl Into<String>,
        factor: f64,
    ) -> Claim {
        if !ours_value.is_finite() {
            return Claim::not_checked(figure, claim, paper, "nothing was measured");
        }
        let ratio = ours_value / paper_value;
        Claim::new(
            figure,
            claim,
            paper,
            ours,
            format!("within {factor}x either way"),
            ratio >= 1.0 / factor && ratio <= factor,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_value_is_not_checked_and_does_not_pass() {
        for c in [
            Claim::relative("F", "c", "x", 1.0, f64::NAN, 0.5),
            Claim::points("F", "c", 0.3, f64::NAN, 10.0, "-"),
            Claim::factor("F", "c", "1", (1.0, f64::NAN), "NaN", 2.0),
        ] {
            assert!(!c.pass(), "{c:?}");
            assert!(!c.why.is_empty(), "{c:?}");
            assert!(c.ours.starts_with("not checked"), "{c:?}");
        }
    }

    #[test]
    fn tolerances_are_two_sided() {
        assert!(Claim::relative("F", "c", "x", 2.0, 2.3, 0.2).pass());
        assert!(!Claim::relative("F", "c", "x", 2.0, 1.5, 0.2).pass());
        assert!(!Claim::relative("F", "c", "x", 2.0, 2.5, 0.2).pass());
        assert!(Claim::points("F", "c", 0.32, 0.42, 10.0, "-").pass());
        assert!(!Claim::points("F", "c", 0.32, 0.43, 10.0, "-").pass());
        assert!(!Claim::points("F", "c", 0.32, 0.21, 10.0, "-").pass());
        assert!(Claim::factor("F", "c", "6.8", (6.8, 13.0), "13", 2.0).pass());
        assert!(!Claim::factor("F", "c", "6.8", (6.8, 14.0), "14", 2.0).pass());
        assert!(!Claim::factor("F", "c", "6.8", (6.8, 3.3), "3.3", 2.0).pass());
    }
}
