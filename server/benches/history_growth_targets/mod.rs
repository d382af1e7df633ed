//! Issue 12's targets against what one database's `history_growth` run measured, printed last,
//! one line per target: the target, the figure with what it counts, and met / not met. A figure
//! the run did not measure (`--reads 0`, a kept database read with `--reads-of`) is left out.

/// What one database's run measured.
#[derive(Debug, Default)]
pub struct Figures {
    /// Per checkpoint whose window held summary uploads only: (commits stored, p50 ms of the
    /// window's upload round trips).
    pub upload_p50s: Vec<(usize, f64)>,
    /// The server's resident memory at rest after the last upload, MiB, and whether the server
    /// ran in a process of its own (else the generator and the client share the figure).
    pub rest_rss_mib: Option<(f64, bool)>,
    /// p95 of every page kind's round trip, ms.
    pub pages_p95_ms: Vec<(&'static str, f64)>,
    /// The series API's p50 over the hand-written SQL's for the same rows.
    pub series_api_ratio: Option<f64>,
    /// Bytes of tables and indexes per stored metric value.
    pub bytes_per_value: Option<f64>,
}

impl Figures {
    /// Prints the targets block for `database`.
    pub fn print(&self, database: &str) {
        println!("{database}: issue 12's targets");
        let line = |target: &str, figure: String, met: bool| {
            crate::support::print_target(database, target, &figure, met);
        };
        if let (Some(first), Some(worst)) = (
            self.upload_p50s.first(),
            self.upload_p50s.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
        ) {
            let checkpoints = self.upload_p50s.len();
            line(
                "upload + analysis p50 <= 100 ms",
                format!(
                    "worst checkpoint {:.0} ms at commit {} ({checkpoints} checkpoint(s) of summary uploads)",
                    worst.1, worst.0
                ),
                worst.1 <= 100.0,
            );
            let ratio = worst.1 / first.1;
            line(
                "flat in history length, within 1.5x",
                format!(
                    "worst / first {ratio:.2} (commit {} against {})",
                    worst.0, first.0
                ),
                ratio <= 1.5,
            );
        }
        if let Some((page, worst)) = self.pages_p95_ms.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            line(
                "every page's p95 <= 50 ms",
                format!(
                    "worst {page} {worst:.1} ms ({} page kinds)",
                    self.pages_p95_ms.len()
                ),
                *worst <= 50.0,
            );
        }
        if let Some(ratio) = self.series_api_ratio {
            line(
                "series API <= 1.5x the hand-written SQL",
                format!("{ratio:.2}x (p50 against p50)"),
                ratio <= 1.5,
            );
        }
        if let Some((mib, alone)) = self.rest_rss_mib {
            let mb = mib * 1.048_576;
            line(
                "server RSS at rest <= 150 MB",
                format!(
                    "{mb:.0} MB ({mib:.0} MiB, {})",
                    if alone {
                        "the server alone"
                    } else {
                        "in process with the generator: --server-process for the server alone"
                    }
                ),
                mb <= 150.0,
            );
        }
        if let Some(bytes) = self.bytes_per_value {
            line(
                "disk <= 400 B per stored value",
                format!("{bytes:.0} B, tables and indexes"),
                bytes <= 400.0,
            );
        }
    }
}
