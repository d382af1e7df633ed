//! Helpers shared by the server's integration tests. Each test binary declares `mod common;`
//! and uses the submodules it needs.
#![allow(dead_code)]

pub mod db;
pub mod goodput;
pub mod seed;
pub mod server;
pub mod web;
