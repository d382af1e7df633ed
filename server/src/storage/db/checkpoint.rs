//! SQLite's write-ahead log copied back into the database file by a background task, not by
//! the request that happens to commit past the threshold.
//!
//! In WAL mode every commit appends pages to the log, and by default the connection whose
//! commit takes the log past 1,000 pages (4 MiB) copies the log into the database file and
//! syncs it (an automatic checkpoint) before its commit returns. An upload of 18 cells writes
//! a few hundred pages (its run, values and analysis), so every second or third upload paid
//! for the others' pages: measured with `history_growth --reads-of … --configurations 2`
//! (600 commits), the insert's commit took 5–8 ms for one upload of a commit and 30–100 ms for
//! the next, which crossed the threshold.
//!
//! Here the pool's connections check-point themselves only past [`AUTOCHECKPOINT_PAGES`] (a
//! safety net, should this task fall behind), and a task with a connection of its own runs a
//! `PASSIVE` checkpoint every [`CHECKPOINT_EVERY`]: it copies what no reader still needs,
//! never waits for readers or writers, and with nothing new in the log it reads the log's
//! index and returns. Durability is unchanged: a commit is durable in the log (`synchronous`
//! stays sqlx's `FULL`), the checkpoint only moves it.

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};
use std::time::Duration;
use tokio::sync::watch;

/// Pages past which a committing connection checkpoints itself (`wal_autocheckpoint`): ten
/// times SQLite's default, reached only if the background checkpoint falls behind.
pub(super) const AUTOCHECKPOINT_PAGES: u32 = 10_000;

/// How often the background task checkpoints.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// The background checkpoint of one SQLite file; stops (and closes its connection) when
/// dropped, i.e. when the last clone of the store that owns it is gone.
#[derive(Debug)]
pub(in crate::storage) struct Checkpointer {
    stop: watch::Sender<bool>,
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// Starts the background checkpoint of the database that `options` opens.
pub(super) fn start(options: SqliteConnectOptions) -> Checkpointer {
    let (stop, mut stopped) = watch::channel(false);
    tokio::spawn(async move {
        let mut conn = match options.connect().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!(error = %e, "the background WAL checkpoint could not connect; connections checkpoint themselves");
                return;
            }
        };
        let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopped.changed() => break,
            }
            let started = std::time::Instant::now();
            // (busy, frames in the log, frames checkpointed); a busy checkpoint (another
            // one running) is simply tried again at the next tick.
            match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
                .fetch_one(&mut conn)
                .await
            {
                Ok((busy, log, done)) => tracing::trace!(
                    busy,
                    log,
                    done,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "WAL checkpoint"
                ),
                Err(e) => tracing::debug!(error = %e, "WAL checkpoint failed; tried again"),
            }
        }
        if let Err(e) = conn.close().await {
            tracing::debug!(error = %e, "closing the checkpoint connection failed");
        }
    });
    Checkpointer { stop }
}
