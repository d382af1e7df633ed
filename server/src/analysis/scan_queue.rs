//! Coalescing of the background change-point scans.
//!
//! Every upload to the default branch asks for a scan of its groups' histories; a commit
//! uploaded as three repeats asks three times for the same data, and a CI matrix uploads many
//! commits at once. A scan is E-Divisive with hundreds of permutations over the whole history,
//! so at most one runs per project (per store) at a time; requests arriving meanwhile are
//! merged, per group, into the newest pending input, which the running task scans next.

use super::alerts::change_point_scan;
use crate::storage::Store;
use benchtrail_core::regression::GroupInput;
use benchtrail_core::settings::DetectionSettings;
use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};

/// What waits to be scanned for one project.
struct Pending {
    branch: String,
    det: DetectionSettings,
    version: i64,
    /// Newest input per group (series key, cell).
    groups: BTreeMap<(String, String), GroupInput>,
}

/// Per (store instance, project id): `None` while a scan runs with nothing pending, `Some`
/// when input waits; absent when idle.
type Queues = HashMap<(u64, i64), Option<Pending>>;

static QUEUES: LazyLock<Mutex<Queues>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Asks for a scan of `groups` (default-branch histories through the analyzed commit). Starts
/// a task when none runs for the project; otherwise leaves the input for the running task.
pub(super) fn request(
    store: &Store,
    project_id: i64,
    branch: &str,
    groups: Vec<GroupInput>,
    det: DetectionSettings,
    version: i64,
) {
    let key = (store.instance(), project_id);
    let mut queues = QUEUES.lock().expect("scan queue lock");
    let running = queues.contains_key(&key);
    let slot = queues.entry(key).or_insert(None);
    let pending = slot.get_or_insert_with(|| Pending {
        branch: branch.to_string(),
        det: det.clone(),
        version,
        groups: BTreeMap::new(),
    });
    // The newest settings and branch win: they are what the next scan must use.
    pending.branch = branch.to_string();
    pending.det = det;
    pending.version = version;
    for g in groups {
        pending
            .groups
            .insert((g.series_key.clone(), g.cell_key.clone()), g);
    }
    if running {
        return;
    }
    drop(queues);
    let store = store.clone();
    tokio::spawn(async move {
        loop {
            let next = {
                let mut queues = QUEUES.lock().expect("scan queue lock");
                match queues.get_mut(&key).and_then(Option::take) {
                    Some(p) => p,
                    None => {
                        queues.remove(&key);
                        break;
                    }
                }
            };
            let groups: Vec<GroupInput> = next.groups.into_values().collect();
            if let Err(e) = change_point_scan(
                &store,
                project_id,
                &next.branch,
                groups,
                next.det,
                next.version,
            )
            .await
            {
                tracing::warn!(error = %e, "change-point scan failed");
            }
        }
    });
}
