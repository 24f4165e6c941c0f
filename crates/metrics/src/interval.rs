//! A seed mean and its 95% confidence interval (Student's t): replications' intervals
//! (`shoal run --replications`) and the rebuilds' oracles (a new data path's seed mean within
//! the old one's interval) read the same one.

/// A mean with its two-sided 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanCi {
    pub n: usize,
    pub mean: f64,
    /// Half the interval's width: the interval is `mean ± half_width`; `None` for one value.
    pub half_width: Option<f64>,
}

/// The mean of independent replications and its 95% confidence interval from Student's t
/// (the sample standard deviation, n − 1 degrees of freedom); `None` for no values.
pub fn mean_ci95(values: &[f64]) -> Option<MeanCi> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let half_width = (n > 1).then(|| {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * (var / n as f64).sqrt()
    });
    Some(MeanCi {
        n,
        mean,
        half_width,
    })
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom: tabulated (to 3 decimals)
/// up to 30, beyond that the Cornish-Fisher expansion around the normal quantile, whose error
/// there is below 1e-4.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => {
            let z: f64 = 1.959_963_984_540_054;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_follows_students_t() {
        // 1..5: mean 3, sample deviation sqrt(2.5), t(4) = 2.776.
        let ci = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]).expect("values");
        assert_eq!((ci.n, ci.mean), (5, 3.0));
        let want = 2.776 * (2.5_f64 / 5.0).sqrt();
        assert!((ci.half_width.unwrap() - want).abs() < 1e-12);
        // One value: a mean without an interval; equal values: a zero-width one.
        assert_eq!(mean_ci95(&[7.0]).unwrap().half_width, None);
        assert_eq!(mean_ci95(&[2.0, 2.0, 2.0]).unwrap().half_width, Some(0.0));
        assert_eq!(mean_ci95(&[]), None);
    }

    #[test]
    fn the_t_quantile_joins_its_table_and_tends_to_the_normal_one() {
        // The expansion against published values: t(31) = 2.040, t(40) = 2.021,
        // t(120) = 1.980; from the table on, it decreases towards 1.960.
        assert!((t975(31) - 2.040).abs() < 1e-3, "{}", t975(31));
        assert!((t975(40) - 2.021).abs() < 1e-3, "{}", t975(40));
        assert!((t975(120) - 1.980).abs() < 1e-3, "{}", t975(120));
        let mut last = f64::INFINITY;
        for df in 1..500 {
            let t = t975(df);
            assert!(t < last && t > 1.959_96, "df {df}: {t}");
            last = t;
        }
    }
}
