//! A summary (any JSON object) as metrics: every number under its dotted path.

use crate::Value;

/// Every number in `json` keyed by its dotted path (`short_fct_us.p99`, `counters.events`),
/// in key order; booleans count as 0 or 1; strings, nulls and arrays are not metrics (the
/// row's own columns hold the names, and a missing value stays missing).
pub fn metrics_of(json: &serde_json::Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(json, &mut String::new(), &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn walk(json: &serde_json::Value, path: &mut String, out: &mut Vec<(String, Value)>) {
    match json {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                walk(v, path, out);
                path.truncate(len);
            }
        }
        serde_json::Value::Number(n) => {
            let value = match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::Int(i),
                (None, Some(x)) => Value::Real(x),
                (None, None) => return,
            };
            out.push((path.clone(), value));
        }
        serde_json::Value::Bool(b) => out.push((path.clone(), Value::Int(i64::from(*b)))),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_numbers_get_dotted_keys_and_the_rest_is_left_out() {
        let json = serde_json::json!({
            "fabric": "shoal",
            "flows": 8,
            "short_fct_us": {"p99": 2.5, "mean": 1.0},
            "long_goodput_gbps": null,
            "counters": {"events": 12345678901_u64},
            "pass": true,
        });
        let got = metrics_of(&json);
        let want = vec![
            ("counters.events".to_owned(), Value::Int(12_345_678_901)),
            ("flows".to_owned(), Value::Int(8)),
            ("pass".to_owned(), Value::Int(1)),
            ("short_fct_us.mean".to_owned(), Value::Real(1.0)),
            ("short_fct_us.p99".to_owned(), Value::Real(2.5)),
        ];
        assert_eq!(got, want);
    }
}
