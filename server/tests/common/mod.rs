//! Helpers shared by the server's integration tests. Each test binary declares `mod common;`
//! and uses the submodules it needs.
#![allow(dead_code)]

pub mod aiperf;
pub mod db;
pub mod fp8;
pub mod goodput;
pub mod matrix18;
pub mod migrations;
pub mod polling;
pub mod process;
pub mod seed;
pub mod server;
pub mod session;
pub mod web;
