//! `shoal report`'s page in a real browser: ignored by default, since it needs Chromium.
//! `.ci/run` installs Debian's `chromium` when absent and runs this with `cargo test -p
//! shoal-cli --test browser -- --ignored` (`CHROMIUM=/path` names another binary). Run so
//! without Chromium, it fails saying why: it never passes without having rendered the page.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// The window the page is rendered in, CSS pixels.
const WINDOW: (u32, u32) = (1280, 4000);

const NDP: &str = r#"
[scenario]
name = "tiny-ndp"
seed = 5
fabric = "ndp"
[network]
hosts = 8
radix = 4
link_gbps = 10.0
[workload]
kind = "permutation"
flow_bytes = 3000
"#;

/// Measures the page as laid out, at the end of its body (inline SVG is laid out by then):
/// every figure's size and the claim table's rows, as JSON in `<pre id="measured">`.
const MEASURE: &str = r#"<script>
(() => {
  const svgs = [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect();
    return [r.width, r.height];
  });
  const claims = document.querySelectorAll('#claim-table tr').length;
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify({ svgs, claim_table_rows: claims });
  document.body.appendChild(pre);
})();
</script>"#;

fn scratch(name: &str) -> PathBuf {
    scratch_in("shoal-browser-tests", name)
}

fn chromium_binary() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_owned())
}

/// Chromium headless on `page` with `extra` options, its own profile in `profile`, killed
/// and failed after a minute. Console messages (script errors among them) go to stderr.
fn chromium(profile: &Path, page: &Path, extra: &[String]) -> Output {
    let mut child = Command::new(chromium_binary())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "this test needs Chromium ({}: {e}); .ci/run installs Debian's chromium, or \
                 set CHROMIUM=/path/to/chrome",
                chromium_binary()
            )
        });
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("chromium did not end in a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().expect("output");
    assert!(o.status.success(), "chromium failed:\n{}", text(&o.stderr));
    o
}

/// The console messages Chromium logged: script errors, failed loads.
fn console(o: &Output) -> Vec<String> {
    text(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect()
}

/// A PNG's width and height, from its header.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "not a PNG"
    );
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
#[ignore = "needs Chromium: .ci/run installs it and runs this"]
fn the_report_renders_in_chromium_with_every_figure_and_claim() {
    let dir = scratch("report");
    std::fs::write(dir.join("tiny.toml"), TINY).expect("write");
    std::fs::write(dir.join("ndp.toml"), NDP).expect("write");
    ok_in(
        &dir,
        &[
            "compare",
            "tiny.toml",
            "ndp.toml",
            "--out",
            "res/cmp",
            "--quiet",
        ],
    );
    let claims = ok_in(
        &dir,
        &[
            "repro",
            "fig10",
            "--quick",
            "--json",
            "--out",
            "res/figures",
        ],
    );
    let claims: Value = serde_json::from_str(&text(&claims.stdout)).expect("claims JSON");
    let claims = claims.as_array().expect("array").len();
    assert!(claims > 0);
    ok_in(
        &dir,
        &["report", "--db", "res/shoal.db", "--out", "page.html"],
    );
    let page = std::fs::read_to_string(dir.join("page.html")).expect("the page");
    let figures = page.matches("<svg").count();
    assert!(figures >= 3, "the comparison's figures: {figures}");
    // The two compared scenarios differ at least in their fabric, and the page says so.
    assert!(
        page.contains("id=\"difference-table\""),
        "no table of differences"
    );
    assert!(
        page.contains("<td><code>scenario.fabric</code></td>"),
        "the fabric not among the differences"
    );

    // The page as it is: a screenshot of the whole window, and no console message.
    let shot = dir.join("page.png");
    let o = chromium(
        &dir.join("profile-shot"),
        &dir.join("page.html"),
        &[format!("--screenshot={}", shot.display())],
    );
    assert_eq!(
        console(&o),
        Vec::<String>::new(),
        "script errors or failed loads"
    );
    let png = std::fs::read(&shot).expect("the screenshot");
    assert_eq!(png_size(&png), WINDOW);
    // A blank window of this size compresses to a few kilobytes; tables and figures do not.
    assert!(png.len() > 50_000, "{} bytes: an empty page?", png.len());

    // The same page with a script that measures it as laid out.
    let measured_page = dir.join("measured.html");
    let body_end = page.rfind("</body>").expect("a body");
    std::fs::write(
        &measured_page,
        format!("{}{MEASURE}{}", &page[..body_end], &page[body_end..]),
    )
    .expect("write");
    let o = chromium(
        &dir.join("profile-dom"),
        &measured_page,
        &["--dump-dom".to_owned()],
    );
    assert_eq!(console(&o), Vec::<String>::new(), "script errors");
    let dom = text(&o.stdout);
    let json = dom
        .split("<pre id=\"measured\">")
        .nth(1)
        .and_then(|t| t.split("</pre>").next())
        .unwrap_or_else(|| panic!("the measuring script did not run:\n{dom}"));
    let measured: Value = serde_json::from_str(json).expect("measurements");
    let svgs = measured["svgs"].as_array().expect("svgs");
    assert_eq!(svgs.len(), figures, "every figure is in the laid-out page");
    for (i, size) in svgs.iter().enumerate() {
        let (w, h) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
        assert!(w >= 100.0 && h >= 100.0, "figure {i} laid out {w} x {h}");
    }
    // A header row and one row per claim.
    assert_eq!(measured["claim_table_rows"], claims + 1);
}
