//! benchtrail-server: the HTTP API, storage and web pages of benchtrail.
//!
//! [`app::router`] builds the whole application from an [`app::AppState`]; [`app::serve`]
//! runs it on a listener until a shutdown future completes, so tests bind port 0 on loopback.

pub mod analysis;
pub mod api;
pub mod app;
pub mod auth;
pub mod body_limit;
pub mod bot;
pub mod error;
pub mod ingest;
pub mod memory;
pub mod pages;
pub mod security;
pub mod serve;
pub mod storage;
pub mod timeouts;
pub mod triage;
