//! The series a series page links to besides its own statistics: the other metrics measured
//! in the same configuration and cell, and the same metric and statistic in the
//! configuration's other cells. Two queries, each bounded by what one configuration holds.

use super::db;
use super::store::{series_info, SERIES_COLUMNS, SERIES_HAS_VALUES};
use super::{SeriesInfo, StorageError, Store};

/// Other series related to one series ([`Store::series_neighbours`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesNeighbours {
    /// Every series with a stored value in the same configuration (series key) and cell, the
    /// series itself included, in list order (metric, statistic, id).
    pub same_cell: Vec<SeriesInfo>,
    /// The same metric, statistic and SLO profile (none matches none) in the configuration's
    /// other cells with a stored value, in list order (cell key text; callers sort by the
    /// cell's numbers).
    pub other_cells: Vec<SeriesInfo>,
}

impl Store {
    /// The neighbours of series `series_id` (empty when it does not exist).
    ///
    /// # Errors
    /// A storage error.
    pub async fn series_neighbours(
        &self,
        series_id: &str,
    ) -> Result<SeriesNeighbours, StorageError> {
        let base = format!(
            "SELECT {SERIES_COLUMNS} FROM series o \
             JOIN series s ON s.project_id = o.project_id AND s.series_key_json = o.series_key_json \
             JOIN projects p ON p.id = s.project_id \
             WHERE o.series_id = $1 AND {SERIES_HAS_VALUES}"
        );
        let same_cell =
            format!("{base} AND s.cell_key = o.cell_key ORDER BY s.metric, s.stat, s.series_id");
        let other_cells = format!(
            "{base} AND s.cell_key <> o.cell_key AND s.metric = o.metric AND s.stat = o.stat \
             AND (s.slo_profile = o.slo_profile OR (s.slo_profile IS NULL AND o.slo_profile IS NULL)) \
             ORDER BY s.cell_key, s.series_id"
        );
        let mut out = SeriesNeighbours::default();
        for (sql, into) in [
            (same_cell, &mut out.same_cell),
            (other_cells, &mut out.other_cells),
        ] {
            let rows = db::query(&sql)
                .bind(series_id)
                .fetch_all(&self.pool)
                .await?;
            *into = rows
                .iter()
                .map(series_info)
                .collect::<Result<Vec<_>, _>>()?;
        }
        Ok(out)
    }
}
