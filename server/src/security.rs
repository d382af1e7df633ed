//! Browser security headers on every response: API answers, pages, static assets and errors.
//!
//! The pages load only their own stylesheets and scripts (`/static/...`; no inline `<script>`,
//! `<style>` or `style=` attribute, and the scripts change styles through the CSSOM, which a
//! policy does not restrict) and fetch only the JSON API of the same origin, so the policy
//! allows exactly that. Nothing may frame a page (click-jacking), browsers must not guess a
//! type other than the declared one (an uploaded file that starts with `<html>` stays text),
//! and links to other sites (repositories, commits) send at most the origin.

use axum::http::{header, HeaderName, HeaderValue};
use tower_http::set_header::SetResponseHeaderLayer;

/// The `Content-Security-Policy` of every response. `img-src data:` is for the icons browsers
/// ask for on their own; `form-action 'self'` keeps the branch form of the series page.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
     form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// `Referrer-Policy`: the full address within the site, only the origin to others, nothing
/// over a downgrade to plain HTTP.
pub const REFERRER_POLICY: &str = "strict-origin-when-cross-origin";

/// The headers and their values, in the order they are added.
pub const HEADERS: [(HeaderName, &str); 4] = [
    (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    // For browsers that predate `frame-ancestors`.
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, REFERRER_POLICY),
];

/// One layer per header of [`HEADERS`], each overriding whatever a handler set, so no route
/// can weaken them by accident.
pub fn layers() -> impl Iterator<Item = SetResponseHeaderLayer<HeaderValue>> {
    HEADERS.into_iter().map(|(name, value)| {
        SetResponseHeaderLayer::overriding(name, HeaderValue::from_static(value))
    })
}
