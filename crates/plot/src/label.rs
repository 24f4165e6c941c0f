//! Tick labels: short, and the same on every machine.

use crate::plan::pow10;

/// Up to ten significant digits, trailing zeros dropped, in exponent form outside
/// [1e-3, 1e6) so labels stay narrow.
pub(crate) fn number(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let decimals = (9 - a.log10().floor() as i32).max(0) as usize;
        trim_fraction(&format!("{v:.decimals$}")).to_owned()
    } else {
        let text = format!("{v:.9e}");
        match text.split_once('e') {
            Some((mantissa, exp)) => format!("{}e{exp}", trim_fraction(mantissa)),
            None => text,
        }
    }
}

/// Powers of ten as `10³`, the way log axes are drawn in papers; other ticks as [`number`].
pub(crate) fn log(v: f64) -> String {
    let k = v.log10().round();
    // |k| < 400 for any finite positive v, so the cast is exact.
    if ((v / pow10(k as i32)) - 1.0).abs() < 1e-9 {
        let exponent: String = (k as i32).to_string().chars().map(superscript).collect();
        format!("10{exponent}")
    } else {
        number(v)
    }
}

/// The name of category `v` where `v` is its index; other ticks stay blank.
pub(crate) fn category(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    names.get(i as usize).cloned().unwrap_or_default()
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn superscript(c: char) -> char {
    match c {
        '-' => '⁻',
        '0' => '⁰',
        '1' => '¹',
        '2' => '²',
        '3' => '³',
        '4' => '⁴',
        '5' => '⁵',
        '6' => '⁶',
        '7' => '⁷',
        '8' => '⁸',
        '9' => '⁹',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(250.0), "250");
        assert_eq!(number(1_000_000.0), "1e6");
        assert_eq!(number(0.000_25), "2.5e-4");
        assert_eq!(number(-12.5), "-12.5");
        assert_eq!(number(f64::MAX), "1.797693135e308");
    }

    #[test]
    fn log_ticks_use_superscripts() {
        assert_eq!(log(1000.0), "10³");
        assert_eq!(log(1e-6), "10⁻⁶");
        assert_eq!(log(1.0), "10⁰");
        assert_eq!(log(20.0), "20");
    }

    #[test]
    fn categories_label_integer_ticks_only() {
        let names = ["a".to_owned(), "b".to_owned()];
        assert_eq!(category(&names, 1.0), "b");
        assert_eq!(category(&names, 0.5), "");
        assert_eq!(category(&names, 2.0), "");
        assert_eq!(category(&names, -1.0), "");
    }
}
