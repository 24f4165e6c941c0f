//! Aquila §4.4: the in-band bootstrap of a full clique (576 TiNs) in waves, from
//! `scenarios/aquila-bootstrap.toml` (its `[bootstrap]` table: the DCN-connected TiNs and
//! each step's time, the choices documented there and in `shoal_aquila::control`). Paper:
//! "bootstrap times distributed between 3 and 48 minutes" (DCN-connected TiNs faster than
//! targets configured over the slower PMOS) and "about 2.5 hours" for a full-size clique.
//!
//! The simulation is a few thousand events, so the quick version runs the full clique too.
//!
//! Tolerances, fixed before the first run, two-sided where the paper gives a number: the
//! shortest per-TiN time 3 minutes ±20% (the DCN-connected TiN's step times were chosen to sum
//! to it, so it passes by construction: its claim text says it is a calibration, not a test), the longest 48 minutes ±25%, the clique
//! 2.5 hours ±25%; the DCN-connected TiNs all faster than every PMOS target (one-sided).

use crate::plot::emit;
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_aquila::control::{Plan, bootstrap};
use shoal_aquila::scenario::CliqueSpec;
use shoal_base::{Dur, Time};
use shoal_plot::{Axis, Figure, Kind, Series};

const FIG: &str = "Aquila §4.4";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let s = point::scenario("aquila-bootstrap")?;
    let clique = s
        .spec::<CliqueSpec>()
        .ok_or_else(|| ReproError("the scenario is not an Aquila clique".into()))?;
    let df = &clique.spec.dragonfly;
    let spec = clique.bootstrap.clone().ok_or_else(|| {
        ReproError("scenarios/aquila-bootstrap.toml: no [bootstrap] table".into())
    })?;
    let topo = df.build().map_err(|e| ReproError(e.to_string()))?;
    let plan = Plan::new(&topo, &spec.dcn_indices(df))
        .map_err(|e| ReproError(format!("bootstrap.dcn_tins: {e}")))?;
    let b = bootstrap(&plan, &spec.timing);
    let minutes = |d: Dur| d.as_secs_f64() / 60.0;
    for w in 0..=b.waves() {
        let times: Vec<f64> = b
            .tins
            .iter()
            .filter(|t| t.wave == w)
            .map(|t| minutes(t.time()))
            .collect();
        let last = b
            .tins
            .iter()
            .filter(|t| t.wave == w)
            .map(|t| t.done)
            .max()
            .map_or(0.0, |d| minutes(d.since(Time::ZERO)));
        progress(&format!(
            "wave {w}: {} TiNs, bootstrap {:.1}-{:.1} min, last done at {last:.1} min",
            times.len(),
            times.iter().copied().fold(f64::INFINITY, f64::min),
            times.iter().copied().fold(0.0, f64::max),
        ));
    }
    let mut all: Vec<f64> = b.tins.iter().map(|t| minutes(t.time())).collect();
    all.sort_by(f64::total_cmp);
    let n = all.len() as f64;
    let cdf = all
        .iter()
        .enumerate()
        .map(|(i, &m)| (m, (i + 1) as f64 / n))
        .collect();
    emit(
        opts,
        Figure {
            title: String::new(),
            x: Axis::linear("per-TiN bootstrap time (minutes)"),
            y: Axis::linear("fraction of TiNs"),
            series: vec![Series::new(format!("{} TiNs", all.len()), cdf)],
            kind: Kind::Curve,
        },
        "aquila-bootstrap",
        progress,
    )?;
    let of = |dcn: bool| {
        b.tins
            .iter()
            .filter(move |t| t.proxy.is_none() == dcn)
            .map(|t| minutes(t.time()))
    };
    let dcn_max = of(true).fold(0.0, f64::max);
    let pmos_min = of(false).fold(f64::INFINITY, f64::min);
    let total = minutes(b.total()) / 60.0;
    let shape = format!(
        " [{} TiNs, {} DCN-connected, {} waves]",
        b.tins.len(),
        spec.dcn_tins.len(),
        b.waves()
    );
    let mut claims = vec![
        Claim::relative(
            FIG,
            &format!(
                "shortest per-TiN bootstrap: a calibration, not a test (a DCN-connected TiN's \
                 steps were chosen to sum to the paper's 3 minutes){shape}"
            ),
            "min",
            3.0,
            all[0],
            0.20,
        ),
        Claim::relative(
            FIG,
            &format!("longest per-TiN bootstrap{shape}"),
            "min",
            48.0,
            all[all.len() - 1],
            0.25,
        ),
        Claim::new(
            FIG,
            &format!("DCN-connected TiNs bootstrap faster than PMOS targets{shape}"),
            "faster",
            format!("DCN at most {dcn_max:.1} min, PMOS at least {pmos_min:.1} min"),
            "every DCN-connected TiN below every target (one-sided)",
            dcn_max < pmos_min,
        ),
    ];
    let longest = all[all.len() - 1];
    let mut c = Claim::relative(
        FIG,
        &format!("full clique bootstrapped{shape}"),
        "h",
        2.5,
        total,
        0.25,
    );
    if !c.pass() {
        // The miss's measured reason: how the waves overlap.
        c.why = format!(
            "with proxies serving their targets in turn, the clique's total is one \
             chain of proxy turns through the waves and is {:.2}x the longest per-TiN time \
             (the paper's 2.5 h over 48 min is 3.1x); scaling the PMOS steps scales both",
            total * 60.0 / longest
        );
    }
    claims.push(c);
    Ok(claims)
}

/// The defaults of the `[bootstrap]` table are the scenario file's values, so that a file
/// without the table bootstraps the same clique.
#[cfg(test)]
mod tests {
    use super::*;
    use shoal_aquila::control::table::BootstrapSpec;

    #[test]
    fn the_scenario_file_states_the_defaults() {
        let s = point::scenario("aquila-bootstrap").unwrap();
        let c = s.spec::<CliqueSpec>().unwrap();
        assert_eq!(
            c.bootstrap.as_ref(),
            Some(&BootstrapSpec::paper(&c.spec.dragonfly))
        );
    }
}
