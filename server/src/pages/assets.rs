//! Static assets embedded in the binary and served at `/static/...`.
//!
//! Everything under `web/static/` that a page uses is compiled in with `include_bytes!`, so
//! the server runs from any working directory and a deployed binary can never serve assets
//! of another version. Vendored libraries are referenced with their version in the query
//! string (`?v=1.6.32`) and served with a year-long `immutable` cache header; our own files
//! change with every build, so they are revalidated (`no-cache` plus an `ETag` of their
//! content).

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::LazyLock;

/// The vendored uPlot version; templates append it to the asset URLs as `?v=` so a future
/// upgrade is never hidden behind a browser's year-long cache.
pub const UPLOT_VERSION: &str = "1.6.32";

/// One embedded file.
struct Asset {
    /// Path below `/static/`.
    path: &'static str,
    /// The content.
    bytes: &'static [u8],
    /// `Content-Type` header value.
    content_type: &'static str,
    /// Vendored at a pinned version: cache for a year.
    immutable: bool,
}

/// Every file served under `/static/`.
const ASSETS: &[Asset] = &[
    Asset {
        path: "site.css",
        bytes: include_bytes!("../../../web/static/site.css"),
        content_type: "text/css; charset=utf-8",
        immutable: false,
    },
    Asset {
        path: "series.js",
        bytes: include_bytes!("../../../web/static/series.js"),
        content_type: "text/javascript; charset=utf-8",
        immutable: false,
    },
    Asset {
        path: "series_view.js",
        bytes: include_bytes!("../../../web/static/series_view.js"),
        content_type: "text/javascript; charset=utf-8",
        immutable: false,
    },
    Asset {
        path: "series_columns.js",
        bytes: include_bytes!("../../../web/static/series_columns.js"),
        content_type: "text/javascript; charset=utf-8",
        immutable: false,
    },
    Asset {
        path: "project.js",
        bytes: include_bytes!("../../../web/static/project.js"),
        content_type: "text/javascript; charset=utf-8",
        immutable: false,
    },
    Asset {
        path: "compare.js",
        bytes: include_bytes!("../../../web/static/compare.js"),
        content_type: "text/javascript; charset=utf-8",
        immutable: false,
    },
    Asset {
        path: "vendor/uplot/uPlot.iife.min.js",
        bytes: include_bytes!("../../../web/static/vendor/uplot/uPlot.iife.min.js"),
        content_type: "text/javascript; charset=utf-8",
        immutable: true,
    },
    Asset {
        path: "vendor/uplot/uPlot.min.css",
        bytes: include_bytes!("../../../web/static/vendor/uplot/uPlot.min.css"),
        content_type: "text/css; charset=utf-8",
        immutable: true,
    },
    Asset {
        path: "vendor/uplot/LICENSE",
        bytes: include_bytes!("../../../web/static/vendor/uplot/LICENSE"),
        content_type: "text/plain; charset=utf-8",
        immutable: true,
    },
];

/// Quoted ETags of the assets, in [`ASSETS`] order: the first 16 hex digits of the SHA-256 of
/// the content (computed once, on first use).
static ETAGS: LazyLock<Vec<String>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|a| format!("\"{}\"", &benchtrail_core::sha256_hex(a.bytes)[..16]))
        .collect()
});

/// `GET /static/{*path}`: an embedded file, `304` when `If-None-Match` matches, `404` for
/// anything else.
pub async fn serve(Path(path): Path<String>, headers: HeaderMap) -> Response {
    let Some((i, asset)) = ASSETS.iter().enumerate().find(|(_, a)| a.path == path) else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "not found\n",
        )
            .into_response();
    };
    let etag = &ETAGS[i];
    let cache = if asset.immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = asset.bytes.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        r
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(
        header::ETAG,
        HeaderValue::from_str(etag).expect("hex etag is a valid header"),
    );
    // `X-Content-Type-Options: nosniff` comes with every answer (`crate::security`).
    response
}
