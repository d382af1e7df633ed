//! How large a request body each route accepts.
//!
//! Uploads carry whole result files, so they may be large; every other write (settings,
//! triage, exclusions, baseline pins, projects, tokens) is a small JSON document, so a body
//! of kilobytes is plenty and anything larger is refused before it costs memory. The limit
//! counts decompressed bytes: a body sent with `Content-Encoding: gzip` is inflated only up to
//! the limit of its route, then answered with 413.

use axum::extract::DefaultBodyLimit;
use axum::Extension;

/// Largest body of an upload: `--save-detailed` files of long runs reach tens of MiB.
pub const UPLOAD_BODY_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// Largest body of every other route: their JSON documents are a few hundred bytes (a
/// settings document with many SLO profiles a few KiB).
pub const DEFAULT_BODY_LIMIT_BYTES: usize = 64 * 1024;

/// The body limit of the matched route, as a request extension, so that the 413 problem can
/// name it (axum's own limit, [`DefaultBodyLimit`], cannot be read back).
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

impl BodyLimit {
    /// The limit of a request: its route's, else [`DEFAULT_BODY_LIMIT_BYTES`].
    pub fn of(extensions: &axum::http::Extensions) -> usize {
        extensions
            .get::<BodyLimit>()
            .map_or(DEFAULT_BODY_LIMIT_BYTES, |l| l.0)
    }
}

/// A layer limiting request bodies to `bytes` and recording the limit for the error message.
/// Applied to the whole application (the default) and again to a route that needs another
/// limit: the inner (route) layer runs last, so its limit wins.
pub fn layer(bytes: usize) -> (Extension<BodyLimit>, DefaultBodyLimit) {
    (Extension(BodyLimit(bytes)), DefaultBodyLimit::max(bytes))
}
