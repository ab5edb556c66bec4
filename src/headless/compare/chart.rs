//! A bar chart of one figure as SVG, written by hand: A's and B's bars,
//! their values, and B's difference with its interval in the title.

use std::fmt::Write as _;

use serde_json::Value;

/// `&`, `<`, `>` and quotes escaped for SVG text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn show(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.fract() == 0.0 => format!("{}", x as i64),
        Some(x) => format!("{x:.3}"),
    }
}

/// The chart of one entry of the comparison's `totals`.
pub fn bars(total: &Value) -> String {
    let (w, h, base, top) = (360.0, 240.0, 200.0, 50.0);
    let a = total["a"].as_f64();
    let b = total["b"].as_f64();
    let max = a.unwrap_or(0.0).abs().max(b.unwrap_or(0.0).abs()).max(1e-9);
    let label = total["label"].as_str().unwrap_or_default();
    let mut title = escape(label);
    if let (Some(d), Some(ci)) = (total["difference"].as_f64(), total["interval"].as_array()) {
        let noise = if total["within_noise"] == true {
            ", within noise"
        } else {
            ""
        };
        let _ = write!(
            title,
            ": B - A = {} [{}, {}]{noise}",
            show(Some(d)),
            show(ci[0].as_f64()),
            show(ci[1].as_f64())
        );
    }
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"13\">{title}</text>\n\
         <line x1=\"40\" y1=\"{base}\" x2=\"{}\" y2=\"{base}\" stroke=\"black\"/>\n",
        w - 20.0
    );
    for (k, (name, v, colour)) in [("A", a, "#4a78b5"), ("B", b, "#d9822b")]
        .iter()
        .enumerate()
    {
        let x = 80.0 + k as f64 * 130.0;
        let height = v.map_or(0.0, |v| (v.abs() / max) * (base - top));
        let _ = write!(
            svg,
            "<rect x=\"{x}\" y=\"{}\" width=\"80\" height=\"{height}\" fill=\"{colour}\"/>\n\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{name}</text>\n",
            base - height,
            x + 40.0,
            base - height - 5.0,
            show(*v),
            x + 40.0,
            base + 18.0,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn two_bars_scaled_to_the_larger_with_the_difference_in_the_title() {
        let svg = bars(&json!({"label": "prompt <tokens>", "a": 100.0, "b": 50.0,
            "difference": -50.0, "interval": [-60.0, -40.0], "within_noise": false}));
        assert!(svg.starts_with("<svg "));
        assert!(
            svg.contains("prompt &lt;tokens&gt;: B - A = -50 [-60, -40]"),
            "{svg}"
        );
        assert!(svg.contains("height=\"150\""), "{svg}");
        assert!(svg.contains("height=\"75\""), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
