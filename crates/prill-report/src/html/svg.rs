//! The page's charts: inline SVG histograms (no script, no external resource), drawn
//! once when the page is written, so they cost the browser nothing at 10,000 cases.

use std::fmt::Write;

use super::escape;

/// How many bars a histogram has at most.
const BINS: usize = 20;
const WIDTH: f64 = 460.0;
const HEIGHT: f64 = 140.0;
/// Room under the bars for the axis labels.
const AXIS: f64 = 18.0;

/// A histogram of `values` titled `title`, its axis labelled by `label` (`1.2 s`,
/// `350 tok`); a sentence instead when there is nothing to draw.
pub(super) fn histogram(
    class: &str,
    title: &str,
    values: &[f64],
    label: impl Fn(f64) -> String,
) -> String {
    let values: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let mut out = format!(
        "<figure class=\"chart {}\"><figcaption>{}</figcaption>",
        escape(class),
        escape(title)
    );
    let (Some(min), Some(max)) = (
        values.iter().copied().reduce(f64::min),
        values.iter().copied().reduce(f64::max),
    ) else {
        out.push_str("<p class=\"none\">Not recorded in this run.</p></figure>");
        return out;
    };
    let span = max - min;
    let bins = if span > 0.0 { BINS } else { 1 };
    let mut counts = vec![0usize; bins];
    for v in &values {
        let i = if span > 0.0 {
            (((v - min) / span) * bins as f64) as usize
        } else {
            0
        };
        counts[i.min(bins - 1)] += 1;
    }
    let tallest = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let bar = WIDTH / bins as f64;
    let _ = write!(
        out,
        "<svg role=\"img\" viewBox=\"0 0 {WIDTH} {}\" width=\"{WIDTH}\" height=\"{}\">",
        HEIGHT + AXIS,
        HEIGHT + AXIS
    );
    for (i, count) in counts.iter().enumerate() {
        let h = (*count as f64 / tallest) * (HEIGHT - 4.0);
        let from = min + span * i as f64 / bins as f64;
        let to = min + span * (i + 1) as f64 / bins as f64;
        let _ = write!(
            out,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{}: {} to {}</title></rect>",
            i as f64 * bar + 1.0,
            HEIGHT - h,
            (bar - 2.0).max(1.0),
            plural(*count, "case"),
            escape(&label(from)),
            escape(&label(to)),
        );
    }
    let _ = write!(
        out,
        "<text x=\"0\" y=\"{y}\">{}</text><text x=\"{WIDTH}\" y=\"{y}\" text-anchor=\"end\">{}</text></svg>",
        escape(&label(min)),
        escape(&label(max)),
        y = HEIGHT + AXIS - 4.0,
    );
    let _ = write!(
        out,
        "<p class=\"stats\">{} · median {} · p90 {}</p></figure>",
        plural(values.len(), "case"),
        escape(&label(quantile(&values, 0.5))),
        escape(&label(quantile(&values, 0.9))),
    );
    out
}

/// `1 case`, `3 cases`.
pub(super) fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The `q` quantile of `values` (nearest rank); `values` is not empty.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_a_bar() {
        let svg = histogram("latency", "Latency", &[1.0, 2.0, 2.0, 3.0], |v| {
            format!("{v:.1} s")
        });
        assert_eq!(svg.matches("<rect class=\"bar\"").count(), BINS);
        assert!(svg.contains("4 cases · median 2.0 s · p90 3.0 s"), "{svg}");
        let one = histogram("tokens", "Tokens", &[5.0, 5.0], |v| format!("{v}"));
        assert_eq!(one.matches("<rect class=\"bar\"").count(), 1);
        assert!(one.contains("<title>2 cases: 5 to 5</title>"), "{one}");
    }

    #[test]
    fn nothing_recorded_is_said() {
        let svg = histogram("tokens", "Tokens", &[], |v| format!("{v}"));
        assert!(svg.contains("Not recorded"));
        assert!(!svg.contains("<svg"));
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 5.0);
        assert_eq!(quantile(&v, 0.9), 9.0);
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
    }
}
