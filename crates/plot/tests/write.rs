//! End to end: figures in, files out, through the public API only.

use std::fs;
use std::path::PathBuf;

use shoal_plot::{Axis, AxisName, Figure, Kind, PlotError, Series, write};

const PNG_MAGIC: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// A fresh directory per test, so parallel tests never share files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shoal-plot-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn lines() -> Figure {
    Figure {
        title: "FCT against load".into(),
        x: Axis::linear("Load"),
        y: Axis::linear("FCT (µs)"),
        series: vec![
            Series::new(
                "Shoal",
                vec![(0.1, 2.5), (0.3, 3.0), (0.5, 0.1 + 0.2), (0.9, 12.75)],
            ),
            Series::new("Ideal, max-min", vec![(0.1, 2.0), (0.5, 2.25), (0.9, 1e-7)]),
        ],
        kind: Kind::Lines,
    }
}

/// Reads the CSV back as (series, x, y) text with a real CSV parser.
fn rows(path: &PathBuf) -> Vec<(String, String, String)> {
    let mut reader = csv::Reader::from_path(path).expect("csv opens");
    let header = reader.headers().expect("header").clone();
    assert_eq!(header.iter().collect::<Vec<_>>(), ["series", "x", "y"]);
    reader
        .records()
        .map(|r| {
            let r = r.expect("record");
            (r[0].to_owned(), r[1].to_owned(), r[2].to_owned())
        })
        .collect()
}

/// Every point of every series, in order, parsed back to the same f64.
fn assert_round_trip(fig: &Figure, path: &PathBuf) {
    let want: Vec<(String, f64, f64)> = fig
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(x, y)| (s.name.clone(), x, y)))
        .collect();
    let got: Vec<(String, f64, f64)> = rows(path)
        .into_iter()
        .map(|(s, x, y)| (s, x.parse().expect("x"), y.parse().expect("y")))
        .collect();
    assert_eq!(got, want);
}

fn assert_files(dir: &std::path::Path, stem: &str) -> (String, Vec<u8>) {
    for ext in ["svg", "png", "csv"] {
        let len = fs::metadata(dir.join(format!("{stem}.{ext}")))
            .expect(ext)
            .len();
        assert!(len > 0, "{stem}.{ext} is empty");
    }
    let svg = fs::read_to_string(dir.join(format!("{stem}.svg"))).expect("svg");
    let png = fs::read(dir.join(format!("{stem}.png"))).expect("png");
    assert!(png.starts_with(&PNG_MAGIC));
    assert!(svg.contains("width=\"800\"") && svg.contains("height=\"500\""));
    (svg, png)
}

#[test]
fn lines_figure_writes_svg_png_and_csv() {
    let dir = scratch("lines");
    let fig = lines();
    let written = write(&fig, &dir.join("nested"), "fig7").expect("writes");
    assert_eq!(written.svg, dir.join("nested/fig7.svg"));
    let (svg, _) = assert_files(&dir.join("nested"), "fig7");
    for text in [
        "FCT against load",
        "Load",
        "FCT (µs)",
        "Shoal",
        "Ideal, max-min",
    ] {
        assert!(svg.contains(text), "svg lacks {text:?}");
    }
    assert_round_trip(&fig, &written.csv);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn log_log_figure_labels_decades() {
    let dir = scratch("loglog");
    let fig = Figure {
        title: "Slowdown by flow size".into(),
        x: Axis::log("Flow size (bytes)"),
        y: Axis::log("Slowdown"),
        series: vec![Series::new(
            "p99",
            vec![(64.0, 1.5), (1500.0, 3.0), (1e6, 40.0)],
        )],
        kind: Kind::Points,
    };
    let written = write(&fig, &dir, "sizes").expect("writes");
    let (svg, _) = assert_files(&dir, "sizes");
    for text in [
        "Slowdown by flow size",
        "Flow size (bytes)",
        "Slowdown",
        "10³",
        "10⁶",
    ] {
        assert!(svg.contains(text), "svg lacks {text:?}");
    }
    // One series: no legend, so its name is drawn nowhere.
    assert!(!svg.contains("p99"));
    assert_round_trip(&fig, &written.csv);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn bar_figure_names_categories() {
    let dir = scratch("bars");
    let categories = vec![
        "Permutation".to_owned(),
        "Incast".to_owned(),
        "All, to all".to_owned(),
    ];
    let fig = Figure {
        title: "Goodput by workload".into(),
        x: Axis::linear("Workload"),
        y: Axis::linear("Goodput (Gbps)"),
        series: vec![
            Series::new("Shoal", vec![(0.0, 95.5), (1.0, 90.25), (2.0, 88.0)]),
            Series::new("ECMP", vec![(0.0, 60.0), (2.0, 41.5)]),
        ],
        kind: Kind::Bars { categories },
    };
    let written = write(&fig, &dir, "goodput").expect("writes");
    let (svg, _) = assert_files(&dir, "goodput");
    for text in [
        "Goodput by workload",
        "Goodput (Gbps)",
        "Permutation",
        "Incast",
        "ECMP",
    ] {
        assert!(svg.contains(text), "svg lacks {text:?}");
    }
    let got = rows(&written.csv);
    assert_eq!(got.len(), 5);
    assert_eq!(got[2], ("Shoal".into(), "All, to all".into(), "88".into()));
    assert_eq!(got[4], ("ECMP".into(), "All, to all".into(), "41.5".into()));

    let log = Figure {
        y: Axis::log("Goodput (Gbps)"),
        ..fig.clone()
    };
    write(&log, &dir, "goodput-log").expect("log bars draw");
    let mut negative = fig;
    negative.series[1].points[0].1 = -20.0;
    write(&negative, &dir, "goodput-negative").expect("negative bars draw");
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn fixed_ranges_clip_instead_of_failing() {
    let dir = scratch("clip");
    let mut fig = lines();
    fig.x = Axis::linear("Load").with_range(0.2, 0.6);
    fig.y = Axis::log("FCT (µs)").with_range(1.0, 10.0);
    fig.series[1].points[2].1 = 1e-7;
    let written = write(&fig, &dir, "clipped").expect("writes");
    assert_files(&dir, "clipped");
    assert_round_trip(&fig, &written.csv);
    let _ = fs::remove_dir_all(dir);
}

/// Writes `fig` and expects `check` to accept the error; no file may be left behind.
fn expect_err(name: &str, fig: &Figure, check: impl Fn(&PlotError) -> bool) {
    let dir = scratch(name);
    match write(fig, &dir, "bad") {
        Ok(_) => panic!("{name}: wrote a figure that should fail"),
        Err(e) => assert!(check(&e), "{name}: unexpected error {e}"),
    }
    assert!(!dir.exists(), "{name}: files written despite the error");
}

#[test]
fn log_axis_rejects_zero_naming_series_and_point() {
    let mut fig = lines();
    fig.y = Axis::log("FCT (µs)");
    fig.series[1].points[1].1 = 0.0;
    expect_err("logzero", &fig, |e| {
        let text = e.to_string();
        matches!(e, PlotError::NonPositiveOnLog { series, index: 1, axis: AxisName::Y, value }
            if series == "Ideal, max-min" && *value == 0.0)
            && text.contains("Ideal, max-min")
            && text.contains("point 1")
    });
    fig.y = Axis::linear("FCT (µs)");
    fig.x = Axis::log("Load");
    fig.series[0].points[0].0 = -1.0;
    expect_err("lognegative", &fig, |e| {
        matches!(
            e,
            PlotError::NonPositiveOnLog {
                index: 0,
                axis: AxisName::X,
                ..
            }
        )
    });
}

#[test]
fn non_finite_values_are_errors() {
    for (name, v) in [
        ("nan", f64::NAN),
        ("inf", f64::INFINITY),
        ("neginf", f64::NEG_INFINITY),
    ] {
        let mut fig = lines();
        fig.series[0].points[3].1 = v;
        expect_err(
            name,
            &fig,
            |e| matches!(e, PlotError::NonFinite { series, index: 3, .. } if series == "Shoal"),
        );
    }
}

#[test]
fn empty_figures_are_errors() {
    let mut fig = lines();
    fig.series.clear();
    expect_err("noseries", &fig, |e| matches!(e, PlotError::Empty { .. }));
    fig.series = vec![Series::new("a", vec![]), Series::new("b", vec![])];
    expect_err("nopoints", &fig, |e| matches!(e, PlotError::Empty { .. }));
}

#[test]
fn malformed_figures_are_errors() {
    let mut fig = lines();
    fig.x = Axis::linear("Load").with_range(1.0, 1.0);
    expect_err("flatrange", &fig, |e| {
        matches!(
            e,
            PlotError::Range {
                axis: AxisName::X,
                ..
            }
        )
    });
    fig.x = Axis::log("Load").with_range(0.0, 1.0);
    expect_err("logrange", &fig, |e| {
        matches!(
            e,
            PlotError::Range {
                axis: AxisName::X,
                ..
            }
        )
    });

    let bars = |x: f64, axis: Axis| Figure {
        title: String::new(),
        x: axis,
        y: Axis::linear("y"),
        series: vec![Series::new("s", vec![(x, 1.0)])],
        kind: Kind::Bars {
            categories: vec!["only".into()],
        },
    };
    expect_err("badcategory", &bars(1.0, Axis::linear("x")), |e| {
        matches!(
            e,
            PlotError::Category {
                index: 0,
                count: 1,
                ..
            }
        )
    });
    expect_err("halfcategory", &bars(0.5, Axis::linear("x")), |e| {
        matches!(e, PlotError::Category { .. })
    });
    expect_err("logbars", &bars(0.0, Axis::log("x")), |e| {
        matches!(e, PlotError::BarsAxis)
    });

    for stem in ["", ".", "..", "a/b", "a\\b"] {
        match write(&lines(), &scratch("stem"), stem) {
            Err(PlotError::Stem(s)) => assert_eq!(s, stem),
            other => panic!("stem {stem:?}: {other:?}"),
        }
    }
}

/// Awkward but finite inputs either draw or fail with a range error: never a panic or a hang.
#[test]
fn awkward_inputs_never_panic() {
    let dir = scratch("awkward");
    let (lin, log) = (|| Axis::linear("v"), || Axis::log("v"));
    let fig = |x: Axis, y: Axis, points: &[(f64, f64)]| Figure {
        title: "odd <&>".into(),
        x,
        y,
        series: vec![Series::new("s", points.to_vec()), Series::new("t", vec![])],
        kind: Kind::Lines,
    };
    let figures = [
        fig(lin(), lin(), &[(f64::MAX, f64::MIN), (0.0, 0.0)]),
        fig(lin(), lin(), &[(1e300, 1e-300), (1e300, 1e-300)]),
        fig(lin(), lin(), &[(5e-324, -5e-324), (0.0, 0.0)]),
        fig(lin(), lin(), &[(1.0, 1.0), (1.0 + 1e-15, 1.0)]),
        fig(log(), log(), &[(5e-324, 1e-300), (f64::MAX, 1e300)]),
        fig(log(), log(), &[(1e-300, 1.0), (1e300, 1.0)]),
        fig(log(), lin(), &[(7.0, 7.0)]),
        fig(lin().with_range(-1e300, 1e300), lin(), &[(0.0, 1.0)]),
        fig(lin().with_range(0.0, 1e-300), lin(), &[(0.0, 1.0)]),
        fig(
            lin().with_range(0.0, 1.0),
            lin(),
            &[(-1e308, 1e308), (0.5, 0.5)],
        ),
        fig(log().with_range(1.0, 1.0 + 1e-12), log(), &[(2.0, 1.0)]),
    ];
    let mut drawn = 0;
    for (i, mut fig) in figures.into_iter().enumerate() {
        for kind in [Kind::Lines, Kind::Curve, Kind::Points] {
            fig.kind = kind;
            match write(&fig, &dir, &format!("case{i}")) {
                Ok(written) => {
                    let svg = fs::read_to_string(written.svg).expect("svg");
                    assert!(svg.contains("odd &lt;&amp;&gt;"), "title not escaped");
                    drawn += 1;
                }
                Err(e) => assert!(matches!(e, PlotError::Range { .. }), "case {i}: {e}"),
            }
        }
    }
    assert_eq!(drawn, 24);
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn a_curve_is_the_line_without_its_markers() {
    let dir = scratch("curve");
    let mut fig = lines();
    let polygons = |fig: &Figure, stem: &str| {
        let written = write(fig, &dir, stem).expect("drawn");
        assert_round_trip(fig, &written.csv);
        fs::read_to_string(written.svg)
            .expect("svg")
            .matches("<polygon")
            .count()
    };
    let marked = polygons(&fig, "lines");
    fig.kind = Kind::Curve;
    let curve = polygons(&fig, "curve");
    // The legend keeps one marker per series; the seven points lose theirs.
    let points: usize = fig.series.iter().map(|s| s.points.len()).sum();
    assert_eq!(curve, fig.series.len());
    assert_eq!(marked, curve + points);
    let _ = fs::remove_dir_all(dir);
}
