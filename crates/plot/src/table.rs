//! The CSV beside each figure: tidy `series,x,y` rows that pandas reads as they are, with
//! numbers written so they parse back to the same f64.

use crate::figure::{Figure, Kind};

pub(crate) fn csv(fig: &Figure) -> String {
    let mut out = String::from("series,x,y\n");
    for s in &fig.series {
        let name = field(&s.name);
        for &(x, y) in &s.points {
            let x = match &fig.kind {
                // The category's name says more than its index; `Plan` checked the index.
                Kind::Bars { categories } => {
                    field(categories.get(x as usize).map_or("", String::as_str))
                }
                Kind::Lines | Kind::Curve | Kind::Points => number(x),
            };
            out.push_str(&format!("{name},{x},{}\n", number(y)));
        }
    }
    out
}

/// Shortest text that parses back to exactly `v`; exponent form only for very large or small
/// magnitudes, where plain digits would run to hundreds of characters.
fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// RFC 4180 quoting, only where a field needs it.
fn field(s: &str) -> String {
    let needs = s.contains([',', '"', '\n', '\r']) || s.trim() != s;
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for v in [
            0.1,
            -0.0,
            1.0,
            1e-7,
            123456.789,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
            1e16,
        ] {
            assert_eq!(number(v).parse::<f64>().ok(), Some(v), "{v}");
        }
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(1e-7), "1e-7");
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("Shoal"), "Shoal");
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field(" pad"), "\" pad\"");
    }
}
